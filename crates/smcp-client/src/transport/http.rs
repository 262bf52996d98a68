//! Streamable HTTP: one JSON-RPC request = one HTTP POST; its response read incrementally
//! (JSON or SSE).
//!
//! This is the only module of the request path that touches reqwest (with `direct.rs`, the
//! same POST without reqwest's layers where nothing they add is needed). It turns a POST into an
//! [`HttpStream`] of JSON-RPC messages and maps HTTP-level failures to typed errors: a JSON-RPC
//! error body keeps its code, 404/405 with a body that shows no sign of MCP means a wrong path,
//! 400/404/405 otherwise an older MCP revision, 413/431 keep their status. Which of these lead
//! to the older-revision fallback is decided in `legacy::era` ([`Error::is_fallback_signal`]).

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use smcp_proto::jsonrpc::{Message, Request};
use smcp_proto::sse::SseDecoder;

use super::Inbound;
use super::reply::HttpReply;
use crate::error::{Error, Kind, Result};
use crate::wire::{Tapped, WireKind, header_pairs};

/// `Accept` of every POST: both response forms are supported (SH §Sending 2).
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
/// Largest error body read to classify a non-success status.
pub(crate) const MAX_ERROR_BODY: usize = 64 * 1024;
/// Largest plain JSON response body accepted.
const MAX_JSON_BODY: usize = 32 * 1024 * 1024;

/// The HTTP side of a client: one reqwest client, the endpoint and the caller's extra headers.
#[derive(Debug, Clone)]
pub(crate) struct HttpTransport {
    http: reqwest::Client,
    /// The POST without reqwest's layers, where it can carry it (`direct.rs`).
    direct: Option<super::direct::DirectHttp>,
    url: reqwest::Url,
    extra_headers: HeaderMap,
    gate: super::gate::Gate,
}

impl HttpTransport {
    pub(crate) fn new(
        url: &str,
        extra_headers: HeaderMap,
        settings: &super::http_client::HttpSettings,
        gate: super::gate::Gate,
    ) -> Result<Self> {
        let url = reqwest::Url::parse(url)
            .map_err(|e| Error::config(format!("invalid server URL {url:?}: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Error::config(format!(
                "server URL must be http or https, got {:?}",
                url.scheme()
            )));
        }
        let http = settings
            .builder()
            .build()
            .map_err(|e| Error::config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            http,
            direct: super::direct::DirectHttp::for_endpoint(&url, settings),
            url,
            extra_headers,
            gate,
        })
    }

    /// Whether a POST takes the direct path (`direct.rs`).
    #[cfg(test)]
    pub(crate) fn takes_direct_path(&self) -> bool {
        self.direct.is_some() && self.gate.is_plain()
    }

    /// The same transport with every POST through reqwest.
    #[cfg(test)]
    pub(crate) fn without_direct_path(mut self) -> Self {
        self.direct = None;
        self
    }

    /// The endpoint URL.
    pub(crate) fn url(&self) -> &str {
        self.url.as_str()
    }

    /// The endpoint URL, parsed.
    pub(crate) fn endpoint(&self) -> &reqwest::Url {
        &self.url
    }

    /// The reqwest client (shared with the older-revision sessions).
    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.http
    }

    /// The caller's extra headers (`Authorization`, …), sent on every request.
    pub(crate) fn extra_headers(&self) -> &HeaderMap {
        &self.extra_headers
    }

    /// The authorization gate (shared with the older-revision sessions).
    pub(crate) fn gate(&self) -> &super::gate::Gate {
        &self.gate
    }

    /// POSTs `request` with the MCP headers in `headers` and returns its response stream.
    /// A header of `headers` replaces the caller's extra header of that name (a round's own
    /// `Authorization` in place of the client's).
    pub(crate) async fn post(
        &self,
        request: &Request,
        headers: Vec<(HeaderName, HeaderValue)>,
    ) -> Result<HttpStream> {
        // Serializing a request cannot fail: every member is plain JSON.
        let body = serde_json::to_vec(request).unwrap_or_default();
        // One header map, moved into the request (a builder's `headers` would copy it), with
        // room for `Host` too.
        let mut all = self.extra_headers.clone();
        all.reserve(headers.len() + 3);
        for (name, value) in headers {
            all.insert(name, value);
        }
        all.append(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
        all.append(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(direct) = &self.direct
            && self.gate.is_plain()
        {
            let response = direct
                .post(all, body)
                .await
                .map_err(|e| Error::new(Kind::Direct(e)))?;
            return into_stream(HttpReply::Direct(response)).await;
        }
        let mut req = reqwest::Request::new(reqwest::Method::POST, self.url.clone());
        *req.headers_mut() = all;
        *req.body_mut() = Some(body.into());
        let req = reqwest::RequestBuilder::from_parts(self.http.clone(), req);
        let response = self.gate.send(req).await?;
        into_stream(response).await
    }
}

/// Turns a response to a request into its message stream: a non-success status becomes a
/// typed error (see [`classify_status`]), a JSON body one message, an SSE body a stream.
/// A response the gate tapped hands what is read to its tap too.
pub(crate) async fn into_stream(response: impl Into<HttpReply>) -> Result<HttpStream> {
    let response = response.into();
    let status = response.status();
    let tap = response.extensions().get::<Tapped>().cloned();
    let headers = if tap.is_some() {
        response.headers().clone()
    } else {
        HeaderMap::new()
    };
    let tap_head = |body: Option<&[u8]>| {
        if let Some(t) = &tap {
            t.emit(WireKind::HttpResponse {
                status,
                headers: header_pairs(&headers),
                body: body.map(Bytes::copy_from_slice),
            });
        }
    };
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    tracing::debug!(status, content_type, "response headers");
    let form = BodyForm::of(content_type);
    if !(200..300).contains(&status) {
        let body = read_limited(response, MAX_ERROR_BODY, Overflow::Truncate).await?;
        tap_head(Some(&body));
        return Err(classify_status(status, &body));
    }
    match form {
        BodyForm::Sse => {
            tap_head(None);
            let bytes = response.chunks().boxed();
            Ok(HttpStream::Sse {
                decoder: SseDecoder::new(),
                bytes,
                ended: false,
                tap,
            })
        }
        BodyForm::Json => {
            let body = read_limited(response, MAX_JSON_BODY, Overflow::Fail).await?;
            tap_head(Some(&body));
            Ok(HttpStream::Json(Some(body)))
        }
        BodyForm::Other(_) if status == 202 => {
            tap_head(None);
            Err(Error::protocol(
                "the server answered a request with 202 Accepted (that is for notifications)",
            ))
        }
        BodyForm::Other(content_type) => Err(Error::protocol(format!(
            "unexpected response Content-Type {content_type:?} (expected application/json or text/event-stream)"
        ))),
    }
}

/// What a response's `Content-Type` says its body is (compared without case).
enum BodyForm {
    /// `text/event-stream`.
    Sse,
    /// `application/json`.
    Json,
    /// Anything else, lowercased for the error that names it.
    Other(String),
}

impl BodyForm {
    fn of(content_type: &str) -> Self {
        if starts_with_ignore_case(content_type, "text/event-stream") {
            Self::Sse
        } else if starts_with_ignore_case(content_type, "application/json") {
            Self::Json
        } else {
            Self::Other(content_type.to_ascii_lowercase())
        }
    }
}

/// Whether `text` starts with the lowercase `prefix`, ignoring ASCII case.
fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// Whether a response is an event stream (`text/event-stream`).
pub(crate) fn is_sse(r: &reqwest::Response) -> bool {
    r.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| starts_with_ignore_case(v, "text/event-stream"))
}

