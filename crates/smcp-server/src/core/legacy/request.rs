//! A request of a session, read once into the typed request a 2026-07-28 request is read
//! into, and the `_meta` dispatch sees for it.
//!
//! A 2026-07-28 request carries its protocol version, client capabilities and client info in
//! `_meta`; a session's requests do not, the session does. Dispatch reads them from the
//! request context's `_meta`, which it keeps as raw JSON and parses only when something asks
//! (a tool's required capabilities, a handler). So a session request hands dispatch its typed
//! params as parsed, and a `_meta` written as JSON: the request's own members, then the
//! session's ([`SessionMeta`], written once per session). Nothing of the message is
//! serialized again, and a request without `_meta` of its own shares the session's bytes.

use std::borrow::Cow;

use bytes::Bytes;
use serde::Serialize;
use serde_json::{Map, Value};
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::{ClientRequest, Incoming, IncomingRequest, InvalidParams, RequestId};
use smcp_proto::meta;
use smcp_proto::patterns::mrtr::InputResponses;

use super::SessionRecord;
use crate::core::meta::{meta_bytes, progress_token};

/// The `_meta` members a session gives each of its requests: its protocol version, the
/// client capabilities and client info of its `initialize`. They never change for a session,
/// so they are written once, when this instance first sees it.
#[derive(Debug, Clone)]
pub(crate) struct SessionMeta {
    /// `{"…/protocolVersion":…,"…/clientCapabilities":…[,"…/clientInfo":…]}`.
    object: Bytes,
}

impl SessionMeta {
    pub(crate) fn new(record: &SessionRecord) -> Self {
        let mut out = Vec::with_capacity(128);
        out.push(b'{');
        member(&mut out, meta::PROTOCOL_VERSION, &record.protocol_version);
        out.push(b',');
        member(
            &mut out,
            meta::CLIENT_CAPABILITIES,
            &record.client_capabilities,
        );
        if let Some(info) = &record.client_info {
            out.push(b',');
            member(&mut out, meta::CLIENT_INFO, info);
        }
        out.push(b'}');
        Self {
            object: Bytes::from(out),
        }
    }

    /// The members, without the braces.
    fn members(&self) -> &[u8] {
        &self.object[1..self.object.len() - 1]
    }
}

fn member<T: Serialize + ?Sized>(out: &mut Vec<u8>, key: &str, value: &T) {
    // Strings and JSON values written into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, key);
    out.push(b':');
    let _ = serde_json::to_writer(&mut *out, value);
}

/// One request of a session, read once.
#[derive(Debug)]
pub(crate) struct SessionRequest {
    pub(crate) id: RequestId,
    pub(crate) method: Cow<'static, str>,
    /// The typed params, until the first round takes them.
    params: Option<Result<ClientRequest, InvalidParams>>,
    mrtr_members: bool,
    /// The request's own `params._meta` (a slice of the body), when it has members.
    own_meta: Option<Bytes>,
    /// Whether its `_meta` carries members only 2026-07-28 requests carry.
    carries_2026: bool,
    /// Its `progressToken`, or why it is not one.
    progress_token: Result<Option<Value>, ErrorObject>,
    /// The message as the client sent it.
    pub(crate) body: Bytes,
}

impl SessionRequest {
    /// Reads `request`, parsed from `body`. `Err` (−32602) when its `_meta` is not an object.
    pub(crate) fn read(
        request: IncomingRequest<'_>,
        body: &Bytes,
    ) -> Result<Self, Box<(RequestId, ErrorObject)>> {
        let (own_meta, carries_2026, progress_token) = match request.meta.as_ref() {
            None => (None, false, Ok(None)),
            Some(raw) => {
                let Ok(view) = raw.view() else {
                    return Err(Box::new((
                        request.id,
                        ErrorObject::invalid_params("\"params._meta\" must be an object"),
                    )));
                };
                let carries_2026 =
                    view.protocol_version.is_some() || view.client_capabilities.is_some();
                let token = progress_token(&view);
                let own = raw.get().as_bytes();
                let empty = own[1..own.len() - 1].iter().all(u8::is_ascii_whitespace);
                let own_meta = (!empty).then(|| meta_bytes(body, raw));
                (own_meta, carries_2026, token)
            }
        };
        Ok(Self {
            id: request.id,
            method: request.method,
            params: Some(request.params),
            mrtr_members: request.mrtr_members,
            own_meta,
            carries_2026,
            progress_token,
            body: body.clone(),
        })
    }

