//! Which MCP era an HTTP endpoint speaks, remembered per endpoint, and the fallback.
//!
//! Without a pin a client sends its first request as 2026-07-28. A refusal with a recognized
//! 2026-07-28 error (−32020/−32021/−32022, −32602 with 400, −32601 with 404) means a modern
//! server: the error is handled as today. Any other 400/404/405 (empty, not JSON, another
//! era's JSON-RPC error such as "Bad Request: No valid session ID provided") means an older
//! server: the client sends `initialize` (stateful Streamable HTTP) and, when that is refused
//! with 4xx, tries the 2024-11-05 HTTP+SSE transport (`GET`, `endpoint` event). The outcome is
//! remembered per endpoint URL for every client of this process; a remembered older era is
//! tried directly next time and forgotten (re-probed) when it stops working.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use http::header::{HeaderName, HeaderValue};
use smcp_proto::jsonrpc::Request;

use super::adapter::{SESSION_VERSIONS, SSE_VERSION};
use super::info::{Era, LegacyConfig, SessionInfo};
use super::session::Session;
use super::sse::SseSession;
use crate::error::{Error, Kind, Result};
use crate::transport::ResponseStream;
use crate::transport::http::HttpTransport;

/// Most endpoints remembered; past it the memory is cleared (it is only a shortcut).
const MAX_REMEMBERED: usize = 1024;

/// What is remembered about an endpoint that is not 2026-07-28.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Remembered {
    Session,
    HttpSse,
}

fn memory() -> &'static Mutex<HashMap<String, Remembered>> {
    static M: OnceLock<Mutex<HashMap<String, Remembered>>> = OnceLock::new();
    M.get_or_init(Mutex::default)
}

fn remember(url: &str, era: Option<Remembered>) {
    let mut m = memory().lock().unwrap_or_else(PoisonError::into_inner);
    match era {
        Some(e) => {
            if m.len() >= MAX_REMEMBERED && !m.contains_key(url) {
                m.clear();
            }
            m.insert(url.to_owned(), e);
        }
        None => {
            m.remove(url);
        }
    }
}

/// Seeds the memory for `url` (see `ClientBuilder::era_hint`); a stateless hint forgets.
pub(crate) fn hint(url: &str, era: Era) {
    // The same key as the endpoint's own (the parsed, normalized URL).
    let Ok(url) = reqwest::Url::parse(url) else {
        return;
    };
    remember(
        url.as_str(),
        match era {
            Era::Session => Some(Remembered::Session),
            Era::HttpSse => Some(Remembered::HttpSse),
            Era::Stateless => None,
        },
    );
}

fn remembered(url: &str) -> Option<Remembered> {
    memory()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(url)
        .copied()
}

/// An established older-era connection.
#[derive(Debug, Clone)]
pub(crate) enum Legacy {
    /// Stateful Streamable HTTP.
    Session(Arc<Session>),
    /// 2024-11-05 HTTP+SSE.
    Sse(Arc<SseSession>),
}

impl Legacy {
    pub(crate) fn version(&self) -> String {
        match self {
            Self::Session(s) => s.version(),
            Self::Sse(s) => s.version(),
        }
    }

    pub(crate) fn era(&self) -> Era {
        match self {
            Self::Session(_) => Era::Session,
            Self::Sse(_) => Era::HttpSse,
        }
    }

    pub(crate) fn info(&self) -> SessionInfo {
        match self {
            Self::Session(s) => s.info(),
            Self::Sse(s) => s.info(),
        }
    }

    async fn send(&self, request: &Request) -> Result<ResponseStream> {
        match self {
            Self::Session(s) => s.send(request).await,
            Self::Sse(s) => s.send(request).await,
        }
    }

    async fn close(&self) {
        match self {
            Self::Session(s) => s.close().await,
            Self::Sse(s) => s.close().await,
        }
    }
}

