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
use crate::transport::ResponseStream;

impl Client {
    /// Adds the required `_meta` members (A4 items 44–45), keeping any already there: the
    /// protocol version and client info are the client's own; the capabilities only unless the
    /// request states them.
    fn stamp_meta(&self, method_name: &str, params: &mut Map<String, Value>) {
        let declares_tasks = self.declares_tasks(method_name, Some(params));
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        if let Value::Object(m) = meta {
            m.insert(
                meta::PROTOCOL_VERSION.to_owned(),
                Value::String(self.protocol_version()),
            );
            // A round that declares its own client's capabilities keeps them (`round.rs`);
            // otherwise they are built only here, where they are sent.
            if !m.contains_key(meta::CLIENT_CAPABILITIES) {
                let mut caps = self.capabilities();
                if declares_tasks {
                    caps.extensions
                        .get_or_insert_with(Default::default)
                        .insert(tasks::EXTENSION_ID.to_owned(), Map::new());
                }
                m.insert(
                    meta::CLIENT_CAPABILITIES.to_owned(),
                    serde_json::to_value(caps).unwrap_or_else(|_| Value::Object(Map::new())),
                );
            }
            if let Some(info) = &self.inner.client_info {
                m.insert(meta::CLIENT_INFO.to_owned(), info.clone());
            }
            crate::trace::stamp(self.inner.trace.as_ref(), m);
        }
    }

    /// Sends one request with a fresh id and returns its id and response stream.
    pub(crate) async fn open(
        &self,
        method_name: &str,
        mut params: Map<String, Value>,
        header_params: &[HeaderParam],
        extra: &[(http::HeaderName, http::HeaderValue)],
    ) -> Result<(RequestId, ResponseStream)> {
        self.stamp_meta(method_name, &mut params);
        // Stdio has no headers: everything they would mirror is already in the body.
        let headers = if self.inner.transport.is_http() {
            let mut headers = request_headers(
                &self.protocol_version(),
                method_name,
                &params,
                header_params,
            )?;
            if self.inner.trace.is_some() {
                headers.extend(crate::trace::headers(params.get("_meta")));
            }
            headers.extend(extra.iter().cloned());
            headers
        } else {
            Vec::new()
        };
        let id = self.next_id();
        let request = Request {
            id: id.clone(),
            method: method_name.to_owned(),
            params: Some(Value::Object(params)),
        };
        let stream = self.inner.transport.send(&request, headers).await?;
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
        params: &Map<String, Value>,
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
                let (id, mut stream) = self
                    .open(method_name, params.clone(), header_params, extra)
                    .await?;
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