    /// The tool a `tools/call` names (before its first round takes the params).
    pub(crate) fn tool_name(&self) -> Option<&str> {
        match &self.params {
            Some(Ok(ClientRequest::CallTool(p))) => Some(&p.name),
            _ => None,
        }
    }

    /// Whether `_meta` carries the protocol version or client capabilities, which a session
    /// request must not (−32602).
    pub(crate) fn carries_2026_meta(&self) -> bool {
        self.carries_2026
    }

    /// `progressToken`: a string or an integer, when present (−32602 otherwise).
    pub(crate) fn progress_token(&self) -> Result<Option<Value>, ErrorObject> {
        self.progress_token.clone()
    }

    /// The params of a method the core does not model: the session's own methods and
    /// `initialize`.
    pub(crate) fn other_params(&self) -> Option<&Map<String, Value>> {
        match &self.params {
            Some(Ok(ClientRequest::Other(params))) => Some(params),
            _ => None,
        }
    }

    /// The first round's params and whether they carried multi round-trip members; `None`
    /// once taken.
    pub(crate) fn take_params(&mut self) -> Option<(Result<ClientRequest, InvalidParams>, bool)> {
        self.params.take().map(|p| (p, self.mrtr_members))
    }

    /// The `_meta` dispatch sees: the request's own members, then the session's. A member in
    /// both is the session's, in the request's place, as when the session's are inserted
    /// into the parsed object (the last occurrence wins).
    pub(crate) fn meta(&self, session: &SessionMeta) -> Bytes {
        let Some(own) = &self.own_meta else {
            return session.object.clone();
        };
        let members = session.members();
        let mut out = Vec::with_capacity(own.len() + members.len() + 1);
        out.extend_from_slice(&own[..own.len() - 1]);
        out.push(b',');
        out.extend_from_slice(members);
        out.push(b'}');
        Bytes::from(out)
    }

