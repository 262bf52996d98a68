//! A request as a server receives it: the body parsed once into a typed [`ClientRequest`],
//! with `params._meta` kept raw for the server to read lazily.
//!
//! Every MCP request carries `_meta` (protocol version, client capabilities, client info), and
//! it is often the largest part of a small request. A server needs only a few of its members
//! on the hot path, so parsing it into a tree is wasted work: [`IncomingRequest::meta`] is the
//! raw JSON, borrowed from the body.
//!
//! [`Incoming::parse`] reads a well-formed request in one pass: the envelope, then `params`
//! straight into the typed params of its method (`_meta` set aside as it goes by). Anything
//! else — a notification, a response, a malformed body, params of the wrong shape, or a body
//! with something the one pass would skip unchecked but the precise parser rejects (invalid
//! UTF-8, a lone surrogate escape, a number out of range, nesting too deep: `screen.rs`) —
//! takes a second, precise route that explains what is wrong: [`ParseError`] for the envelope (−32700,
//! −32600), and [`InvalidParams`] naming the member for params (−32602). Invalid params do not
//! fail the parse: the envelope is still good, so a server runs its envelope and header
//! checks first and reports the params last (REQUIREMENTS A1 item 18).

use std::borrow::Cow;
use std::fmt;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{
    self, DeserializeSeed, Deserializer, IgnoredAny, IntoDeserializer as _, MapAccess, Visitor,
};
use serde::{Deserialize, forward_to_deserialize_any};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::envelope::{Message, Notification, ParseError, Request};
use super::id::RequestId;
use super::screen::screen;
use crate::error::ErrorObject;
use crate::messages::method;
use crate::meta::RequestMeta;
use crate::patterns::subscriptions::SubscriptionsListenRequestParams;
use crate::server::prompts::GetPromptRequestParams;
use crate::server::resources::ReadResourceRequestParams;
use crate::server::tools::CallToolRequestParams;
use crate::server::utilities::completion::CompleteRequestParams;
use crate::server::utilities::pagination::PaginatedRequestParams;

/// A request a client sends a server, with its typed params (without `_meta`, which
/// [`IncomingRequest::meta`] carries raw).
#[derive(Debug, Clone, PartialEq)]
pub enum ClientRequest {
    /// `server/discover`.
    Discover,
    /// `tools/list`.
    ListTools(PaginatedRequestParams),
    /// `tools/call`.
    CallTool(CallToolRequestParams),
    /// `resources/list`.
    ListResources(PaginatedRequestParams),
    /// `resources/templates/list`.
    ListResourceTemplates(PaginatedRequestParams),
    /// `resources/read`.
    ReadResource(ReadResourceRequestParams),
    /// `prompts/list`.
    ListPrompts(PaginatedRequestParams),
    /// `prompts/get`.
    GetPrompt(GetPromptRequestParams),
    /// `completion/complete`.
    Complete(CompleteRequestParams),
    /// `subscriptions/listen`.
    Listen(SubscriptionsListenRequestParams),
    /// Any other method (an extension's, such as SEP-2631's `files/*`, or an unknown one):
    /// its params object without `_meta`.
    Other(Map<String, Value>),
}

/// Which [`ClientRequest`] variant a method name selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Discover,
    ListTools,
    CallTool,
    ListResources,
    ListResourceTemplates,
    ReadResource,
    ListPrompts,
    GetPrompt,
    Complete,
    Listen,
    Other,
}

impl Kind {
    fn of(name: &str) -> Self {
        match name {
            method::DISCOVER => Self::Discover,
            method::TOOLS_LIST => Self::ListTools,
            method::TOOLS_CALL => Self::CallTool,
            method::RESOURCES_LIST => Self::ListResources,
            method::RESOURCES_TEMPLATES_LIST => Self::ListResourceTemplates,
            method::RESOURCES_READ => Self::ReadResource,
            method::PROMPTS_LIST => Self::ListPrompts,
            method::PROMPTS_GET => Self::GetPrompt,
            method::COMPLETE => Self::Complete,
            method::SUBSCRIPTIONS_LISTEN => Self::Listen,
            _ => Self::Other,
        }
    }

