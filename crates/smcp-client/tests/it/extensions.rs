//! Extensions the application declares (`ClientBuilder::extension`, `ui_apps`): sent under
//! `capabilities.extensions` on every request, beside the ones the client manages itself.

#![allow(clippy::unwrap_used)]

use serde_json::{Map, json};
use smcp_client::Client;
use smcp_client::proto::ext::ui::{EXTENSION_ID, MIME_TYPE};
use smcp_client::proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, Server, tool};

use crate::common;

/// A server whose tool answers with the extensions the request declared.
fn mirror() -> Server {
    Server::builder("t", "1")
        .tool(tool("extensions").handler(|call| async move {
            let declared = call
                .ctx
                .client_capabilities()
                .get("extensions")
                .cloned()
                .unwrap_or_default();
            Ok::<_, HandlerError>(CallToolResult::text(declared.to_string()))
        }))
        .build()
        .unwrap()
}

#[tokio::test]
async fn declared_extensions_go_up_with_every_request() {
    let url = common::serve_mcp(mirror()).await;
    let mut settings = Map::new();
    settings.insert("level".to_owned(), json!(2));
    let client = Client::builder(&url)
        .ui_apps()
        .extension("com.example/feature", settings)
        .build()
        .unwrap();
    let result = client.call_tool("extensions", json!({})).await.unwrap();
    let declared: serde_json::Value = serde_json::from_str(&result.text_content()).unwrap();
    assert_eq!(declared[EXTENSION_ID], json!({"mimeTypes": [MIME_TYPE]}));
    assert_eq!(declared["com.example/feature"], json!({"level": 2}));
    // The client's own (tasks, on by default for tools/call) are still there.
    assert!(
        declared["io.modelcontextprotocol/tasks"].is_object(),
        "{declared}"
    );
}

#[tokio::test]
async fn a_round_of_completion_is_answered_complete() {
    let server = Server::builder("t", "1")
        .prompt(
            smcp_server::prompt("greet")
                .argument("name", "whom", true)
                .handler(|_get| async {
                    Ok(smcp_client::proto::server::prompts::GetPromptResult::new(
                        Vec::new(),
                    ))
                }),
        )
        .completion(|request: smcp_server::CompletionRequest| async move {
            Ok(smcp_server::Completion::values(vec![format!(
                "{}!",
                request.value
            )]))
        })
        .build()
        .unwrap();
    let url = common::serve_mcp(server).await;
    let client = Client::builder(&url).build().unwrap();
    let outcome = client
        .round(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                   "argument": {"name": "name", "value": "al"}}),
        )
        .unwrap()
        .send()
        .await
        .unwrap();
    let smcp_client::RoundOutcome::Complete(result) = outcome else {
        panic!("{outcome:?}")
    };
    let result: serde_json::Value = serde_json::from_str(result.get()).unwrap();
    assert_eq!(result["completion"]["values"], json!(["al!"]));
}