    /// The params of a retry: the request's own, read again from its body (the round before
    /// consumed them), with the client's answers as `inputResponses` and the round's
    /// `requestState`, as a 2026-07-28 client would send them.
    pub(crate) fn retry(
        &self,
        responses: Map<String, Value>,
        state: Option<String>,
    ) -> Result<Result<ClientRequest, InvalidParams>, ErrorObject> {
        let Ok(Incoming::Request(request)) = Incoming::parse(&self.body) else {
            return Err(ErrorObject::internal("the request could not be rebuilt"));
        };
        let mut params = request.params;
        let responses = InputResponses(responses);
        match &mut params {
            Ok(ClientRequest::CallTool(p)) => {
                p.input_responses = Some(responses);
                p.request_state = state.or(p.request_state.take());
            }
            Ok(ClientRequest::ReadResource(p)) => {
                p.input_responses = Some(responses);
                p.request_state = state.or(p.request_state.take());
            }
            Ok(ClientRequest::GetPrompt(p)) => {
                p.input_responses = Some(responses);
                p.request_state = state.or(p.request_state.take());
            }
            Ok(ClientRequest::Other(p)) => {
                p.insert("inputResponses".to_owned(), Value::Object(responses.0));
                if let Some(state) = state {
                    p.insert("requestState".to_owned(), Value::from(state));
                }
            }
            // No other method asks for input.
            _ => {}
        }
        Ok(params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeSet;

    fn record(info: Option<Value>) -> SessionRecord {
        SessionRecord {
            id: "s".to_owned(),
            protocol_version: "2025-11-25".to_owned(),
            client_capabilities: json!({"elicitation": {}}).as_object().unwrap().clone(),
            client_info: info,
            initialized: true,
            log_level: None,
            subscriptions: BTreeSet::new(),
            principal: None,
        }
    }

    fn read(body: &str) -> SessionRequest {
        let body = Bytes::from(body.to_owned());
        let Ok(Incoming::Request(request)) = Incoming::parse(&body) else {
            panic!("not a request: {body:?}");
        };
        SessionRequest::read(request, &body).unwrap()
    }

    /// The reference: the request's own `_meta` parsed, the session's members inserted.
    fn inserted(own: &Value, record: &SessionRecord) -> Map<String, Value> {
        let mut meta = own.as_object().cloned().unwrap_or_default();
        meta.insert(
            meta::PROTOCOL_VERSION.to_owned(),
            Value::from(record.protocol_version.clone()),
        );
        meta.insert(
            meta::CLIENT_CAPABILITIES.to_owned(),
            Value::Object(record.client_capabilities.clone()),
        );
        if let Some(info) = &record.client_info {
            meta.insert(meta::CLIENT_INFO.to_owned(), info.clone());
        }
        meta
    }

    #[test]
    fn the_meta_is_the_requests_own_with_the_sessions_members() {
        let records = [
            record(None),
            record(Some(json!({"name": "c", "version": "1"}))),
        ];
        let owns = [
            None,
            Some(json!({})),
            Some(json!({"progressToken": 3, "x": [1, {"y": null}]})),
            Some(json!({"io.modelcontextprotocol/clientInfo": {"name": "own"}, "z": "ü"})),
        ];
        for record in &records {
            let session = SessionMeta::new(record);
            for own in &owns {
                let mut params = json!({"name": "echo"});
                if let Some(own) = own {
                    params["_meta"] = own.clone();
                }
                let body =
                    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
                let request = read(&body.to_string());
                let got: Map<String, Value> =
                    serde_json::from_slice(&request.meta(&session)).unwrap();
                let want = inserted(own.as_ref().unwrap_or(&json!({})), record);
                // The same members in the same order.
                assert_eq!(
                    got.iter().collect::<Vec<_>>(),
                    want.iter().collect::<Vec<_>>()
                );
            }
        }
        // Without members of its own, a request shares the session's bytes.
        let session = SessionMeta::new(&records[0]);
        let bare = read(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta": { }}}"#);
        assert_eq!(bare.meta(&session).as_ptr(), session.object.as_ptr());
    }

    #[test]
    fn meta_members_are_read_as_the_session_layer_needs_them() {
        let plain = read(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}"#);
        assert!(!plain.carries_2026_meta());
        assert_eq!(plain.progress_token(), Ok(None));
        let modern = read(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"io.modelcontextprotocol/clientCapabilities":{},"progressToken":"t"}}}"#,
        );
        assert!(modern.carries_2026_meta());
        assert_eq!(modern.progress_token(), Ok(Some(json!("t"))));
        let bad = read(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":1.5}}}"#,
        );
        assert_eq!(bad.progress_token().unwrap_err().code, -32602);
        let body = Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"a","_meta":[1]}}"#,
        );
        // (The parser may refuse a non-object `_meta` itself; then the session never sees it.)
        if let Ok(Incoming::Request(request)) = Incoming::parse(&body) {
            let (id, error) = *SessionRequest::read(request, &body).unwrap_err();
            assert_eq!(id, RequestId::from(9));
            assert_eq!(error.message, "\"params._meta\" must be an object");
        }
    }

    #[test]
    fn a_retry_carries_the_answers_and_the_state() {
        let mut request = read(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"n":1}}}"#,
        );
        let (first, mrtr) = request.take_params().unwrap();
        assert!(!mrtr && request.take_params().is_none());
        let Ok(ClientRequest::CallTool(first)) = first else {
            panic!("{first:?}")
        };
        assert!(first.input_responses.is_none());
        let answers = json!({"k": {"action": "accept"}})
            .as_object()
            .unwrap()
            .clone();
        let retry = request
            .retry(answers.clone(), Some("st".to_owned()))
            .unwrap();
        let Ok(ClientRequest::CallTool(retry)) = retry else {
            panic!("{retry:?}")
        };
        assert_eq!(retry.input_responses, Some(InputResponses(answers)));
        assert_eq!(retry.request_state.as_deref(), Some("st"));
        assert_eq!(retry.arguments, first.arguments);
    }
}
