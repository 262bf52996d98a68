//! The extension seam on its own, with a small task-like extension (not SEP-2631): methods of
//! its own routed by dispatch with their `Mcp-Name` member checked by the HTTP layer, a
//! capability in `server/discover`, tools refused or annotated at registration (also at
//! runtime), wrapped tool calls that answer without the handler or with another result shape,
//! the request's principal visible to the extension, and gated `resources/read` results.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use serde_json::{Map, Value, json};
use smcp_proto::capabilities::ServerCapabilities;
use smcp_proto::content::{ResourceContents, TextResourceContents};
use smcp_proto::server::resources::ReadResourceResult;
use smcp_proto::server::tools::{CallToolResult, Tool};
use smcp_server::extension::{ExtensionRequest, ExtensionResult, ToolData, ToolOutcome};
use smcp_server::tools::BoxFuture;
use smcp_server::{
    BuildError, Extension, HandlerError, MethodSpec, Next, RequestContext, Server, ToolCall,
    ToolRefused, ToolReply, resource, tool,
};

/// What the extension attached to a tool at registration.
struct Deferrable;

#[derive(Default)]
struct Tasks {
    handler_runs: Arc<AtomicUsize>,
}

impl Extension for Tasks {
    fn name(&self) -> &'static str {
        "test/tasks"
    }

    fn capabilities(&self, capabilities: &mut ServerCapabilities) {
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert("test/tasks".to_owned(), Map::new());
    }

    fn methods(&self) -> Vec<MethodSpec> {
        vec![MethodSpec::new("tasks/get").named_by("taskId")]
    }

    fn call(&self, request: ExtensionRequest) -> BoxFuture<ExtensionResult> {
        Box::pin(async move {
            let id = request.params.get("taskId").cloned().unwrap_or(Value::Null);
            let who = request.ctx.principal().map(|p| p.0.clone());
            let mut result = Map::new();
            result.insert("taskId".to_owned(), id);
            result.insert("status".to_owned(), json!("working"));
            result.insert("principal".to_owned(), json!(who));
            Ok(result)
        })
    }

    fn register_tool(&self, tool: &Tool, data: &mut ToolData) -> Result<(), ToolRefused> {
        if tool.name.starts_with("forbidden") {
            return Err(ToolRefused::new("tools named forbidden* are not allowed"));
        }
        if tool.name.starts_with("slow") {
            data.insert(Deferrable);
        }
        Ok(())
    }

    fn tool_call(&self, call: ToolCall, next: Next) -> BoxFuture<ToolOutcome> {
        let runs = self.handler_runs.clone();
        Box::pin(async move {
            if call.tool_data::<Deferrable>().is_some() {
                // Runs the rest of the chain elsewhere and answers with a handle at once.
                tokio::spawn(async move {
                    let _ = next.run(call).await;
                });
                let mut task = Map::new();
                task.insert("resultType".to_owned(), json!("task"));
                task.insert("taskId".to_owned(), json!("t-1"));
                return Ok(ToolReply::Other(task));
            }
            if call.str_arg("skip") == Some("yes") {
                return Ok(ToolReply::Complete(CallToolResult::text(
                    "answered by the extension",
                )));
            }
            runs.fetch_add(1, Ordering::SeqCst);
            match next.run(call).await {
                Ok(ToolReply::Complete(mut result)) => {
                    result
                        .content
                        .push(smcp_proto::content::ContentBlock::text("(wrapped)"));
                    Ok(ToolReply::Complete(result))
                }
                other => other,
            }
        })
    }

    fn resource_read(&self, _ctx: &RequestContext, result: &mut ReadResourceResult) {
        for item in &mut result.contents {
            if let ResourceContents::Text(text) = item {
                text.text = text.text.replace("secret", "[gated]");
            }
        }
    }
}

fn echo(name: &str) -> smcp_server::ToolBuilder {
    tool(name)
        .input_schema(json!({"type": "object", "properties": {"skip": {"type": "string"}}}))
        .handler(|_call| async move { Ok::<_, HandlerError>(CallToolResult::text("handler")) })
}

fn server(tasks: Tasks) -> Server {
    Server::builder("t", "1")
        .extension(tasks)
        .tool(echo("plain"))
        .tool(echo("slow_job"))
        .resource(resource("test://doc", "doc").handler(|read| async move {
            Ok(vec![TextResourceContents::new(read.uri, "a secret").into()])
        }))
        .build()
        .unwrap()
}