    /// Reads the params of this kind from a deserializer positioned on the params object.
    fn read<'de, D: Deserializer<'de>>(self, de: D) -> Result<ClientRequest, D::Error> {
        Ok(match self {
            Self::Discover => {
                IgnoredAny::deserialize(de)?;
                ClientRequest::Discover
            }
            Self::ListTools => ClientRequest::ListTools(Deserialize::deserialize(de)?),
            Self::CallTool => ClientRequest::CallTool(Deserialize::deserialize(de)?),
            Self::ListResources => ClientRequest::ListResources(Deserialize::deserialize(de)?),
            Self::ListResourceTemplates => {
                ClientRequest::ListResourceTemplates(Deserialize::deserialize(de)?)
            }
            Self::ReadResource => ClientRequest::ReadResource(Deserialize::deserialize(de)?),
            Self::ListPrompts => ClientRequest::ListPrompts(Deserialize::deserialize(de)?),
            Self::GetPrompt => ClientRequest::GetPrompt(Deserialize::deserialize(de)?),
            Self::Complete => ClientRequest::Complete(Deserialize::deserialize(de)?),
            Self::Listen => ClientRequest::Listen(Deserialize::deserialize(de)?),
            Self::Other => ClientRequest::Other(Deserialize::deserialize(de)?),
        })
    }
}

impl ClientRequest {
    /// The member the `Mcp-Name` header mirrors: the tool's or the prompt's `name`, the
    /// resource's `uri`. `None` for the other methods.
    pub fn name(&self) -> Option<&str> {
        match self {
            Self::CallTool(p) => Some(&p.name),
            Self::GetPrompt(p) => Some(&p.name),
            Self::ReadResource(p) => Some(&p.uri),
            _ => None,
        }
    }

    /// Whether `method` is one of the requests this type models (the core protocol's); an
    /// extension's methods are [`ClientRequest::Other`].
    pub fn models(method: &str) -> bool {
        Kind::of(method) != Kind::Other
    }

    /// The member of params that the `Mcp-Name` header mirrors for `method`, if any.
    pub fn name_member(method: &str) -> Option<&'static str> {
        match Kind::of(method) {
            Kind::CallTool | Kind::GetPrompt => Some("name"),
            Kind::ReadResource => Some("uri"),
            _ => None,
        }
    }

    /// Reads the typed params of `method` from its params object (without `_meta`). The
    /// error names the member that is wrong and never echoes its value.
    pub fn from_params(method: &str, params: Map<String, Value>) -> Result<Self, InvalidParams> {
        let kind = Kind::of(method);
        if kind == Kind::Other {
            return Ok(Self::Other(params));
        }
        let value = Value::Object(params);
        let mut track = serde_path_to_error::Track::new();
        match kind.read(serde_path_to_error::Deserializer::new(&value, &mut track)) {
            Ok(request) => Ok(request),
            Err(e) => Err(InvalidParams {
                message: describe(&track.path(), &e, &value),
                name: Self::name_member(method)
                    .and_then(|key| value.get(key))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            }),
        }
    }
}

/// Reads params of type `T` (an extension method's, say) from a params object without
/// `_meta`; the error names the member that is wrong and never echoes its value.
pub fn read_params<T: de::DeserializeOwned>(
    params: Map<String, Value>,
) -> Result<T, InvalidParams> {
    let value = Value::Object(params);
    let mut track = serde_path_to_error::Track::new();
    T::deserialize(serde_path_to_error::Deserializer::new(&value, &mut track)).map_err(|e| {
        InvalidParams {
            message: describe(&track.path(), &e, &value),
            name: None,
        }
    })
}

/// Params that do not fit their method's type: −32602 with a message naming the member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidParams {
    /// What is wrong, e.g. `"params.arguments" must be a map, not a string`.
    pub message: String,
    /// The member the `Mcp-Name` header mirrors, when it could be read as a string (so a
    /// server can still compare the header before reporting the params).
    pub name: Option<String>,
}

