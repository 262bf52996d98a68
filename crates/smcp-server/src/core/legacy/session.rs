//! The session's own protocol: `initialize`, the methods only the earlier revisions have
//! (`ping`, `logging/setLevel`, `resources/subscribe` and `unsubscribe`), the client's
//! notifications and its responses to server-to-client requests. Every refusal is typed
//! ([`RefusalKind`]); the transport picks the status for it.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value};
use smcp_proto::basic::LoggingLevel;
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::RequestId;
use smcp_proto::messages::method;
use smcp_proto::meta;

use super::config::invalid_request;
use super::live::{Answer, Live};
use super::relay::{Owner, RelayError, RelayedAnswer, request_owner};
use super::{Legacy, SessionError, SessionRecord, negotiate};
use crate::core::error::SERVER_BUSY;
use crate::core::server::Shared;

/// What kind of refusal, so the transport can pick its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RefusalKind {
    /// Malformed or out of order (HTTP 400).
    BadRequest,
    /// No such session (HTTP 404).
    NotFound,
    /// A bound is reached (HTTP 503 for sessions, 409 for streams).
    Busy,
    /// The store failed (HTTP 500).
    Internal,
    /// What the request needs is on another instance, which could not be reached in time
    /// (HTTP 503): it may be sent again.
    Unavailable,
}

/// A refusal of the session layer: its kind and the JSON-RPC error to send.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    pub(crate) kind: RefusalKind,
    pub(crate) error: ErrorObject,
}

impl Refusal {
    pub(crate) fn bad(error: ErrorObject) -> Self {
        Self {
            kind: RefusalKind::BadRequest,
            error,
        }
    }

    pub(crate) fn not_found() -> Self {
        Self {
            kind: RefusalKind::NotFound,
            error: invalid_request(
                "Session not found: the Mcp-Session-Id is unknown or the session has ended; \
                 send initialize to start a new one",
            ),
        }
    }

    fn store(e: SessionError) -> Self {
        match e {
            SessionError::NotFound => Self::not_found(),
            SessionError::Full { max } => {
                let mut data = Map::new();
                data.insert("limit".to_owned(), Value::from("sessions"));
                data.insert("max".to_owned(), Value::from(max));
                Self {
                    kind: RefusalKind::Busy,
                    error: ErrorObject::new(
                        SERVER_BUSY,
                        format!("Server busy: it holds its maximum of {max} sessions; retry later"),
                    )
                    .with_data(Value::Object(data)),
                }
            }
            SessionError::Store(reason) => {
                tracing::warn!(%reason, "session store failed");
                Self {
                    kind: RefusalKind::Internal,
                    error: ErrorObject::internal("the session store failed"),
                }
            }
        }
    }
}

/// The `InitializeResult` for `version`: what `server/discover` advertises, in the earlier
/// revisions' shape (capabilities of those revisions only, `serverInfo`, `instructions`).
pub(crate) fn initialize_result(shared: &Shared, version: &str) -> Map<String, Value> {
    let catalog = shared.catalog();
    let mut caps = match serde_json::to_value(&catalog.capabilities) {
        Ok(Value::Object(caps)) => caps,
        _ => Map::new(),
    };
    // Members the earlier revisions do not define (2026-07-28 `extensions`) stay out.
    caps.retain(|k, _| {
        matches!(
            k.as_str(),
            "experimental" | "logging" | "completions" | "prompts" | "resources" | "tools"
        )
    });
    let mut result = Map::new();
    result.insert("protocolVersion".to_owned(), Value::from(version));
    result.insert("capabilities".to_owned(), Value::Object(caps));
    result.insert(
        "serverInfo".to_owned(),
        shared
            .server_meta
            .get(meta::SERVER_INFO)
            .cloned()
            .unwrap_or(Value::Null),
    );
    if let Some(instructions) = &shared.instructions {
        result.insert("instructions".to_owned(), Value::from(instructions.clone()));
    }
    result
}

/// The record `initialize` starts, from its params: the negotiated version, the client's
/// capabilities and info, and a fresh id. Stored by nothing (over stdio the connection is the
/// session).
pub(crate) fn new_record(
    params: Option<&Map<String, Value>>,
    principal: Option<String>,
) -> Result<SessionRecord, Refusal> {
    let requested = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            Refusal::bad(ErrorObject::invalid_params(
                "\"params.protocolVersion\" is required and must be a string",
            ))
        })?;
    let capabilities = match params.and_then(|p| p.get("capabilities")) {
        Some(Value::Object(caps)) => caps.clone(),
        _ => {
            return Err(Refusal::bad(ErrorObject::invalid_params(
                "\"params.capabilities\" is required and must be an object",
            )));
        }
    };
    let client_info = params.and_then(|p| p.get("clientInfo")).cloned();
    if client_info.as_ref().is_some_and(|i| !i.is_object()) {
        return Err(Refusal::bad(ErrorObject::invalid_params(
            "\"params.clientInfo\" must be an object",
        )));
    }
    let version = negotiate(requested);
    let id = crate::core::keys::random_hex::<16>()
        .map_err(|_| Refusal::store(SessionError::Store("no randomness".to_owned())))?;
    Ok(SessionRecord {
        id,
        protocol_version: version.to_owned(),
        client_capabilities: capabilities,
        client_info,
        initialized: false,
        log_level: None,
        subscriptions: BTreeSet::new(),
        principal,
    })
}

