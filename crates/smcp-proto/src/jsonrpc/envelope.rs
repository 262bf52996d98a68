//! The JSON-RPC 2.0 envelope itself: [`Request`], [`Notification`], [`ResultResponse`],
//! [`ErrorResponse`], and [`Message`], which classifies a body into one of them. Re-exported by
//! [`crate::jsonrpc`]; a file of its own so that the typed messages ([`crate::messages`]) and the
//! typed reader ([`super::incoming`]) build on it without naming the module that names them.

use serde::de::{self, DeserializeOwned, Deserializer};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::id::RequestId;
use super::members::{Envelope, Members};
use crate::JSONRPC_VERSION;
use crate::error::ErrorObject;

/// A JSON-RPC request: it has an id and expects a response.
///
/// `P` is the type of `params`: [`Value`] for an untyped request, or a typed params struct
/// (see [`crate::messages`]). `params` is absent when `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct Request<P = Value> {
    /// The request id.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The parameters (an object in MCP; every MCP request carries `params._meta`).
    pub params: Option<P>,
}

/// A JSON-RPC notification: no id, no response.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification<P = Value> {
    /// The method name.
    pub method: String,
    /// The parameters.
    pub params: Option<P>,
}

/// A successful JSON-RPC response.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultResponse<R = Value> {
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result object.
    pub result: R,
}

/// A JSON-RPC error response. The id is absent when the request's id could not be read.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorResponse {
    /// The id of the request this answers, when known.
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorObject,
}

/// Any single JSON-RPC message.
///
/// `R` is how a result response's `result` is held: a [`Value`] by default, or its text as
/// sent ([`RawResult`], from [`Message::from_slice_raw`]) for a reader that decodes it into its
/// own type in one step.
#[derive(Debug, Clone, PartialEq)]
pub enum Message<R = Value> {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A result response.
    Result(ResultResponse<R>),
    /// An error response.
    Error(ErrorResponse),
}

/// A result as the text it was sent as ([`Message::from_slice_raw`]): its JSON syntax checked,
/// its strings and numbers checked when it is decoded.
pub type RawResult = Box<serde_json::value::RawValue>;

/// Why a body is not a single JSON-RPC message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Not JSON at all (−32700).
    #[error("parse error: {0}")]
    Json(String),
    /// JSON, but not a valid JSON-RPC 2.0 message (−32600). `id` is the request id when it
    /// could be read, so the error response can echo it.
    #[error("invalid request: {reason}")]
    Invalid {
        /// What is wrong, naming the member.
        reason: String,
        /// The id, when the body had a usable one.
        id: Option<RequestId>,
    },
}

impl ParseError {
    fn invalid(reason: impl Into<String>, id: Option<RequestId>) -> Self {
        Self::Invalid {
            reason: reason.into(),
            id,
        }
    }

    /// The id to echo in the error response, if any.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Self::Json(_) => None,
            Self::Invalid { id, .. } => id.as_ref(),
        }
    }

    /// The JSON-RPC error object for this failure.
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            Self::Json(msg) => ErrorObject::parse_error(format!("Parse error: {msg}")),
            Self::Invalid { reason, .. } => {
                ErrorObject::invalid_request(format!("Invalid request: {reason}"))
            }
        }
    }
}

