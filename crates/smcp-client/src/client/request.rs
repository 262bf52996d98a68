//! One request: the `_meta` every request carries, the headers mirroring it over HTTP, the
//! send, and what is retried: the protocol version renegotiated once after −32022, and a
//! request lost in transit resent when that is safe (`retry.rs`).

use std::sync::PoisonError;

use serde_json::{Map, Value};
use smcp_proto::error::UNSUPPORTED_PROTOCOL_VERSION;
use smcp_proto::ext::tasks;
use smcp_proto::jsonrpc::{RawResult, Request, RequestId};
use smcp_proto::messages::method;
use smcp_proto::meta;
use smcp_proto::x_mcp_header::HeaderParam;
use tracing::Instrument;

use super::handle::Client;
use crate::error::{Error, Result};
use crate::headers::request_headers;
use crate::response::{Sink, read_response};
use crate::trace::{TRACEPARENT, TRACESTATE};
use crate::transport::ResponseStream;

impl Client {
    /// Adds the required `_meta` members (A4 items 44–45), keeping any already there: the
    /// protocol version and client info are the client's own; the capabilities only unless the
    /// request states them; `version` is [`Client::version_sent`]. Returns what it changed,
    /// for [`Lent`] to put back.
    fn stamp_meta(
        &self,
        method_name: &str,
        version: &str,
        params: &mut Map<String, Value>,
    ) -> Stamped {
        let declares_tasks = self.declares_tasks(method_name, Some(params));
        let mut stamped = Stamped::default();
        if !matches!(params.get("_meta"), Some(Value::Object(_))) {
            stamped.meta =
                Was::replaced(params.insert("_meta".to_owned(), Value::Object(Map::new())));
        }
        let Some(Value::Object(meta)) = params.get_mut("_meta") else {
            return stamped;
        };
        stamped.version = Was::replaced(meta.insert(
            meta::PROTOCOL_VERSION.to_owned(),
            Value::String(version.to_owned()),
        ));
        // A round that declares its own client's capabilities keeps them (`round.rs`);
        // otherwise they are built only here, where they are sent.
        if !meta.contains_key(meta::CLIENT_CAPABILITIES) {
            let mut caps = self.capabilities();
            if declares_tasks {
                caps.extensions
                    .get_or_insert_with(Default::default)
                    .insert(tasks::EXTENSION_ID.to_owned(), Map::new());
            }
            meta.insert(
                meta::CLIENT_CAPABILITIES.to_owned(),
                serde_json::to_value(caps).unwrap_or_else(|_| Value::Object(Map::new())),
            );
            stamped.capabilities = true;
        }
        if let Some(info) = &self.inner.client_info {
            stamped.info = Was::replaced(meta.insert(meta::CLIENT_INFO.to_owned(), info.clone()));
        }
        if self.inner.trace.is_some() && !meta.contains_key(TRACEPARENT) {
            stamped.trace = Some(Was::replaced(meta.get(TRACESTATE).cloned()));
            crate::trace::stamp(self.inner.trace.as_ref(), meta);
        }
        stamped
    }

    /// Sends one request with a fresh id and returns its id and response stream. `params` are
    /// sent with their `_meta` stamped, and left as they were.
    pub(crate) async fn open(
        &self,
        method_name: &str,
        params: &mut Map<String, Value>,
        header_params: &[HeaderParam],
        extra: &[(http::HeaderName, http::HeaderValue)],
    ) -> Result<(RequestId, ResponseStream)> {
        let version = self.version_sent();
        let stamped = self.stamp_meta(method_name, &version, params);
        // Stdio has no headers: everything they would mirror is already in the body.
        let headers = if self.inner.transport.is_http() {
            match request_headers(&version, method_name, params, header_params) {
                Ok(mut headers) => {
                    if self.inner.trace.is_some() {
                        headers.extend(crate::trace::headers(params.get("_meta")));
                    }
                    headers.extend(extra.iter().cloned());
                    headers
                }
                Err(e) => {
                    stamped.undo(params);
                    return Err(e);
                }
            }
        } else {
            Vec::new()
        };
        let id = self.next_id();
        let lent = Lent::new(params, stamped, id.clone(), method_name);
        let stream = self.inner.transport.send(&lent.request, headers).await?;
        Ok((id, stream))
    }

    /// Switches to a version from `data.supported` after −32022 (A3 item 37). Returns false
    /// when none is mutually supported.
    fn negotiate(&self, error: &Error) -> bool {
        let Some(data) = error
            .jsonrpc_error()
            .and_then(|e| e.unsupported_version_data())
        else {
            return false;
        };
        let Some(choice) = self
            .inner
            .versions
            .iter()
            .find(|v| data.supported.iter().any(|s| s == *v))
        else {
            return false;
        };
        tracing::info!(version = %choice, rejected = %data.requested, "server asked for another protocol version; retrying");
        *self
            .inner
            .version
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = choice.clone();
        true
    }

