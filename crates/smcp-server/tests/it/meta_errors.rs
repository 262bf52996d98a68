//! A `_meta` that cannot be read is a precise error, never an empty `_meta` (issue #16 item
//! 11): the declared client capabilities never vanish into a −32021, a reserved member of the
//! wrong type is −32602 naming it, and what `_meta` declares is read the way the full parser
//! reads it (a repeated member: the last one).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value
)]

use crate::common;

use bytes::Bytes;
use common::*;
use http_body_util::Full;
use serde_json::{Value, json};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, McpService, Server, tool};

/// A server with one tool that needs the client's `elicitation` capability and reports
/// whether its context sees it.
fn server() -> McpService {
    Server::builder("meta", "1.0.0")
        .tool(
            tool("ask")
                .description("needs elicitation")
                .requires_client_capability("elicitation")
                .handler(|call| async move {
                    let seen = call.ctx.has_capability(&["elicitation"]);
                    Ok::<_, HandlerError>(CallToolResult::text(format!("elicitation={seen}")))
                }),
        )
        .build()
        .expect("builds")
        .service()
}

fn meta_with(extra: &[(&str, Value)]) -> Value {
    let mut meta = meta();
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    for (k, v) in extra {
        meta[*k] = v.clone();
    }
    meta
}

fn ask(meta: Value) -> Value {
    body(
        json!(5),
        "tools/call",
        json!({"name": "ask", "arguments": {}, "_meta": meta}),
    )
}

async fn send_raw(svc: &McpService, head: &Value, bytes: Vec<u8>) -> Reply {
    let req = request(head).body(Full::new(Bytes::from(bytes))).unwrap();
    send(svc, req).await
}

#[tokio::test]
async fn a_valid_elicitation_capable_request_is_served() {
    let svc = server();
    let reply = call(&svc, &ask(meta_with(&[("x", json!("\u{e9}\u{1F600}"))]))).await;
    assert_eq!(reply.status, 200, "{}", reply.json());
    assert_eq!(
        reply.json()["result"]["content"][0]["text"],
        "elicitation=true"
    );
}

#[tokio::test]
async fn an_unreadable_meta_is_never_an_empty_one() {
    let svc = server();
    let head = ask(meta_with(&[]));
    // `_meta` with the elicitation capability and a member the full parser refuses: the
    // whole body is a parse error, not a request whose capabilities vanished (−32021).
    for bad in [br#""\udc00""#.as_slice(), b"1e400", b"\"\xFF\""] {
        let text = ask(meta_with(&[("x", json!("PLACEHOLDER"))])).to_string();
        let (before, after) = text.split_once(r#""PLACEHOLDER""#).unwrap();
        let mut bytes = before.as_bytes().to_vec();
        bytes.extend_from_slice(bad);
        bytes.extend_from_slice(after.as_bytes());
        let reply = send_raw(&svc, &head, bytes).await;
        let v = reply.json();
        assert_ne!(v["error"]["code"], -32021, "{v}");
        reply.assert_error(400, -32700, None);
    }
}

#[tokio::test]
async fn reserved_members_of_the_wrong_type_are_32602_naming_them() {
    let svc = server();
    let cases = [
        ("progressToken", json!(true), "progressToken"),
        ("progressToken", json!(1.5), "progressToken"),
        ("progressToken", json!({"a": 1}), "progressToken"),
        (
            "io.modelcontextprotocol/clientInfo",
            json!("me"),
            "io.modelcontextprotocol/clientInfo",
        ),
        (
            "io.modelcontextprotocol/clientCapabilities",
            json!([]),
            "io.modelcontextprotocol/clientCapabilities",
        ),
        (
            "io.modelcontextprotocol/logLevel",
            json!(3),
            "io.modelcontextprotocol/logLevel",
        ),
    ];
    for (key, value, named) in cases {
        let reply = call(&svc, &ask(meta_with(&[(key, value.clone())]))).await;
        reply.assert_error(400, -32602, Some(json!(5)));
        let message = reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(message.contains(named), "{key}={value}: {message}");
    }
    for (key, value) in [
        ("progressToken", json!("tok")),
        ("progressToken", json!(-7)),
        (
            "io.modelcontextprotocol/clientInfo",
            json!({"name": "c", "version": "1"}),
        ),
    ] {
        let reply = call(&svc, &ask(meta_with(&[(key, value.clone())]))).await;
        assert_eq!(reply.status, 200, "{key}={value}: {}", reply.json());
    }
}

#[tokio::test]
async fn a_repeated_member_reads_as_the_full_parser_reads_it() {
    let svc = server();
    let head = ask(meta_with(&[]));
    let caps = "\"io.modelcontextprotocol/clientCapabilities\"";
    let raw = |first: &str, last: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"ask","arguments":{{}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28",{caps}:{first},{caps}:{last}}}}}}}"#
        )
        .into_bytes()
    };
    // The full parser keeps the last of repeated members; so does every reader of `_meta`.
    let reply = send_raw(&svc, &head, raw("{}", r#"{"elicitation":{}}"#)).await;
    assert_eq!(reply.status, 200, "{}", reply.json());
    assert_eq!(
        reply.json()["result"]["content"][0]["text"],
        "elicitation=true"
    );
    send_raw(&svc, &head, raw(r#"{"elicitation":{}}"#, "{}"))
        .await
        .assert_error(400, -32021, Some(json!(5)));
}