impl Message {
    /// Parses one JSON-RPC message from bytes, reading the object's members in one pass
    /// ([`super::members`]): only the envelope's own become values.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, ParseError> {
        let members: Members =
            serde_json::from_slice(bytes).map_err(|e| ParseError::Json(e.to_string()))?;
        Self::classify(members)
    }

    /// Classifies a JSON value as one JSON-RPC message.
    pub fn from_value(value: Value) -> Result<Self, ParseError> {
        Self::classify(Members::of_value(value))
    }

    /// Serializes the message to JSON bytes.
    pub fn to_vec(&self) -> Vec<u8> {
        // Serializing these types cannot fail: every member is plain JSON.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

impl Message<RawResult> {
    /// [`Message::from_slice`], with a result response's `result` kept as its text: read by a
    /// client that decodes each result straight into its type, without a [`Value`] between.
    /// The rest of the message is read and checked as by [`Message::from_slice`].
    pub fn from_slice_raw(bytes: &[u8]) -> Result<Self, ParseError> {
        let members: Members<RawResult> =
            serde_json::from_slice(bytes).map_err(|e| ParseError::Json(e.to_string()))?;
        Self::classify(members)
    }
}

impl<R> Message<R> {
    /// The message the top level of a body makes, or exactly why it makes none.
    fn classify(members: Members<R>) -> Result<Self, ParseError> {
        let envelope = match members {
            Members::Object(envelope) => envelope,
            Members::Array => {
                return Err(ParseError::invalid(
                    "batches are not supported: the body must be a single JSON-RPC object",
                    None,
                ));
            }
            Members::Scalar => {
                return Err(ParseError::invalid(
                    "the body must be a JSON-RPC object",
                    None,
                ));
            }
        };
        let Envelope {
            jsonrpc,
            id: raw_id,
            method,
            params,
            result,
            error,
        } = envelope;
        let id = match &raw_id {
            None => None,
            Some(v) => match RequestId::from_value(v) {
                Some(id) => Some(id),
                None => {
                    return Err(ParseError::invalid(
                        "\"id\" must be a string or an integer (null is not allowed)",
                        None,
                    ));
                }
            },
        };
        match jsonrpc {
            Some(Value::String(v)) if v == JSONRPC_VERSION => {}
            Some(_) => return Err(ParseError::invalid("\"jsonrpc\" must be \"2.0\"", id)),
            None => return Err(ParseError::invalid("\"jsonrpc\" is missing", id)),
        }
        if let Some(method) = method {
            let Value::String(method) = method else {
                return Err(ParseError::invalid("\"method\" must be a string", id));
            };
            if let Some(p) = &params
                && !p.is_object()
            {
                return Err(ParseError::invalid("\"params\" must be an object", id));
            }
            return Ok(match id {
                Some(id) => Self::Request(Request { id, method, params }),
                None => Self::Notification(Notification { method, params }),
            });
        }
        match (result, error) {
            (Some(result), None) => match id {
                Some(id) => Ok(Self::Result(ResultResponse { id, result })),
                None => Err(ParseError::invalid(
                    "a result response needs an \"id\"",
                    None,
                )),
            },
            (None, Some(error)) => {
                let error: ErrorObject = serde_json::from_value(error).map_err(|e| {
                    ParseError::invalid(format!("malformed \"error\": {e}"), id.clone())
                })?;
                Ok(Self::Error(ErrorResponse { id, error }))
            }
            (Some(_), Some(_)) => Err(ParseError::invalid(
                "a response cannot carry both \"result\" and \"error\"",
                id,
            )),
            (None, None) => Err(ParseError::invalid(
                "the object has neither \"method\", \"result\" nor \"error\"",
                id,
            )),
        }
    }
}

impl<P: Serialize> Serialize for Request<P> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Request", 4)?;
        s.serialize_field("jsonrpc", JSONRPC_VERSION)?;
        s.serialize_field("id", &self.id)?;
        s.serialize_field("method", &self.method)?;
        if let Some(p) = &self.params {
            s.serialize_field("params", p)?;
        }
        s.end()
    }
}

impl<P: Serialize> Serialize for Notification<P> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Notification", 3)?;
        s.serialize_field("jsonrpc", JSONRPC_VERSION)?;
        s.serialize_field("method", &self.method)?;
        if let Some(p) = &self.params {
            s.serialize_field("params", p)?;
        }
        s.end()
    }
}

impl<R: Serialize> Serialize for ResultResponse<R> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("ResultResponse", 3)?;
        s.serialize_field("jsonrpc", JSONRPC_VERSION)?;
        s.serialize_field("id", &self.id)?;
        s.serialize_field("result", &self.result)?;
        s.end()
    }
}

