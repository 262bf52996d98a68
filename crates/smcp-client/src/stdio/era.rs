//! Which era a stdio server speaks, found out before the first request unless the client
//! is pinned to a version or told not to
//! ([`ClientBuilder::probe_era`](crate::ClientBuilder::probe_era)) (the 2026-07-28 stdio
//! page, "Backward Compatibility"):
//! `server/discover` first, with 2026-07-28 in `_meta`. A `DiscoverResult`, or a recognized
//! 2026-07-28 error (−32022, −32021), means a modern server; any other error, or no answer
//! within [`PROBE_TIMEOUT`], means an older one: `initialize`, `notifications/initialized`,
//! and from then on requests without the per-request `_meta` members, server-to-client
//! requests answered with the [`InputHandler`](crate::InputHandler).

use std::time::Duration;

use serde_json::{Map, Value, json};
use smcp_proto::error::{MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION};
use smcp_proto::jsonrpc::{Message, Notification, Request, RequestId};
use smcp_proto::messages::method;
use smcp_proto::meta;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::pipe::{Pipe, write_message};
use crate::error::{Error, Kind, Result};
use crate::legacy::adapter::{self, HANDSHAKE_TIMEOUT, Initialize, SESSION_VERSIONS, SSE_VERSION};
use crate::legacy::{Era, LegacyConfig, SessionInfo};
use crate::transport::ResponseStream;

/// How long the `server/discover` probe waits before taking silence for an older server.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// Server-to-client requests waiting for an answer.
const PENDING_SERVER_REQUESTS: usize = 16;

/// The era of a stdio server.
#[derive(Debug, Clone)]
pub(crate) enum StdioEra {
    /// 2026-07-28.
    Modern,
    /// An `initialize` session.
    Legacy(SessionInfo),
}

/// What finding out the era needs of the connection.
#[derive(Debug)]
pub(crate) struct Handshake<'a> {
    /// The child.
    pub(crate) pipe: &'a Pipe,
    /// What an `initialize` declares, and the handler that answers server requests.
    pub(crate) config: &'a LegacyConfig,
    /// Cancelled when the connection closes (ends the task answering server requests).
    pub(crate) close: &'a CancellationToken,
}

impl Handshake<'_> {
    /// The server's era: the pinned version's, or the probe's answer (`probe` false: modern).
    pub(crate) async fn find(&self, pin: Option<&str>, probe: bool) -> Result<StdioEra> {
        Ok(match pin {
            None if probe => self.probe().await?,
            None => StdioEra::Modern,
            Some(v) if v == smcp_proto::PROTOCOL_VERSION => StdioEra::Modern,
            Some(v) => StdioEra::Legacy(self.initialize(Some(v)).await?),
        })
    }

    /// One request and its result (or error), bounded by `limit`; `Ok(None)` on timeout.
    async fn exchange_raw(&self, request: Request, limit: Duration) -> Result<Option<Value>> {
        let id = request.id.clone();
        let stream = self.pipe.send(&request).await?;
        let mut stream = ResponseStream::new(stream);
        let mut ignore = |_n: Notification| {};
        match tokio::time::timeout(
            limit,
            crate::response::read_response(&mut stream, &id, &mut ignore),
        )
        .await
        {
            Ok(r) => crate::response::value_of(&r?).map(Some),
            Err(_) => Ok(None),
        }
    }

    async fn probe(&self) -> Result<StdioEra> {
        let mut m = Map::new();
        m.insert(
            meta::PROTOCOL_VERSION.to_owned(),
            Value::String(smcp_proto::PROTOCOL_VERSION.to_owned()),
        );
        m.insert(
            meta::CLIENT_CAPABILITIES.to_owned(),
            serde_json::to_value(self.config.kinds().to_capabilities()).unwrap_or(json!({})),
        );
        if let Some(info) = &self.config.client_info
            && let Ok(v) = serde_json::to_value(info)
        {
            m.insert(meta::CLIENT_INFO.to_owned(), v);
        }
        let request = Request {
            id: RequestId::from("smcp-probe".to_owned()),
            method: method::DISCOVER.to_owned(),
            params: Some(json!({"_meta": m})),
        };
        match self.exchange_raw(request, PROBE_TIMEOUT).await {
            Ok(Some(_)) => Ok(StdioEra::Modern),
            Err(e)
                if matches!(
                    e.jsonrpc_code(),
                    Some(UNSUPPORTED_PROTOCOL_VERSION | MISSING_REQUIRED_CLIENT_CAPABILITY)
                ) =>
            {
                Ok(StdioEra::Modern)
            }
            Err(e) if e.jsonrpc_error().is_none() => Err(e),
            Ok(None) | Err(_) => {
                tracing::info!("server/discover not understood; falling back to initialize");
                Ok(StdioEra::Legacy(self.initialize(None).await?))
            }
        }
    }

    /// `initialize` offering the pinned version (or the newest), then server requests answered
    /// and `notifications/initialized`.
    async fn initialize(&self, pin: Option<&str>) -> Result<SessionInfo> {
        if pin == Some(SSE_VERSION) {
            return Err(Error::config(format!(
                "{SSE_VERSION} is spoken over HTTP+SSE; a stdio server speaks {} or later",
                SESSION_VERSIONS[SESSION_VERSIONS.len() - 1]
            )));
        }
        let handshake = Initialize::new(pin);
        let request = handshake.request(RequestId::from("smcp-initialize".to_owned()), self.config);
        let result = self
            .exchange_raw(request, HANDSHAKE_TIMEOUT)
            .await?
            .ok_or_else(|| Error::new(Kind::Timeout(HANDSHAKE_TIMEOUT)))?;
        let info = handshake.accept(Era::Session, &result)?;
        // Server requests are answered from now on, one at a time, in arrival order.
        let (tx, mut rx) = mpsc::channel::<Request>(PENDING_SERVER_REQUESTS);
        self.pipe.shared.answer_requests_with(tx);
        let writer = self.pipe.writer.clone();
        let config = self.config.clone();
        let close = self.close.clone();
        tokio::spawn(async move {
            loop {
                let request = tokio::select! {
                    () = close.cancelled() => return,
                    r = rx.recv() => match r { Some(r) => r, None => return },
                };
                let reply = crate::legacy::answer(&config, request).await;
                if write_message(&writer, &reply).await.is_err() {
                    return;
                }
            }
        });
        self.pipe
            .write(&Message::Notification(adapter::initialized()))
            .await?;
        Ok(info)
    }
}