/// What to do with a body longer than the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overflow {
    /// Keep the first `limit` bytes (an error body is only classified and quoted).
    Truncate,
    /// Fail: a result cut short would be misread.
    Fail,
}

/// Reads at most `limit` bytes of a body (the rest is dropped with the connection).
pub(crate) async fn read_limited(
    response: impl Into<HttpReply>,
    limit: usize,
    overflow: Overflow,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut chunks = std::pin::pin!(response.into().chunks());
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk?;
        if out.len() + chunk.len() > limit {
            if overflow == Overflow::Fail {
                return Err(Error::protocol(format!(
                    "JSON response body exceeds {limit} bytes"
                )));
            }
            out.extend_from_slice(&chunk[..limit - out.len()]);
            break;
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// Maps a non-success status and its body to an error (A14 item 86/87, A2 item 35).
pub(crate) fn classify_status(status: u16, body: &[u8]) -> Error {
    if let Ok(Message::Error(e)) = Message::from_slice(body) {
        return Error::new(Kind::Rpc {
            status: Some(status),
            error: e.error,
        });
    }
    let text: String = String::from_utf8_lossy(body).chars().take(200).collect();
    if matches!(status, 404 | 405) && !looks_like_mcp(body) {
        return Error::new(Kind::WrongEndpoint {
            status,
            body: text.trim().to_owned(),
        });
    }
    if matches!(status, 400 | 404 | 405) {
        return Error::new(Kind::OlderRevision {
            status,
            detail: "no fallback to the stateful revisions was tried".to_owned(),
        });
    }
    Error::new(Kind::HttpStatus {
        status,
        body: text.trim().to_owned(),
    })
}

/// Whether a 404/405 body shows a sign of an MCP server (JSON, or words of the stateful MCP
/// era such as a session or `initialize`) rather than a generic "not found" page.
fn looks_like_mcp(body: &[u8]) -> bool {
    if serde_json::from_slice::<serde_json::Value>(body).is_ok() {
        return true;
    }
    let text = String::from_utf8_lossy(body).to_ascii_lowercase();
    ["session", "initialize"].iter().any(|w| text.contains(w))
}

/// The messages of one response: a single JSON body or an SSE stream read as it arrives.
pub(crate) enum HttpStream {
    /// `application/json`: one message, taken on the first read.
    Json(Option<Vec<u8>>),
    /// `text/event-stream`: events decoded incrementally.
    Sse {
        /// The incremental decoder.
        decoder: SseDecoder,
        /// The body.
        bytes: BoxStream<'static, Result<Bytes>>,
        /// The body has ended.
        ended: bool,
        /// Where each event goes too.
        tap: Option<Tapped>,
    },
}

impl std::fmt::Debug for HttpStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Json(_) => f.write_str("HttpStream::Json"),
            Self::Sse { .. } => f.write_str("HttpStream::Sse"),
        }
    }
}