    /// One request/response exchange, renegotiating the version once on −32022.
    pub(crate) async fn exchange(
        &self,
        method_name: &str,
        params: &mut Map<String, Value>,
        header_params: &[HeaderParam],
        extra: &[(http::HeaderName, http::HeaderValue)],
        sink: Sink<'_>,
    ) -> Result<RawResult> {
        let mut renegotiated = false;
        let mut resent = 0u32;
        loop {
            let span = tracing::debug_span!("mcp_request", method = %method_name, id = tracing::field::Empty);
            // Built in place, not through a local: a local would keep a second slot for the
            // attempt (a transport's whole request) in this future across the `await`.
            let outcome = async {
                let (id, mut stream) = self.open(method_name, params, header_params, extra).await?;
                tracing::Span::current().record("id", tracing::field::display(&id));
                read_response(&mut stream, &id, sink).await
            }
            .instrument(span)
            .await;
            match outcome {
                Err(e)
                    if !renegotiated
                        && e.jsonrpc_code() == Some(UNSUPPORTED_PROTOCOL_VERSION)
                        && self.negotiate(&e) =>
                {
                    renegotiated = true;
                }
                Err(e)
                    if resent < self.inner.retry.max_retries
                        && self.may_resend(method_name, params, &e) =>
                {
                    resent += 1;
                    let wait = self.inner.retry.delay(resent);
                    tracing::info!(method = %method_name, error = %e, attempt = resent, ?wait, "request failed in transit; resending");
                    tokio::time::sleep(wait).await;
                }
                other => return other,
            }
        }
    }

    /// Whether a request that failed with `e` may be sent again (`retry.rs`).
    fn may_resend(&self, method_name: &str, params: &Map<String, Value>, e: &Error) -> bool {
        if crate::retry::never_sent(e) {
            return true;
        }
        if !crate::retry::lost_in_transit(e) {
            return false;
        }
        if method_name == method::TOOLS_CALL {
            return params
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|name| self.catalog().repeatable(name));
        }
        crate::retry::side_effect_free(method_name)
    }
}

/// What [`Client::stamp_meta`] changed in a request's params. The same params are sent again
/// (a resend, the version renegotiated, the next MRTR round), each time stamped afresh, so they
/// are put back as they were instead of being copied for every send.
#[derive(Debug, Default)]
struct Stamped {
    /// `_meta` itself, when the stamp put a new object there.
    meta: Was,
    /// The protocol version.
    version: Was,
    /// The client's capabilities were added.
    capabilities: bool,
    /// The client info.
    info: Was,
    /// `traceparent` was added, and `tracestate` held this before.
    trace: Option<Was>,
}

/// What a member held before the stamp set it.
#[derive(Debug, Default)]
enum Was {
    /// The stamp did not set it.
    #[default]
    Untouched,
    /// It was absent.
    Absent,
    /// It held this value.
    Held(Value),
}

impl Was {
    /// What `insert` returned when the stamp set the member.
    fn replaced(before: Option<Value>) -> Self {
        before.map_or(Self::Absent, Self::Held)
    }
}

impl Stamped {
    /// Puts `params` back as they were before the stamp.
    fn undo(self, params: &mut Map<String, Value>) {
        if !matches!(self.meta, Was::Untouched) {
            restore(params, "_meta", self.meta);
            return;
        }
        let Some(Value::Object(meta)) = params.get_mut("_meta") else {
            return;
        };
        restore(meta, meta::PROTOCOL_VERSION, self.version);
        if self.capabilities {
            meta.shift_remove(meta::CLIENT_CAPABILITIES);
        }
        restore(meta, meta::CLIENT_INFO, self.info);
        if let Some(state) = self.trace {
            meta.shift_remove(TRACEPARENT);
            restore(meta, TRACESTATE, state);
        }
    }
}

/// Sets `key` of `map` back to what it held.
fn restore(map: &mut Map<String, Value>, key: &str, before: Was) {
    match before {
        Was::Untouched => {}
        Was::Absent => {
            map.shift_remove(key);
        }
        Was::Held(value) => {
            map.insert(key.to_owned(), value);
        }
    }
}

/// A caller's params lent to one request: moved into it for the send, not copied, and given
/// back with the stamp undone when the request is done with, also when its future is dropped.
struct Lent<'a> {
    slot: &'a mut Map<String, Value>,
    stamped: Option<Stamped>,
    request: Request,
}

