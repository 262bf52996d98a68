//! End to end: the SEP-2631 suite's client leg (`smcp_conformance_files::client_leg`, the same
//! code as `smcp-conformance-files client`) runs this crate's binary in every scenario; every
//! check must be SUCCESS and nothing unverified may be left in the output directories.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use smcp_conformance_files::client_leg::{ClientLegOptions, ClientUnderTest, SCENARIOS, mock, run};
use smcp_conformance_files::files::generated_bytes;
use smcp_conformance_files::report::{Baseline, Status, summarize};

const BIN: &str = env!("CARGO_BIN_EXE_smcp-conformance-files-client");

fn work_dir(tag: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("sep2631-files-client-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_of_the_client_leg_passes() {
    let work = work_dir("leg");
    let results = run(&ClientLegOptions {
        // `sh -c "<command> <url>"`: quote the path.
        client: ClientUnderTest::Command(format!("'{BIN}'")),
        scenarios: None,
        timeout: Duration::from_secs(30),
        work_dir: work.clone(),
    })
    .await
    .unwrap();

    let ran: Vec<&str> = results.keys().map(String::as_str).collect();
    let mut want: Vec<&str> = SCENARIOS.to_vec();
    want.sort_unstable();
    assert_eq!(ran, want, "every scenario ran");
    let not_ok: Vec<String> = results
        .iter()
        .flat_map(|(s, checks)| {
            checks
                .iter()
                .filter(|c| c.status != Status::Success)
                .map(move |c| format!("{s}:{} {:?} {:?}", c.id, c.status, c.error_message))
        })
        .collect();
    let stderr = |s: &str| std::fs::read_to_string(work.join(s).join("stderr.txt")).unwrap();
    assert!(
        not_ok.is_empty(),
        "{not_ok:#?}\nstderr of the first failing scenario:\n{}",
        not_ok
            .first()
            .and_then(|l| l.split(':').next())
            .map(stderr)
            .unwrap_or_default()
    );
    for (scenario, checks) in &results {
        assert!(!checks.is_empty(), "{scenario} produced no checks");
    }
    let summary = summarize("client", &results, &Baseline::default());
    assert!(summary.ok, "{summary:?}");

    // The verified download is saved under its FileValue name, and nothing else.
    let out = work.join("output-file-correct-digest").join("out");
    assert_eq!(listing(&out), [mock::GENERATED_NAME]);
    assert_eq!(
        std::fs::read(out.join(mock::GENERATED_NAME)).unwrap(),
        generated_bytes(mock::GENERATED_SIZE)
    );
    // The mismatching one leaves no file at all: not under its name, no part file either.
    let out = work.join("output-file-wrong-digest").join("out");
    assert_eq!(listing(&out), Vec::<String>::new());
    assert!(
        stderr("output-file-wrong-digest").contains("digest mismatch"),
        "{}",
        stderr("output-file-wrong-digest")
    );
    assert!(
        stderr("insecure-descriptor").contains("https required"),
        "{}",
        stderr("insecure-descriptor")
    );
    let _ = std::fs::remove_dir_all(work);
}

fn client(scenario: &str, url: &str, loopback: bool) -> std::process::Output {
    let mut cmd = std::process::Command::new(BIN);
    cmd.arg(url)
        .env_clear()
        .env("SEP2631_SCENARIO", scenario)
        .env("RUST_LOG", "off");
    if loopback {
        cmd.env("SEP2631_ALLOW_LOOPBACK_HTTP", "1");
    }
    cmd.output().unwrap()
}

#[test]
fn plain_http_endpoints_are_refused_without_the_loopback_opt_in() {
    // Refused before any connection: nothing listens on these addresses.
    let o = client("inline-only-field", "http://127.0.0.1:9/mcp", false);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("https required"), "{err}");
    let o = client("inline-only-field", "http://192.0.2.1:9/mcp", true);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("loopback only"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    let o = client("no-such-scenario", "http://127.0.0.1:9/mcp", true);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("unknown SEP2631_SCENARIO"), "{err}");
    let o = std::process::Command::new(BIN)
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}