impl HttpStream {
    /// Where an SSE stream could be resumed from: the last event id and the `retry:` time it
    /// asked for (both `None` for a JSON body).
    pub(crate) fn resume_point(&self) -> (Option<String>, Option<Duration>) {
        match self {
            Self::Json(_) => (None, None),
            Self::Sse { decoder, .. } => {
                (decoder.last_event_id().map(str::to_owned), decoder.retry())
            }
        }
    }
    /// The next JSON-RPC message; `Ok(None)` when the body ended.
    ///
    /// SSE comments, empty-data events (priming) and events with a name other than `message`
    /// are skipped. Anything that is not one JSON-RPC message is a protocol violation.
    pub(crate) async fn next_message(&mut self) -> Result<Option<Inbound>> {
        match self {
            Self::Json(body) => match body.take() {
                None => Ok(None),
                Some(bytes) => Message::from_slice_raw(&bytes).map(Some).map_err(|e| {
                    Error::protocol(format!("the JSON response is not a JSON-RPC message: {e}"))
                }),
            },
            Self::Sse {
                decoder,
                bytes,
                ended,
                tap,
            } => loop {
                match decoder.next_event() {
                    Err(e) => return Err(Error::protocol(format!("bad SSE stream: {e}"))),
                    Ok(Some(event)) => {
                        if let Some(t) = tap {
                            t.emit(WireKind::SseEvent {
                                id: decoder.last_event_id().map(str::to_owned),
                                event: event.event.clone(),
                                data: event.data.clone(),
                            });
                        }
                        if event.event.as_deref().is_some_and(|n| n != "message")
                            || event.data.trim().is_empty()
                        {
                            continue;
                        }
                        return Message::from_slice_raw(event.data.as_bytes())
                            .map(Some)
                            .map_err(|e| {
                                Error::protocol(format!(
                                    "an SSE event is not a JSON-RPC message: {e}"
                                ))
                            });
                    }
                    Ok(None) if *ended => {
                        if decoder.has_pending() {
                            tracing::debug!("SSE stream ended inside an event; dropping it");
                        }
                        return Ok(None);
                    }
                    Ok(None) => match bytes.next().await {
                        Some(Ok(chunk)) => decoder.feed(&chunk),
                        Some(Err(e)) => {
                            tracing::debug!(error = %e, "SSE body read failed");
                            *ended = true;
                            return Err(Error::new(Kind::StreamBroken));
                        }
                        None => {
                            decoder.feed(b"");
                            *ended = true;
                        }
                    },
                }
            },
        }
    }
}

impl super::MessageStream for HttpStream {
    fn next_message(&mut self) -> BoxFuture<'_, Result<Option<Inbound>>> {
        Box::pin(HttpStream::next_message(self))
    }

    fn rpc_status(&self) -> Option<u16> {
        // A JSON-RPC error in a 2xx body (an error status never becomes a stream).
        Some(200)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_404_or_405_is_a_wrong_path_and_an_mcp_looking_one_an_older_revision() {
        for (status, body) in [
            (404, &b""[..]),
            (404, b"<html><body>Not Found</body></html>"),
            (405, b"Method Not Allowed"),
            (404, b"Cannot POST /mcp"),
        ] {
            let e = classify_status(status, body);
            assert!(e.is_wrong_endpoint() && !e.is_older_revision(), "{e}");
            assert_eq!(e.status(), Some(status));
            assert!(e.to_string().contains("check the URL's path"), "{e}");
            assert!(!e.to_string().contains("older"), "{e}");
        }
        for (status, body) in [
            (404, &b"\"Bad Request: no session\""[..]),
            (405, b"Session not found"),
            (400, b""),
        ] {
            let e = classify_status(status, body);
            assert!(e.is_older_revision() && !e.is_wrong_endpoint(), "{e}");
        }
    }
}