impl<'a> Lent<'a> {
    fn new(
        slot: &'a mut Map<String, Value>,
        stamped: Stamped,
        id: RequestId,
        method_name: &str,
    ) -> Self {
        let params = std::mem::take(slot);
        Self {
            slot,
            stamped: Some(stamped),
            request: Request {
                id,
                method: method_name.to_owned(),
                params: Some(Value::Object(params)),
            },
        }
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Some(Value::Object(params)) = self.request.params.take() {
            *self.slot = params;
        }
        if let Some(stamped) = self.stamped.take() {
            stamped.undo(self.slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use smcp_proto::basic::Implementation;

    use super::*;
    use crate::trace::{TraceHeaders, TraceSource};

    const TRACEPARENT_SENT: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";

    fn client() -> Client {
        Client::builder("http://127.0.0.1:9/mcp")
            .client_info(Implementation::new("stamp-test", "1.0.0"))
            .trace_source(TraceSource::new(|| {
                Some(TraceHeaders {
                    traceparent: TRACEPARENT_SENT.into(),
                    tracestate: Some("vendor=sent".into()),
                })
            }))
            .build()
            .expect("a client of a valid URL")
    }

    /// Params as callers build them: no `_meta`, one with other members, one that is not an
    /// object, one with members the stamp replaces, keeps or adds beside.
    fn cases() -> Vec<Map<String, Value>> {
        [
            json!({"name": "echo", "arguments": {"text": "hi"}}),
            json!({"name": "echo", "_meta": {"progressToken": 7}, "arguments": {}}),
            json!({"_meta": "not an object", "name": "echo"}),
            json!({"name": "echo", "_meta": {
                "io.modelcontextprotocol/protocolVersion": "1999-01-01",
                "io.modelcontextprotocol/clientInfo": {"name": "theirs", "version": "0"},
                "tracestate": "vendor=theirs",
                "z": 0
            }}),
            json!({"name": "echo", "_meta": {
                "traceparent": "00-11111111111111111111111111111111-2222222222222222-01",
                "io.modelcontextprotocol/clientCapabilities": {"roots": {}}
            }}),
        ]
        .into_iter()
        .filter_map(|v| match v {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .collect()
    }

    /// A copy of `original` stamped for a `tools/call`, and what the stamp changed.
    fn stamp(client: &Client, original: &Map<String, Value>) -> (Map<String, Value>, Stamped) {
        let mut params = original.clone();
        let stamped = client.stamp_meta(
            method::TOOLS_CALL,
            smcp_proto::PROTOCOL_VERSION,
            &mut params,
        );
        (params, stamped)
    }

    /// `params` read as `original` does, member order included.
    fn assert_same_text(params: &Map<String, Value>, original: &Map<String, Value>) {
        assert_eq!(
            serde_json::to_string(params).ok(),
            serde_json::to_string(original).ok()
        );
    }

    #[test]
    fn a_stamp_is_undone_to_the_params_as_they_were_order_included() {
        let client = client();
        for original in cases() {
            let (mut params, stamped) = stamp(&client, &original);
            let meta = params["_meta"]
                .as_object()
                .expect("_meta is an object once stamped");
            assert_eq!(meta[meta::PROTOCOL_VERSION], smcp_proto::PROTOCOL_VERSION);
            assert_eq!(meta[meta::CLIENT_INFO]["name"], "stamp-test");
            assert!(meta[meta::CLIENT_CAPABILITIES].is_object(), "{meta:?}");
            let theirs = original
                .get("_meta")
                .and_then(|m| m.get(TRACEPARENT))
                .is_some();
            if !theirs {
                assert_eq!(meta[TRACEPARENT], TRACEPARENT_SENT);
                assert_eq!(meta[TRACESTATE], "vendor=sent");
            }
            stamped.undo(&mut params);
            assert_same_text(&params, &original);
        }
    }

    #[test]
    fn lent_params_come_back_when_the_request_is_dropped() {
        let client = client();
        for original in cases() {
            let (mut params, stamped) = stamp(&client, &original);
            let lent = Lent::new(
                &mut params,
                stamped,
                RequestId::Number(1.into()),
                method::TOOLS_CALL,
            );
            let sent = lent.request.params.as_ref().and_then(|p| p.get("_meta"));
            assert!(
                sent.and_then(|m| m.get(meta::PROTOCOL_VERSION)).is_some(),
                "the request carries the stamp: {sent:?}"
            );
            // As when a send's future is dropped mid-flight (a timeout, a cancel).
            drop(lent);
            assert_same_text(&params, &original);
        }
    }
}
