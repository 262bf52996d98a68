//! What the gateway tests share: an upstream on a loopback port, a gateway in front of it,
//! raw requests to the gateway's endpoint.

#![allow(dead_code, unreachable_pub)]

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use smcp_gateway::{Gateway, GatewayConfig};
use smcp_server::metrics::Prometheus;
use smcp_server::mrtr::{Key, KeyRing, MrtrConfig};
use smcp_server::{McpService, ServeOptions, Server};

/// A server on a loopback port, stopped when dropped.
pub struct Served {
    pub url: String,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// Serves `service` on `127.0.0.1:0`.
pub async fn serve<S, B>(service: S) -> Served
where
    S: tower::Service<
            Request<smcp_server::http::RequestBody>,
            Response = http::Response<B>,
            Error = std::convert::Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(smcp_server::serve(
        listener,
        service,
        ServeOptions::default(),
        async move {
            let _ = stopped.await;
        },
    ));
    Served {
        url: format!("http://{addr}/mcp"),
        _stop: stop,
    }
}

/// Serves an smcp server at `/mcp`.
pub async fn serve_server(server: &Server) -> Served {
    serve(server.endpoint("/mcp")).await
}

/// One key every gateway instance of a test shares (as instances behind one balancer do).
pub fn shared_keys() -> MrtrConfig {
    MrtrConfig::new(KeyRing::new(Key::new("k1", [7u8; 32]).unwrap()))
}

/// A gateway with these `[[upstream]]` tables, and its server.
pub async fn gateway(upstreams: &str) -> (Gateway, Server) {
    let (gateway, server, _) = gateway_measured(upstreams).await;
    (gateway, server)
}

/// One of several instances: a gateway reaching the others through `peers`.
pub async fn gateway_in_cluster(
    upstreams: &str,
    peers: std::sync::Arc<dyn smcp_gateway::Peers>,
) -> (Gateway, Server) {
    let config = GatewayConfig::parse(upstreams).unwrap();
    let gateway = Gateway::start_in_cluster(config, peers).await.unwrap();
    finish(gateway, Prometheus::new())
}

/// The same, its server recording into Prometheus metrics.
pub async fn gateway_measured(upstreams: &str) -> (Gateway, Server, Prometheus) {
    let config = GatewayConfig::parse(upstreams).unwrap();
    let gateway = Gateway::start(config).await.unwrap();
    let prometheus = Prometheus::new();
    let (gateway, server) = finish(gateway, prometheus.clone());
    (gateway, server, prometheus)
}

fn finish(gateway: Gateway, prometheus: Prometheus) -> (Gateway, Server) {
    let server = gateway
        .configure(Server::builder("gw", "1"))
        .mrtr(shared_keys())
        .metrics(std::sync::Arc::new(prometheus))
        .build()
        .unwrap();
    gateway.attach(&server);
    (gateway, server)
}

/// The `_meta` of a 2026-07-28 request with these client capabilities.
pub fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities
    })
}

/// Posts `tools/call` of `name` with `params` (its `_meta` added) and returns the status and
/// the JSON-RPC response (the last SSE `data:` line of a streamed answer).
pub async fn call(svc: &McpService, name: &str, mut params: Value) -> (StatusCode, Value) {
    params["name"] = json!(name);
    if params.get("_meta").is_none() {
        params["_meta"] = meta(json!({"elicitation": {}}));
    }
    post(svc, "tools/call", Some(name), params).await
}

/// Posts `method` with `params` as they are (`Mcp-Name: name` when given).
pub async fn post(
    svc: &McpService,
    method: &str,
    name: Option<&str>,
    params: Value,
) -> (StatusCode, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut builder = Request::post("http://localhost/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        builder = builder.header("mcp-name", name);
    }
    let request = builder
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = svc.handle(request).await;
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    let json = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("data: "))
        .map_or_else(
            || serde_json::from_str(&text).unwrap(),
            |l| serde_json::from_str(l).unwrap(),
        );
    (status, json)
}
