//! SEP-2631 files bound to the principal the server's authorization layer establishes from a
//! bearer token (2026-07-28 over HTTP, two real tokens): a file Alice uploaded is refused to
//! Bob on `files/authorizeDownload` and as a `tools/call` argument, exactly as an unknown
//! file; the upload token carries Alice, so the data plane commits the file as hers; her
//! download token serves her the bytes.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::auth_support;

use std::sync::Arc;

use auth_support::{SigningKey, claims};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use smcp_files::{Files, FilesConfig, FilesExtension, FilesToolCall as _, LocalFileStore};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::auth::{AuthLayer, JwtVerifier, ProtectedResourceMetadata};
use smcp_server::{HandlerError, Server, tool};
use tower::ServiceExt as _;

const RESOURCE: &str = "https://mcp.example/mcp";
const ISSUER: &str = "https://as.example";

fn rpc(id: i64, method: &str, params: Value, token: &str) -> http::Request<axum::body::Body> {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities":
            {"files": {"upload": true, "download": true, "transports": ["https"]}}
    });
    let mut request = http::Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("authorization", format!("Bearer {token}"));
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        request = request.header("mcp-name", name);
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    request
        .body(axum::body::Body::from(body.to_string()))
        .unwrap()
}

async fn send(app: &axum::Router, request: http::Request<axum::body::Body>) -> (u16, Value) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn files_minted_for_one_principal_are_refused_to_another() {
    let dir = std::env::temp_dir().join(format!("smcp-files-auth-{}", std::process::id()));
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
        .tool(
            tool("size_of")
                .input_schema(json!({"type": "object", "properties": {
                    "doc": {"type": "string", "format": "uri", "x-mcp-file": {"maxSize": 100}}}}))
                .handler(|call| async move {
                    let size = call.files().get("doc").map(smcp_files::FileHandle::size);
                    Ok::<_, HandlerError>(CallToolResult::structured(json!({"size": size})))
                }),
        )
        .build()
        .unwrap();
    let key = SigningKey::generate("k1");
    let verifier = JwtVerifier::from_jwks(ISSUER, auth_support::jwks(&[&key]))
        .audience(RESOURCE)
        .build()
        .unwrap();
    let auth = AuthLayer::builder(
        verifier,
        ProtectedResourceMetadata::new(RESOURCE)
            .unwrap()
            .authorization_server(ISSUER),
    )
    .build();
    let app = server.router("/mcp").layer(auth);
    let alice = key.sign(&claims("alice", ISSUER, RESOURCE, "mcp"));
    let bob = key.sign(&claims("bob", ISSUER, RESOURCE, "mcp"));

    // Alice authorizes an upload; the data plane (a capability of its own, no bearer token)
    // commits it as hers.
    let (status, v) = send(
        &app,
        rpc(
            1,
            "files/authorizeUpload",
            json!({"size": 5, "mimeType": "text/plain"}),
            &alice,
        ),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let uri = v["result"]["file"]["uri"].as_str().unwrap().to_owned();
    let url = v["result"]["upload"]["url"]
        .as_str()
        .unwrap()
        .trim_start_matches("https://files.test")
        .to_owned();
    let put = files
        .router()
        .oneshot(
            http::Request::put(url)
                .body(axum::body::Body::from("hello"))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(put.status(), 200);

    let unknown = "mcp-file://smcp/file_0123456789abcdef0123456789abcdef";
    let size_of = |id: i64, doc: &str, token: &str| {
        rpc(
            id,
            "tools/call",
            json!({"name": "size_of", "arguments": {"doc": doc}}),
            token,
        )
    };
    // As a tool argument.
    let (_, mine) = send(&app, size_of(2, &uri, &alice)).await;
    assert_eq!(
        mine["result"]["structuredContent"],
        json!({"size": 5}),
        "{mine}"
    );
    let (_, foreign) = send(&app, size_of(3, &uri, &bob)).await;
    let (_, none) = send(&app, size_of(3, unknown, &bob)).await;
    assert_eq!(
        foreign["result"]["structuredContent"]["reason"], "fileUnavailable",
        "{foreign}"
    );
    assert_eq!(
        foreign, none,
        "a foreign file looks exactly like an unknown one"
    );

    // On files/authorizeDownload.
    let download = |id: i64, u: &str, token: &str| {
        rpc(id, "files/authorizeDownload", json!({"uri": u}), token)
    };
    let (_, foreign) = send(&app, download(4, &uri, &bob)).await;
    let (_, none) = send(&app, download(4, unknown, &bob)).await;
    assert_eq!(
        foreign["error"]["data"]["reason"], "fileUnavailable",
        "{foreign}"
    );
    assert_eq!(foreign, none);

    // Alice's download token serves her bytes on the data plane.
    let (_, ok) = send(&app, download(5, &uri, &alice)).await;
    let url = ok["result"]["download"]["url"]
        .as_str()
        .unwrap()
        .trim_start_matches("https://files.test")
        .to_owned();
    let got = files
        .router()
        .oneshot(
            http::Request::get(url)
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(got.status(), 200);
    assert_eq!(
        &got.into_body().collect().await.unwrap().to_bytes()[..],
        b"hello"
    );

    // Without a token nothing reaches the extension.
    let mut anonymous = size_of(6, &uri, "x");
    anonymous.headers_mut().remove("authorization");
    let (status, _) = send(&app, anonymous).await;
    assert_eq!(status, 401);
    let _ = std::fs::remove_dir_all(&dir);
}
