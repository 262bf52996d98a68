//! The server leg against the in-test reference server: every check passes; the broken fixture
//! (digest check disabled) is caught as FAILURE; the expected-failures file and stale entries work.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::support;

use smcp_conformance_files::report::{Baseline, LegResults, Status, summarize, write_results};
use smcp_conformance_files::server_leg::{ServerLegOptions, run};
use support::refserver::{RefOptions, start};

async fn leg(opts: RefOptions) -> LegResults {
    let url = start(opts).await;
    run(&ServerLegOptions {
        url,
        ca_pem: None,
        insecure_loopback_http: true,
        max_expiry_wait: std::time::Duration::from_secs(5),
    })
    .await
    .unwrap()
}

fn statuses(r: &LegResults, scenario: &str, id: &str) -> Vec<Status> {
    r[scenario]
        .iter()
        .filter(|c| c.id == id)
        .map(|c| c.status)
        .collect()
}

fn failures(r: &LegResults) -> Vec<String> {
    r.iter()
        .flat_map(|(s, cs)| {
            cs.iter()
                .filter(|c| c.status.is_failure())
                .map(move |c| format!("{s}:{} {:?}", c.id, c.error_message))
        })
        .collect()
}

#[tokio::test]
async fn reference_server_passes_every_check() {
    let r = leg(RefOptions::default()).await;
    assert_eq!(failures(&r), Vec::<String>::new());
    // Vacuous-pass guard: the checks that matter did run and succeed.
    for (s, id) in [
        (
            "files-capabilities",
            "sep2631-files-method-requires-capability",
        ),
        ("files-inline", "sep2631-inline-max-size-boundary-accepted"),
        ("files-inline", "sep2631-inline-max-size-exceeded-rejected"),
        ("files-upload", "sep2631-upload-raw-put"),
        ("files-upload", "sep2631-file-uri-accepted-in-tool-call"),
        ("files-upload", "sep2631-upload-replay-refused"),
        ("files-upload-integrity", "sep2631-digest-mismatch-rejected"),
        ("files-upload-integrity", "sep2631-size-mismatch-rejected"),
        ("files-uris", "sep2631-unknown-file-uri-rejected"),
        ("files-download", "sep2631-downloaded-bytes-match"),
        ("files-elicitation", "sep2631-mrtr-retry-with-file-uri"),
    ] {
        assert!(
            statuses(&r, s, id).contains(&Status::Success),
            "{s}:{id} did not succeed"
        );
    }
    let summary = summarize("server", &r, &Baseline::default());
    assert!(summary.ok);
    // Every check cites a SEP sentence.
    assert!(
        r.values()
            .flatten()
            .all(|c| !c.spec_references.is_empty()
                && c.spec_references[0].id.starts_with("SEP-2631"))
    );
    let dir = std::env::temp_dir().join(format!("sep2631-server-{}", std::process::id()));
    write_results(&dir, &r, &summary).unwrap();
    let checks: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("files-upload/checks.json")).unwrap())
            .unwrap();
    let first = &checks[0];
    for k in [
        "id",
        "name",
        "description",
        "status",
        "timestamp",
        "specReferences",
    ] {
        assert!(first.get(k).is_some(), "checks.json row lacks {k}");
    }
    assert!(dir.join("summary.json").exists());
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn multipart_reference_server_passes() {
    let r = leg(RefOptions {
        multipart: true,
        ..RefOptions::default()
    })
    .await;
    assert_eq!(failures(&r), Vec::<String>::new());
    assert_eq!(
        statuses(&r, "files-upload", "sep2631-upload-multipart"),
        [Status::Success]
    );
    assert_eq!(
        statuses(&r, "files-upload", "sep2631-upload-raw-put"),
        [Status::Skipped]
    );
}

#[tokio::test]
async fn broken_fixture_without_digest_check_fails() {
    let r = leg(RefOptions {
        skip_digest_check: true,
        ..RefOptions::default()
    })
    .await;
    assert_eq!(
        statuses(
            &r,
            "files-upload-integrity",
            "sep2631-digest-mismatch-rejected"
        ),
        [Status::Failure]
    );
    let summary = summarize("server", &r, &Baseline::default());
    assert!(!summary.ok);
    assert!(
        summary
            .unexpected_failures
            .contains(&"files-upload-integrity:sep2631-digest-mismatch-rejected".to_owned())
    );
    // Baselined, the run passes; the same baseline against a correct server is stale.
    let baseline = Baseline::parse(
        "server:\n  - files-upload-integrity:sep2631-digest-mismatch-rejected\n  - files-upload-integrity:sep2631-digest-mismatch-distinct-reason\n",
    )
    .unwrap();
    let s = summarize("server", &r, &baseline);
    assert!(s.ok, "{s:?}");
    let good = leg(RefOptions::default()).await;
    let s = summarize("server", &good, &baseline);
    assert!(!s.ok);
    assert_eq!(s.stale_baseline.len(), 2);
}

#[tokio::test]
async fn expired_descriptor_is_refused_when_the_suite_may_wait() {
    let r = leg(RefOptions {
        expires_in_secs: Some(2),
        ..RefOptions::default()
    })
    .await;
    assert_eq!(failures(&r), Vec::<String>::new());
    assert_eq!(
        statuses(&r, "files-upload", "sep2631-upload-expired-refused"),
        [Status::Success]
    );
}
