//! The client against a scripted server: every bad input gives a precise typed error, never a
//! panic or a hang, and the protocol rules (headers, ids, retries) hold on the wire.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::{event, id_of, json, result, scripted, sse};
use futures_util::StreamExt;
use serde_json::{Value, json};
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult};
use smcp_client::proto::patterns::subscriptions::SubscriptionFilter;
use smcp_client::{
    BoxFuture, Cache, Client, InputHandler, InputHandlerError, InputKinds, SubscriptionEvent,
};

fn client(url: &str) -> Client {
    Client::builder(url)
        .timeout(Some(Duration::from_secs(10)))
        .build()
        .unwrap()
}

struct Accept;

impl InputHandler for Accept {
    fn kinds(&self) -> InputKinds {
        InputKinds {
            elicitation_form: true,
            ..InputKinds::default()
        }
    }
    fn elicit(
        &self,
        _p: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, InputHandlerError>> {
        Box::pin(async { Ok(ElicitResult::accept(Default::default())) })
    }
}

const TEXT: &str = r#"{"content": [{"type": "text", "text": "ok"}]}"#;

fn text_result() -> Value {
    serde_json::from_str(TEXT).unwrap()
}

fn input_required(state: &str) -> Value {
    json!({
        "resultType": "input_required",
        "inputRequests": {"confirm": {"method": "elicitation/create", "params": {
            "message": "ok?", "requestedSchema": {"type": "object", "properties": {}}}}},
        "requestState": state
    })
}

#[tokio::test]
async fn every_post_carries_the_standard_headers_and_meta() {
    let s = scripted(|_, r| result(r, json!({"tools": []}))).await;
    let c = Client::builder(&s.url)
        .input_handler(Accept)
        .build()
        .unwrap();
    c.list_tools().await.unwrap();
    c.call_tool("x y", json!({})).await.ok();
    let seen = s.seen();
    for post in &seen {
        let h = &post.headers;
        assert_eq!(h["accept"], "application/json, text/event-stream");
        assert_eq!(h["content-type"], "application/json");
        assert_eq!(h["mcp-protocol-version"], "2026-07-28");
        assert_eq!(h["mcp-method"], post.body["method"].as_str().unwrap());
        let meta = &post.body["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        // SEP-2663: the tasks extension on tools/call (the method that supports tasks) only.
        let expected = if post.body["method"] == "tools/call" {
            json!({"elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
        } else {
            json!({"elicitation": {"form": {}}})
        };
        assert_eq!(meta["io.modelcontextprotocol/clientCapabilities"], expected);
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "smcp-client"
        );
    }
    assert_eq!(seen[1].headers["mcp-name"], "x y");
    assert!(!seen[0].headers.contains_key("mcp-name"));
}

#[tokio::test]
async fn garbage_sse_is_a_protocol_violation() {
    let s = scripted(|_, _| sse("data: {not json\n\n")).await;
    let err = client(&s.url).list_tools().await.unwrap_err();
    assert!(err.is_protocol_violation(), "{err}");
}

#[tokio::test]
async fn sse_comments_priming_and_multiline_data_are_fine() {
    let s = scripted(|_, r| {
        let msg = json!({"jsonrpc": "2.0", "id": id_of(r), "result": {"tools": []}}).to_string();
        // Split after the first comma: the joining "\n" lands between two JSON tokens.
        let (a, b) = msg.split_at(msg.find(',').unwrap() + 1);
        sse(format!(
            ": keep-alive\r\n\r\ndata:\n\nevent: other\ndata: x\n\ndata: {a}\ndata: {b}\n\n"
        ))
    })
    .await;
    assert!(client(&s.url).list_tools().await.unwrap().is_empty());
    let s = scripted(|_, r| {
        sse(format!(
            ": comment\n\n{}",
            event(&json!({"jsonrpc": "2.0", "id": id_of(r), "result": {"tools": []}}))
        ))
    })
    .await;
    assert!(client(&s.url).list_tools().await.unwrap().is_empty());
}

#[tokio::test]
async fn mismatched_response_id_is_a_protocol_violation() {
    let s = scripted(|_, _| {
        json(
            200,
            json!({"jsonrpc": "2.0", "id": 999, "result": {"tools": []}}),
        )
    })
    .await;
    let err = client(&s.url).list_tools().await.unwrap_err();
    assert!(
        err.is_protocol_violation() && err.to_string().contains("999"),
        "{err}"
    );
}

#[tokio::test]
async fn a_request_on_the_stream_is_a_protocol_violation() {
    let s = scripted(|_, _| {
        sse(event(
            &json!({"jsonrpc": "2.0", "id": "srv-1", "method": "elicitation/create", "params": {}}),
        ))
    })
    .await;
    let err = client(&s.url).call_tool("t", json!({})).await.unwrap_err();
    assert!(
        err.is_protocol_violation() && err.to_string().contains("request"),
        "{err}"
    );
}

#[tokio::test]
async fn input_required_on_tools_list_is_rejected() {
    let s = scripted(|_, r| result(r, input_required("s"))).await;
    let err = client(&s.url).list_tools().await.unwrap_err();
    assert!(
        err.is_protocol_violation() && err.to_string().contains("InputRequiredResult"),
        "{err}"
    );
}

#[tokio::test]
async fn unknown_result_type_is_rejected_and_missing_means_complete() {
    let s = scripted(|_, r| result(r, json!({"resultType": "job", "content": []}))).await;
    let err = client(&s.url).call_tool("t", json!({})).await.unwrap_err();
    assert!(
        err.is_protocol_violation() && err.to_string().contains("job"),
        "{err}"
    );
    // "task" is known (SEP-2663), but only to a request that declared the extension.
    let s = scripted(|_, r| result(r, json!({"resultType": "task", "content": []}))).await;
    let no_tasks = Client::builder(&s.url).tasks(false).build().unwrap();
    let err = no_tasks.call_tool("t", json!({})).await.unwrap_err();
    assert!(
        err.is_protocol_violation() && err.to_string().contains("task"),
        "{err}"
    );
    let s = scripted(|_, r| result(r, text_result())).await;
    let r = client(&s.url).call_tool("t", json!({})).await.unwrap();
    assert_eq!(r.content.len(), 1);
    assert_eq!(
        s.seen().len(),
        1,
        "a result without resultType is final: no retry"
    );
}

#[tokio::test]
async fn mrtr_retries_with_new_id_responses_and_exact_state() {
    let state = r#"{"b": 1,  "a":"ü"}"#;
    let s = scripted(move |n, r| match n {
        0 => result(r, input_required(state)),
        _ => result(r, json!({"resultType": "complete", "content": []})),
    })
    .await;
    let c = Client::builder(&s.url)
        .input_handler(Accept)
        .build()
        .unwrap();
    c.call_tool("t", json!({"k": 1})).await.unwrap();
    let seen = s.seen();
    assert_eq!(seen.len(), 2);
    assert_ne!(seen[0].body["id"], seen[1].body["id"]);
    assert_eq!(seen[1].body["params"]["requestState"], state);
    assert_eq!(
        seen[1].body["params"]["inputResponses"]["confirm"]["action"],
        "accept"
    );
    assert_eq!(seen[1].body["params"]["arguments"], json!({"k": 1}));
    assert!(seen[0].body["params"].get("requestState").is_none());
}

#[tokio::test]
async fn endless_mrtr_stops_at_the_cap() {
    let s = scripted(|_, r| result(r, input_required("again"))).await;
    let c = Client::builder(&s.url)
        .input_handler(Accept)
        .max_input_rounds(3)
        .build()
        .unwrap();
    let err = c.call_tool("t", json!({})).await.unwrap_err();
    assert_eq!(err.kind(), smcp_client::ErrorKind::InputRoundLimit, "{err}");
    assert_eq!(s.seen().len(), 4, "the first request plus three retries");
}

#[tokio::test]
async fn input_request_of_an_undeclared_kind_is_rejected() {
    let s = scripted(|_, r| result(r, input_required("s"))).await;
    let err = client(&s.url).call_tool("t", json!({})).await.unwrap_err();
    assert!(
        err.is_protocol_violation() && err.to_string().contains("declare"),
        "{err}"
    );
}

#[tokio::test]
async fn invalid_x_mcp_header_tools_are_dropped_and_refused() {
    let prop = |p: Value| json!({"type": "object", "properties": p});
    let tools = json!([
        {"name": "valid", "inputSchema": prop(json!({"region": {"type": "string", "x-mcp-header": "Region"}}))},
        {"name": "empty", "inputSchema": prop(json!({"v": {"type": "string", "x-mcp-header": ""}}))},
        {"name": "object", "inputSchema": prop(json!({"v": {"type": "object", "x-mcp-header": "V"}}))},
        {"name": "number", "inputSchema": prop(json!({"v": {"type": "number", "x-mcp-header": "V"}}))},
        {"name": "dup", "inputSchema": prop(json!({
            "a": {"type": "string", "x-mcp-header": "MyField"},
            "b": {"type": "string", "x-mcp-header": "myfield"}}))},
        {"name": "space", "inputSchema": prop(json!({"v": {"type": "string", "x-mcp-header": "My Region"}}))},
        {"name": "colon", "inputSchema": prop(json!({"v": {"type": "string", "x-mcp-header": "A:B"}}))},
        {"name": "nonascii", "inputSchema": prop(json!({"v": {"type": "string", "x-mcp-header": "Région"}}))},
        {"name": "ctl", "inputSchema": prop(json!({"v": {"type": "string", "x-mcp-header": "R\t1"}}))},
        {"name": "array", "inputSchema": prop(json!({"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "V"}}}))}
    ]);
    let s = scripted(move |_, r| match r["method"].as_str() {
        Some("tools/list") => result(r, json!({"tools": tools.clone()})),
        _ => result(r, text_result()),
    })
    .await;
    let c = client(&s.url);
    let listed = c.list_tools().await.unwrap();
    assert_eq!(
        listed.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["valid"]
    );
    for bad in [
        "empty", "object", "number", "dup", "space", "colon", "nonascii", "ctl", "array",
    ] {
        let err = c.call_tool(bad, json!({"v": "x"})).await.unwrap_err();
        assert_eq!(
            err.kind(),
            smcp_client::ErrorKind::InvalidTool,
            "{bad}: {err}"
        );
    }
    c.call_tool("valid", json!({"region": "us-west1"}))
        .await
        .unwrap();
    let seen = s.seen();
    assert_eq!(seen.len(), 2, "no POST for refused tools");
    assert_eq!(seen[1].headers["mcp-param-region"], "us-west1");
}

#[tokio::test]
async fn header_mismatch_refreshes_the_tool_list_once() {
    let s = scripted(|_, r| match r["method"].as_str() {
        Some("tools/list") => result(r, json!({"tools": [{"name": "t", "inputSchema": {"type": "object",
            "properties": {"r": {"type": "string", "x-mcp-header": "R"}}}}]})),
        _ => json(400, json!({"jsonrpc": "2.0", "id": id_of(r), "error": {"code": -32020, "message": "Mcp-Param-R mismatch"}})),
    })
    .await;
    let c = client(&s.url);
    let err = c.call_tool("t", json!({"r": "x"})).await.unwrap_err();
    assert_eq!(
        (err.jsonrpc_code(), err.status()),
        (Some(-32020), Some(400))
    );
    let methods: Vec<_> = s
        .seen()
        .iter()
        .map(|p| p.body["method"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(methods, ["tools/call", "tools/list", "tools/call"]);
    assert_eq!(s.seen()[2].headers["mcp-param-r"], "x");
}

#[tokio::test]
async fn unsupported_version_negotiates_once() {
    let s = scripted(|n, r| match n {
        0 => json(
            400,
            json!({"jsonrpc": "2.0", "id": id_of(r), "error": {"code": -32022, "message": "no",
            "data": {"supported": ["2099-01-01", "2026-07-28"], "requested": "2026-07-28"}}}),
        ),
        _ => result(r, json!({"tools": []})),
    })
    .await;
    client(&s.url).list_tools().await.unwrap();
    assert_eq!(s.seen().len(), 2);
    let s = scripted(|_, r| {
        json(
            400,
            json!({"jsonrpc": "2.0", "id": id_of(r), "error": {"code": -32022, "message": "no",
            "data": {"supported": ["2099-01-01"], "requested": "2026-07-28"}}}),
        )
    })
    .await;
    let err = client(&s.url).list_tools().await.unwrap_err();
    assert_eq!(err.jsonrpc_code(), Some(-32022));
    assert_eq!(s.seen().len(), 1);
}

#[tokio::test]
async fn older_revision_and_size_limits_are_reported() {
    for status in [400, 404, 405] {
        let s = scripted(move |_, _| json(status, json!("Bad Request: no session"))).await;
        let err = client(&s.url).list_tools().await.unwrap_err();
        assert!(
            err.kind() == smcp_client::ErrorKind::OlderRevision && err.status() == Some(status),
            "{err}"
        );
        assert!(err.to_string().contains("older MCP revision"));
    }
    for status in [413, 431] {
        let s = scripted(move |_, _| json(status, json!(null))).await;
        let err = client(&s.url).list_tools().await.unwrap_err();
        assert!(
            err.is_http_status() && err.status() == Some(status),
            "{err}"
        );
        assert!(err.jsonrpc_code().is_none());
    }
}

#[tokio::test]
async fn a_broken_stream_is_an_error_and_tools_call_is_not_retried() {
    let s = scripted(|_, _| {
        sse(event(
            &json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "x", "progress": 1}}),
        ))
    })
    .await;
    let err = client(&s.url).call_tool("t", json!({})).await.unwrap_err();
    assert_eq!(err.kind(), smcp_client::ErrorKind::StreamBroken, "{err}");
    assert_eq!(s.seen().len(), 1);
}

#[tokio::test]
async fn cache_serves_fresh_results_to_the_caching_client_only() {
    let s = scripted(|_, r| {
        result(
            r,
            json!({"resultType": "complete", "tools": [], "ttlMs": 60000, "cacheScope": "private"}),
        )
    })
    .await;
    let c = Client::builder(&s.url).cache(Cache::new()).build().unwrap();
    c.list_tools().await.unwrap();
    c.list_tools().await.unwrap();
    assert_eq!(s.seen().len(), 1);
    let uncached = client(&s.url);
    uncached.list_tools().await.unwrap();
    assert_eq!(s.seen().len(), 2);
}

fn listen_stream(id: &Value, extra: &str, graceful: bool) -> String {
    let mut body = event(
        &json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": {"toolsListChanged": true},
                   "_meta": {"io.modelcontextprotocol/subscriptionId": id}}}),
    );
    body += ": keep-alive\n\n";
    body += &event(
        &json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "someone-else"}}}),
    );
    body += &event(
        &json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}}}),
    );
    body += extra;
    if graceful {
        body += &event(
            &json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete",
            "_meta": {"io.modelcontextprotocol/subscriptionId": id}}}),
        );
    }
    body
}

