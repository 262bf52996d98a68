//! The client against the installed base: the Python SDK `mcp` 1.30.0
//! (`tests/interop/server_2025.py`), a stateful MCP 2025-11-25 server, over Streamable HTTP
//! (found by the era fallback, and pinned) and over the 2024-11-05 HTTP+SSE transport.
//!
//! Covers the fallback itself, a tool call, progress, an elicitation answered by the client's
//! `InputHandler` (a server-to-client request on the POST's SSE stream), a resource, a prompt,
//! a list-changed notification through `listen` (the session's GET stream), and the session's
//! `DELETE` on close. `scripts/python-interop-env 1.30.0` installs the SDK (idempotent); set
//! `SMCP_PYTHON_INTEROP=skip` to disable these tests explicitly.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use smcp_test_support::root;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;
use smcp_client::proto::basic::LoggingLevel;
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult, ElicitValue};
use smcp_client::proto::content::ContentBlock;
use smcp_client::proto::patterns::subscriptions::SubscriptionFilter;
use smcp_client::{
    BoxFuture, Client, Era, InputHandler, InputHandlerError, InputKinds, ServerStderr,
    StdioCommand, SubscriptionEvent,
};

/// The mcp 1.30.0 venv's python, or `None` when `SMCP_PYTHON_INTEROP=skip`.
fn python() -> Option<PathBuf> {
    smcp_test_support::python(Some("1.30.0"))
}

/// Starts `server_2025.py` (with `mode` before the port, e.g. `--sse`) and waits for it.
async fn python_server(
    py: &PathBuf,
    mode: Option<&str>,
    path: &str,
) -> (tokio::process::Child, String) {
    let port = smcp_test_support::free_port();
    let mut cmd = tokio::process::Command::new(py);
    cmd.arg(root().join("tests/interop/server_2025.py"));
    if let Some(m) = mode {
        cmd.arg(m);
    }
    let child = cmd
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
            return (child, format!("http://127.0.0.1:{port}{path}"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the Python server did not start on port {port}");
}

/// Answers the form elicitation of `confirm` and counts the questions.
#[derive(Clone, Default)]
struct Proceed {
    asked: Arc<Mutex<Vec<String>>>,
}

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
            let ElicitRequestParams::Form(f) = p else {
                return Err(InputHandlerError::new("expected a form"));
            };
            self.asked.lock().unwrap().push(f.message);
            let mut content = BTreeMap::new();
            content.insert("proceed".to_owned(), ElicitValue::Bool(true));
            Ok(ElicitResult::accept(content))
        })
    }
}

