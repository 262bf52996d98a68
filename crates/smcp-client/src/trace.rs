//! Trace context propagation: the caller's W3C trace context goes out with every request, in
//! `params._meta` (`traceparent`, `tracestate`, as the spec reserves them) and, over HTTP, in
//! the `traceparent` / `tracestate` headers.
//!
//! The context comes from a [`TraceSource`]: a plain function the application gives
//! ([`ClientBuilder::trace_source`](crate::ClientBuilder::trace_source)), or, with the feature
//! `otel`, the OpenTelemetry context of the current `tracing` span
//! ([`ClientBuilder::propagate_otel`](crate::ClientBuilder::propagate_otel)). A request whose
//! `_meta` already carries a `traceparent` keeps it. Malformed values from the source are
//! not sent.

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

/// A W3C trace context to send: a `traceparent` and, optionally, a `tracestate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceHeaders {
    /// `00-<trace id>-<parent span id>-<flags>`.
    pub traceparent: String,
    /// The vendor list, when there is one.
    pub tracestate: Option<String>,
}

/// Where the client reads the current trace context from, once per request.
#[derive(Clone)]
pub struct TraceSource(pub(crate) Arc<dyn Fn() -> Option<TraceHeaders> + Send + Sync>);

impl fmt::Debug for TraceSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TraceSource")
    }
}

impl TraceSource {
    /// A source calling `f`.
    pub fn new(f: impl Fn() -> Option<TraceHeaders> + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// The OpenTelemetry context of the current `tracing` span (through
    /// `tracing-opentelemetry`), when it is valid.
    #[cfg(feature = "otel")]
    pub fn otel() -> Self {
        Self::new(|| {
            use opentelemetry::trace::TraceContextExt as _;
            use tracing_opentelemetry::OpenTelemetrySpanExt as _;
            let cx = tracing::Span::current().context();
            let span = cx.span();
            let sc = span.span_context();
            if !sc.is_valid() {
                return None;
            }
            let state = sc.trace_state().header();
            Some(TraceHeaders {
                traceparent: format!(
                    "00-{}-{}-{:02x}",
                    sc.trace_id(),
                    sc.span_id(),
                    sc.trace_flags().to_u8()
                ),
                tracestate: (!state.is_empty()).then_some(state),
            })
        })
    }
}

/// The `_meta` member and header carrying the W3C trace context.
pub(crate) const TRACEPARENT: &str = "traceparent";
/// The `_meta` member and header carrying the W3C trace state.
pub(crate) const TRACESTATE: &str = "tracestate";

/// Adds the source's context to `meta` (unless it already has a `traceparent`).
pub(crate) fn stamp(source: Option<&TraceSource>, meta: &mut Map<String, Value>) {
    let Some(source) = source else {
        return;
    };
    if meta.contains_key(TRACEPARENT) {
        return;
    }
    let Some(ctx) = (source.0)() else {
        return;
    };
    if !well_formed_traceparent(&ctx.traceparent) {
        tracing::debug!("trace source gave a malformed traceparent; not sent");
        return;
    }
    meta.insert(TRACEPARENT.to_owned(), Value::String(ctx.traceparent));
    if let Some(state) = ctx.tracestate.filter(|s| well_formed_tracestate(s)) {
        meta.insert(TRACESTATE.to_owned(), Value::String(state));
    }
}

/// The `traceparent` / `tracestate` of `meta` as header values, when well formed.
pub(crate) fn headers(meta: Option<&Value>) -> Vec<(http::HeaderName, http::HeaderValue)> {
    let mut out = Vec::new();
    let Some(Value::Object(meta)) = meta else {
        return out;
    };
    let Some(Value::String(tp)) = meta.get(TRACEPARENT) else {
        return out;
    };
    if !well_formed_traceparent(tp) {
        return out;
    }
    if let Ok(v) = http::HeaderValue::from_str(tp) {
        out.push((http::HeaderName::from_static(TRACEPARENT), v));
    }
    if let Some(Value::String(ts)) = meta.get(TRACESTATE)
        && well_formed_tracestate(ts)
        && let Ok(v) = http::HeaderValue::from_str(ts)
    {
        out.push((http::HeaderName::from_static(TRACESTATE), v));
    }
    out
}

/// Version 00 syntax: `2-32-16-2` lowercase hex digits, ids not all zero.
fn well_formed_traceparent(tp: &str) -> bool {
    let parts: Vec<&str> = tp.split('-').collect();
    let hex = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    parts.len() == 4
        && parts[0] == "00"
        && hex(parts[1], 32)
        && hex(parts[2], 16)
        && hex(parts[3], 2)
        && parts[1].bytes().any(|b| b != b'0')
        && parts[2].bytes().any(|b| b != b'0')
}

/// Printable ASCII, at most 512 bytes.
fn well_formed_tracestate(ts: &str) -> bool {
    !ts.is_empty() && ts.len() <= 512 && ts.bytes().all(|b| (0x20..=0x7e).contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TP: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";

    #[test]
    fn the_source_fills_meta_and_headers_follow_it() {
        let source = TraceSource::new(|| {
            Some(TraceHeaders {
                traceparent: TP.to_owned(),
                tracestate: Some("v=1".to_owned()),
            })
        });
        let mut meta = Map::new();
        stamp(Some(&source), &mut meta);
        assert_eq!(meta["traceparent"], TP);
        assert_eq!(meta["tracestate"], "v=1");
        let headers = headers(Some(&Value::Object(meta)));
        assert_eq!(headers.len(), 2);
        assert_eq!(headers[0].1, TP);
    }

    #[test]
    fn an_existing_traceparent_is_kept_and_garbage_is_not_sent() {
        let source = TraceSource::new(|| {
            Some(TraceHeaders {
                traceparent: "not-a-traceparent".to_owned(),
                tracestate: None,
            })
        });
        let mut meta = Map::new();
        stamp(Some(&source), &mut meta);
        assert!(meta.is_empty());
        meta.insert("traceparent".to_owned(), Value::String(TP.to_owned()));
        stamp(Some(&source), &mut meta);
        assert_eq!(meta["traceparent"], TP);
    }
}