impl InvalidParams {
    /// The −32602 error object.
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject::invalid_params(self.message.clone())
    }
}

impl fmt::Display for InvalidParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The JSON type of `v`, with an article, for messages.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `params.a.b[0]`, and the value there if it exists.
fn locate<'v>(path: &serde_path_to_error::Path, root: &'v Value) -> (String, Option<&'v Value>) {
    use serde_path_to_error::Segment;
    let mut text = String::from("params");
    let mut at = Some(root);
    for segment in path {
        match segment {
            Segment::Seq { index } => {
                text.push_str(&format!("[{index}]"));
                at = at.and_then(|v| v.get(*index));
            }
            Segment::Map { key } => {
                text.push('.');
                text.push_str(key);
                at = at.and_then(|v| v.get(key));
            }
            Segment::Enum { variant } => {
                text.push('.');
                text.push_str(variant);
            }
            Segment::Unknown => text.push_str(".?"),
        }
    }
    (text, at)
}

/// Longest custom message kept (custom messages come from this crate's own `Deserialize`
/// impls; the cap keeps anything echoed short).
const MAX_CUSTOM: usize = 200;

/// A message for a params error that names the member and says what was expected, without
/// the offending value (serde's own text quotes it, and it may be a secret).
fn describe(path: &serde_path_to_error::Path, error: &serde_json::Error, root: &Value) -> String {
    let (at, value) = locate(path, root);
    let text = error.to_string();
    let expected = |rest: &str| rest.split_once(", expected ").map(|(_, e)| e.to_owned());
    if let Some(field) = text
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(field, _)| field)
    {
        return format!("\"{at}.{field}\" is required");
    }
    if let Some(rest) = text.strip_prefix("invalid type: ") {
        let want = expected(rest).unwrap_or_else(|| "another type".to_owned());
        return match value {
            Some(v) => format!("\"{at}\" must be {want}, not {}", json_type(v)),
            None => format!("\"{at}\" must be {want}"),
        };
    }
    if let Some(rest) = text.strip_prefix("invalid value: ") {
        let want = expected(rest).unwrap_or_else(|| "another value".to_owned());
        return format!("\"{at}\" has an invalid value: expected {want}");
    }
    if let Some(rest) = text.strip_prefix("unknown variant ") {
        let want = expected(rest).unwrap_or_else(|| "a known value".to_owned());
        return format!("\"{at}\" has an unknown value: expected {want}");
    }
    if let Some(rest) = text.strip_prefix("invalid length ") {
        let want = expected(rest).unwrap_or_else(|| "another length".to_owned());
        return format!("\"{at}\" has the wrong length: expected {want}");
    }
    let mut custom = text;
    if custom.len() > MAX_CUSTOM {
        let mut end = MAX_CUSTOM;
        while !custom.is_char_boundary(end) {
            end -= 1;
        }
        custom.truncate(end);
        custom.push('…');
    }
    format!("\"{at}\": {custom}")
}

/// A request as a server receives it.
#[derive(Debug)]
pub struct IncomingRequest<'a> {
    /// The request id.
    pub id: RequestId,
    /// The method: static for the requests [`method::CLIENT_REQUESTS`] lists.
    pub method: Cow<'static, str>,
    /// `params._meta`, unparsed: borrowed from the body on the one-pass route.
    pub meta: Option<RequestMeta<'a>>,
    /// The typed params, or why they do not fit the method (reported after the envelope
    /// and header checks, which do not need them).
    pub params: Result<ClientRequest, InvalidParams>,
    /// `params` carried `inputResponses` or `requestState`, which only the multi round-trip
    /// methods take.
    pub mrtr_members: bool,
}

impl IncomingRequest<'_> {
    /// The member the `Mcp-Name` header mirrors (see [`ClientRequest::name`]), also when the
    /// params are otherwise invalid.
    pub fn name(&self) -> Option<&str> {
        match &self.params {
            Ok(request) => request.name(),
            Err(invalid) => invalid.name.as_deref(),
        }
    }

    /// Detaches the request from the body it was parsed from (copies a borrowed `_meta`).
    pub fn into_owned(self) -> IncomingRequest<'static> {
        IncomingRequest {
            id: self.id,
            method: self.method,
            meta: self.meta.map(RequestMeta::into_owned),
            params: self.params,
            mrtr_members: self.mrtr_members,
        }
    }
}

