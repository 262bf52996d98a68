//! The client against the real smcpd demo server, in-process on port 0.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use smcp_client::proto::content::ContentBlock;
use smcp_client::proto::server::utilities::completion::{CompletionReference, PromptReference};
use smcp_client::{CancellationToken, Client};

fn text(result: &smcp_client::proto::server::tools::CallToolResult) -> String {
    match result.content.first() {
        Some(ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test]
async fn discover_list_call_read_prompt_complete() {
    let url = common::smcpd().await;
    let client = Client::builder(&url).build().unwrap();
    let discover = client.discover().await.unwrap();
    assert!(
        discover
            .supported_versions
            .iter()
            .any(|v| v == "2026-07-28")
    );
    let tools = client.list_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert!(
        names.contains(&"echo") && names.contains(&"add"),
        "{names:?}"
    );
    let r = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "hi");
    let r = client
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"sum": 3.0})));
    let read = client.read_resource("smcp://readme").await.unwrap();
    assert_eq!(read.contents.len(), 1);
    assert!(!client.list_resources().await.unwrap().is_empty());
    let _templates = client.list_resource_templates().await.unwrap();
    assert!(!client.list_prompts().await.unwrap().is_empty());
    let mut args = BTreeMap::new();
    args.insert("name".to_owned(), "Ada".to_owned());
    let prompt = client.get_prompt("greet", args).await.unwrap();
    assert!(format!("{:?}", prompt.messages).contains("Ada"));
    let reference: CompletionReference =
        serde_json::from_value(json!({"type": "ref/prompt", "name": "greet"})).unwrap();
    let done = client
        .complete(reference, "name", "a", BTreeMap::new())
        .await
        .unwrap();
    assert!(done.completion.values.iter().any(|v| v == "Ada"));
    let _ = PromptReference::clone;
}

#[tokio::test]
async fn unknown_tool_is_a_typed_jsonrpc_error() {
    let url = common::smcpd().await;
    let client = Client::builder(&url).build().unwrap();
    let err = client.call_tool("nope", json!({})).await.unwrap_err();
    assert_eq!(err.jsonrpc_code(), Some(-32602), "{err}");
}

#[tokio::test]
async fn progress_is_delivered_while_the_call_runs() {
    let url = common::smcpd().await;
    let client = Client::builder(&url).build().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let r = client
        .tool_call("progress_echo")
        .arguments(json!({"text": "p"}))
        .on_progress(move |p| s.lock().unwrap().push(p.progress))
        .send()
        .await
        .unwrap();
    assert_eq!(text(&r), "p");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 10, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] < w[1]));
}

/// Dropping the call's future closes the stream; the server's handler sees the cancellation.
#[tokio::test]
async fn dropping_the_future_cancels_on_the_server() {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let tx = Arc::new(Mutex::new(Some(tx)));
    let server = smcp_server::Server::builder("t", "1")
        .tool(
            smcp_server::tool("wait")
                .input_schema(json!({"type": "object"}))
                .handler(move |call| {
                    let tx = tx.clone();
                    async move {
                        // Progress forces an SSE response, so the client holds a live stream.
                        let _ = call.ctx.progress(1.0, None, None).await;
                        call.ctx.cancelled().await;
                        if let Some(tx) = tx.lock().unwrap().take() {
                            let _ = tx.send(());
                        }
                        Err(smcp_server::HandlerError::failed("cancelled"))
                    }
                }),
        )
        .build()
        .unwrap();
    let url = common::serve_mcp(server).await;
    let client = Client::builder(&url).build().unwrap();
    let token = CancellationToken::new();
    let call = client
        .tool_call("wait")
        .on_progress(|_| {})
        .cancellation(token.clone())
        .send();
    let canceller = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        token.cancel();
    };
    let (result, ()) = tokio::join!(call, canceller);
    assert!(result.unwrap_err().is_cancelled());
    tokio::time::timeout(Duration::from_secs(5), rx)
        .await
        .expect("the server saw the cancellation")
        .unwrap();
}

#[tokio::test]
async fn per_call_timeout_is_typed() {
    let url = common::smcpd().await;
    let client = Client::builder(&url).build().unwrap();
    let err = client
        .tool_call("count")
        .arguments(json!({"to": 50, "delay_ms": 100}))
        .timeout(Some(Duration::from_millis(150)))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
}

#[tokio::test]
async fn connection_refused_is_a_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let client = Client::builder(format!("http://{addr}/mcp"))
        .build()
        .unwrap();
    let err = client.list_tools().await.unwrap_err();
    assert!(err.is_connect(), "{err}");
    assert!(
        Client::builder("not a url")
            .build()
            .unwrap_err()
            .is_config()
    );
}

#[tokio::test]
async fn log_messages_are_delivered_when_asked_for() {
    let url = common::smcpd().await;
    let client = Client::builder(&url).build().unwrap();
    let logs = Arc::new(Mutex::new(Vec::new()));
    let l = logs.clone();
    let r = client
        .tool_call("count")
        .arguments(json!({"to": 3, "delay_ms": 0}))
        .on_log(smcp_client::proto::basic::LoggingLevel::Debug, move |m| {
            l.lock().unwrap().push(m.data);
        })
        .send()
        .await
        .unwrap();
    assert_eq!(text(&r), "counted to 3");
    assert_eq!(
        *logs.lock().unwrap(),
        [json!({"step": 1}), json!({"step": 2}), json!({"step": 3})]
    );
}
