//! W3C trace context (`traceparent`, `tracestate`) of a request: read from `params._meta`
//! (the spec reserves the two keys there, `basic/index.mdx` §_meta) or from the transport's
//! headers, validated, and never echoed.
//!
//! Which one counts: a valid `traceparent` in `_meta` wins over the HTTP header, because it
//! belongs to the MCP request itself (it survives stdio, proxies and re-sent requests) while
//! the header belongs to the HTTP exchange carrying it. A malformed value is ignored as if
//! absent, so a malformed `_meta` value falls back to a valid header. `tracestate` is taken
//! from the same place as the `traceparent` that won, and dropped when malformed (the
//! `traceparent` still counts).

use std::fmt;

use serde::Deserialize;
use serde_json::value::RawValue;

/// Longest `tracestate` accepted, in bytes (the W3C limit for list members is 32; 512 bytes is
/// the size vendors are told they can rely on).
pub const MAX_TRACESTATE_BYTES: usize = 512;

/// Longest `traceparent` accepted, in bytes (version 00 is 55; later versions may append).
const MAX_TRACEPARENT_BYTES: usize = 256;

/// A validated trace context.
#[derive(Clone, PartialEq, Eq)]
pub struct TraceContext {
    /// The trace id (16 bytes, not all zero).
    pub trace_id: [u8; 16],
    /// The caller's span id, the parent of the server's spans (8 bytes, not all zero).
    pub parent_id: [u8; 8],
    /// The trace flags (bit 0: sampled).
    pub flags: u8,
    /// The vendor `tracestate`, when valid.
    pub tracestate: Option<String>,
}

impl fmt::Debug for TraceContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceContext")
            .field("traceparent", &self.traceparent())
            .field("tracestate", &self.tracestate)
            .finish()
    }
}

/// Where a request's trace context came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceSource {
    /// `params._meta.traceparent`.
    Meta,
    /// The transport's `traceparent` header.
    Header,
}

impl TraceContext {
    /// Parses a `traceparent` (W3C Trace Context level 1: `00-<32 hex>-<16 hex>-<2 hex>`,
    /// lowercase; a later version's value is read by its first four fields) and, when given
    /// and valid, a `tracestate`. `None` when the `traceparent` is malformed.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        let tp = traceparent.trim_matches([' ', '\t']);
        if tp.len() < 55 || tp.len() > MAX_TRACEPARENT_BYTES {
            return None;
        }
        let bytes = tp.as_bytes();
        if bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
            return None;
        }
        let version = hex::<1>(&tp[0..2])?[0];
        if version == 0xff {
            return None;
        }
        // Version 00 is exactly 55 bytes; a later version may append "-…".
        if (version == 0 && tp.len() != 55) || (tp.len() > 55 && bytes[55] != b'-') {
            return None;
        }
        let trace_id = hex::<16>(&tp[3..35])?;
        let parent_id = hex::<8>(&tp[36..52])?;
        let flags = hex::<1>(&tp[53..55])?[0];
        if trace_id == [0; 16] || parent_id == [0; 8] {
            return None;
        }
        Some(Self {
            trace_id,
            parent_id,
            flags,
            tracestate: tracestate.and_then(valid_tracestate).map(str::to_owned),
        })
    }

    /// The context of a request: `_meta`'s when valid, else the header's (see the module
    /// documentation). `meta` is the request's raw `_meta`.
    pub fn of_request(
        meta: Option<&RawValue>,
        header_traceparent: Option<&str>,
        header_tracestate: Option<&str>,
    ) -> Option<(Self, TraceSource)> {
        if let Some(meta) = meta
            && let Ok(members) = serde_json::from_str::<MetaTrace<'_>>(meta.get())
            && let Some(tp) = members.traceparent.and_then(json_str)
            && let Some(ctx) = Self::parse(&tp, members.tracestate.and_then(json_str).as_deref())
        {
            return Some((ctx, TraceSource::Meta));
        }
        let ctx = Self::parse(header_traceparent?, header_tracestate)?;
        Some((ctx, TraceSource::Header))
    }

    /// Whether the caller sampled the trace.
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }

    /// The trace id as 32 lowercase hex digits.
    pub fn trace_id_hex(&self) -> String {
        to_hex(&self.trace_id)
    }

    /// The parent span id as 16 lowercase hex digits.
    pub fn parent_id_hex(&self) -> String {
        to_hex(&self.parent_id)
    }

    /// The `traceparent` (version 00) of this context.
    pub fn traceparent(&self) -> String {
        format!(
            "00-{}-{}-{:02x}",
            self.trace_id_hex(),
            self.parent_id_hex(),
            self.flags
        )
    }
}

#[cfg(feature = "otel")]
impl TraceContext {
    /// This context as the remote parent of an OpenTelemetry context.
    pub fn otel_context(&self) -> opentelemetry::Context {
        use opentelemetry::trace::{
            SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
        };
        let state = self
            .tracestate
            .as_deref()
            .and_then(|ts| ts.parse::<TraceState>().ok())
            .unwrap_or_default();
        let parent = SpanContext::new(
            TraceId::from_bytes(self.trace_id),
            SpanId::from_bytes(self.parent_id),
            TraceFlags::new(self.flags),
            true,
            state,
        );
        opentelemetry::Context::new().with_remote_span_context(parent)
    }

