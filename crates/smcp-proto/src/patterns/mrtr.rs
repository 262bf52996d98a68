//! Multi Round-Trip Requests (`patterns/mrtr.mdx`; `schema.ts` `InputRequiredResult`,
//! `InputRequests`, `InputResponses`, `InputResponseRequestParams`).
//!
//! `tools/call`, `resources/read` and `prompts/get` may answer with an [`InputRequiredResult`]
//! instead of their normal result ([`ResultOrInputRequired`]). Its input requests are bare
//! `{method, params}` objects (no `jsonrpc`, no `id`), dispatched on `method` into
//! [`InputRequest`]. The client retries with `inputResponses`: `ElicitResult`,
//! `CreateMessageResult` or `ListRootsResult` values, which are *not* `Result`s (no
//! `resultType`). Which kind a key holds is known only from the request, so [`InputResponses`]
//! keeps the raw JSON per key and offers typed accessors.

use std::collections::BTreeMap;

use serde::de::{self, DeserializeOwned, Deserializer};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::basic::{Meta, ResultType};
use crate::client::elicitation::{ElicitRequestParams, ElicitResult};
use crate::client::roots::{ListRootsRequestParams, ListRootsResult};
use crate::client::sampling::{CreateMessageRequestParams, CreateMessageResult};
use crate::json::{from_value, str_member};

/// Method of an elicitation input request.
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// Method of a sampling input request.
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// Method of a roots input request.
pub const ROOTS_LIST: &str = "roots/list";

/// A request the server needs the client to fulfil before retrying, dispatched on `method`.
#[derive(Debug, Clone, PartialEq)]
pub enum InputRequest {
    /// `elicitation/create`.
    Elicit(ElicitRequestParams),
    /// `sampling/createMessage`.
    CreateMessage(CreateMessageRequestParams),
    /// `roots/list` (params are optional).
    ListRoots(Option<ListRootsRequestParams>),
}

impl InputRequest {
    /// The method name.
    pub fn method(&self) -> &'static str {
        match self {
            Self::Elicit(_) => ELICITATION_CREATE,
            Self::CreateMessage(_) => SAMPLING_CREATE_MESSAGE,
            Self::ListRoots(_) => ROOTS_LIST,
        }
    }
}

fn serialize_method<S: Serializer, P: Serialize>(
    serializer: S,
    method: &str,
    params: Option<&P>,
) -> Result<S::Ok, S::Error> {
    let mut s = serializer.serialize_struct("InputRequest", 2)?;
    s.serialize_field("method", method)?;
    if let Some(p) = params {
        s.serialize_field("params", p)?;
    }
    s.end()
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Elicit(p) => serialize_method(serializer, self.method(), Some(p)),
            Self::CreateMessage(p) => serialize_method(serializer, self.method(), Some(p)),
            Self::ListRoots(p) => serialize_method(serializer, self.method(), p.as_ref()),
        }
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut value = Value::deserialize(deserializer)?;
        let method = str_member(&value, "method").map(str::to_owned);
        let params = value.as_object_mut().and_then(|o| o.remove("params"));
        let need = |p: Option<Value>| {
            p.ok_or_else(|| de::Error::custom(format!("{method:?} input request needs \"params\"")))
        };
        match method.as_deref() {
            Some(ELICITATION_CREATE) => from_value(need(params)?).map(Self::Elicit),
            Some(SAMPLING_CREATE_MESSAGE) => from_value(need(params)?).map(Self::CreateMessage),
            Some(ROOTS_LIST) => params.map(from_value).transpose().map(Self::ListRoots),
            Some(other) => Err(de::Error::custom(format!(
                "unknown input request method {other:?} (expected {ELICITATION_CREATE}, \
                 {SAMPLING_CREATE_MESSAGE} or {ROOTS_LIST})"
            ))),
            None => Err(de::Error::custom(
                "input request is missing a string \"method\"",
            )),
        }
    }
}

/// A standalone `elicitation/create` request (`schema.ts` `ElicitRequest`).
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitRequest {
    /// The params.
    pub params: ElicitRequestParams,
}

/// A standalone `sampling/createMessage` request (`schema.ts` `CreateMessageRequest`).
#[derive(Debug, Clone, PartialEq)]
pub struct CreateMessageRequest {
    /// The params.
    pub params: CreateMessageRequestParams,
}

