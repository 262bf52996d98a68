//! Interop with an implementation nobody here wrote: the Python SDK `mcp` 2.3.x.
//!
//! (a) this client against `tests/interop/server.py` (progress, an MRTR elicitation, a listen
//! stream), over Streamable HTTP and over stdio (`server.py --stdio`); (b) the Python client
//! (`tests/interop/client.py`) against smcpd in-process.
//! `scripts/python-interop-env` installs the SDK into `.cache/python-interop/` (idempotent).
//! Set `SMCP_PYTHON_INTEROP=skip` to disable the install step and these tests explicitly; they
//! are never skipped otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;

use std::path::PathBuf;

use smcp_test_support::root;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult, ElicitValue};
use smcp_client::proto::content::ContentBlock;
use smcp_client::proto::patterns::subscriptions::SubscriptionFilter;
use smcp_client::{
    BoxFuture, Client, InputHandler, InputHandlerError, InputKinds, ServerStderr, StdioCommand,
    SubscriptionEvent,
};

/// The mcp 2.3.0 venv's python, or `None` when `SMCP_PYTHON_INTEROP=skip`.
fn python() -> Option<PathBuf> {
    smcp_test_support::python(None)
}

fn text(blocks: &[ContentBlock]) -> String {
    match blocks.first() {
        Some(ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

struct Proceed;

impl InputHandler for Proceed {
    fn kinds(&self) -> InputKinds {
        InputKinds {
            elicitation_form: true,
            ..InputKinds::default()
        }
    }
    fn elicit(
        &self,
        p: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, InputHandlerError>> {
        Box::pin(async move {
            assert!(matches!(p, ElicitRequestParams::Form(ref f) if f.message == "Proceed?"));
            let mut content = std::collections::BTreeMap::new();
            content.insert("proceed".to_owned(), ElicitValue::Bool(true));
            Ok(ElicitResult::accept(content))
        })
    }
}

/// Starts `server.py` on a free port and waits until it accepts connections.
async fn python_server(py: &PathBuf) -> (tokio::process::Child, String) {
    let port = smcp_test_support::free_port();
    let child = tokio::process::Command::new(py)
        .arg(root().join("tests/interop/server.py"))
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..150 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return (child, format!("http://127.0.0.1:{port}/mcp"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the Python server did not start on port {port}");
}

#[tokio::test(flavor = "multi_thread")]
async fn rust_client_against_python_server() {
    let Some(py) = python() else { return };
    let (_child, url) = python_server(&py).await;
    let client = Client::builder(&url)
        .input_handler(Proceed)
        .build()
        .unwrap();
    exercise(&client).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rust_client_against_python_server_over_stdio() {
    let Some(py) = python() else { return };
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let lines = stderr.clone();
    let server = StdioCommand::new(&py)
        .arg(root().join("tests/interop/server.py"))
        .arg("--stdio")
        .stderr(ServerStderr::lines(move |l| {
            lines.lock().unwrap().push(l.to_owned());
        }));
    let client = Client::stdio(server)
        .input_handler(Proceed)
        .timeout(Some(Duration::from_secs(30)))
        .build()
        .unwrap();
    assert!(client.url().starts_with("stdio:"), "{}", client.url());
    exercise(&client).await;
    // The SDK exits on stdin EOF: a clean shutdown without signals.
    let status = tokio::time::timeout(Duration::from_secs(10), client.close())
        .await
        .unwrap();
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "stderr: {:?}",
        stderr.lock().unwrap()
    );
}

/// Discovery, listing, progress, an MRTR elicitation and a listen stream: the same calls over
/// either transport.
async fn exercise(client: &Client) {
    let discover = client.discover().await.unwrap();
    assert!(
        discover
            .supported_versions
            .iter()
            .any(|v| v == "2026-07-28")
    );
    let mut names: Vec<_> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    names.sort();
    assert_eq!(names, ["confirm", "slow_echo", "touch"]);

    let progress = Arc::new(Mutex::new(Vec::new()));
    let p = progress.clone();
    let r = client
        .tool_call("slow_echo")
        .arguments(json!({"text": "hey"}))
        .on_progress(move |n| p.lock().unwrap().push(n.progress))
        .send()
        .await
        .unwrap();
    assert_eq!(text(&r.content), "hey");
    assert_eq!(*progress.lock().unwrap(), [1.0, 2.0, 3.0]);

    let r = client.call_tool("confirm", json!({})).await.unwrap();
    let t = text(&r.content);
    assert!(
        t.contains("state=round-1") && t.contains("action=accept") && t.contains("proceed"),
        "{t}"
    );

    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        ..SubscriptionFilter::default()
    };
    let mut sub = client.listen(filter);
    let first = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap();
    assert!(
        matches!(first, Some(Ok(SubscriptionEvent::Acknowledged(_)))),
        "{first:?}"
    );
    client.call_tool("touch", json!({})).await.unwrap();
    let next = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap();
    assert!(
        matches!(next, Some(Ok(SubscriptionEvent::ToolsListChanged))),
        "{next:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn python_client_against_smcpd() {
    let Some(py) = python() else { return };
    let url = common::smcpd().await;
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(&py)
            .arg(root().join("tests/interop/client.py"))
            .arg(&url)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the Python client finished")
    .unwrap();
    assert!(
        out.status.success(),
        "python client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["tools"],
        json!([
            "add",
            "ask_llm",
            "confirm_action",
            "confirm_once",
            "count",
            "echo",
            "progress_echo",
            "toggle_extra"
        ])
    );
    assert_eq!(report["echo"], "hi from python");
    assert_eq!(report["add"], json!({"sum": 5.0}));
    assert_eq!(report["progress"].as_array().map(Vec::len), Some(10));
    assert!(
        report["readme"]
            .as_str()
            .unwrap()
            .contains("reference server")
    );
    assert!(report["prompt"].as_str().unwrap().contains("Ada"));
    assert_eq!(report["missing_code"], -32602);
}
