//! The client's side of typed tools: `structuredContent` checked against the listed
//! `outputSchema` (REQUIREMENTS A13.81), lists a page at a time, closure input handlers, and
//! typed results and answers end to end against a typed `smcp-server`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::common;

use std::time::Duration;

use common::{result, scripted};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use smcp_client::prelude::*;
use smcp_client::proto::client::roots::{ListRootsResult, Root};

fn client(url: &str) -> Client {
    Client::builder(url)
        .timeout(Some(Duration::from_secs(10)))
        .build()
        .unwrap()
}

fn output_tool(name: &str) -> Value {
    json!({
        "name": name,
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"]
        }
    })
}

/// A server whose tools/list has two pages (`w1`, then `w2` after cursor `c2`) and whose
/// tools/call answers with the `structuredContent` named by the `mode` argument.
async fn two_pages() -> common::Scripted {
    scripted(|_, request| {
        let params = &request["params"];
        match request["method"].as_str().unwrap() {
            "tools/list" => match params.get("cursor").and_then(Value::as_str) {
                None => result(request, json!({"tools": [output_tool("w1")], "nextCursor": "c2"})),
                Some("c2") => result(request, json!({"tools": [output_tool("w2")]})),
                Some(_) => common::json(
                    200,
                    json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32602, "message": "bad cursor"}}),
                ),
            },
            "tools/call" => {
                let mode = params["arguments"]["mode"].as_str().unwrap_or_default();
                let body = match mode {
                    "good" => json!({"content": [], "structuredContent": {"n": 1}}),
                    "bad" => json!({"content": [], "structuredContent": {"n": "SECRET"}}),
                    "error" => json!({"content": [], "isError": true, "structuredContent": {"why": 1}}),
                    _ => json!({"content": [{"type": "text", "text": "no structure"}]}),
                };
                result(request, body)
            }
            other => panic!("unexpected {other}"),
        }
    })
    .await
}

#[tokio::test]
async fn structured_content_is_checked_once_the_tool_is_listed() {
    let server = two_pages().await;
    let c = client(&server.url);
    // Never listed: nothing to check against.
    let r = c.call_tool("w1", json!({"mode": "bad"})).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"n": "SECRET"})));

    c.list_tools().await.unwrap();
    for tool in ["w1", "w2"] {
        assert!(c.call_tool(tool, json!({"mode": "good"})).await.is_ok());
        let err = c.call_tool(tool, json!({"mode": "bad"})).await.unwrap_err();
        assert!(err.is_protocol_violation(), "{err}");
        assert_eq!(err.output_schema_path(), Some("/n"));
        assert!(err.to_string().contains(tool), "{err}");
        assert!(
            !err.to_string().contains("SECRET"),
            "never the value: {err}"
        );
        // A successful result without structuredContent breaks the contract too.
        let err = c
            .call_tool(tool, json!({"mode": "none"}))
            .await
            .unwrap_err();
        assert_eq!(err.output_schema_path(), Some("/"), "{err}");
        // An error result is not held to it.
        let r = c.call_tool(tool, json!({"mode": "error"})).await.unwrap();
        assert!(r.is_error());
    }
}

#[tokio::test]
async fn lists_come_a_page_at_a_time() {
    let server = two_pages().await;
    let c = client(&server.url);
    let first = c.list_tools_page(None).await.unwrap();
    assert_eq!(first.items.len(), 1);
    assert_eq!(first.items[0].name, "w1");
    assert_eq!(first.next_cursor.as_deref(), Some("c2"));
    let second = c
        .list_tools_page(first.next_cursor.as_deref())
        .await
        .unwrap();
    assert_eq!(second.items[0].name, "w2");
    assert_eq!(second.next_cursor, None);
    // The cursor went back verbatim, and both pages are in the catalog.
    let cursors: Vec<Value> = server
        .seen()
        .iter()
        .map(|s| s.body["params"]["cursor"].clone())
        .collect();
    assert_eq!(cursors, vec![Value::Null, json!("c2")]);
    assert!(c.knows_tool("w1") && c.knows_tool("w2"));
    let err = c.call_tool("w2", json!({"mode": "bad"})).await.unwrap_err();
    assert_eq!(err.output_schema_path(), Some("/n"));
    // A bad cursor is the server's −32602.
    let err = c.list_tools_page(Some("nope")).await.unwrap_err();
    assert_eq!(err.jsonrpc_code(), Some(-32602));
}

#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema)]
struct Confirm {
    ok: bool,
    copies: Option<u32>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Args {
    city: String,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
struct Forecast {
    city: String,
    celsius: f64,
}

fn typed_server() -> smcp_server::Server {
    use smcp_server::{Json, mrtr, tool};
    smcp_server::Server::builder("typed", "1")
        .tool(tool("weather").typed(|_call, args: Args| async move {
            Ok(Json(Forecast {
                city: args.city,
                celsius: 21.5,
            }))
        }))
        .tool(tool("confirm").typed(|call, _args: Args| async move {
            let answer = call
                .input
                .ask(mrtr::elicit_typed::<Confirm>("confirm", "Sure?"))?;
            let roots = call.input.ask(mrtr::list_roots("roots"))?;
            Ok(format!(
                "{:?} roots={}",
                answer.accepted(),
                roots.roots.len()
            ))
        }))
        .build()
        .unwrap()
}

#[tokio::test]
async fn typed_results_and_closure_input_handlers_end_to_end() {
    let url = common::serve_mcp(typed_server()).await;
    let handler = FnInputHandler::new()
        .on_elicit(|params| async move {
            let ElicitRequestParams::Form(form) = params else {
                return Err(InputHandlerError::new("form only"));
            };
            // The form was derived from `Confirm`.
            assert!(form.requested_schema.properties.contains_key("copies"));
            Ok(ElicitResult::accept_with(&Confirm {
                ok: true,
                copies: Some(2),
            })?)
        })
        .on_roots(|_| async move {
            Ok(ListRootsResult {
                roots: vec![Root::new("file:///w", "w")],
            })
        });
    assert_eq!(
        handler.kinds(),
        InputKinds {
            elicitation_form: true,
            roots: true,
            ..InputKinds::default()
        }
    );
    let c = Client::builder(&url)
        .timeout(Some(Duration::from_secs(10)))
        .input_handler(handler)
        .build()
        .unwrap();
    let tools = c.list_tools().await.unwrap();
    assert!(
        tools
            .iter()
            .any(|t| t.name == "weather" && t.output_schema.is_some())
    );

    let r = c
        .call_tool("weather", json!({"city": "Porto"}))
        .await
        .unwrap();
    let forecast: Forecast = r.structured_as().unwrap().unwrap();
    assert_eq!(
        forecast,
        Forecast {
            city: "Porto".into(),
            celsius: 21.5
        }
    );
    assert_eq!(
        serde_json::from_str::<Value>(&r.text_content()).unwrap(),
        json!({"city": "Porto", "celsius": 21.5})
    );

    let r = c.call_tool("confirm", json!({"city": "x"})).await.unwrap();
    assert_eq!(
        r.text_content(),
        "Some(Confirm { ok: true, copies: Some(2) }) roots=1"
    );
}
