//! Test servers: the real smcpd demo server in-process, and a scripted axum server that
//! answers with canned (often broken) responses.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::needless_pass_by_value
)]

use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use serde_json::Value;
use tokio::net::TcpListener;

/// Serves `server` on 127.0.0.1:0 and returns the `/mcp` URL. The server lives until the
/// test's runtime ends.
pub async fn serve_mcp(server: smcp_server::Server) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(smcp_server::serve(
        listener,
        server.service(),
        smcp_server::ServeOptions::default(),
        std::future::pending(),
    ));
    format!("http://{addr}/mcp")
}

/// The smcpd demo server.
pub async fn smcpd() -> String {
    serve_mcp(smcpd::demo_server(smcp_server::SecurityPolicy::loopback()).unwrap()).await
}

/// One recorded POST.
#[derive(Debug, Clone)]
pub struct Seen {
    pub headers: HeaderMap,
    pub body: Value,
    /// When the POST arrived.
    pub at: std::time::Instant,
}

pub type Script = Arc<dyn Fn(usize, &Value) -> Response + Send + Sync>;

/// A scripted server: `script(n, request)` answers the n-th POST (0-based).
pub struct Scripted {
    pub url: String,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl Scripted {
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

pub async fn scripted(
    script: impl Fn(usize, &Value) -> Response + Send + Sync + 'static,
) -> Scripted {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let script: Script = Arc::new(script);
    let s2 = seen.clone();
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let seen = s2.clone();
            let script = script.clone();
            async move {
                let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let n = {
                    let mut s = seen.lock().unwrap();
                    s.push(Seen {
                        headers,
                        body: body.clone(),
                        at: std::time::Instant::now(),
                    });
                    s.len() - 1
                };
                script(n, &body)
            }
        }),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    Scripted {
        url: format!("http://{addr}/mcp"),
        seen,
    }
}

pub fn id_of(request: &Value) -> Value {
    request.get("id").cloned().unwrap_or(Value::Null)
}

/// A JSON response.
pub fn json(status: u16, body: Value) -> Response {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap())
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

/// A JSON-RPC result for `request`.
pub fn result(request: &Value, result: Value) -> Response {
    json(
        200,
        serde_json::json!({"jsonrpc": "2.0", "id": id_of(request), "result": result}),
    )
}

/// An SSE response with this raw body.
pub fn sse(raw: impl Into<String>) -> Response {
    Response::builder()
        .status(200)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from(raw.into()))
        .unwrap()
}

/// One SSE event carrying `message`.
pub fn event(message: &Value) -> String {
    format!("data: {message}\n\n")
}