fn text(blocks: &[ContentBlock]) -> String {
    match blocks.first() {
        Some(ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

/// Tools, progress, elicitation, a resource and a prompt.
async fn exercise(client: &Client, handler: &Proceed) {
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
    let logs = Arc::new(Mutex::new(Vec::new()));
    let (p, l) = (progress.clone(), logs.clone());
    let r = client
        .tool_call("slow_echo")
        .arguments(json!({"text": "hey"}))
        .on_progress(move |n| p.lock().unwrap().push(n.progress))
        .on_log(LoggingLevel::Info, move |m| l.lock().unwrap().push(m.data))
        .send()
        .await
        .unwrap();
    assert_eq!(text(&r.content), "hey");
    assert_eq!(*progress.lock().unwrap(), [1.0, 2.0, 3.0]);
    assert_eq!(*logs.lock().unwrap(), [json!("echoing hey")]);

    let r = client.call_tool("confirm", json!({})).await.unwrap();
    assert_eq!(text(&r.content), "action=accept content={'proceed': True}");
    assert_eq!(*handler.asked.lock().unwrap(), ["Proceed?"]);

    let resources = client.list_resources().await.unwrap();
    assert_eq!(resources.len(), 1);
    assert_eq!(resources[0].uri, "note://greeting");
    let read = client.read_resource("note://greeting").await.unwrap();
    assert_eq!(read.text(), "hello from python");

    let args = BTreeMap::from([("name".to_owned(), "Ada".to_owned())]);
    let prompt = client.get_prompt("greet", args).await.unwrap();
    assert_eq!(prompt.text(), "Say hello to Ada.");
}

#[tokio::test(flavor = "multi_thread")]
async fn falls_back_to_initialize_and_speaks_2025_11_25() {
    let Some(py) = python() else { return };
    let (_child, url) = python_server(&py, None, "/mcp").await;
    let handler = Proceed::default();
    let client = Client::builder(&url)
        .input_handler(handler.clone())
        .timeout(Some(Duration::from_secs(30)))
        .build()
        .unwrap();
    exercise(&client, &handler).await;
    assert_eq!(client.era(), Some(Era::Session));
    assert_eq!(client.protocol_version(), "2025-11-25");
    let info = client.session_info().await.unwrap();
    assert_eq!(info.server_info["name"], "py-legacy-interop");
    let session_id = info.session_id.clone().expect("a session id");

    // 2026-07-28-only features say which version was negotiated.
    let err = client.discover().await.unwrap_err();
    assert_eq!(
        err.kind(),
        smcp_client::ErrorKind::UnsupportedInEra,
        "{err}"
    );
    assert_eq!(err.negotiated_version(), Some("2025-11-25"));

    // list_changed arrives on the session's GET stream, through the listen API.
    let mut sub = client.listen(SubscriptionFilter {
        tools_list_changed: Some(true),
        ..SubscriptionFilter::default()
    });
    let first = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap();
    match first {
        Some(Ok(SubscriptionEvent::Acknowledged(granted))) => {
            assert_eq!(granted.tools_list_changed, Some(true));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        text(&client.call_tool("touch", json!({})).await.unwrap().content),
        "touched"
    );
    let next = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap();
    assert!(
        matches!(next, Some(Ok(SubscriptionEvent::ToolsListChanged))),
        "{next:?}"
    );
    drop(sub);

    // close() ends the session with DELETE: the server no longer knows its id.
    client.close().await;
    let after = reqwest::Client::new()
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session_id)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(after.status().as_u16(), 404, "the session survived close()");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pinned_version_skips_the_probe_and_the_http_sse_transport_works() {
    let Some(py) = python() else { return };
    let (_child, url) = python_server(&py, None, "/mcp").await;
    let handler = Proceed::default();
    let client = Client::builder(&url)
        .protocol_version("2025-06-18")
        .input_handler(handler.clone())
        .build()
        .unwrap();
    exercise(&client, &handler).await;
    assert_eq!(client.protocol_version(), "2025-06-18");
    client.close().await;

    let pinned_modern = Client::builder(&url)
        .protocol_version("2026-07-28")
        .build()
        .unwrap();
    let err = pinned_modern.list_tools().await.unwrap_err();
    assert!(err.to_string().contains("pinned to 2026-07-28"), "{err}");

    // The 2024-11-05 HTTP+SSE server (mcp.server.sse): found by the fallback from /sse.
    let (_sse_child, sse_url) = python_server(&py, Some("--sse"), "/sse").await;
    let handler = Proceed::default();
    let client = Client::builder(&sse_url)
        .input_handler(handler.clone())
        .timeout(Some(Duration::from_secs(30)))
        .build()
        .unwrap();
    exercise(&client, &handler).await;
    assert_eq!(client.era(), Some(Era::HttpSse));
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn over_stdio_the_discover_probe_falls_back_to_initialize() {
    let Some(py) = python() else { return };
    let server = || {
        StdioCommand::new(&py)
            .arg(root().join("tests/interop/server_2025.py"))
            .arg("--stdio")
            .stderr(ServerStderr::Null)
    };
    // Probed: server/discover is refused with -32602 (not a 2026-07-28 error): initialize.
    let handler = Proceed::default();
    let client = Client::stdio(server())
        .input_handler(handler.clone())
        .timeout(Some(Duration::from_secs(30)))
        .build()
        .unwrap();
    exercise(&client, &handler).await;
    assert_eq!(client.era(), Some(Era::Session));
    assert_eq!(client.protocol_version(), "2025-11-25");
    let info = client.session_info().await.unwrap();
    assert_eq!(info.server_info["name"], "py-legacy-interop");
    let err = client.discover().await.unwrap_err();
    assert_eq!(
        err.kind(),
        smcp_client::ErrorKind::UnsupportedInEra,
        "{err}"
    );

    // list_changed arrives on the child's stdout, through the listen API.
    let mut sub = client.listen(SubscriptionFilter {
        tools_list_changed: Some(true),
        ..SubscriptionFilter::default()
    });
    let first = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap();
    match first {
        Some(Ok(SubscriptionEvent::Acknowledged(granted))) => {
            assert_eq!(granted.tools_list_changed, Some(true));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        text(&client.call_tool("touch", json!({})).await.unwrap().content),
        "touched"
    );
    let next = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap();
    assert!(
        matches!(next, Some(Ok(SubscriptionEvent::ToolsListChanged))),
        "{next:?}"
    );
    drop(sub);
    client.close().await;

    // Pinned: initialize straight away with exactly that version.
    let handler = Proceed::default();
    let client = Client::stdio(server())
        .protocol_version("2025-06-18")
        .input_handler(handler.clone())
        .build()
        .unwrap();
    exercise(&client, &handler).await;
    assert_eq!(client.protocol_version(), "2025-06-18");
    client.close().await;
}

/// The Python SDK `mcp` 2.3.0 (2026-07-28) server over stdio: the probe keeps it modern.
#[tokio::test(flavor = "multi_thread")]
async fn over_stdio_the_probe_keeps_a_2026_server_modern() {
    if python().is_none() {
        return;
    }
    let out = std::process::Command::new(root().join("scripts/python-interop-env"))
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "scripts/python-interop-env failed");
    let py = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let client = Client::stdio(
        StdioCommand::new(py)
            .arg(root().join("tests/interop/server.py"))
            .arg("--stdio")
            .stderr(ServerStderr::Null),
    )
    .build()
    .unwrap();
    let d = client.discover().await.unwrap();
    assert!(d.supported_versions.iter().any(|v| v == "2026-07-28"));
    assert_eq!(client.era(), Some(Era::Stateless));
    assert!(client.session_info().await.is_none());
    client.close().await;
}