#[tokio::test]
async fn listen_demuxes_reissues_after_abrupt_close_and_ends_on_graceful_close() {
    let s = scripted(|n, r| sse(listen_stream(&id_of(r), "", n >= 1))).await;
    let c = client(&s.url);
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        ..SubscriptionFilter::default()
    };
    let events: Vec<_> = tokio::time::timeout(
        Duration::from_secs(10),
        c.listen(filter).collect::<Vec<_>>(),
    )
    .await
    .expect("the stream ends after the graceful close");
    let events: Vec<_> = events.into_iter().map(Result::unwrap).collect();
    assert_eq!(events.len(), 4, "{events:?}");
    assert!(
        matches!(events[0], SubscriptionEvent::Acknowledged(ref f) if f.tools_list_changed == Some(true))
    );
    assert_eq!(events[1], SubscriptionEvent::ToolsListChanged);
    let seen = s.seen();
    assert_eq!(seen.len(), 2, "re-issued once after the abrupt close");
    assert_ne!(seen[0].body["id"], seen[1].body["id"]);
    assert_eq!(
        seen[0].body["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    assert_eq!(seen[0].headers["mcp-method"], "subscriptions/listen");
}

#[tokio::test]
async fn listen_refused_by_the_server_is_an_error_item() {
    let s = scripted(|_, r| {
        json(404, json!({"jsonrpc": "2.0", "id": id_of(r), "error": {"code": -32601, "message": "no listen"}}))
    })
    .await;
    let mut sub = client(&s.url).listen(SubscriptionFilter::default());
    let first = sub.next().await.unwrap().unwrap_err();
    assert_eq!(first.jsonrpc_code(), Some(-32601));
    assert!(sub.next().await.is_none());
}
