//! smcp's own stdio client (`Client::stdio`) against the real `smcpd --stdio`: the tool list,
//! a call with progress, a multi round-trip elicitation, a listen stream with a change, a call
//! cancelled by its timeout while the connection goes on, an inline SEP-2631 file, and a clean
//! exit on close.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::json;
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult, ElicitValue};
use smcp_client::proto::content::ContentBlock;
use smcp_client::proto::patterns::subscriptions::SubscriptionFilter;
use smcp_client::{
    BoxFuture, Client, InputHandler, InputHandlerError, InputKinds, ServerStderr, StdioCommand,
    SubscriptionEvent,
};

/// Accepts every confirmation.
struct Confirm;

impl InputHandler for Confirm {
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
            assert!(matches!(p, ElicitRequestParams::Form(ref f) if f.message == "Really deploy?"));
            let mut content = std::collections::BTreeMap::new();
            content.insert("confirm".to_owned(), ElicitValue::Bool(true));
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

#[tokio::test(flavor = "multi_thread")]
async fn smcp_client_against_smcpd_over_stdio() {
    let stderr = Arc::new(Mutex::new(Vec::<String>::new()));
    let lines = stderr.clone();
    let command = StdioCommand::new(env!("CARGO_BIN_EXE_smcpd"))
        .args(["--stdio", "--log", "smcpd=info"])
        .stderr(ServerStderr::lines(move |l| {
            lines.lock().unwrap().push(l.to_owned());
        }));
    let client = Client::stdio(command)
        .input_handler(Confirm)
        .timeout(Some(Duration::from_secs(20)))
        .build()
        .unwrap();

    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(names.iter().any(|n| n == "echo"), "{names:?}");

    let progress = Arc::new(Mutex::new(Vec::new()));
    let p = progress.clone();
    let r = client
        .tool_call("count")
        .arguments(json!({"to": 3, "delay_ms": 1}))
        .on_progress(move |n| p.lock().unwrap().push(n.progress))
        .send()
        .await
        .unwrap();
    assert_eq!(text(&r.content), "counted to 3");
    assert_eq!(*progress.lock().unwrap(), [1.0, 2.0, 3.0]);

    let r = client
        .call_tool("confirm_action", json!({"action": "deploy"}))
        .await
        .unwrap();
    assert_eq!(text(&r.content), "done: deploy");

    let mut sub = client.listen(SubscriptionFilter {
        tools_list_changed: Some(true),
        ..SubscriptionFilter::default()
    });
    let first = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap();
    assert!(
        matches!(first, Some(Ok(SubscriptionEvent::Acknowledged(_)))),
        "{first:?}"
    );
    client.call_tool("toggle_extra", json!({})).await.unwrap();
    let next = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap();
    assert!(
        matches!(next, Some(Ok(SubscriptionEvent::ToolsListChanged))),
        "{next:?}"
    );
    drop(sub);

    // A call dropped by its caller once the server is working on it (its first progress
    // notification has arrived) is cancelled on the server; the connection goes on.
    let (started_tx, started) = tokio::sync::oneshot::channel();
    let started_tx = Mutex::new(Some(started_tx));
    let slow = client
        .tool_call("count")
        .arguments(json!({"to": 1000, "delay_ms": 10}))
        .on_progress(move |_| {
            if let Some(tx) = started_tx.lock().unwrap().take() {
                let _ = tx.send(());
            }
        })
        .send();
    tokio::select! {
        done = slow => panic!("the slow call finished: {done:?}"),
        _ = started => {}
    }
    let r = client
        .call_tool("echo", json!({"text": "still here"}))
        .await
        .unwrap();
    assert_eq!(text(&r.content), "still here");

    // SEP-2631: an inline file argument.
    let r = client
        .call_tool(
            "analyze_document",
            json!({"document": "data:text/plain;name=a.txt;base64,aGVsbG8K"}),
        )
        .await
        .unwrap();
    assert_eq!(r.structured_content.as_ref().unwrap()["size"], 6, "{r:?}");

    let status = client
        .close()
        .await
        .expect("a stdio client has an exit status");
    assert!(status.success(), "{status:?}");
    let stderr = stderr.lock().unwrap().join("\n");
    assert!(stderr.contains("count cancelled by the client"), "{stderr}");
}
