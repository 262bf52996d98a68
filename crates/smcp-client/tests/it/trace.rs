//! Trace propagation: the client sends its trace context in `_meta` and the headers; with
//! `otel`, a server handler's own calls continue the incoming trace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};
use smcp_client::Client;
use smcp_client::trace::{TraceHeaders, TraceSource};

const TP: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";

/// A server that answers `tools/list` with no tools and anything else with a text result.
async fn recorder() -> common::Scripted {
    common::scripted(|_, request| match request["method"].as_str() {
        Some("tools/list") => common::result(request, json!({"tools": []})),
        _ => common::result(
            request,
            json!({"content": [{"type": "text", "text": "ok"}]}),
        ),
    })
    .await
}

fn fixed() -> TraceSource {
    TraceSource::new(|| {
        Some(TraceHeaders {
            traceparent: TP.to_owned(),
            tracestate: Some("vendor=1".to_owned()),
        })
    })
}

#[tokio::test]
async fn the_trace_context_goes_in_meta_and_headers() {
    let server = recorder().await;
    let client = Client::builder(&server.url)
        .trace_source(fixed())
        .build()
        .unwrap();
    client.call_tool("anything", json!({})).await.unwrap();
    let seen = server.seen();
    let call = seen
        .iter()
        .find(|s| s.body["method"] == "tools/call")
        .expect("a tools/call");
    assert_eq!(call.body["params"]["_meta"]["traceparent"], TP);
    assert_eq!(call.body["params"]["_meta"]["tracestate"], "vendor=1");
    assert_eq!(call.headers["traceparent"], TP);
    assert_eq!(call.headers["tracestate"], "vendor=1");
}

#[tokio::test]
async fn without_a_source_nothing_is_added() {
    let server = recorder().await;
    let client = Client::builder(&server.url).build().unwrap();
    client.call_tool("anything", json!({})).await.unwrap();
    for seen in server.seen() {
        assert!(seen.headers.get("traceparent").is_none());
        assert_eq!(
            seen.body["params"]["_meta"].get("traceparent"),
            None::<&Value>
        );
    }
}

#[cfg(feature = "otel")]
mod otel {
    use super::*;
    use opentelemetry::trace::TracerProvider as _;
    use smcp_proto::server::tools::CallToolResult;
    use smcp_server::{HandlerError, Server, tool};
    use tracing_subscriber::layer::SubscriberExt as _;

    /// A server whose tool `relay` calls `downstream` with a client that propagates the
    /// handler's context: the downstream call continues the trace the caller started.
    #[tokio::test]
    async fn a_handlers_outgoing_call_continues_the_incoming_trace() {
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        let _default = tracing::subscriber::set_default(subscriber);

        let downstream = recorder().await;
        let url = downstream.url.clone();
        let upstream = Server::builder("relay", "1.0.0")
            .tool(tool("relay").handler(move |_call| {
                let url = url.clone();
                async move {
                    let client = Client::builder(&url)
                        .propagate_otel()
                        .build()
                        .map_err(|e| HandlerError::failed(e.to_string()))?;
                    client
                        .call_tool("next", json!({}))
                        .await
                        .map_err(|e| HandlerError::failed(e.to_string()))?;
                    Ok::<_, HandlerError>(CallToolResult::text("relayed"))
                }
            }))
            .build()
            .unwrap();
        let upstream_url = common::serve_mcp(upstream).await;
        let caller = Client::builder(&upstream_url)
            .trace_source(fixed())
            .build()
            .unwrap();
        let result = caller.call_tool("relay", json!({})).await.unwrap();
        assert_eq!(result.text_content(), "relayed");

        let seen = downstream.seen();
        let call = seen
            .iter()
            .find(|s| s.body["method"] == "tools/call")
            .expect("the relayed call");
        let sent = call.headers["traceparent"].to_str().unwrap().to_owned();
        let parts: Vec<&str> = sent.split('-').collect();
        assert_eq!(parts[1], "0af7651916cd43dd8448eb211c80319c", "{sent}");
        assert_ne!(
            parts[2], "00f067aa0ba902b7",
            "the handler's own span is the parent"
        );
        assert_eq!(call.body["params"]["_meta"]["traceparent"], sent);
    }
}