impl IncomingRequest<'static> {
    /// Splits a request the precise parser produced (the second route of [`Incoming::parse`]).
    pub fn from_request(request: Request) -> Self {
        let method = intern(request.method);
        let mut params = match request.params {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let meta = params
            .remove("_meta")
            .and_then(|m| serde_json::value::to_raw_value(&m).ok())
            .map(RequestMeta::written);
        let mrtr_members =
            params.contains_key("inputResponses") || params.contains_key("requestState");
        let params = ClientRequest::from_params(&method, params);
        Self {
            id: request.id,
            method,
            meta,
            params,
            mrtr_members,
        }
    }
}

/// `name` as a static string when it names a known client request.
fn intern(name: String) -> Cow<'static, str> {
    method::client_request(&name).map_or(Cow::Owned(name), Cow::Borrowed)
}

/// A body, classified the way a server must treat it.
#[derive(Debug)]
pub enum Incoming<'a> {
    /// A request.
    Request(IncomingRequest<'a>),
    /// A notification.
    Notification(Notification),
    /// A JSON-RPC response (which a client must not send a server), with its id when known.
    Response(Option<RequestId>),
}

impl<'a> Incoming<'a> {
    /// Parses one JSON-RPC message from a body: a well-formed request in one pass, anything
    /// else through the precise classifier ([`Message::from_slice`]).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, ParseError> {
        if let Some(request) = fast(bytes) {
            return Ok(Self::Request(request));
        }
        Ok(match Message::from_slice(bytes)? {
            Message::Request(r) => Self::Request(IncomingRequest::from_request(r)),
            Message::Notification(n) => Self::Notification(n),
            Message::Result(r) => Self::Response(Some(r.id)),
            Message::Error(e) => Self::Response(e.id),
        })
    }
}

/// The one-pass route: `None` for anything it does not accept as is, including anything in
/// the members it skips that the precise route would reject ([`screen`]).
pub(crate) fn fast(bytes: &[u8]) -> Option<IncomingRequest<'_>> {
    let text = screen(bytes)?;
    let mut de = serde_json::Deserializer::from_str(text);
    let envelope = de.deserialize_map(EnvelopeVisitor).ok()?;
    de.end().ok()?;
    let Envelope {
        jsonrpc_ok,
        id,
        method,
        params,
    } = envelope;
    if !jsonrpc_ok {
        return None;
    }
    let (id, method) = (id?, method?);
    let (request, split) = match params {
        Params::Read(request, split) => (request, split),
        Params::Raw(raw) => read_params_text(Kind::of(&method), raw.get())?,
        Params::Absent => read_params_text(Kind::of(&method), "{}")?,
    };
    Some(IncomingRequest {
        id,
        method,
        meta: split.meta.map(RequestMeta::screened),
        params: Ok(request),
        mrtr_members: split.mrtr,
    })
}

/// Params read from JSON text that lives as long as the body.
fn read_params_text(kind: Kind, json: &str) -> Option<(ClientRequest, Split<'_>)> {
    let mut split = Split::default();
    let mut de = serde_json::Deserializer::from_str(json);
    let request = ParamsSeed {
        kind,
        split: &mut split,
    }
    .deserialize(&mut de)
    .ok()?;
    de.end().ok()?;
    Some((request, split))
}

/// What the params object held besides the typed params.
#[derive(Default)]
struct Split<'de> {
    meta: Option<&'de RawValue>,
    mrtr: bool,
}