fn texts(v: &Value) -> Vec<String> {
    v["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["text"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn extension_methods_are_routed_advertised_and_name_checked() {
    let svc = server(Tasks::default()).service();
    let d = call(&svc, &body(json!(1), "server/discover", json!({})))
        .await
        .json();
    assert_eq!(
        d["result"]["capabilities"]["extensions"]["test/tasks"],
        json!({}),
        "{d}"
    );

    // The declared member must be mirrored in Mcp-Name.
    let b = body(json!(2), "tasks/get", json!({"taskId": "t-9"}));
    let missing = send(&svc, request(&b).body(full(&b)).unwrap()).await;
    missing.assert_error(400, -32020, Some(json!(2)));
    let wrong = send(
        &svc,
        request(&b)
            .header("mcp-name", "t-8")
            .body(full(&b))
            .unwrap(),
    )
    .await;
    wrong.assert_error(400, -32020, Some(json!(2)));
    let mut req = request(&b)
        .header("mcp-name", "t-9")
        .body(full(&b))
        .unwrap();
    req.extensions_mut()
        .insert(smcp_server::Principal("alice".to_owned()));
    let ok = send(&svc, req).await.json();
    assert_eq!(ok["result"]["taskId"], "t-9", "{ok}");
    assert_eq!(ok["result"]["principal"], "alice", "{ok}");
    assert_eq!(
        ok["result"]["resultType"], "complete",
        "added when missing: {ok}"
    );
    assert!(ok["result"]["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());

    // A method nobody serves is still unknown.
    call(
        &svc,
        &body(json!(3), "tasks/cancel", json!({"taskId": "t"})),
    )
    .await
    .assert_error(404, -32601, Some(json!(3)));
}

#[tokio::test]
async fn tool_calls_are_wrapped_answered_or_deferred() {
    let tasks = Tasks::default();
    let runs = tasks.handler_runs.clone();
    let svc = server(tasks).service();
    let call_tool = |id: i64, name: &str, args: Value| {
        body(
            json!(id),
            "tools/call",
            json!({"name": name, "arguments": args}),
        )
    };
    let v = call(&svc, &call_tool(1, "plain", json!({}))).await.json();
    assert_eq!(texts(&v), ["handler", "(wrapped)"], "{v}");
    let v = call(&svc, &call_tool(2, "plain", json!({"skip": "yes"})))
        .await
        .json();
    assert_eq!(texts(&v), ["answered by the extension"], "{v}");
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the skipped call never reached the handler"
    );
    let v = call(&svc, &call_tool(3, "slow_job", json!({})))
        .await
        .json();
    assert_eq!(v["result"]["resultType"], "task", "{v}");
    assert_eq!(v["result"]["taskId"], "t-1", "{v}");
}

#[tokio::test]
async fn resource_reads_are_gated() {
    let svc = server(Tasks::default()).service();
    let b = body(json!(1), "resources/read", json!({"uri": "test://doc"}));
    let v = call(&svc, &b).await.json();
    assert_eq!(v["result"]["contents"][0]["text"], "a [gated]", "{v}");
}

#[test]
fn registration_is_refused_at_build_and_at_runtime() {
    let err = Server::builder("t", "1")
        .extension(Tasks::default())
        .tool(echo("forbidden_one"))
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, BuildError::Extension { extension: "test/tasks", item, .. } if item == "forbidden_one"),
        "{err}"
    );
    let server = server(Tasks::default());
    assert!(server.add_tool(echo("forbidden_two")).is_err());
    assert!(server.add_tool(echo("fine")).is_ok());
}

#[test]
fn an_extension_cannot_take_a_core_method() {
    struct Greedy;
    impl Extension for Greedy {
        fn name(&self) -> &'static str {
            "test/greedy"
        }
        fn methods(&self) -> Vec<MethodSpec> {
            vec![MethodSpec::new("tools/call")]
        }
    }
    let err = Server::builder("t", "1")
        .extension(Greedy)
        .build()
        .unwrap_err();
    assert!(
        matches!(
            err,
            BuildError::DuplicateMethod {
                method: "tools/call",
                ..
            }
        ),
        "{err}"
    );
}
