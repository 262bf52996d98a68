//! `Client::round`: one round whose `InputRequiredResult` comes back as the server sent it,
//! with the capabilities the caller declares for it.

#![allow(clippy::unwrap_used)]

use serde_json::json;
use smcp_client::proto::server::tools::CallToolResult;
use smcp_client::{Client, ErrorKind, RoundOutcome};
use smcp_server::{HandlerError, Server, mrtr, tool};

use crate::common;

fn asking_server() -> Server {
    Server::builder("t", "1")
        .tool(
            tool("ask")
                .input_schema(json!({"type": "object"}))
                .handler(|call| async move {
                    let (name, _roots) = call.input.ask((
                        mrtr::elicit_form(
                            "who",
                            "Your name?",
                            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
                        ),
                        mrtr::list_roots("where"),
                    ))?;
                    let name = name
                        .content
                        .and_then(|c| c.get("name").cloned())
                        .map(|v| format!("{v:?}"))
                        .unwrap_or_default();
                    Ok::<_, HandlerError>(CallToolResult::text(format!("hello {name}")))
                }),
        )
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_round_returns_the_questions_as_sent_and_the_retry_completes() {
    let url = common::serve_mcp(asking_server()).await;
    let client = Client::builder(&url).build().unwrap();
    let caps: smcp_client::proto::capabilities::ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {}, "roots": {}})).unwrap();
    let outcome = client
        .round("tools/call", json!({"name": "ask", "arguments": {}}))
        .unwrap()
        .client_capabilities(&caps)
        .send()
        .await
        .unwrap();
    let RoundOutcome::InputRequired(asked) = outcome else {
        panic!("expected questions: {outcome:?}");
    };
    let requests = asked.input_requests.unwrap();
    assert_eq!(
        requests.keys().collect::<Vec<_>>(),
        ["where", "who"],
        "both questions of the round, under the server's keys"
    );
    let state = asked.request_state.unwrap();
    let outcome = client
        .round(
            "tools/call",
            json!({
                "name": "ask",
                "arguments": {},
                "inputResponses": {
                    "who": {"action": "accept", "content": {"name": "Ada"}},
                    "where": {"roots": []}
                },
                "requestState": state
            }),
        )
        .unwrap()
        .client_capabilities(&caps)
        .send()
        .await
        .unwrap();
    let RoundOutcome::Complete(result) = outcome else {
        panic!("expected the result: {outcome:?}");
    };
    let result: serde_json::Value = serde_json::from_str(result.get()).unwrap();
    assert_eq!(
        result["content"][0]["text"], "hello String(\"Ada\")",
        "{result}"
    );
}

#[tokio::test]
async fn the_declared_capabilities_are_the_callers_and_a_wrong_method_is_refused() {
    let url = common::serve_mcp(asking_server()).await;
    // The client's own handler would answer everything; the round declares nothing.
    let client = Client::builder(&url)
        .input_handler(smcp_client::FnInputHandler::new().on_roots(|_| async {
            Ok(smcp_client::proto::client::roots::ListRootsResult { roots: vec![] })
        }))
        .build()
        .unwrap();
    let error = client
        .round("tools/call", json!({"name": "ask", "arguments": {}}))
        .unwrap()
        .client_capabilities(&smcp_client::proto::capabilities::ClientCapabilities::default())
        .send()
        .await
        .unwrap_err();
    assert_eq!(error.jsonrpc_code(), Some(-32021), "{error}");

    let error = client.round("tools/list", json!({})).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Config, "{error}");
    let error = client.round("tools/call", json!([1])).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Config, "{error}");
}
