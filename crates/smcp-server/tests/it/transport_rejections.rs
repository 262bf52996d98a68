//! Every malformed or mismatched request of REQUIREMENTS A1–A3: exact HTTP status, JSON-RPC
//! code, the id echoed where known, and proof that no handler ran.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    clippy::type_complexity
)]

use crate::common;

use bytes::Bytes;
use common::*;
use http::Request;
use http_body_util::Full;
use serde_json::{Value, json};

fn probe_call(id: Value, args: Value) -> Value {
    body(
        id,
        "tools/call",
        json!({"name": "probe", "arguments": args}),
    )
}

#[tokio::test]
async fn foreign_origin_is_forbidden_without_id() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = probe_call(json!(1), json!({}));
    let req = request(&b)
        .header("origin", "http://evil.example.com")
        .body(full(&b))
        .unwrap();
    send(&svc, req).await.assert_error(403, -32600, None);
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn foreign_host_is_forbidden() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = probe_call(json!(1), json!({}));
    let mut req = request(&b).body(full(&b)).unwrap();
    req.headers_mut()
        .insert("host", "evil.example.com".parse().unwrap());
    send(&svc, req).await.assert_error(403, -32600, None);
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn loopback_origin_is_allowed() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = probe_call(json!(1), json!({}));
    let req = request(&b)
        .header("origin", "http://localhost:8931")
        .body(full(&b))
        .unwrap();
    let reply = send(&svc, req).await;
    assert_eq!(reply.status, 200);
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn non_post_methods_get_405_with_allow() {
    let runs = Runs::default();
    // With sessions of the earlier revisions served, GET and DELETE with a session id belong
    // to them (tests/legacy.rs); a 2026-07-28-only server answers 405 whatever the headers.
    let svc = probe_server_without_legacy(&runs);
    for method in ["GET", "DELETE", "PUT", "PATCH"] {
        let req = Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", "localhost")
            .header("accept", "text/event-stream")
            .header("mcp-session-id", "abc")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let reply = send(&svc, req).await;
        reply.assert_error(405, -32600, None);
        assert_eq!(reply.headers["allow"], "POST", "{method}");
        assert!(reply.headers.get("mcp-session-id").is_none());
    }
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn wrong_content_type_is_415() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = probe_call(json!(1), json!({}));
    let mut req = request(&b).body(full(&b)).unwrap();
    req.headers_mut()
        .insert("content-type", "text/plain".parse().unwrap());
    send(&svc, req).await.assert_error(415, -32600, None);
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn unacceptable_accept_is_406() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = probe_call(json!(1), json!({}));
    let mut req = request(&b).body(full(&b)).unwrap();
    req.headers_mut()
        .insert("accept", "text/html".parse().unwrap());
    send(&svc, req).await.assert_error(406, -32600, None);
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn oversized_body_is_413() {
    let runs = Runs::default();
    let svc = probe_tools(
        smcp_server::Server::builder("p", "1").limits(smcp_server::Limits {
            max_body_bytes: 256,
            ..Default::default()
        }),
        &runs,
    )
    .build()
    .unwrap()
    .service();
    let b = probe_call(json!(1), json!({"region": "x".repeat(300)}));
    // Announced by Content-Length…
    let req = request(&b)
        .header("content-length", b.to_string().len())
        .body(full(&b))
        .unwrap();
    send(&svc, req).await.assert_error(413, -32600, None);
    // …and discovered while reading a body of unknown length.
    let req = request(&b).body(full(&b)).unwrap();
    send(&svc, req).await.assert_error(413, -32600, None);
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn malformed_json_is_parse_error_without_id() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = probe_call(json!(1), json!({}));
    let req = request(&b)
        .body(Full::new(Bytes::from_static(
            b"{\"jsonrpc\": \"2.0\", \"id\": 1,",
        )))
        .unwrap();
    send(&svc, req).await.assert_error(400, -32700, None);
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn invalid_jsonrpc_shapes_are_invalid_request() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let template = probe_call(json!(1), json!({}));
    let cases: Vec<(Value, Option<Value>)> = vec![
        (json!([template.clone()]), None),
        (
            json!({"id": 7, "method": "tools/call", "params": {}}),
            Some(json!(7)),
        ),
        (
            json!({"jsonrpc": "1.0", "id": "a", "method": "tools/call"}),
            Some(json!("a")),
        ),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "tools/call"}),
            None,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 3, "method": 4}),
            Some(json!(3)),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": [1]}),
            Some(json!(3)),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 9, "result": {}}),
            Some(json!(9)),
        ),
        (
            json!({"jsonrpc": "2.0", "error": {"code": 1, "message": "x"}}),
            None,
        ),
    ];
    for (bad, id) in cases {
        let req = request(&template).body(full(&bad)).unwrap();
        send(&svc, req).await.assert_error(400, -32600, id);
    }
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn notifications_are_accepted_with_202() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let n =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    let req = Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(full(&n))
        .unwrap();
    let reply = send(&svc, req).await;
    assert_eq!(reply.status, 202);
    assert!(reply.bytes.is_empty());
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn protocol_version_header_rules() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = probe_call(json!(11), json!({}));

    // Missing header.
    let mut req = request(&b).body(full(&b)).unwrap();
    req.headers_mut().remove("mcp-protocol-version");
    send(&svc, req)
        .await
        .assert_error(400, -32020, Some(json!(11)));

    // Header differs from _meta.
    let mut req = request(&b).body(full(&b)).unwrap();
    req.headers_mut()
        .insert("mcp-protocol-version", "2025-11-25".parse().unwrap());
    send(&svc, req)
        .await
        .assert_error(400, -32020, Some(json!(11)));

    // Both name an unsupported version.
    let mut v999 = b.clone();
    v999["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let mut req = request(&v999).body(full(&v999)).unwrap();
    req.headers_mut()
        .insert("mcp-protocol-version", "v999.0.0".parse().unwrap());
    let reply = send(&svc, req).await;
    reply.assert_error(400, -32022, Some(json!(11)));
    assert_eq!(
        reply.json()["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "v999.0.0"})
    );

    // Repeated header.
    let mut req = request(&b).body(full(&b)).unwrap();
    req.headers_mut()
        .append("mcp-protocol-version", VERSION.parse().unwrap());
    send(&svc, req)
        .await
        .assert_error(400, -32020, Some(json!(11)));
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn legacy_initialize_names_supported_versions() {
    let runs = Runs::default();
    // A 2026-07-28-only server (sessions of the earlier revisions off; with them on, this
    // initialize starts a session: tests/legacy.rs).
    let svc = probe_server_without_legacy(&runs);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}});
    let req = Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(full(&init))
        .unwrap();
    let reply = send(&svc, req).await;
    reply.assert_error(400, -32022, Some(json!(1)));
    assert_eq!(reply.json()["error"]["data"]["requested"], "2025-06-18");

    // With modern _meta and headers it is simply an unknown method.
    let modern = body(json!(2), "initialize", json!({}));
    call(&svc, &modern)
        .await
        .assert_error(404, -32601, Some(json!(2)));
}

