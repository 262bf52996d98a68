//! The Python MCP SDK 1.30.0 client (stateful, 2025-11-25: `streamablehttp_client` and
//! `ClientSession`, installed by `scripts/python-interop-env 1.30.0`) against a real `smcpd`
//! on port 0 (issue 13): a tool call with progress, an elicitation answered by the client's
//! callback, a resource, a prompt, and a list-changed notification on the GET stream. The
//! same script with its stdio client (`stdio_client`) against `smcpd --stdio`, which it
//! launches: the same exchange on one connection. `SMCP_PYTHON_INTEROP=skip` disables both.

#![cfg(feature = "legacy")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::support;

use smcp_test_support::root;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use support::Smcpd;

/// The 1.30.0 interop venv's python, or `None` when `SMCP_PYTHON_INTEROP=skip`.
fn python() -> Option<PathBuf> {
    smcp_test_support::python(Some("1.30.0"))
}

#[tokio::test]
async fn python_sdk_1_30_client_over_a_2025_11_25_session() {
    let Some(py) = python() else { return };
    let server = Smcpd::start_with(&["--clock-secs", "0"]);
    let url = format!("http://{}/mcp", server.addr);
    let out = tokio::time::timeout(
        Duration::from_secs(90),
        tokio::process::Command::new(&py)
            .arg(root().join("tests/interop/legacy_client.py"))
            .arg(&url)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the Python client finished")
    .unwrap();
    let (_, log) = server.stop();
    assert!(
        out.status.success(),
        "python client failed:\n{}\nserver log:\n{log}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(seen["protocolVersion"], "2025-11-25", "{seen}");
    assert_eq!(seen["sessionId"], true);
    check(&seen);
}

#[tokio::test]
async fn python_sdk_1_30_stdio_client_against_smcpd_stdio() {
    let Some(py) = python() else { return };
    let out = tokio::time::timeout(
        Duration::from_secs(90),
        tokio::process::Command::new(&py)
            .arg(root().join("tests/interop/legacy_client.py"))
            .arg("--stdio")
            .arg(env!("CARGO_BIN_EXE_smcpd"))
            .args(["--stdio", "--clock-secs", "0", "--log", "smcp_server=debug"])
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the Python client finished")
    .unwrap();
    assert!(
        out.status.success(),
        "python client failed (its stderr carries the server's log):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(seen["protocolVersion"], "2025-11-25", "{seen}");
    // The connection is the session: no session id.
    assert_eq!(seen["sessionId"], Value::Null, "{seen}");
    check(&seen);
}

/// What both transports must have shown the client.
fn check(seen: &Value) {
    assert_eq!(seen["serverName"], "smcpd");
    assert_eq!(seen["echo"], "hello");
    let progress: Vec<f64> = seen["progress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_f64().unwrap())
        .collect();
    assert_eq!(
        progress,
        (1..=10).map(f64::from).collect::<Vec<_>>(),
        "{seen}"
    );
    assert_eq!(
        seen["elicitations"],
        serde_json::json!(["Really deploy?"]),
        "{seen}"
    );
    assert_eq!(seen["confirmIsError"], false, "{seen}");
    assert!(
        seen["confirm"].as_str().unwrap().contains("deploy"),
        "{seen}"
    );
    assert!(
        seen["readme"].as_str().is_some_and(|t| !t.is_empty()),
        "{seen}"
    );
    assert_eq!(
        seen["prompt"], "Write a warm, one-line greeting for Ada.",
        "{seen}"
    );
    assert!(
        seen["notifications"]
            .as_array()
            .unwrap()
            .contains(&Value::from("notifications/tools/list_changed")),
        "{seen}"
    );
    assert!(
        seen["tools"]
            .as_array()
            .unwrap()
            .contains(&Value::from("toggle_extra")),
        "{seen}"
    );
}
