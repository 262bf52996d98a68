//! Typed views of JSON-RPC messages (`basic/index.mdx` §Messages).
//!
//! [`TypedRequest<P>`], [`TypedNotification<P>`], [`TypedResultResponse<R>`] and
//! [`TypedErrorResponse`] carry typed params or results and always serialize with
//! `"jsonrpc": "2.0"`. Use `P = Option<X>` where the schema makes `params` optional; a `None`
//! is then omitted. They convert to and from the untyped [`crate::jsonrpc`] messages.

use serde::de::{self, DeserializeOwned, Deserializer};
use serde::ser::{self as ser_, SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::JSONRPC_VERSION;
use crate::error::ErrorObject;
use crate::jsonrpc::{ErrorResponse, Notification, Request, RequestId, ResultResponse};

/// A request with typed params.
#[derive(Debug, Clone, PartialEq)]
pub struct TypedRequest<P> {
    /// The request id.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The params.
    pub params: P,
}

/// A notification with typed params.
#[derive(Debug, Clone, PartialEq)]
pub struct TypedNotification<P> {
    /// The method name.
    pub method: String,
    /// The params.
    pub params: P,
}

/// A result response with a typed result.
#[derive(Debug, Clone, PartialEq)]
pub struct TypedResultResponse<R> {
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result.
    pub result: R,
}

/// An error response (the id is absent when the request's id could not be read).
#[derive(Debug, Clone, PartialEq)]
pub struct TypedErrorResponse {
    /// The id of the request this answers, when known.
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorObject,
}

fn take_envelope<E: de::Error>(value: Value) -> Result<Map<String, Value>, E> {
    let Value::Object(obj) = value else {
        return Err(E::custom("a JSON-RPC message must be an object"));
    };
    match obj.get("jsonrpc") {
        Some(Value::String(v)) if v == JSONRPC_VERSION => Ok(obj),
        _ => Err(E::custom("\"jsonrpc\" must be \"2.0\"")),
    }
}

fn take_id<E: de::Error>(obj: &mut Map<String, Value>) -> Result<RequestId, E> {
    let v = obj
        .remove("id")
        .ok_or_else(|| E::custom("missing \"id\""))?;
    RequestId::from_value(&v).ok_or_else(|| E::custom("\"id\" must be a string or a number"))
}

fn take_method<E: de::Error>(obj: &mut Map<String, Value>) -> Result<String, E> {
    match obj.remove("method") {
        Some(Value::String(m)) => Ok(m),
        _ => Err(E::custom("missing string \"method\"")),
    }
}

/// Params as JSON, or `None` when they serialize to `null` (an absent optional).
fn params_value<P: Serialize, E: ser_::Error>(params: &P) -> Result<Option<Value>, E> {
    match serde_json::to_value(params).map_err(E::custom)? {
        Value::Null => Ok(None),
        v => Ok(Some(v)),
    }
}

fn typed<T: DeserializeOwned, E: de::Error>(what: &str, value: Value) -> Result<T, E> {
    serde_json::from_value(value).map_err(|e| E::custom(format!("invalid {what}: {e}")))
}

impl<P: Serialize> Serialize for TypedRequest<P> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let params = params_value(&self.params)?;
        let mut s = serializer.serialize_struct("Request", 4)?;
        s.serialize_field("jsonrpc", JSONRPC_VERSION)?;
        s.serialize_field("id", &self.id)?;
        s.serialize_field("method", &self.method)?;
        if let Some(p) = params {
            s.serialize_field("params", &p)?;
        }
        s.end()
    }
}

impl<'de, P: DeserializeOwned> Deserialize<'de> for TypedRequest<P> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut obj = take_envelope(Value::deserialize(deserializer)?)?;
        let id = take_id(&mut obj)?;
        let method = take_method(&mut obj)?;
        let params = typed("params", obj.remove("params").unwrap_or(Value::Null))?;
        Ok(Self { id, method, params })
    }
}

impl<P: Serialize> Serialize for TypedNotification<P> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let params = params_value(&self.params)?;
        let mut s = serializer.serialize_struct("Notification", 3)?;
        s.serialize_field("jsonrpc", JSONRPC_VERSION)?;
        s.serialize_field("method", &self.method)?;
        if let Some(p) = params {
            s.serialize_field("params", &p)?;
        }
        s.end()
    }
}

impl<'de, P: DeserializeOwned> Deserialize<'de> for TypedNotification<P> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut obj = take_envelope(Value::deserialize(deserializer)?)?;
        if obj.contains_key("id") {
            return Err(de::Error::custom("a notification has no \"id\""));
        }
        let method = take_method(&mut obj)?;
        let params = typed("params", obj.remove("params").unwrap_or(Value::Null))?;
        Ok(Self { method, params })
    }
}

impl<R: Serialize> Serialize for TypedResultResponse<R> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("ResultResponse", 3)?;
        s.serialize_field("jsonrpc", JSONRPC_VERSION)?;
        s.serialize_field("id", &self.id)?;
        s.serialize_field("result", &self.result)?;
        s.end()
    }
}

