//! SEP-2631 through the server's extension seam: registration checks, gating of the
//! `files/*` methods, per-principal file URIs (foreign = unknown), the inline-only extension,
//! and a server without the extension at all.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// The in-process request helpers of the server library's own tests.
use crate::common;

use std::sync::Arc;

use common::*;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use smcp_files::{Files, FilesConfig, FilesExtension, FilesToolCall as _, LocalFileStore};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, Server, tool};
use tower::ServiceExt;

fn file_tool() -> smcp_server::ToolBuilder {
    tool("size_of")
        .input_schema(json!({"type": "object", "properties": {
            "doc": {"type": "string", "format": "uri", "x-mcp-file": {"maxSize": 100}}}}))
        .handler(|call| async move {
            let size = call.files().get("doc").map(smcp_files::FileHandle::size);
            Ok::<_, HandlerError>(CallToolResult::structured(json!({"size": size})))
        })
}

const CAPS: &str = r#"{"files": {"upload": true, "download": true, "transports": ["https"]}}"#;

fn as_principal(who: &str, b: &Value) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    let mut b = b.clone();
    b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        serde_json::from_str(CAPS).unwrap();
    let mut req = request(&b).body(full(&b)).unwrap();
    req.extensions_mut()
        .insert(smcp_server::Principal(who.to_owned()));
    req
}

#[test]
fn misplaced_x_mcp_file_fails_registration() {
    let bad = tool("bad")
        .input_schema(json!({"type": "object", "properties": {
            "doc": {"type": "integer", "x-mcp-file": {}}}}))
        .handler(|_call| async move { Ok::<_, HandlerError>(CallToolResult::text("")) });
    let err = Server::builder("t", "1")
        .extension(FilesExtension::inline_only())
        .tool(bad)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("x-mcp-file"), "{err}");
    // Without the extension, x-mcp-file is just an annotation the core does not read.
    let plain = tool("plain")
        .input_schema(json!({"type": "object", "properties": {
            "doc": {"type": "integer", "x-mcp-file": {}}}}))
        .handler(|_call| async move { Ok::<_, HandlerError>(CallToolResult::text("")) });
    assert!(Server::builder("t", "1").tool(plain).build().is_ok());
}

/// The `files/*` methods are unknown (404), and `size_of` sees what a `data:` argument
/// resolves to (`null` when nothing resolves file arguments).
async fn no_files_methods_and_inline_size(svc: &smcp_server::McpService) -> Value {
    call(svc, &body(json!(1), "files/authorizeUpload", json!({})))
        .await
        .assert_error(404, -32601, Some(json!(1)));
    let b = body(
        json!(2),
        "tools/call",
        json!({"name": "size_of", "arguments": {"doc": "data:,abc"}}),
    );
    let v = call(svc, &b).await.json();
    v["result"]["structuredContent"]["size"].clone()
}

#[tokio::test]
async fn a_server_without_the_extension_has_no_files() {
    let svc = Server::builder("t", "1")
        .tool(file_tool())
        .build()
        .unwrap()
        .service();
    assert_eq!(no_files_methods_and_inline_size(&svc).await, Value::Null);
}

#[tokio::test]
async fn inline_only_serves_data_uris_and_no_files_methods() {
    let svc = Server::builder("t", "1")
        .extension(FilesExtension::inline_only())
        .tool(file_tool())
        .build()
        .unwrap()
        .service();
    assert_eq!(no_files_methods_and_inline_size(&svc).await, json!(3));
    let b = body(
        json!(3),
        "tools/call",
        json!({"name": "size_of", "arguments": {"doc": "mcp-file://smcp/file_0123456789abcdef0123456789abcdef"}}),
    );
    let v = call(&svc, &b).await.json();
    assert_eq!(
        v["result"]["structuredContent"],
        json!({"argument": "doc", "reason": "fileUnavailable"})
    );
    let d = call(&svc, &body(json!(4), "server/discover", json!({})))
        .await
        .json();
    assert!(d["result"]["capabilities"].get("files").is_none());
}

#[tokio::test]
async fn foreign_file_uris_are_indistinguishable_from_unknown() {
    let dir = std::env::temp_dir().join(format!("smcp-server-files-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let files = Files::new(
        Arc::new(LocalFileStore::open(&dir).unwrap()),
        smcp_server::KeyRing::ephemeral().unwrap(),
        FilesConfig {
            base_url: Some("https://files.test".into()),
            ..FilesConfig::default()
        },
    )
    .unwrap();
    let server = Server::builder("t", "1")
        .extension(FilesExtension::new(files.clone()))
        .tool(file_tool())
        .build()
        .unwrap();
    let svc = server.service();
    // Alice authorizes and uploads.
    let b = body(
        json!(1),
        "files/authorizeUpload",
        json!({"size": 5, "mimeType": "text/plain"}),
    );
    let v = send(&svc, as_principal("alice", &b)).await.json();
    let uri = v["result"]["file"]["uri"].as_str().unwrap().to_owned();
    let url = v["result"]["upload"]["url"]
        .as_str()
        .unwrap()
        .trim_start_matches("https://files.test")
        .to_owned();
    let resp = files
        .router()
        .oneshot(
            http::Request::put(url)
                .body(axum::body::Body::from("hello"))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        resp.status(),
        200,
        "{:?}",
        resp.into_body().collect().await.unwrap().to_bytes()
    );
    // Alice can use it; Bob cannot, and sees exactly what an unknown URI gives.
    let call_with = |id: i64, doc: &str| {
        body(
            json!(id),
            "tools/call",
            json!({"name": "size_of", "arguments": {"doc": doc}}),
        )
    };
    let v = send(&svc, as_principal("alice", &call_with(2, &uri)))
        .await
        .json();
    assert_eq!(v["result"]["structuredContent"], json!({"size": 5}), "{v}");
    let foreign = send(&svc, as_principal("bob", &call_with(3, &uri)))
        .await
        .json();
    let unknown = send(
        &svc,
        as_principal(
            "bob",
            &call_with(4, "mcp-file://smcp/file_0123456789abcdef0123456789abcdef"),
        ),
    )
    .await
    .json();
    assert_eq!(foreign["result"], unknown["result"]);
    assert_eq!(
        foreign["result"]["structuredContent"]["reason"],
        "fileUnavailable"
    );
    let dl = |id: i64, u: &str| body(json!(id), "files/authorizeDownload", json!({"uri": u}));
    let foreign = send(&svc, as_principal("bob", &dl(5, &uri))).await.json();
    let unknown = send(
        &svc,
        as_principal(
            "bob",
            &dl(5, "mcp-file://smcp/file_0123456789abcdef0123456789abcdef"),
        ),
    )
    .await
    .json();
    assert_eq!(foreign, unknown);
    assert_eq!(foreign["error"]["code"], -32602);
    assert_eq!(foreign["error"]["data"]["reason"], "fileUnavailable");
    let ok = send(&svc, as_principal("alice", &dl(6, &uri))).await.json();
    assert_eq!(ok["result"]["file"]["size"], 5, "{ok}");
    // Without the capability: −32021.
    let reply = call(&svc, &dl(7, &uri)).await;
    reply.assert_error(400, -32021, Some(json!(7)));
    let _ = std::fs::remove_dir_all(&dir);
}
