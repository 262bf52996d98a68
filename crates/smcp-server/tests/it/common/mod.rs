//! Shared helpers for the in-process tests: a probe server whose handlers count their runs,
//! and request/response helpers that speak raw HTTP to the tower service (no sockets).

#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    missing_debug_implementations
)]
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::needless_pass_by_value
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, McpService, Server, ServerBuilder, tool};

pub const VERSION: &str = "2026-07-28";

/// Counts handler runs so a test can assert that a rejected request ran nothing.
#[derive(Clone, Default)]
pub struct Runs(Arc<AtomicUsize>);

impl Runs {
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
    fn hit(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

pub fn probe_tools(builder: ServerBuilder, runs: &Runs) -> ServerBuilder {
    let r1 = runs.clone();
    let r2 = runs.clone();
    let r3 = runs.clone();
    builder
        .tool(
            tool("probe")
                .description("counts its runs")
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"},
                        "count": {"type": "integer", "x-mcp-header": "Count"},
                        "flag": {"type": "boolean", "x-mcp-header": "Flag"},
                        "nested": {"type": "object", "properties": {
                            "zone": {"type": "string", "x-mcp-header": "Zone"}
                        }},
                        "n": {"type": "integer", "minimum": 0}
                    }
                }))
                .handler(move |call| {
                    let runs = r1.clone();
                    async move {
                        runs.hit();
                        Ok::<_, HandlerError>(CallToolResult::text(
                            serde_json::to_string(&call.arguments).unwrap_or_default(),
                        ))
                    }
                }),
        )
        .tool(
            tool("needs_sampling")
                .description("requires sampling")
                .requires_client_capability("sampling")
                .handler(move |_call| {
                    let runs = r2.clone();
                    async move {
                        runs.hit();
                        Ok::<_, HandlerError>(CallToolResult::text("ok"))
                    }
                }),
        )
        .tool(
            tool("progress3")
                .description("three progress notifications")
                .handler(move |call| {
                    let runs = r3.clone();
                    async move {
                        runs.hit();
                        for p in [1.0, 2.0, 3.0] {
                            call.ctx
                                .progress(p, Some(3.0), None)
                                .await
                                .map_err(|e| HandlerError::failed(e.to_string()))?;
                        }
                        call.ctx
                            .log(smcp_server::LoggingLevel::Info, None, json!("done"))
                            .await
                            .map_err(|e| HandlerError::failed(e.to_string()))?;
                        Ok(CallToolResult::text("done"))
                    }
                }),
        )
}

pub fn probe_server(runs: &Runs) -> McpService {
    probe_tools(Server::builder("probe", "1.0.0").logging(true), runs)
        .build()
        .expect("probe server builds")
        .service()
}

/// The probe server with the earlier revisions' sessions turned off: a 2026-07-28-only
/// server (`smcpd --no-legacy`), for the checks of what such a server answers.
pub fn probe_server_without_legacy(runs: &Runs) -> McpService {
    probe_tools(Server::builder("probe", "1.0.0").logging(true), runs)
        .legacy(smcp_server::legacy::LegacyConfig {
            enabled: false,
            ..smcp_server::legacy::LegacyConfig::default()
        })
        .build()
        .expect("probe server builds")
        .service()
}

/// The `_meta` every request carries (the one copy is in smcp-test-support).
#[allow(unused_imports)] // smcp-files includes this module and has no use for it
pub use smcp_test_support::jsonrpc::meta;

/// A well-formed request body (the one copy is in smcp-test-support).
pub use smcp_test_support::jsonrpc::request as body;

/// A request with every header a conforming client sends for this body.
pub fn request(body: &Value) -> http::request::Builder {
    let method = body["method"].as_str().unwrap_or_default();
    let mut b = Request::post("/mcp")
        .header("host", "127.0.0.1:8931")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", VERSION)
        .header("mcp-method", method);
    let name = body["params"]["name"]
        .as_str()
        .or_else(|| body["params"]["uri"].as_str());
    if let (Some(name), true) = (
        name,
        matches!(method, "tools/call" | "prompts/get" | "resources/read"),
    ) {
        b = b.header("mcp-name", name);
    }
    b
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub bytes: Bytes,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or_else(|e| {
            panic!("not JSON ({e}): {:?}", String::from_utf8_lossy(&self.bytes))
        })
    }

    pub fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// The JSON messages of an SSE body, in order.
    pub fn sse_messages(&self) -> Vec<Value> {
        let mut decoder = smcp_proto::sse::SseDecoder::new();
        decoder.feed(&self.bytes);
        let mut out = Vec::new();
        while let Some(event) = decoder.next_event().expect("valid SSE") {
            out.push(serde_json::from_str(&event.data).expect("JSON event"));
        }
        out
    }

    /// Asserts a JSON-RPC error with this status, code and echoed id.
    pub fn assert_error(&self, status: u16, code: i64, id: Option<Value>) {
        let v = self.json();
        assert_eq!(self.status.as_u16(), status, "status; body {v}");
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        assert_eq!(v["error"]["code"], code, "code; body {v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "message; body {v}"
        );
        match id {
            Some(id) => assert_eq!(v["id"], id, "echoed id; body {v}"),
            None => assert!(v.get("id").is_none(), "no id expected; body {v}"),
        }
    }
}

pub async fn send(svc: &McpService, req: Request<Full<Bytes>>) -> Reply {
    let response = svc.handle(req).await;
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("infallible body")
        .to_bytes();
    Reply {
        status,
        headers,
        bytes,
    }
}

pub async fn call(svc: &McpService, body: &Value) -> Reply {
    let req = request(body)
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("request");
    send(svc, req).await
}

pub fn full(v: &Value) -> Full<Bytes> {
    Full::new(Bytes::from(v.to_string()))
}