impl Serialize for ErrorResponse {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("ErrorResponse", 3)?;
        s.serialize_field("jsonrpc", JSONRPC_VERSION)?;
        if let Some(id) = &self.id {
            s.serialize_field("id", id)?;
        }
        s.serialize_field("error", &self.error)?;
        s.end()
    }
}

impl<R: Serialize> Serialize for Message<R> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Request(m) => m.serialize(serializer),
            Self::Notification(m) => m.serialize(serializer),
            Self::Result(m) => m.serialize(serializer),
            Self::Error(m) => m.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        classify(deserializer)
    }
}

/// Builds a notification with `params` from a JSON object.
pub fn notification(method: &str, params: Map<String, Value>) -> Notification {
    Notification {
        method: method.to_owned(),
        params: Some(Value::Object(params)),
    }
}

/// Reads `params` (or a result) of type `T` from its JSON value; the error names `what`.
fn typed<T: DeserializeOwned, E: de::Error>(what: &str, value: Value) -> Result<T, E> {
    serde_json::from_value(value).map_err(|e| E::custom(format!("invalid {what}: {e}")))
}

/// `params` absent or `null` is `None`.
fn typed_params<P: DeserializeOwned, E: de::Error>(params: Option<Value>) -> Result<Option<P>, E> {
    match params {
        None | Some(Value::Null) => Ok(None),
        Some(v) => typed("params", v).map(Some),
    }
}

fn classify<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Message, D::Error> {
    Message::classify(Members::deserialize(deserializer)?).map_err(de::Error::custom)
}

impl<'de, P: DeserializeOwned> Deserialize<'de> for Request<P> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match classify(deserializer)? {
            Message::Request(r) => Ok(Self {
                id: r.id,
                method: r.method,
                params: typed_params(r.params)?,
            }),
            _ => Err(de::Error::custom("not a JSON-RPC request")),
        }
    }
}

impl<'de, P: DeserializeOwned> Deserialize<'de> for Notification<P> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match classify(deserializer)? {
            Message::Notification(n) => Ok(Self {
                method: n.method,
                params: typed_params(n.params)?,
            }),
            _ => Err(de::Error::custom("not a JSON-RPC notification")),
        }
    }
}

impl<'de, R: DeserializeOwned> Deserialize<'de> for ResultResponse<R> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match classify(deserializer)? {
            Message::Result(r) => Ok(Self {
                id: r.id,
                result: typed("result", r.result)?,
            }),
            _ => Err(de::Error::custom("not a JSON-RPC result response")),
        }
    }
}

impl<'de> Deserialize<'de> for ErrorResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match classify(deserializer)? {
            Message::Error(e) => Ok(e),
            _ => Err(de::Error::custom("not a JSON-RPC error response")),
        }
    }
}

impl Request {
    /// The same request with params of type `P` (absent or `null` params are `None`).
    pub fn typed<P: DeserializeOwned>(self) -> Result<Request<P>, serde_json::Error> {
        Ok(Request {
            id: self.id,
            method: self.method,
            params: typed_params(self.params)?,
        })
    }
}

impl<P: Serialize> Request<P> {
    /// A request.
    pub fn new(id: impl Into<RequestId>, method: impl Into<String>, params: P) -> Self {
        Self {
            id: id.into(),
            method: method.into(),
            params: Some(params),
        }
    }

    /// The same request with untyped params.
    pub fn untyped(self) -> Result<Request, serde_json::Error> {
        Ok(Request {
            id: self.id,
            method: self.method,
            params: self.params.map(serde_json::to_value).transpose()?,
        })
    }
}

impl Notification {
    /// The same notification with params of type `P`.
    pub fn typed<P: DeserializeOwned>(self) -> Result<Notification<P>, serde_json::Error> {
        Ok(Notification {
            method: self.method,
            params: typed_params(self.params)?,
        })
    }
}

impl<P: Serialize> Notification<P> {
    /// A notification.
    pub fn new(method: impl Into<String>, params: Option<P>) -> Self {
        Self {
            method: method.into(),
            params,
        }
    }