/// What is known about the endpoint.
#[derive(Debug)]
enum State {
    /// Nothing yet (or the last assumption failed).
    Unknown,
    /// It answered a 2026-07-28 request.
    Modern,
    /// An older-era connection is up.
    Legacy(Legacy),
}

/// An HTTP endpoint of any era: the 2026-07-28 transport plus, once needed, an older-era
/// connection.
#[derive(Debug)]
pub(crate) struct Endpoint {
    modern: HttpTransport,
    /// A version the user pinned (`ClientBuilder::protocol_version`).
    pin: Option<String>,
    config: LegacyConfig,
    state: tokio::sync::Mutex<State>,
    /// The era once known (read without awaiting), with its version: 2026-07-28 as the
    /// constant, so a request reads it without an allocation.
    known: Mutex<Option<(Era, Cow<'static, str>)>>,
}

impl Endpoint {
    pub(crate) fn new(modern: HttpTransport, pin: Option<String>, config: LegacyConfig) -> Self {
        Self {
            modern,
            pin,
            config,
            state: tokio::sync::Mutex::new(State::Unknown),
            known: Mutex::new(None),
        }
    }

    pub(crate) fn url(&self) -> &str {
        self.modern.url()
    }

    /// The era and version in use, once a request got through.
    pub(crate) fn known(&self) -> Option<(Era, Cow<'static, str>)> {
        self.known
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The era in use, once a request got through.
    pub(crate) fn known_era(&self) -> Option<Era> {
        self.known
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(|(era, _)| *era)
    }

    fn set_known(&self, k: Option<(Era, Cow<'static, str>)>) {
        *self.known.lock().unwrap_or_else(PoisonError::into_inner) = k;
    }

    /// Records that a 2026-07-28 request got through.
    fn set_modern(&self) {
        self.set_known(Some((
            Era::Stateless,
            Cow::Borrowed(smcp_proto::PROTOCOL_VERSION),
        )));
    }

    /// The older-era connection, if one is up.
    pub(crate) async fn legacy(&self) -> Option<Legacy> {
        match &*self.state.lock().await {
            State::Legacy(l) => Some(l.clone()),
            _ => None,
        }
    }

    /// Sends `request` in whatever era the endpoint speaks, finding out first if needed.
    pub(crate) async fn send(
        &self,
        request: &Request,
        headers: Vec<(HeaderName, HeaderValue)>,
    ) -> Result<ResponseStream> {
        if self.pin.as_deref() == Some(smcp_proto::PROTOCOL_VERSION) {
            return self.modern_send(request, headers, true).await;
        }
        let mut state = self.state.lock().await;
        match &*state {
            State::Modern => {
                drop(state);
                return self.modern_send(request, headers, false).await;
            }
            State::Legacy(l) => {
                let l = l.clone();
                drop(state);
                return l.send(request).await;
            }
            State::Unknown => {}
        }
        // A pin to an older version, or a remembered older era: no probe.
        let shortcut = match self.pin.as_deref() {
            Some(SSE_VERSION) => Some(Remembered::HttpSse),
            Some(_) => Some(Remembered::Session),
            None => remembered(self.url()),
        };
        if let Some(era) = shortcut {
            match self.connect_legacy(era).await {
                Ok(l) => {
                    *state = State::Legacy(l.clone());
                    drop(state);
                    return l.send(request).await;
                }
                Err(e) if self.pin.is_some() => return Err(e),
                Err(e) => {
                    tracing::info!(error = %e, "the remembered older era failed; probing again");
                    remember(self.url(), None);
                }
            }
        }
        match self.modern.post(request, headers).await {
            Ok(stream) => {
                *state = State::Modern;
                self.set_modern();
                Ok(ResponseStream::new(stream))
            }
            Err(e) if e.is_fallback_signal() => {
                tracing::info!(error = %e, "not a 2026-07-28 answer; falling back to initialize");
                let l = self.fallback(e).await?;
                *state = State::Legacy(l.clone());
                drop(state);
                l.send(request).await
            }
            Err(e) => {
                if e.jsonrpc_error().is_some() {
                    *state = State::Modern;
                    self.set_modern();
                }
                Err(e)
            }
        }
    }

    async fn modern_send(
        &self,
        request: &Request,
        headers: Vec<(HeaderName, HeaderValue)>,
        pinned: bool,
    ) -> Result<ResponseStream> {
        match self.modern.post(request, headers).await {
            Ok(s) => {
                self.set_modern();
                Ok(ResponseStream::new(s))
            }
            Err(e) if pinned && e.is_fallback_signal() => Err(with_detail(
                e,
                "the client is pinned to 2026-07-28, so it did not fall back to initialize",
            )),
            Err(e) => Err(e),
        }
    }

    /// `initialize`, then HTTP+SSE; returns the connection or says what each step got.
    async fn fallback(&self, probe: Error) -> Result<Legacy> {
        let session_err = match self.connect_legacy(Remembered::Session).await {
            Ok(l) => return Ok(l),
            Err(e) if e.is_fallback_signal() || e.is_http_status() => e,
            // A modern answer to initialize: the probe's error stands.
            Err(e) if is_modern_refusal(&e) => return Err(probe),
            Err(e) => return Err(e),
        };
        let sse_err = match self.connect_legacy(Remembered::HttpSse).await {
            Ok(l) => return Ok(l),
            // An event stream answered, but not a usable one: that is the story to tell.
            Err(e) if e.is_protocol_violation() || e.is_version_mismatch() => return Err(e),
            Err(e) => e,
        };
        if probe.is_wrong_endpoint() && session_err.is_wrong_endpoint() {
            // Nothing there speaks MCP in any era: the path is wrong.
            return Err(probe);
        }
        let status = probe.status().unwrap_or(400);
        Err(Error::new(Kind::OlderRevision {
            status,
            detail: format!(
                "the fallback failed too: initialize ({}) got {}; the 2024-11-05 HTTP+SSE GET got {}",
                SESSION_VERSIONS[0],
                short(&session_err),
                short(&sse_err)
            ),
        }))
    }

    async fn connect_legacy(&self, era: Remembered) -> Result<Legacy> {
        let l = match era {
            Remembered::Session => Legacy::Session(
                Session::connect(&self.modern, self.pin.as_deref(), self.config.clone()).await?,
            ),
            Remembered::HttpSse => Legacy::Sse(
                SseSession::connect(&self.modern, self.pin.as_deref(), self.config.clone()).await?,
            ),
        };
        if self.pin.is_none() {
            remember(self.url(), Some(era));
        }
        tracing::info!(version = %l.version(), era = ?l.era(), "older-era connection established");
        self.set_known(Some((l.era(), Cow::Owned(l.version()))));
        Ok(l)
    }

    /// Ends an older-era connection (`DELETE` for a session); the next request starts over.
    pub(crate) async fn close(&self) {
        let old = std::mem::replace(&mut *self.state.lock().await, State::Unknown);
        if let State::Legacy(l) = old {
            l.close().await;
        }
    }
}

/// A refusal of `initialize` that only a 2026-07-28 server gives.
fn is_modern_refusal(e: &Error) -> bool {
    e.jsonrpc_error().is_some() && !e.is_fallback_signal()
}

fn short(e: &Error) -> String {
    match (e.status(), e.jsonrpc_error()) {
        (Some(s), Some(j)) => format!("HTTP {s} (JSON-RPC {}: {})", j.code, j.message),
        (Some(s), None) => format!("HTTP {s}"),
        _ => e.to_string(),
    }
}

/// An older-revision error with the reason there was no fallback.
fn with_detail(e: Error, detail: &str) -> Error {
    match e.status() {
        Some(status) if !e.is_wrong_endpoint() => Error::new(Kind::OlderRevision {
            status,
            detail: match e.jsonrpc_error() {
                Some(j) => format!("{detail} (it answered JSON-RPC {}: {})", j.code, j.message),
                None => detail.to_owned(),
            },
        }),
        _ => e,
    }
}