/// A standalone `roots/list` request (`schema.ts` `ListRootsRequest`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListRootsRequest {
    /// The params, if any.
    pub params: Option<ListRootsRequestParams>,
}

macro_rules! standalone_serde {
    ($name:ident, $variant:ident, $method:expr, |$p:ident| $as_opt:expr) => {
        impl From<$name> for InputRequest {
            fn from(r: $name) -> Self {
                Self::$variant(r.params)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let $p = &self.params;
                serialize_method(serializer, $method, $as_opt)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                match InputRequest::deserialize(deserializer)? {
                    InputRequest::$variant(params) => Ok(Self { params }),
                    other => Err(de::Error::custom(format!(
                        "expected a {} request, got {}",
                        $method,
                        other.method()
                    ))),
                }
            }
        }
    };
}

standalone_serde!(ElicitRequest, Elicit, ELICITATION_CREATE, |p| Some(p));
standalone_serde!(
    CreateMessageRequest,
    CreateMessage,
    SAMPLING_CREATE_MESSAGE,
    |p| Some(p)
);
standalone_serde!(ListRootsRequest, ListRoots, ROOTS_LIST, |p| p.as_ref());

/// Input requests keyed by server-chosen names unique within the result.
pub type InputRequests = BTreeMap<String, InputRequest>;

/// A client's answer to one input request. Not a `Result`: none of these carry `resultType`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum InputResponse {
    /// Answer to `elicitation/create`.
    Elicit(ElicitResult),
    /// Answer to `sampling/createMessage`.
    CreateMessage(CreateMessageResult),
    /// Answer to `roots/list`.
    ListRoots(ListRootsResult),
}

impl InputResponse {
    /// Reads the response to `request` from JSON.
    pub fn from_value_for(request: &InputRequest, value: Value) -> Result<Self, serde_json::Error> {
        match request {
            InputRequest::Elicit(_) => serde_json::from_value(value).map(Self::Elicit),
            InputRequest::CreateMessage(_) => {
                serde_json::from_value(value).map(Self::CreateMessage)
            }
            InputRequest::ListRoots(_) => serde_json::from_value(value).map(Self::ListRoots),
        }
    }
}

/// Without the request at hand, the kind is read from the one required member that tells them
/// apart: `action` (elicitation), `roots` (roots) or `model` (sampling).
impl<'de> Deserialize<'de> for InputResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let has = |k: &str| value.get(k).is_some();
        if has("action") {
            from_value(value).map(Self::Elicit)
        } else if has("roots") {
            from_value(value).map(Self::ListRoots)
        } else if has("model") {
            from_value(value).map(Self::CreateMessage)
        } else {
            Err(de::Error::custom(
                "input response has none of \"action\", \"roots\", \"model\"",
            ))
        }
    }
}

impl From<ElicitResult> for InputResponse {
    fn from(r: ElicitResult) -> Self {
        Self::Elicit(r)
    }
}

impl From<CreateMessageResult> for InputResponse {
    fn from(r: CreateMessageResult) -> Self {
        Self::CreateMessage(r)
    }
}

impl From<ListRootsResult> for InputResponse {
    fn from(r: ListRootsResult) -> Self {
        Self::ListRoots(r)
    }
}

/// `params.inputResponses` of a retry: raw JSON per key, read with the typed accessors.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct InputResponses(pub Map<String, Value>);

impl InputResponses {
    /// No responses.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the response for `key`.
    pub fn insert(&mut self, key: impl Into<String>, response: impl Into<InputResponse>) {
        if let Ok(v) = serde_json::to_value(response.into()) {
            self.0.insert(key.into(), v);
        }
    }

    /// Builder form of [`Self::insert`].
    #[must_use]
    pub fn with(mut self, key: impl Into<String>, response: impl Into<InputResponse>) -> Self {
        self.insert(key, response);
        self
    }