/// The session's own methods (`ping`, `logging/setLevel`, `resources/subscribe` and
/// `unsubscribe`), applied to `record` (the caller stores it when it changed). `None` for a
/// method dispatch serves.
pub(crate) fn session_method(
    shared: &Shared,
    max_subscriptions: usize,
    record: &mut SessionRecord,
    live: &Live,
    name: &str,
    params: Option<&Map<String, Value>>,
) -> Option<Result<Map<String, Value>, ErrorObject>> {
    let features = &shared.features;
    let result = match name {
        method::PING => Ok(Map::new()),
        method::LOGGING_SET_LEVEL if features.logging => {
            let level = params
                .and_then(|p| p.get("level"))
                .and_then(Value::as_str)
                .and_then(LoggingLevel::parse);
            match level {
                None => Err(ErrorObject::invalid_params(
                    "\"params.level\" must be one of debug, info, notice, warning, error, \
                     critical, alert, emergency",
                )),
                Some(level) => {
                    record.log_level = Some(level);
                    Ok(Map::new())
                }
            }
        }
        method::RESOURCES_SUBSCRIBE | method::RESOURCES_UNSUBSCRIBE
            if features.resources_subscribe =>
        {
            match params.and_then(|p| p.get("uri")).and_then(Value::as_str) {
                None => Err(ErrorObject::invalid_params(
                    "\"params.uri\" is required and must be a string",
                )),
                Some(uri) => {
                    let subscribe = name == method::RESOURCES_SUBSCRIBE;
                    if subscribe
                        && !record.subscriptions.contains(uri)
                        && record.subscriptions.len() >= max_subscriptions
                    {
                        return Some(Err(ErrorObject::invalid_params(format!(
                            "\"params.uri\": the session already subscribes to its maximum of {max_subscriptions} URIs"
                        ))));
                    }
                    if subscribe {
                        record.subscriptions.insert(uri.to_owned());
                    } else {
                        record.subscriptions.remove(uri);
                    }
                    live.set_subscriptions(record.subscriptions.iter().cloned().collect());
                    Ok(Map::new())
                }
            }
        }
        // The methods of 2026-07-28 only, and the ones above when not advertised.
        _ if answers(name) => Err(ErrorObject::method_not_found(name)),
        _ => return None,
    };
    Some(result)
}

/// Whether the session layer answers `name` itself: its own methods, and the methods of
/// 2026-07-28 only, which a session does not have. Any other goes to dispatch.
pub(crate) fn answers(name: &str) -> bool {
    matches!(
        name,
        method::PING
            | method::LOGGING_SET_LEVEL
            | method::RESOURCES_SUBSCRIBE
            | method::RESOURCES_UNSUBSCRIBE
            | method::DISCOVER
            | method::SUBSCRIPTIONS_LISTEN
    )
}

impl Legacy {
    /// `initialize`: negotiates the version, mints and stores the session. Returns the record
    /// and the result to send.
    pub(crate) async fn initialize(
        &self,
        shared: &Shared,
        params: Option<&Map<String, Value>>,
        principal: Option<String>,
    ) -> Result<(SessionRecord, Map<String, Value>), Refusal> {
        let record = new_record(params, principal)?;
        self.store
            .create(record.clone())
            .await
            .map_err(Refusal::store)?;
        tracing::debug!(session = %record.id, version = %record.protocol_version, "legacy session started");
        let result = initialize_result(shared, &record.protocol_version);
        Ok((record, result))
    }

    /// The record of session `id`, acting for `principal`: a session made by another
    /// principal is not found.
    pub(crate) async fn session(
        &self,
        id: &str,
        principal: Option<&str>,
    ) -> Result<Arc<SessionRecord>, Refusal> {
        match self.store.get(id).await.map_err(Refusal::store)? {
            Some(record) if record.principal.as_deref() == principal => Ok(record),
            Some(_) => Err(Refusal::not_found()),
            None => {
                // Ended elsewhere, expired, or lost with the store: what this instance still
                // holds of it (requests waiting for the client, streams) ends too.
                self.end_live(id);
                Err(Refusal::not_found())
            }
        }
    }

    /// Ends session `id` (DELETE).
    pub(crate) async fn end(&self, id: &str) -> Result<(), Refusal> {
        let existed = self.store.remove(id).await.map_err(Refusal::store)?;
        self.end_live(id);
        if existed {
            tracing::debug!(session = %id, "legacy session ended");
            Ok(())
        } else {
            Err(Refusal::not_found())
        }
    }

