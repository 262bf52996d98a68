//! W3C trace context of a request: read from `_meta` or the headers, validated, and
//! recorded on the request's span (`trace_id`, `parent_span_id`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use common::{body, request, send};
use http_body_util::Full;
use serde_json::json;
use smcp_server::prelude::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};

/// The `trace_id` and `parent_span_id` recorded on `mcp.request` spans.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<(String, String)>>>);

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if matches!(field.name(), "trace_id" | "parent_span_id") {
            self.0.push((
                field.name().to_owned(),
                format!("{value:?}").trim_matches('"').to_owned(),
            ));
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if matches!(field.name(), "trace_id" | "parent_span_id") {
            self.0.push((field.name().to_owned(), value.to_owned()));
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Captured {
    fn on_new_span(&self, attrs: &Attributes<'_>, _id: &Id, _ctx: Context<'_, S>) {
        if attrs.metadata().name() == "mcp.request" {
            attrs.record(&mut Fields(&mut self.0.lock().unwrap()));
        }
    }
    fn on_record(&self, _id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        values.record(&mut Fields(&mut self.0.lock().unwrap()));
    }
}

const META_TP: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
const HEADER_TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b8-00";

/// Sends one `tools/call` with these `_meta` and header trace members and returns what the
/// request's span recorded.
async fn traced(meta_tp: Option<&str>, header_tp: Option<&str>) -> Vec<(String, String)> {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::registry()
        .with(captured.clone())
        .with(tracing_subscriber::filter::LevelFilter::DEBUG);
    let _default = tracing::subscriber::set_default(subscriber);
    let server = Server::builder("trace", "1.0.0")
        .tool(tool("ping").handler(|_call| async { Ok(CallToolResult::text("pong")) }))
        .build()
        .unwrap();
    let mut b = body(json!(1), "tools/call", json!({"name": "ping"}));
    if let Some(tp) = meta_tp {
        b["params"]["_meta"]["traceparent"] = json!(tp);
        b["params"]["_meta"]["tracestate"] = json!("vendor=abc");
    }
    let mut req = request(&b);
    if let Some(tp) = header_tp {
        req = req.header("traceparent", tp);
    }
    let reply = send(
        &server.service(),
        req.body(Full::new(Bytes::from(b.to_string()))).unwrap(),
    )
    .await;
    assert_eq!(reply.status, 200);
    let text = String::from_utf8_lossy(&reply.bytes).into_owned();
    for tp in [meta_tp, header_tp].into_iter().flatten() {
        assert!(
            !text.contains(tp),
            "the trace context is never echoed: {text}"
        );
    }
    captured.0.lock().unwrap().clone()
}

fn ids(trace: &str, parent: &str) -> Vec<(String, String)> {
    vec![
        ("trace_id".to_owned(), trace.to_owned()),
        ("parent_span_id".to_owned(), parent.to_owned()),
    ]
}

#[tokio::test]
async fn meta_traceparent_reaches_the_span() {
    assert_eq!(
        traced(Some(META_TP), None).await,
        ids("0af7651916cd43dd8448eb211c80319c", "00f067aa0ba902b7")
    );
}

#[tokio::test]
async fn header_traceparent_reaches_the_span() {
    assert_eq!(
        traced(None, Some(HEADER_TP)).await,
        ids("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b8")
    );
}

#[tokio::test]
async fn meta_wins_over_the_header() {
    assert_eq!(
        traced(Some(META_TP), Some(HEADER_TP)).await,
        ids("0af7651916cd43dd8448eb211c80319c", "00f067aa0ba902b7")
    );
}

#[tokio::test]
async fn a_malformed_meta_value_falls_back_to_the_header() {
    let bad = "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01";
    assert_eq!(
        traced(Some(bad), Some(HEADER_TP)).await,
        ids("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b8")
    );
}

#[tokio::test]
async fn malformed_values_everywhere_record_nothing() {
    let seen = traced(
        Some("00-00000000000000000000000000000000-00f067aa0ba902b7-01"),
        Some("not a traceparent"),
    )
    .await;
    assert!(seen.is_empty(), "{seen:?}");
}
