//! A tap on the wire: every HTTP request the client posts to the MCP endpoint, its response's
//! status and headers, each message of its body (the JSON body, or each SSE event as it
//! arrives), and every line to and from a stdio server, handed to a function of the
//! application as it happens ([`ClientBuilder::wire_tap`](crate::ClientBuilder::wire_tap)).
//!
//! For debugging tools (`smcp inspect` shows it): the events carry the headers as sent,
//! credentials included (a bearer token added by the OAuth session after the tap is not in
//! them), so whoever shows them must redact. The function runs on the request path: keep it
//! short (queue the event, do not block).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use bytes::Bytes;

/// Where the client hands its wire events.
#[derive(Clone)]
pub struct WireTap {
    f: Arc<dyn Fn(WireEvent) + Send + Sync>,
    next_exchange: Arc<AtomicU64>,
}

impl fmt::Debug for WireTap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WireTap")
    }
}

impl WireTap {
    /// A tap calling `f` with each event.
    pub fn new(f: impl Fn(WireEvent) + Send + Sync + 'static) -> Self {
        Self {
            f: Arc::new(f),
            next_exchange: Arc::new(AtomicU64::new(1)),
        }
    }

    /// Hands `kind` of `exchange` to the application.
    pub(crate) fn emit(&self, exchange: u64, kind: WireKind) {
        (self.f)(WireEvent {
            exchange,
            at: Instant::now(),
            kind,
        });
    }

    /// Hands a request about to be sent to the application and returns it, with the
    /// exchange its response's events belong to.
    pub(crate) fn request(
        &self,
        req: reqwest::RequestBuilder,
    ) -> crate::Result<(reqwest::RequestBuilder, Tapped)> {
        let (client, built) = req.build_split();
        let built = built.map_err(|e| crate::Error::new(crate::error::Kind::Transport(e)))?;
        let exchange = self.next_exchange.fetch_add(1, Ordering::Relaxed);
        self.emit(
            exchange,
            WireKind::HttpRequest {
                method: built.method().as_str().to_owned(),
                url: built.url().to_string(),
                headers: header_pairs(built.headers()),
                body: built
                    .body()
                    .and_then(reqwest::Body::as_bytes)
                    .map(Bytes::copy_from_slice)
                    .unwrap_or_default(),
            },
        );
        Ok((
            reqwest::RequestBuilder::from_parts(client, built),
            Tapped {
                tap: self.clone(),
                exchange,
            },
        ))
    }
}

/// A response's tap and exchange, kept in its extensions by the gate that sent the request.
#[derive(Debug, Clone)]
pub(crate) struct Tapped {
    tap: WireTap,
    exchange: u64,
}

impl Tapped {
    /// Hands `kind` of this exchange to the application.
    pub(crate) fn emit(&self, kind: WireKind) {
        self.tap.emit(self.exchange, kind);
    }
}

/// One thing seen on the wire.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WireEvent {
    /// The HTTP exchange it belongs to (request, response, its SSE events share it); `0` on
    /// stdio, where lines are not exchanges.
    pub exchange: u64,
    /// When it was seen.
    pub at: Instant,
    /// What it is.
    pub kind: WireKind,
}

/// What a [`WireEvent`] is.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum WireKind {
    /// An HTTP request to the endpoint.
    HttpRequest {
        /// The HTTP method (`POST`).
        method: String,
        /// The URL.
        url: String,
        /// The headers, as sent, in order.
        headers: Vec<(String, String)>,
        /// The body.
        body: Bytes,
    },
    /// The status and headers of its response, and the body when it is one JSON document or
    /// an error (an SSE body arrives as [`WireKind::SseEvent`]s).
    HttpResponse {
        /// The HTTP status.
        status: u16,
        /// The headers, in order.
        headers: Vec<(String, String)>,
        /// The body, when read whole.
        body: Option<Bytes>,
    },
    /// One event of an SSE response body.
    SseEvent {
        /// Its `id:`.
        id: Option<String>,
        /// Its `event:` name.
        event: Option<String>,
        /// Its data.
        data: String,
    },
    /// A line written to a stdio server's stdin (without its newline).
    StdioOut(Bytes),
    /// A line read from its stdout (without its newline).
    StdioIn(Bytes),
}

/// The headers of a map as (name, value) text pairs.
pub(crate) fn header_pairs(headers: &http::HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// A stdio line without its trailing newline.
pub(crate) fn line(bytes: &[u8]) -> Bytes {
    let trimmed = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    Bytes::copy_from_slice(trimmed.strip_suffix(b"\r").unwrap_or(trimmed))
}
