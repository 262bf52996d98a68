//! `http = "2"`: the gateway speaks HTTP/2 with prior knowledge (h2c) to an upstream that
//! takes it, every call on one connection; to one that speaks only HTTP/1.1 the upstream
//! is down and named, not silently reached over HTTP/1.1.

use std::sync::{Arc, Mutex};

use serde_json::json;
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, ServeOptions, Server, tool};

use crate::common;

fn upstream() -> Server {
    Server::builder("up", "1")
        .tool(
            tool("ping")
                .input_schema(json!({"type": "object"}))
                .handler(|_call| async { Ok::<_, HandlerError>(CallToolResult::text("pong")) }),
        )
        .build()
        .unwrap()
}

/// Serves `server` with `h2c` as asked, recording the HTTP version of every request.
async fn served(server: &Server, h2c: bool) -> (String, Arc<Mutex<Vec<http::Version>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let endpoint = server.endpoint("/mcp");
    let record = Arc::clone(&seen);
    let service = tower::service_fn(move |request: http::Request<_>| {
        record.lock().unwrap().push(request.version());
        let mut endpoint = endpoint.clone();
        async move { tower::Service::call(&mut endpoint, request).await }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(smcp_server::serve(
        listener,
        service,
        ServeOptions {
            h2c,
            ..ServeOptions::default()
        },
        std::future::pending(),
    ));
    (url, seen)
}

#[tokio::test]
async fn calls_go_up_over_http2_when_asked_and_an_http1_upstream_is_named_down() {
    let (h2_url, h2_seen) = served(&upstream(), true).await;
    let (h1_url, h1_seen) = served(&upstream(), false).await;
    let (gateway, server) = common::gateway(&format!(
        "[[upstream]]\nname = \"two\"\nurl = \"{h2_url}\"\nhttp = \"2\"\n\n\
         [[upstream]]\nname = \"one\"\nurl = \"{h1_url}\"\nhttp = \"2\"\ntimeout = \"2s\"\n"
    ))
    .await;
    let svc = server.service();
    for _ in 0..3 {
        let (status, body) = common::call(&svc, "two_ping", json!({"arguments": {}})).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["result"]["content"][0]["text"], "pong", "{body}");
    }
    let versions = h2_seen.lock().unwrap().clone();
    assert!(versions.len() >= 3, "{versions:?}");
    assert!(
        versions.iter().all(|v| *v == http::Version::HTTP_2),
        "every request to the h2c upstream came over HTTP/2: {versions:?}"
    );
    // The HTTP/1.1-only upstream never served a request: its tool is not in the catalog.
    assert!(h1_seen.lock().unwrap().is_empty());
    let (_, body) = common::call(&svc, "one_ping", json!({"arguments": {}})).await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    // It is down, and named (what /readyz shows); the h2c one is not.
    let down = gateway.down();
    assert_eq!(
        down.iter()
            .map(|(name, _)| name.as_str())
            .collect::<Vec<_>>(),
        ["one"],
        "{down:?}"
    );
}