#[tokio::test]
async fn meta_rules() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let mut cases = Vec::new();
    let mut no_params = body(json!(21), "tools/list", json!({}));
    no_params.as_object_mut().unwrap().remove("params");
    cases.push(no_params);
    let mut no_meta = body(json!(21), "tools/list", json!({}));
    no_meta["params"].as_object_mut().unwrap().remove("_meta");
    cases.push(no_meta);
    let mut no_version = body(json!(21), "tools/list", json!({}));
    no_version["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/protocolVersion");
    cases.push(no_version);
    let mut no_caps = body(json!(21), "tools/list", json!({}));
    no_caps["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    cases.push(no_caps);
    let mut caps_not_object = body(json!(21), "tools/list", json!({}));
    caps_not_object["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!([]);
    cases.push(caps_not_object);
    let mut bad_level = body(json!(21), "tools/list", json!({}));
    bad_level["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("loud");
    cases.push(bad_level);
    for case in cases {
        call(&svc, &case)
            .await
            .assert_error(400, -32602, Some(json!(21)));
    }
    // clientInfo is optional.
    let mut no_info = body(json!(22), "tools/list", json!({}));
    no_info["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientInfo");
    assert_eq!(call(&svc, &no_info).await.status, 200);
}

#[tokio::test]
async fn method_header_rules() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = body(json!("m"), "tools/list", json!({}));
    for (value, ok) in [
        (None, false),
        (Some("prompts/list"), false),
        (Some("TOOLS/LIST"), false),
        (Some("tools/list"), true),
        (Some("  tools/list\t"), true),
    ] {
        let mut req = request(&b).body(full(&b)).unwrap();
        req.headers_mut().remove("mcp-method");
        if let Some(v) = value {
            req.headers_mut().insert("MCP-METHOD", v.parse().unwrap());
        }
        let reply = send(&svc, req).await;
        if ok {
            assert_eq!(reply.status, 200, "{value:?}");
        } else {
            reply.assert_error(400, -32020, Some(json!("m")));
        }
    }
}

#[tokio::test]
async fn name_header_rules() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = probe_call(json!(5), json!({}));
    let cases = [
        (None, false),
        (Some("wrong_tool_name"), false),
        (Some("PROBE"), false),
        (Some("=?base64?cHJvYmU?="), false),
        (Some("=?base64?cHJv!!!YmU=?="), false),
        (Some("  probe  "), true),
        (Some("=?base64?cHJvYmU=?="), true),
    ];
    for (value, ok) in cases {
        let mut req = request(&b).body(full(&b)).unwrap();
        req.headers_mut().remove("mcp-name");
        if let Some(v) = value {
            req.headers_mut().insert("mcp-name", v.parse().unwrap());
        }
        let reply = send(&svc, req).await;
        if ok {
            assert_eq!(reply.status, 200, "{value:?}: {}", reply.json());
            assert!(reply.json().get("result").is_some());
        } else {
            reply.assert_error(400, -32020, Some(json!(5)));
        }
    }
    assert_eq!(runs.get(), 2);
}