    /// The raw JSON for `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    fn typed<T: DeserializeOwned>(&self, key: &str) -> Option<Result<T, serde_json::Error>> {
        self.0.get(key).map(|v| T::deserialize(v))
    }

    /// The response for `key` read as an `ElicitResult`.
    pub fn elicit(&self, key: &str) -> Option<Result<ElicitResult, serde_json::Error>> {
        self.typed(key)
    }

    /// The response for `key` read as a `CreateMessageResult`.
    pub fn create_message(
        &self,
        key: &str,
    ) -> Option<Result<CreateMessageResult, serde_json::Error>> {
        self.typed(key)
    }

    /// The response for `key` read as a `ListRootsResult`.
    pub fn list_roots(&self, key: &str) -> Option<Result<ListRootsResult, serde_json::Error>> {
        self.typed(key)
    }

    /// The response for `key`, read as the kind `request` asks for.
    pub fn response_for(
        &self,
        key: &str,
        request: &InputRequest,
    ) -> Option<Result<InputResponse, serde_json::Error>> {
        let v = self.0.get(key)?.clone();
        Some(InputResponse::from_value_for(request, v))
    }
}

/// The server needs input before it can complete the request (`resultType: "input_required"`).
/// At least one of `inputRequests` and `requestState` must be present. Never cached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `input_required`.
    #[serde(default)]
    pub result_type: ResultType,
    /// What the client must fulfil before retrying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state the client echoes verbatim on the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl Default for InputRequiredResult {
    fn default() -> Self {
        Self {
            meta: None,
            result_type: ResultType::InputRequired,
            input_requests: None,
            request_state: None,
        }
    }
}

impl InputRequiredResult {
    /// An empty `input_required` result; add requests and/or state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an input request under `key`.
    #[must_use]
    pub fn with_request(
        mut self,
        key: impl Into<String>,
        request: impl Into<InputRequest>,
    ) -> Self {
        self.input_requests
            .get_or_insert_with(BTreeMap::new)
            .insert(key.into(), request.into());
        self
    }

    /// Sets `requestState`.
    #[must_use]
    pub fn with_state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }
}

impl From<ElicitRequestParams> for InputRequest {
    fn from(p: ElicitRequestParams) -> Self {
        Self::Elicit(p)
    }
}

impl From<CreateMessageRequestParams> for InputRequest {
    fn from(p: CreateMessageRequestParams) -> Self {
        Self::CreateMessage(p)
    }
}

/// The result of a request that may need input (`tools/call`, `resources/read`,
/// `prompts/get`): `R | InputRequiredResult`, dispatched on `resultType`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ResultOrInputRequired<R> {
    /// The normal result (`resultType` `complete`, absent, or another value).
    Result(R),
    /// `resultType: "input_required"`.
    InputRequired(InputRequiredResult),
}

impl<'de, R: DeserializeOwned> Deserialize<'de> for ResultOrInputRequired<R> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if str_member(&value, "resultType") == Some("input_required") {
            from_value(value).map(Self::InputRequired)
        } else {
            from_value(value).map(Self::Result)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::elicitation::ElicitValue;
    use serde_json::json;

    #[test]
    fn input_request_dispatches_on_method() {
        let r: InputRequest = serde_json::from_value(json!({"method": "roots/list"})).unwrap();
        assert_eq!(r, InputRequest::ListRoots(None));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"method": "roots/list"})
        );
        let r: InputRequest = serde_json::from_value(json!({
            "method": "sampling/createMessage",
            "params": {"messages": [], "maxTokens": 5}
        }))
        .unwrap();
        assert!(matches!(r, InputRequest::CreateMessage(ref p) if p.max_tokens == 5));
        let err = serde_json::from_value::<InputRequest>(json!({"method": "ping"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"ping\""), "{err}");
        assert!(
            serde_json::from_value::<InputRequest>(json!({"method": "elicitation/create"}))
                .is_err()
        );
        assert!(serde_json::from_value::<ElicitRequest>(json!({"method": "roots/list"})).is_err());
    }

    #[test]
    fn responses_are_raw_with_typed_accessors() {
        let mut content = BTreeMap::new();
        content.insert("name".to_owned(), ElicitValue::String("octocat".into()));
        let r = InputResponses::new()
            .with("a", ElicitResult::accept(content))
            .with("b", ListRootsResult::default());
        assert_eq!(
            r.get("a"),
            Some(&json!({"action": "accept", "content": {"name": "octocat"}}))
        );
        assert!(r.elicit("a").unwrap().is_ok());
        assert!(r.list_roots("b").unwrap().is_ok());
        assert!(r.create_message("a").unwrap().is_err());
        assert!(r.elicit("zzz").is_none());
        assert!(
            !serde_json::to_string(&r).unwrap().contains("resultType"),
            "input responses are not Results"
        );
    }
}
