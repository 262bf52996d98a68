//! The binary's exit codes and output layout: 1 on unexpected failures, 0 when they are
//! expected, 1 again when an expected-failures entry is stale.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support;

use std::process::Command;

use support::refserver::{RefOptions, start};

fn suite(args: &[&str]) -> i32 {
    let out = Command::new(env!("CARGO_BIN_EXE_smcp-conformance-files"))
        .args(args)
        .output()
        .unwrap();
    out.status.code().unwrap()
}

fn tmp(tag: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("sep2631-cli-{tag}-{}", std::process::id()))
}

#[tokio::test(flavor = "multi_thread")]
async fn exit_codes_follow_the_expected_failures_file() {
    let broken = start(RefOptions {
        skip_digest_check: true,
        ..RefOptions::default()
    })
    .await;
    let good = start(RefOptions::default()).await;
    let dir = tmp("server");
    let baseline = dir.join("baseline.yml");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        &baseline,
        "server:\n  - files-upload-integrity:sep2631-digest-mismatch-rejected\n  - files-upload-integrity:sep2631-digest-mismatch-distinct-reason\nclient: []\n",
    )
    .unwrap();
    let o = dir.join("out");
    let (o, b) = (
        o.to_str().unwrap().to_owned(),
        baseline.to_str().unwrap().to_owned(),
    );
    let run = |url: String, with_baseline: bool| {
        let (o, b) = (o.clone(), b.clone());
        tokio::task::spawn_blocking(move || {
            let mut args = vec![
                "server",
                "--url",
                &url,
                "--insecure-loopback-http",
                "-o",
                &o,
            ];
            if with_baseline {
                args.extend(["--expected-failures", &b]);
            }
            suite(&args)
        })
    };
    assert_eq!(
        run(broken.clone(), false).await.unwrap(),
        1,
        "broken fixture must fail the run"
    );
    assert!(
        std::path::Path::new(&o)
            .join("files-upload-integrity/checks.json")
            .exists()
    );
    assert!(std::path::Path::new(&o).join("summary.json").exists());
    assert_eq!(
        run(broken, true).await.unwrap(),
        0,
        "baselined failures are expected"
    );
    assert_eq!(run(good.clone(), false).await.unwrap(), 0);
    assert_eq!(
        run(good, true).await.unwrap(),
        1,
        "stale baseline entries fail the run"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn client_leg_with_a_do_nothing_client_exits_1() {
    let dir = tmp("client");
    let code = suite(&[
        "client",
        "--command",
        "true",
        "--timeout-secs",
        "10",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    for s in smcp_conformance_files::client_leg::SCENARIOS {
        assert!(
            dir.join(s).join("checks.json").exists(),
            "{s}/checks.json missing"
        );
    }
    assert_eq!(
        suite(&[
            "client",
            "--command",
            "true",
            "--scenario",
            "nope",
            "-o",
            dir.to_str().unwrap()
        ]),
        2
    );
    let _ = std::fs::remove_dir_all(dir);
}