    /// Makes this context the OpenTelemetry parent of `span`, which must not have been
    /// entered yet. Does nothing when no OpenTelemetry layer records the span.
    pub fn set_parent_of(&self, span: &tracing::Span) {
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        if let Err(e) = span.set_parent(self.otel_context()) {
            tracing::trace!(error = %e, "trace parent not set");
        }
    }
}

/// The two members of `_meta` read here, unparsed (any other member is skipped).
#[derive(Deserialize)]
struct MetaTrace<'a> {
    #[serde(borrow, default)]
    traceparent: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tracestate: Option<&'a RawValue>,
}

/// A JSON string's value; `None` for any other JSON.
fn json_str(raw: &RawValue) -> Option<String> {
    serde_json::from_str::<String>(raw.get()).ok()
}

/// `tracestate` when it is well formed: at most 32 comma-separated `key=value` members, keys
/// of `[a-z0-9_\-*/@]` starting with a letter or digit, values of printable ASCII without `,`
/// and `=` (not ending in a space), within [`MAX_TRACESTATE_BYTES`].
fn valid_tracestate(ts: &str) -> Option<&str> {
    let ts = ts.trim_matches([' ', '\t']);
    if ts.is_empty() || ts.len() > MAX_TRACESTATE_BYTES {
        return None;
    }
    let mut members = 0;
    for member in ts.split(',') {
        let member = member.trim_matches([' ', '\t']);
        if member.is_empty() {
            continue;
        }
        members += 1;
        let (key, value) = member.split_once('=')?;
        let key_ok = key.len() <= 256
            && key
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            && key
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-*/@".contains(&b));
        let value_ok = !value.is_empty()
            && value.len() <= 256
            && !value.ends_with(' ')
            && value
                .bytes()
                .all(|b| (0x20..=0x7e).contains(&b) && b != b',' && b != b'=');
        if !key_ok || !value_ok {
            return None;
        }
    }
    (members > 0 && members <= 32).then_some(ts)
}

/// `N` bytes from `2N` lowercase hex digits.
fn hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (i, pair) in digits.chunks_exact(2).enumerate() {
        out[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Some(out)
}

fn nibble(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        _ => None,
    }
}

fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const TP: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_round_trips() {
        let ctx = TraceContext::parse(TP, Some("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")).unwrap();
        assert_eq!(ctx.trace_id_hex(), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(ctx.parent_id_hex(), "00f067aa0ba902b7");
        assert!(ctx.sampled());
        assert_eq!(ctx.traceparent(), TP);
        assert_eq!(
            ctx.tracestate.as_deref(),
            Some("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
        );
    }

    #[test]
    fn malformed_traceparents_are_ignored() {
        for bad in [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7",
            "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-extra",
            "00_0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
            "00-0af7651916cd43dd8448eb211c80319g-00f067aa0ba902b7-01",
        ] {
            assert!(TraceContext::parse(bad, None).is_none(), "{bad:?}");
        }
        // A later version may append fields.
        let later = "01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-more";
        assert!(TraceContext::parse(later, None).is_some());
    }

    #[test]
    fn a_malformed_tracestate_is_dropped_alone() {
        for bad in [
            "=x",
            "Key=x",
            "k=a,b",
            "k=",
            &"k=v,".repeat(40),
            "k=caf\u{e9}",
        ] {
            let ctx = TraceContext::parse(TP, Some(bad)).unwrap();
            assert_eq!(ctx.tracestate, None, "{bad:?}");
        }
    }

    #[test]
    fn meta_wins_over_the_header_unless_malformed() {
        let other = "00-11111111111111111111111111111111-2222222222222222-00";
        let meta = RawValue::from_string(format!(
            r#"{{"traceparent":"{TP}","tracestate":"a=1","x":{{"y":[1]}}}}"#
        ))
        .unwrap();
        let (ctx, source) =
            TraceContext::of_request(Some(&meta), Some(other), Some("b=2")).unwrap();
        assert_eq!(
            (ctx.traceparent().as_str(), source),
            (TP, TraceSource::Meta)
        );
        assert_eq!(ctx.tracestate.as_deref(), Some("a=1"));

        let bad = RawValue::from_string(r#"{"traceparent":"00-nope"}"#.to_owned()).unwrap();
        let (ctx, source) = TraceContext::of_request(Some(&bad), Some(other), Some("b=2")).unwrap();
        assert_eq!(
            (ctx.traceparent().as_str(), source),
            (other, TraceSource::Header)
        );
        assert_eq!(ctx.tracestate.as_deref(), Some("b=2"));

        let not_a_string = RawValue::from_string(r#"{"traceparent":5}"#.to_owned()).unwrap();
        assert!(TraceContext::of_request(Some(&not_a_string), None, None).is_none());
    }
}