impl<'de, R: DeserializeOwned> Deserialize<'de> for TypedResultResponse<R> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut obj = take_envelope(Value::deserialize(deserializer)?)?;
        let id = take_id(&mut obj)?;
        let result = obj
            .remove("result")
            .ok_or_else(|| de::Error::custom("missing \"result\""))?;
        Ok(Self {
            id,
            result: typed("result", result)?,
        })
    }
}

impl Serialize for TypedErrorResponse {
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

impl<'de> Deserialize<'de> for TypedErrorResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut obj = take_envelope(Value::deserialize(deserializer)?)?;
        let id = if obj.contains_key("id") {
            Some(take_id(&mut obj)?)
        } else {
            None
        };
        let error = obj
            .remove("error")
            .ok_or_else(|| de::Error::custom("missing \"error\""))?;
        Ok(Self {
            id,
            error: typed("error", error)?,
        })
    }
}

impl<P: DeserializeOwned> TypedRequest<P> {
    /// Reads the params of an untyped request.
    pub fn from_request(request: Request) -> Result<Self, serde_json::Error> {
        let params = serde_json::from_value(request.params.unwrap_or(Value::Null))?;
        Ok(Self {
            id: request.id,
            method: request.method,
            params,
        })
    }
}

impl<P: Serialize> TypedRequest<P> {
    /// A request.
    pub fn new(id: impl Into<RequestId>, method: impl Into<String>, params: P) -> Self {
        Self {
            id: id.into(),
            method: method.into(),
            params,
        }
    }

    /// The untyped request.
    pub fn into_request(self) -> Result<Request, serde_json::Error> {
        Ok(Request {
            id: self.id,
            method: self.method,
            params: params_value::<_, serde_json::Error>(&self.params)?,
        })
    }
}

impl<P: DeserializeOwned> TypedNotification<P> {
    /// Reads the params of an untyped notification.
    pub fn from_notification(n: Notification) -> Result<Self, serde_json::Error> {
        let params = serde_json::from_value(n.params.unwrap_or(Value::Null))?;
        Ok(Self {
            method: n.method,
            params,
        })
    }
}

impl<P: Serialize> TypedNotification<P> {
    /// A notification.
    pub fn new(method: impl Into<String>, params: P) -> Self {
        Self {
            method: method.into(),
            params,
        }
    }

    /// The untyped notification.
    pub fn into_notification(self) -> Result<Notification, serde_json::Error> {
        Ok(Notification {
            method: self.method,
            params: params_value::<_, serde_json::Error>(&self.params)?,
        })
    }
}

impl<R: DeserializeOwned> TypedResultResponse<R> {
    /// Reads the result of an untyped response.
    pub fn from_response(r: ResultResponse) -> Result<Self, serde_json::Error> {
        Ok(Self {
            id: r.id,
            result: serde_json::from_value(r.result)?,
        })
    }
}

impl<R: Serialize> TypedResultResponse<R> {
    /// A response.
    pub fn new(id: RequestId, result: R) -> Self {
        Self { id, result }
    }

    /// The untyped response.
    pub fn into_response(self) -> Result<ResultResponse, serde_json::Error> {
        Ok(ResultResponse {
            id: self.id,
            result: serde_json::to_value(&self.result)?,
        })
    }
}

impl From<ErrorResponse> for TypedErrorResponse {
    fn from(e: ErrorResponse) -> Self {
        Self {
            id: e.id,
            error: e.error,
        }
    }
}

impl From<TypedErrorResponse> for ErrorResponse {
    fn from(e: TypedErrorResponse) -> Self {
        Self {
            id: e.id,
            error: e.error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::basic::NotificationParams;
    use crate::server::tools::CallToolRequestParams;
    use serde_json::json;

    #[test]
    fn ids_keep_their_type_through_typed_views() {
        for id in [json!(1), json!("1"), json!(-9)] {
            let v = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "t"}});
            let r: TypedRequest<CallToolRequestParams> = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(serde_json::to_value(&r).unwrap(), v);
            let back = r.into_request().unwrap();
            assert_eq!(back.id.to_value(), id);
        }
    }

    #[test]
    fn optional_params_are_omitted() {
        let n = TypedNotification::<Option<NotificationParams>>::new(
            "notifications/tools/list_changed",
            None,
        );
        assert_eq!(
            serde_json::to_value(&n).unwrap(),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        );
        let back: TypedNotification<Option<NotificationParams>> =
            serde_json::from_value(serde_json::to_value(&n).unwrap()).unwrap();
        assert_eq!(back, n);
    }

    #[test]
    fn envelope_errors_are_reported() {
        assert!(
            serde_json::from_value::<TypedRequest<Value>>(json!({"id": 1, "method": "m"})).is_err()
        );
        assert!(
            serde_json::from_value::<TypedRequest<CallToolRequestParams>>(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"})
            )
            .is_err()
        );
        let e: TypedErrorResponse = serde_json::from_value(
            json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "x"}}),
        )
        .unwrap();
        assert_eq!(e.id, None);
    }
}