enum Params<'de> {
    Absent,
    /// Read as the method came first.
    Read(ClientRequest, Split<'de>),
    /// `params` came before `method`: read once the method is known.
    Raw(&'de RawValue),
}

struct Envelope<'de> {
    jsonrpc_ok: bool,
    id: Option<RequestId>,
    method: Option<Cow<'static, str>>,
    params: Params<'de>,
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC request")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<'de>, A::Error> {
        let mut envelope = Envelope {
            jsonrpc_ok: false,
            id: None,
            method: None,
            params: Params::Absent,
        };
        let mut jsonrpc_seen = false;
        let dup = |key: &str| de::Error::custom(format_args!("duplicate member {key:?}"));
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match &*key {
                "jsonrpc" => {
                    if std::mem::replace(&mut jsonrpc_seen, true) {
                        return Err(dup("jsonrpc"));
                    }
                    let Key(version) = map.next_value::<Key<'de>>()?;
                    envelope.jsonrpc_ok = version == crate::JSONRPC_VERSION;
                }
                "id" => {
                    if envelope.id.is_some() {
                        return Err(dup("id"));
                    }
                    envelope.id = Some(map.next_value()?);
                }
                "method" => {
                    if envelope.method.is_some() {
                        return Err(dup("method"));
                    }
                    let Key(name) = map.next_value::<Key<'de>>()?;
                    envelope.method = Some(
                        method::client_request(&name)
                            .map_or_else(|| Cow::Owned(name.into_owned()), Cow::Borrowed),
                    );
                }
                "params" => {
                    if !matches!(envelope.params, Params::Absent) {
                        return Err(dup("params"));
                    }
                    envelope.params = match &envelope.method {
                        Some(name) => {
                            let mut split = Split::default();
                            let request = map.next_value_seed(ParamsSeed {
                                kind: Kind::of(name),
                                split: &mut split,
                            })?;
                            Params::Read(request, split)
                        }
                        None => Params::Raw(map.next_value()?),
                    };
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(envelope)
    }
}

/// Reads a params object into the typed params of `kind`, setting `_meta` aside.
struct ParamsSeed<'s, 'de> {
    kind: Kind,
    split: &'s mut Split<'de>,
}

impl<'de> DeserializeSeed<'de> for ParamsSeed<'_, 'de> {
    type Value = ClientRequest;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<ClientRequest, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ParamsSeed<'_, 'de> {
    type Value = ClientRequest;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a params object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ClientRequest, A::Error> {
        self.kind.read(WithoutMeta {
            map,
            split: self.split,
        })
    }
}

/// The params object as a deserializer that never shows `_meta` (it goes to `split`, raw)
/// and notes the multi round-trip members as they pass.
struct WithoutMeta<'s, 'de, A> {
    map: A,
    split: &'s mut Split<'de>,
}

impl<'de, A: MapAccess<'de>> Deserializer<'de> for WithoutMeta<'_, 'de, A> {
    type Error = A::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, A::Error> {
        visitor.visit_map(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for WithoutMeta<'_, 'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(Key(key)) = self.map.next_key::<Key<'de>>()? else {
                return Ok(None);
            };
            if key == "_meta" {
                self.split.meta = Some(self.map.next_value()?);
                continue;
            }
            if key == "inputResponses" || key == "requestState" {
                self.split.mrtr = true;
            }
            return match key {
                Cow::Borrowed(key) => seed.deserialize(BorrowedStrDeserializer::new(key)),
                Cow::Owned(key) => seed.deserialize(key.into_deserializer()),
            }
            .map(Some);
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// A member name (or a short string), borrowed from the input unless it has escapes (serde's
/// `Cow<str>` is always a copy).
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(body: &Value) -> IncomingRequest<'static> {
        let text = body.to_string();
        match Incoming::parse(text.as_bytes()).unwrap() {
            Incoming::Request(r) => r.into_owned(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn one_pass_reads_typed_params_and_borrows_meta() {
        let body = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"a":1},"name":"echo","arguments":{"text":"hi"}}}"#;
        let r = fast(body).unwrap();
        assert_eq!(r.id, RequestId::from(7));
        assert!(matches!(r.method, Cow::Borrowed("tools/call")));
        let meta = r.meta.as_ref().unwrap();
        assert!(meta.is_borrowed());
        assert_eq!(meta.get(), r#"{"a":1}"#);
        let Ok(ClientRequest::CallTool(p)) = &r.params else {
            panic!("{:?}", r.params)
        };
        assert_eq!(p.name, "echo");
        assert_eq!(p.arguments.as_ref().unwrap()["text"], "hi");
        assert!(p.meta.is_none(), "_meta is set aside, not parsed");
        assert!(!r.mrtr_members);
    }

    #[test]
    fn params_before_method_and_escaped_names() {
        let r = fast(br#"{"params":{"cursor":"c","_meta":{}},"id":"x","jsonrpc":"2.0","method":"tools\/list"}"#)
            .unwrap();
        assert!(matches!(r.method, Cow::Borrowed("tools/list")));
        assert_eq!(
            r.params,
            Ok(ClientRequest::ListTools(PaginatedRequestParams {
                meta: None,
                cursor: Some("c".into())
            }))
        );
        assert_eq!(r.meta.unwrap().get(), "{}");
    }

    #[test]
    fn both_routes_agree() {
        let bodies = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "_meta": {"k": [1, 2]}, "name": "n", "arguments": {"a": [1]},
                "requestState": "s", "inputResponses": {"q": {"action": "accept"}}}}),
            json!({"jsonrpc": "2.0", "id": "a", "method": "prompts/get", "params": {
                "name": "p", "arguments": {"x": "1"}}}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "u"}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen", "params": {
                "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["a"]}}}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "completion/complete", "params": {
                "ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "v"}}}),
            json!({"jsonrpc": "2.0", "id": 5, "method": "server/discover"}),
            json!({"jsonrpc": "2.0", "id": 6, "method": "x/y", "params": {"_meta": {}, "z": 1}}),
        ];
        for body in bodies {
            let text = body.to_string();
            let one = fast(text.as_bytes()).unwrap_or_else(|| panic!("fast: {body}"));
            let Ok(Message::Request(r)) = Message::from_value(body.clone()) else {
                panic!()
            };
            let two = IncomingRequest::from_request(r);
            assert_eq!(one.id, two.id);
            assert_eq!(one.method, two.method);
            assert_eq!(one.params, two.params, "{body}");
            assert_eq!(one.mrtr_members, two.mrtr_members);
            assert_eq!(
                one.meta.map(|m| m.get().to_owned()),
                two.meta.map(|m| m.get().to_owned())
            );
        }
    }

    #[test]
    fn request_meta_is_vouched_for_on_both_routes() {
        use crate::meta::{MetaError, MetaView};
        // What the full parser refuses inside `_meta` never becomes a request: the one-pass
        // route's screen declines it and the precise route refuses the body.
        for bad in [r#"{"x":"\udc00"}"#, r#"{"x":1e400}"#] {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{bad}}}}}"#
            );
            assert!(fast(body.as_bytes()).is_none(), "{bad}");
            assert!(Incoming::parse(body.as_bytes()).is_err(), "{bad}");
        }
        // A four-digit exponent: declined by the screen, read by the precise route, whose
        // `_meta` is written from the parsed value.
        let precise = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"x":1e-0400,"progressToken":"t"}}}"#;
        assert!(fast(precise).is_none());
        let Ok(Incoming::Request(r)) = Incoming::parse(precise) else {
            panic!()
        };
        let meta = r.meta.unwrap();
        assert!(!meta.is_borrowed());
        assert_eq!(meta.view().unwrap().progress_token.unwrap().get(), r#""t""#);
        // The view is the one `MetaView::parse` gives, without the second scan; a reserved
        // name and a `_meta` that is not an object are still refused.
        for (text, expected) in [
            (r#"{"progressToken":7,"a":{"b":[1]}}"#, Ok(Some("7"))),
            (
                r#"{"a":{"$serde_json::private::Number":"1"}}"#,
                Err(MetaError::ReservedName("$serde_json::private::Number")),
            ),
            ("[1]", Err(MetaError::NotAnObject)),
        ] {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{text}}}}}"#
            );
            let r = fast(body.as_bytes()).unwrap();
            let meta = r.meta.unwrap();
            assert!(meta.is_borrowed());
            let view = meta.view().map(|v| v.progress_token.map(RawValue::get));
            assert_eq!(view, expected, "{text}");
            let again = MetaView::parse(&meta).map(|v| v.progress_token.map(RawValue::get));
            assert_eq!(view, again, "{text}");
        }
    }

    #[test]
    fn anything_unusual_takes_the_precise_route() {
        for body in [
            json!({"jsonrpc": "2.0", "method": "n"}),
            json!({"jsonrpc": "1.0", "id": 1, "method": "m"}),
            json!({"jsonrpc": "2.0", "id": null, "method": "m"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "m", "params": null}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "m", "params": [1]}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}}),
            json!([1]),
        ] {
            assert!(fast(body.to_string().as_bytes()).is_none(), "{body}");
        }
        assert!(fast(b"{").is_none());
        assert!(fast(br#"{"jsonrpc":"2.0","id":1,"method":"m"} x"#).is_none());
        assert!(
            fast(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#).is_none(),
            "a repeated member is left to the precise parser (last one wins there)"
        );
    }

    /// Bodies the precise parser rejects (−32700) with the offending bytes in a member the
    /// one-pass route skips: an unknown envelope member, an unknown params member, `_meta`.
    fn rejected_in_skipped_members() -> Vec<Vec<u8>> {
        let deep = format!("{}{}", "[".repeat(140), "]".repeat(140));
        let bad: Vec<Vec<u8>> = vec![
            b"\"\xFF\"".to_vec(),
            b"\"a\xC3\"".to_vec(),
            b"\"\xED\xA0\x80\"".to_vec(),
            br#""\udc00""#.to_vec(),
            br#""\ud800""#.to_vec(),
            br#""\ud800x""#.to_vec(),
            br#""\ud800\u0041""#.to_vec(),
            br#""\ud800\n""#.to_vec(),
            br#"["a\\", "\udfff"]"#.to_vec(),
            b"1e400".to_vec(),
            b"-1E+400".to_vec(),
            b"[0.5e309]".to_vec(),
            b"1e99999999999999999999".to_vec(),
            format!("1{}", "0".repeat(400)).into_bytes(),
            format!("{{\"a\":{deep}}}").into_bytes(),
        ];
        let mut bodies = Vec::new();
        for value in bad {
            let splice = |prefix: &[u8], suffix: &[u8]| {
                let mut body = prefix.to_vec();
                body.extend_from_slice(&value);
                body.extend_from_slice(suffix);
                body
            };
            bodies.push(splice(br#"{"jsonrpc":"2.0","id":1,"method":"","":"#, b"}"));
            bodies.push(splice(
                br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"#,
                b"}}",
            ));
            bodies.push(splice(
                br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"m":"#,
                b"}}}",
            ));
            bodies.push(splice(
                br#"{"params":{"_meta":{"m":"#,
                br#"}},"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            ));
        }
        bodies
    }

    #[test]
    fn the_one_pass_route_rejects_what_the_precise_route_rejects() {
        let minimal = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\",\"\":\"\xFF\"}";
        assert!(matches!(Incoming::parse(minimal), Err(ParseError::Json(_))));
        for body in rejected_in_skipped_members() {
            let text = String::from_utf8_lossy(&body);
            assert!(
                matches!(Message::from_slice(&body), Err(ParseError::Json(_))),
                "the precise parser accepts {text}"
            );
            assert!(fast(&body).is_none(), "one pass accepts {text}");
            assert!(
                matches!(Incoming::parse(&body), Err(ParseError::Json(_))),
                "{text}"
            );
        }
    }

    #[test]
    fn unusual_but_valid_bodies_keep_the_one_pass_route() {
        for value in [
            r#""\ud83d\ude00""#,
            r#""\\ud800""#,
            r#""\\\ud83d\udE00\\""#,
            r#""1e400 \u00e9 \" \/""#,
            r#""550e8400-e29b-41d4-a716-446655440000""#,
            "1e300",
            "-1.5E-400",
            "12345678901234567890123",
            "[1, -0, 0.25, 2e+2, true, false, null]",
            r#"{"é": "ü", "k": {"a": [[[]]]}}"#,
        ] {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"x":{value},"method":"tools/call","params":{{"name":"t","y":{value},"_meta":{{"m":{value}}},"arguments":{{"a":{value}}}}}}}"#
            );
            assert!(Message::from_slice(body.as_bytes()).is_ok(), "{body}");
            assert!(fast(body.as_bytes()).is_some(), "{body}");
        }
    }

    #[test]
    fn classifies_what_is_not_a_request() {
        assert!(matches!(
            Incoming::parse(br#"{"jsonrpc":"2.0","method":"notifications/x"}"#),
            Ok(Incoming::Notification(_))
        ));
        assert!(matches!(
            Incoming::parse(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            Ok(Incoming::Response(Some(_)))
        ));
        assert!(matches!(
            Incoming::parse(br#"{"jsonrpc":"2.0","error":{"code":1,"message":"m"}}"#),
            Ok(Incoming::Response(None))
        ));
        assert!(matches!(Incoming::parse(b"nope"), Err(ParseError::Json(_))));
    }

    #[test]
    fn invalid_params_name_the_member_without_echoing_it() {
        let cases = [
            (
                json!({"name": "t", "arguments": "s3cr3t"}),
                "tools/call",
                "\"params.arguments\" must be a map, not a string",
            ),
            (
                json!({"arguments": {}}),
                "tools/call",
                "\"params.name\" is required",
            ),
            (
                json!({"name": 5}),
                "tools/call",
                "\"params.name\" must be a string, not a number",
            ),
            (
                json!({"name": "p", "arguments": {"x": 1}}),
                "prompts/get",
                "\"params.arguments.x\" must be a string, not a number",
            ),
            (
                json!({"cursor": 1}),
                "tools/list",
                "\"params.cursor\" must be a string, not a number",
            ),
            (
                json!({"notifications": {"resourceSubscriptions": ["a", 7]}}),
                "subscriptions/listen",
                "\"params.notifications.resourceSubscriptions[1]\" must be a string, not a number",
            ),
            (
                json!({"notifications": {"toolsListChanged": "yes"}}),
                "subscriptions/listen",
                "\"params.notifications.toolsListChanged\" must be a boolean, not a string",
            ),
            (
                json!({}),
                "subscriptions/listen",
                "\"params.notifications\" is required",
            ),
            (
                json!({"name": "t", "requestState": 1}),
                "tools/call",
                "\"params.requestState\" must be a string, not a number",
            ),
        ];
        for (params, method, want) in cases {
            let Value::Object(map) = params.clone() else {
                unreachable!()
            };
            let err = ClientRequest::from_params(method, map).unwrap_err();
            assert_eq!(err.message, want, "{method} {params}");
            assert!(!err.message.contains("s3cr3t"));
        }
        let Value::Object(map) = json!({"name": "t", "arguments": 1}) else {
            unreachable!()
        };
        let err = ClientRequest::from_params("tools/call", map).unwrap_err();
        assert_eq!(
            err.name.as_deref(),
            Some("t"),
            "the name survives for Mcp-Name"
        );
    }

    #[test]
    fn precise_route_keeps_the_name_and_the_mrtr_members() {
        let r = request(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read",
            "params": {"uri": "u", "requestState": 9, "_meta": {"x": 1}}}),
        );
        assert!(r.params.is_err());
        assert_eq!(r.name(), Some("u"));
        assert!(r.mrtr_members);
        assert_eq!(r.meta.unwrap().get(), r#"{"x":1}"#);
    }

    #[test]
    fn unknown_methods_keep_their_params() {
        let r = request(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "files/authorizeUpload",
            "params": {"_meta": {}, "files": {"a": {}}}}),
        );
        assert!(matches!(r.method, Cow::Borrowed("files/authorizeUpload")));
        assert_eq!(
            r.params,
            Ok(ClientRequest::Other(
                json!({"files": {"a": {}}}).as_object().unwrap().clone()
            ))
        );
    }
}