#[tokio::test]
async fn resource_name_header_is_the_uri() {
    let runs = Runs::default();
    let svc = common::probe_tools(smcp_server::Server::builder("p", "1"), &runs)
        .resource(
            smcp_server::resource("file:///a%20b.txt", "ab").handler(|read| async move {
                Ok(vec![
                    smcp_proto::content::TextResourceContents::new(read.uri, "hi").into(),
                ])
            }),
        )
        .build()
        .unwrap()
        .service();
    let b = body(
        json!(1),
        "resources/read",
        json!({"uri": "file:///a%20b.txt"}),
    );
    assert_eq!(call(&svc, &b).await.status, 200);
    let mut req = request(&b).body(full(&b)).unwrap();
    req.headers_mut()
        .insert("mcp-name", "file:///a b.txt".parse().unwrap());
    send(&svc, req)
        .await
        .assert_error(400, -32020, Some(json!(1)));
}

#[tokio::test]
async fn unknown_and_removed_methods_are_404() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    for method in [
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "unknown/method",
        // Gated by capabilities the probe server does not advertise.
        "prompts/list",
        "resources/list",
        "completion/complete",
    ] {
        let b = body(json!(101), method, json!({}));
        call(&svc, &b)
            .await
            .assert_error(404, -32601, Some(json!(101)));
    }
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn param_header_rules() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    // (arguments, headers, accepted)
    let cases: Vec<(Value, Vec<(&str, &str)>, bool)> = vec![
        (
            json!({"region": "us-west1"}),
            vec![("mcp-param-region", "us-west1")],
            true,
        ),
        (json!({"region": "us-west1"}), vec![], false),
        (
            json!({"region": "us-west1"}),
            vec![("mcp-param-region", "eu")],
            false,
        ),
        (
            json!({"region": "Hello"}),
            vec![("Mcp-Param-Region", "=?base64?SGVsbG8=?=")],
            true,
        ),
        (
            json!({"region": "Hello"}),
            vec![("mcp-param-region", "=?base64?SGVsbG8?=")],
            false,
        ),
        (
            json!({"region": "Hello"}),
            vec![("mcp-param-region", "=?base64?SGVs!!!bG8=?=")],
            false,
        ),
        (
            json!({"region": "SGVsbG8="}),
            vec![("mcp-param-region", "SGVsbG8=")],
            true,
        ),
        (
            json!({"region": "=?base64?SGVsbG8="}),
            vec![("mcp-param-region", "=?base64?SGVsbG8=")],
            true,
        ),
        (json!({"count": 42}), vec![("mcp-param-count", "42")], true),
        (
            json!({"count": 42}),
            vec![("mcp-param-count", "42.0")],
            true,
        ),
        (json!({"count": 42}), vec![("mcp-param-count", "43")], false),
        (
            json!({"flag": true}),
            vec![("mcp-param-flag", "true")],
            true,
        ),
        (
            json!({"flag": true}),
            vec![("mcp-param-flag", "TRUE")],
            false,
        ),
        (
            json!({"nested": {"zone": "z1"}}),
            vec![("mcp-param-zone", "z1")],
            true,
        ),
        (json!({"nested": {"zone": "z1"}}), vec![], false),
        (json!({"region": null}), vec![], true),
        (json!({}), vec![], true),
        (json!({}), vec![("mcp-param-region", "x")], false),
        // Unrecognised Mcp-Param headers are ignored.
        (json!({}), vec![("mcp-param-other", "x")], true),
    ];
    let mut accepted = 0;
    for (i, (args, headers, ok)) in cases.into_iter().enumerate() {
        let b = probe_call(json!(i), args.clone());
        let mut builder = request(&b);
        for (k, v) in &headers {
            builder = builder.header(*k, *v);
        }
        let reply = send(&svc, builder.body(full(&b)).unwrap()).await;
        if ok {
            assert_eq!(reply.status, 200, "{args} {headers:?}: {}", reply.json());
            let result = &reply.json()["result"];
            assert!(result.is_object(), "{args} {headers:?}");
            // `region: null` passes the header stage (no header is expected for null) and
            // then fails schema validation: a tool error, and the handler does not run.
            if result["isError"] != true {
                accepted += 1;
            } else {
                assert_eq!(args, json!({"region": null}));
            }
        } else {
            reply.assert_error(400, -32020, Some(json!(i)));
        }
    }
    assert_eq!(runs.get(), accepted);
}