    /// A notification of the session: `notifications/initialized` marks it ready,
    /// `notifications/cancelled` cancels the request it names; others are ignored.
    pub(crate) async fn notification(
        &self,
        record: Arc<SessionRecord>,
        live: &Live,
        name: &str,
        params: Option<&Value>,
    ) -> Result<(), Refusal> {
        match name {
            method::INITIALIZED if !record.initialized => {
                let mut record = Arc::unwrap_or_clone(record);
                record.initialized = true;
                self.store.put(record).await.map_err(Refusal::store)
            }
            method::CANCELLED => {
                let id = params
                    .and_then(|p| p.get("requestId"))
                    .and_then(RequestId::from_value);
                match id {
                    Some(id) => self.cancel(live, &id).await,
                    None => Err(Refusal::bad(invalid_request(
                        "\"params.requestId\" of notifications/cancelled must be a string or a number",
                    ))),
                }
            }
            _ => Ok(()),
        }
    }

    /// The session's own methods, the record stored when they changed it. `None` for a
    /// method dispatch serves.
    pub(crate) async fn own_method(
        &self,
        shared: &Shared,
        record: &SessionRecord,
        live: &Live,
        name: &str,
        params: Option<&Map<String, Value>>,
    ) -> Option<Result<Map<String, Value>, ErrorObject>> {
        if !answers(name) {
            return None; // (without copying the record)
        }
        let mut changed = record.clone();
        let result = session_method(
            shared,
            self.config.max_subscriptions,
            &mut changed,
            live,
            name,
            params,
        )?;
        Some(match result {
            Ok(map) if changed != *record => self.save(changed).await.map(|()| map),
            other => other,
        })
    }

    /// `notifications/cancelled` for client request `id`: cancelled here when it runs here,
    /// else the other instances are asked to (the relay; nothing to do without one).
    async fn cancel(&self, live: &Live, id: &RequestId) -> Result<(), Refusal> {
        if live.cancel(id) {
            tracing::debug!(?id, "legacy request cancelled");
            return Ok(());
        }
        if live.tag().is_empty() {
            return Ok(());
        }
        match self.relay.cancel(&live.id, id).await {
            Ok(()) => {
                tracing::debug!(?id, "legacy cancellation relayed to the other instances");
                Ok(())
            }
            Err(e) => {
                tracing::warn!(?id, error = %e, "legacy cancellation could not be relayed");
                Err(unavailable(
                    "the cancellation could not be passed to the server instance running the \
                     request; send it again",
                ))
            }
        }
    }

    /// The client's response to server-to-client request `id`: given to the round waiting
    /// for it here, or relayed to the instance that sent the request (its tag is in the id)
    /// and acknowledged by it. `Err` says why it was not taken.
    pub(crate) async fn deliver(
        &self,
        live: &Live,
        id: &RequestId,
        answer: Answer,
    ) -> Result<(), Refusal> {
        let owner = match request_owner(id, live.tag()) {
            Owner::Here => {
                return if live.answer(id, answer) {
                    Ok(())
                } else {
                    Err(unknown_response(id))
                };
            }
            Owner::Malformed => return Err(unknown_response(id)),
            Owner::Other(owner) => owner,
        };
        let RequestId::String(text) = id else {
            return Err(unknown_response(id));
        };
        let (result, error) = match answer {
            Ok(result) => (Some(result), None),
            Err(error) => (None, Some(error)),
        };
        let relayed = RelayedAnswer {
            session: live.id.clone(),
            id: text.clone(),
            result,
            error,
        };
        match self.relay.forward(owner, relayed).await {
            Ok(true) => {
                tracing::debug!(session = %live.id, owner, "response relayed to its request's instance");
                Ok(())
            }
            Ok(false) => Err(unknown_response(id)),
            Err(RelayError::Gone) => Err(Refusal::bad(invalid_request(format!(
                "Invalid request: the server instance that sent request {} has stopped; the \
                 request it belonged to failed",
                shown(id)
            )))),
            Err(RelayError::Unavailable(reason)) => {
                tracing::warn!(session = %live.id, owner, %reason, "response not relayed");
                Err(unavailable(
                    "the response could not be passed to the server instance waiting for it; \
                     send it again",
                ))
            }
        }
    }

    async fn save(&self, record: SessionRecord) -> Result<(), ErrorObject> {
        self.store
            .put(record)
            .await
            .map_err(|e| Refusal::store(e).error)
    }
}

/// A request id as an error message may show it (a long string is not repeated).
fn shown(id: &RequestId) -> String {
    match id {
        RequestId::Number(n) => n.to_string(),
        RequestId::String(s) if s.len() <= 64 => format!("{s:?}"),
        RequestId::String(_) => "(a long string)".to_owned(),
    }
}

/// A response for a request the server did not send on this session, or no longer waits for.
pub(crate) fn unknown_response(id: &RequestId) -> Refusal {
    Refusal::bad(invalid_request(format!(
        "Invalid request: the server sent no request with id {} on this session, or no \
         longer waits for its response",
        shown(id)
    )))
}

/// Another instance could not be reached in time (HTTP 503).
fn unavailable(message: &str) -> Refusal {
    Refusal {
        kind: RefusalKind::Unavailable,
        error: ErrorObject::internal(format!("Service unavailable: {message}")),
    }
}