    /// The same notification with untyped params.
    pub fn untyped(self) -> Result<Notification, serde_json::Error> {
        Ok(Notification {
            method: self.method,
            params: self.params.map(serde_json::to_value).transpose()?,
        })
    }
}

impl ResultResponse {
    /// The same response with a result of type `R`.
    pub fn typed<R: DeserializeOwned>(self) -> Result<ResultResponse<R>, serde_json::Error> {
        Ok(ResultResponse {
            id: self.id,
            result: serde_json::from_value(self.result)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<Message, ParseError> {
        Message::from_value(v)
    }

    #[test]
    fn ids_keep_their_type() {
        for id in [json!(1), json!("1"), json!(9007199254740993u64), json!(-4)] {
            let m =
                parse(json!({"jsonrpc":"2.0","id":id,"method":"tools/list","params":{}})).unwrap();
            let back = serde_json::to_value(&m).unwrap();
            assert_eq!(back["id"], id);
        }
    }

    #[test]
    fn classifies_all_four_shapes() {
        assert!(matches!(
            parse(json!({"jsonrpc":"2.0","id":1,"method":"m"})).unwrap(),
            Message::Request(_)
        ));
        assert!(matches!(
            parse(json!({"jsonrpc":"2.0","method":"m"})).unwrap(),
            Message::Notification(_)
        ));
        assert!(matches!(
            parse(json!({"jsonrpc":"2.0","id":"a","result":{}})).unwrap(),
            Message::Result(_)
        ));
        assert!(matches!(
            parse(json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}})),
            Err(ParseError::Invalid { .. })
        ));
        assert!(matches!(
            parse(json!({"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}})).unwrap(),
            Message::Error(ErrorResponse { id: None, .. })
        ));
    }

    /// The one-pass read of a body and the classification of its parsed value agree on every
    /// shape, valid or not: repeated members (the last counts), escaped names, members that
    /// are not the envelope's, every kind of top level, and JSON that does not parse.
    /// Bodies of every shape, well and badly formed.
    const BODIES: &[&str] = &[
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,{"b":null}]}}"#,
        r#"{"jsonrpc":"2.0","method":"n"}"#,
        r#"{"jsonrpc":"2.0","id":"s","result":{"x":1},"extra":{"deep":[1,2,{"y":"z"}]}}"#,
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no","data":[1]}}"#,
        r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"id":"two","result":{}}"#,
        r#"{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"result":[]}"#,
        r#"{"json\u0072pc":"2.0","\u0069d":3,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
        r#"{"jsonrpc":"2.0","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":"p"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":["m"]}"#,
        r#"{"jsonrpc":2,"id":1,"method":"m"}"#,
        r#"{"id":1,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
        r#"{}"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#,
        r#"[]"#,
        r#""text""#,
        r#"12"#,
        r#"-3.5"#,
        r#"true"#,
        r#"null"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m""#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m"} trailing"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"\ud800"}"#,
        r#"{"jsonrpc":"2.0","id":1,"other":[1,2,}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"other":"\udc00"}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"other":1e400}"#,
        r#"[1e400]"#,
        "",
    ];

    #[test]
    fn reading_bytes_and_classifying_a_value_agree() {
        for body in BODIES {
            let read = Message::from_slice(body.as_bytes());
            let classified = serde_json::from_slice::<Value>(body.as_bytes())
                .map_err(|e| ParseError::Json(e.to_string()))
                .and_then(Message::from_value);
            assert_eq!(read, classified, "{body}");
        }
    }

    #[test]
    fn a_result_read_as_text_decodes_to_what_the_full_read_gives() {
        for body in BODIES {
            let read = Message::from_slice(body.as_bytes());
            let raw = Message::from_slice_raw(body.as_bytes()).map(|m| match m {
                Message::Result(r) => Message::Result(ResultResponse {
                    id: r.id,
                    result: serde_json::from_str::<Value>(r.result.get())
                        .expect("the text of a result is JSON"),
                }),
                Message::Request(r) => Message::Request(r),
                Message::Notification(n) => Message::Notification(n),
                Message::Error(e) => Message::Error(e),
            });
            assert_eq!(raw, read, "{body}");
        }
        // What the text is checked for only when it is decoded: the full read refuses these.
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"t":"\ud800"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"n":1e400}}"#,
        ] {
            assert!(Message::from_slice(body.as_bytes()).is_err(), "{body}");
            let Ok(Message::Result(r)) = Message::from_slice_raw(body.as_bytes()) else {
                panic!("{body}: read as a result");
            };
            assert!(
                serde_json::from_str::<Value>(r.result.get()).is_err(),
                "{body}"
            );
        }
    }

    #[test]
    fn rejects_with_precise_reasons() {
        assert!(matches!(
            Message::from_slice(b"{"),
            Err(ParseError::Json(_))
        ));
        let cases = [
            (json!([]), "batches"),
            (json!("x"), "JSON-RPC object"),
            (json!({"jsonrpc":"1.0","id":1,"method":"m"}), "\"jsonrpc\""),
            (json!({"id":1,"method":"m"}), "\"jsonrpc\" is missing"),
            (json!({"jsonrpc":"2.0","id":1,"method":5}), "\"method\""),
            (
                json!({"jsonrpc":"2.0","id":1,"method":"m","params":[1]}),
                "\"params\"",
            ),
            (json!({"jsonrpc":"2.0","id":true,"method":"m"}), "\"id\""),
            (json!({"jsonrpc":"2.0","id":1}), "neither"),
        ];
        for (body, needle) in cases {
            match parse(body.clone()) {
                Err(ParseError::Invalid { reason, .. }) => {
                    assert!(reason.contains(needle), "{body}: {reason}");
                }
                other => panic!("{body}: {other:?}"),
            }
        }
    }

    #[test]
    fn invalid_request_keeps_a_readable_id() {
        let err = parse(json!({"jsonrpc":"2.0","id":7,"method":3})).unwrap_err();
        assert_eq!(err.id(), Some(&RequestId::from(7)));
    }

    #[test]
    fn error_response_serializes_without_id_when_unknown() {
        let m: Message = Message::Error(ErrorResponse {
            id: None,
            error: ErrorObject::parse_error("Parse error"),
        });
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            json!({"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}})
        );
    }

    #[test]
    fn ids_keep_their_type_through_typed_views() {
        use crate::server::tools::CallToolRequestParams;
        for id in [json!(1), json!("1"), json!(-9)] {
            let v = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "t"}});
            let r: Request<CallToolRequestParams> = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(serde_json::to_value(&r).unwrap(), v);
            let back = r.untyped().unwrap();
            assert_eq!(back.id.to_value(), id);
            assert_eq!(
                back.typed::<CallToolRequestParams>()
                    .unwrap()
                    .params
                    .unwrap()
                    .name,
                "t"
            );
        }
    }

    #[test]
    fn absent_params_are_none_and_omitted() {
        use crate::basic::NotificationParams;
        let n = Notification::<NotificationParams>::new("notifications/tools/list_changed", None);
        let v = serde_json::to_value(&n).unwrap();
        assert_eq!(
            v,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        );
        let back: Notification<NotificationParams> = serde_json::from_value(v).unwrap();
        assert_eq!(back, n);
    }

    #[test]
    fn typed_views_report_envelope_and_params_errors() {
        use crate::server::tools::CallToolRequestParams;
        assert!(serde_json::from_value::<Request>(json!({"id": 1, "method": "m"})).is_err());
        assert!(
            serde_json::from_value::<Request<CallToolRequestParams>>(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}})
            )
            .is_err(),
            "params without the required name"
        );
        assert!(
            serde_json::from_value::<Request>(json!({"jsonrpc": "2.0", "method": "n"})).is_err(),
            "a notification is not a request"
        );
        let e: ErrorResponse = serde_json::from_value(
            json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "x"}}),
        )
        .unwrap();
        assert_eq!(e.id, None);
    }
}