#[tokio::test]
async fn missing_client_capability_is_32021() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = body(
        json!(301),
        "tools/call",
        json!({"name": "needs_sampling", "arguments": {}}),
    );
    let reply = call(&svc, &b).await;
    reply.assert_error(400, -32021, Some(json!(301)));
    assert_eq!(
        reply.json()["error"]["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );
    assert_eq!(runs.get(), 0);
    let mut with = b.clone();
    with["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"sampling": {}});
    assert_eq!(
        call(&svc, &with).await.json()["result"]["content"][0]["text"],
        "ok"
    );
    assert_eq!(runs.get(), 1);
}

#[tokio::test]
async fn unknown_tool_and_bad_params_are_32602_in_200() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    for params in [
        json!({"name": "nope", "arguments": {}}),
        json!({"name": "probe", "arguments": [1]}),
    ] {
        let b = body(json!(401), "tools/call", params);
        call(&svc, &b)
            .await
            .assert_error(200, -32602, Some(json!(401)));
    }
    let b = body(json!(402), "tools/list", json!({"cursor": "not-a-cursor"}));
    call(&svc, &b)
        .await
        .assert_error(200, -32602, Some(json!(402)));
    assert_eq!(runs.get(), 0);
}

#[tokio::test]
async fn invalid_arguments_are_a_tool_error_naming_the_field() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = probe_call(json!(1), json!({"n": -1}));
    let reply = call(&svc, &b).await;
    assert_eq!(reply.status, 200);
    let result = &reply.json()["result"];
    assert_eq!(result["isError"], true);
    assert_eq!(result["resultType"], "complete");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("/n"), "{text}");
    assert_eq!(runs.get(), 0);
}
