//! Reading a result: its `resultType`, what a call that may need input ended with, the typed
//! decode, the call timeout, and the JSON object arguments of the typed methods.

use std::time::Duration;

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use smcp_proto::ext::tasks::{self, CreateTaskResult};
use smcp_proto::jsonrpc::RawResult;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Kind, Result};

/// How a result ended ([`result_kind`]).
pub(crate) enum ResultKind {
    Complete,
    InputRequired,
    Task,
}

/// How a result ended, from its `resultType` (A5 item 54; `"task"` from SEP-2663), read from
/// the result's text: only that member is decoded, every other one is skipped.
pub(crate) fn result_kind(result: &RawValue) -> Result<ResultKind> {
    if let Some(kind) = leading_kind(result.get()) {
        return Ok(kind);
    }
    let read = serde_json::from_str(result.get())
        .map_err(|e| Error::protocol(format!("the result is not valid JSON: {e}")))?;
    let TypeOf::Object(result_type) = read else {
        return Err(Error::protocol("the result is not a JSON object"));
    };
    match result_type {
        None => Ok(ResultKind::Complete),
        Some(Value::String(s)) if s == "complete" => Ok(ResultKind::Complete),
        Some(Value::String(s)) if s == "input_required" => Ok(ResultKind::InputRequired),
        Some(Value::String(s)) if s == tasks::RESULT_TYPE_TASK => Ok(ResultKind::Task),
        Some(other) => Err(Error::protocol(format!(
            "unknown resultType {other} (this client understands \"complete\", \"input_required\" \
             and \"task\")"
        ))),
    }
}

/// The kind of a result written as most servers write one: `resultType` its first member, in
/// compact JSON, with one of the values this client knows, and named nowhere else in the text
/// (so not given twice). `None` for anything else, which the full scan reads.
fn leading_kind(text: &str) -> Option<ResultKind> {
    const NAME: &str = "\"resultType\"";
    let value = text
        .strip_prefix('{')?
        .strip_prefix(NAME)?
        .strip_prefix(':')?;
    let (kind, rest) = [
        ("\"complete\"", ResultKind::Complete),
        ("\"input_required\"", ResultKind::InputRequired),
        ("\"task\"", ResultKind::Task),
    ]
    .into_iter()
    .find_map(|(spelled, kind)| value.strip_prefix(spelled).map(|rest| (kind, rest)))?;
    let after = rest.bytes().next()?;
    (matches!(after, b',' | b'}') && !rest.contains(NAME)).then_some(kind)
}

/// A result's `resultType` as read by [`result_kind`]. A member given twice reads as its
/// last, as in a full parse.
enum TypeOf {
    /// The result is not an object.
    NotAnObject,
    /// An object, with its `resultType` if it has one.
    Object(Option<Value>),
}

/// Whether a member's name is `resultType`.
struct IsResultType(bool);

impl<'de> Deserialize<'de> for IsResultType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = IsResultType;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> std::result::Result<IsResultType, E> {
                Ok(IsResultType(name == "resultType"))
            }
        }
        deserializer.deserialize_identifier(Name)
    }
}

impl<'de> Deserialize<'de> for TypeOf {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = TypeOf;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<TypeOf, A::Error> {
                let mut result_type = None;
                while let Some(IsResultType(is)) = map.next_key()? {
                    if is {
                        result_type = Some(map.next_value::<Value>()?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(TypeOf::Object(result_type))
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<TypeOf, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(TypeOf::NotAnObject)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<TypeOf, E> {
                Ok(TypeOf::NotAnObject)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> std::result::Result<TypeOf, E> {
                Ok(TypeOf::NotAnObject)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> std::result::Result<TypeOf, E> {
                Ok(TypeOf::NotAnObject)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<TypeOf, E> {
                Ok(TypeOf::NotAnObject)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> std::result::Result<TypeOf, E> {
                Ok(TypeOf::NotAnObject)
            }
            fn visit_unit<E: de::Error>(self) -> std::result::Result<TypeOf, E> {
                Ok(TypeOf::NotAnObject)
            }
        }
        deserializer.deserialize_any(Members)
    }
}

/// The error for a `CreateTaskResult` where none may come (SEP-2663 §Capability Negotiation:
/// an invalid response).
pub(super) fn unexpected_task(method_name: &str, declared: bool) -> Error {
    if declared {
        Error::protocol(format!(
            "{method_name} returned a CreateTaskResult (resultType \"task\"), but only tools/call \
             supports tasks: invalid response"
        ))
    } else {
        Error::protocol(format!(
            "{method_name} returned a CreateTaskResult (resultType \"task\") although this request \
             did not declare the {} extension: invalid response",
            tasks::EXTENSION_ID
        ))
    }
}

/// What a request that may need input ended with.
pub(crate) enum Reply {
    /// The method's own result, as sent.
    Complete(RawResult),
    /// A task to follow (`tools/call` with the tasks extension declared).
    Task(CreateTaskResult),
}

impl Reply {
    /// The result of a method that cannot return a task (already refused upstream).
    pub(crate) fn complete(self, method_name: &str) -> Result<RawResult> {
        match self {
            Self::Complete(v) => Ok(v),
            Self::Task(_) => Err(unexpected_task(method_name, true)),
        }
    }
}

/// Decodes a result from its text into its typed form; a mismatch is the server's fault.
pub(crate) fn decode<T: DeserializeOwned>(method_name: &str, result: &RawValue) -> Result<T> {
    serde_json::from_str(result.get())
        .map_err(|e| Error::protocol(format!("malformed {method_name} result: {e}")))
}

/// [`decode`] of a result already a [`Value`] (one carried inside another message).
pub(crate) fn decode_value<T: DeserializeOwned>(method_name: &str, value: Value) -> Result<T> {
    serde_json::from_value(value)
        .map_err(|e| Error::protocol(format!("malformed {method_name} result: {e}")))
}

/// Runs `fut` under the call's timeout.
///
/// `fut` goes into a box first, so the future returned stays small however large `fut` is: a
/// request's future holds a transport's, and each caller that held it inline would carry (and
/// copy on every move) all of it again. Callers pass the request's future straight in, not
/// through a local, which would keep its own slot for it across the `await`.
pub(crate) fn with_timeout<T>(
    timeout: Option<Duration>,
    fut: impl Future<Output = Result<T>>,
) -> impl Future<Output = Result<T>> {
    let fut = Box::pin(fut);
    async move {
        match timeout {
            None => fut.await,
            Some(d) => tokio::time::timeout(d, fut)
                .await
                .unwrap_or_else(|_| Err(Error::new(Kind::Timeout(d)))),
        }
    }
}

/// [`with_timeout`], ended early with [`Kind::Cancelled`] when `cancel` fires.
pub(crate) fn within<T>(
    timeout: Option<Duration>,
    cancel: Option<CancellationToken>,
    fut: impl Future<Output = Result<T>>,
) -> impl Future<Output = Result<T>> {
    let bounded = with_timeout(timeout, fut);
    async move {
        match cancel {
            None => bounded.await,
            Some(token) => tokio::select! {
                r = bounded => r,
                () = token.cancelled() => Err(Error::new(Kind::Cancelled)),
            },
        }
    }
}

/// Makes a JSON object of `value`: an object as is, `null` as empty, anything else an error.
pub(crate) fn object_arg(what: &str, value: Value) -> Result<Map<String, Value>> {
    match value {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(Map::new()),
        other => Err(Error::config(format!(
            "{what} must be a JSON object, got {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> Result<ResultKind> {
        result_kind(&RawValue::from_string(text.to_owned()).unwrap())
    }

    #[test]
    fn the_kind_is_read_from_the_result_text_alone() {
        for (text, complete, input, task) in [
            (r#"{"content":[]}"#, true, false, false),
            (
                r#"{"resultType":"complete","content":[{"a":[1,{"b":"\n"}]}]}"#,
                true,
                false,
                false,
            ),
            (
                r#"{"x":{"resultType":"task"},"resultType":"input_required"}"#,
                false,
                true,
                false,
            ),
            (r#"{"resultType":"task","task":{}}"#, false, false, true),
            // A member given twice reads as its last, as in a full parse.
            (
                r#"{"resultType":"task","resultType":"complete"}"#,
                true,
                false,
                false,
            ),
            (
                r#"{"resultType":"input_required","inputRequests":{}}"#,
                false,
                true,
                false,
            ),
            (r#"{ "resultType": "task" }"#, false, false, true),
            (
                r#"{"resultType":"complete","x":"resultType"}"#,
                true,
                false,
                false,
            ),
        ] {
            let k = kind(text).unwrap();
            assert_eq!(matches!(k, ResultKind::Complete), complete, "{text}");
            assert_eq!(matches!(k, ResultKind::InputRequired), input, "{text}");
            assert_eq!(matches!(k, ResultKind::Task), task, "{text}");
        }
        for (text, says) in [
            (r#"[{"resultType":"complete"}]"#, "not a JSON object"),
            (r#""complete""#, "not a JSON object"),
            ("null", "not a JSON object"),
            (r#"{"resultType":"done"}"#, "unknown resultType \"done\""),
            (r#"{"resultType":1}"#, "unknown resultType 1"),
            (
                r#"{"resultType":"completed"}"#,
                "unknown resultType \"completed\"",
            ),
        ] {
            let e = kind(text).err().unwrap().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn the_leading_kind_is_taken_only_where_the_scan_agrees() {
        let texts = [
            r#"{"resultType":"complete"}"#,
            r#"{"resultType":"complete","content":[]}"#,
            r#"{"resultType":"task","task":{"taskId":"t"}}"#,
            r#"{"resultType":"input_required","requestState":"s"}"#,
            r#"{"resultType":"complete","resultType":"task"}"#,
            r#"{"resultType":"complete","a":{"resultType":"task"}}"#,
            r#"{"resultType":"complete" ,"a":1}"#,
            r#"{"resultType":"complete\u0000"}"#,
            r#"{"resultType":"task"}  "#,
        ];
        let mut taken = 0;
        for text in texts {
            let Some(fast) = leading_kind(text) else {
                continue;
            };
            taken += 1;
            let TypeOf::Object(Some(Value::String(scanned))) =
                serde_json::from_str::<TypeOf>(text).unwrap()
            else {
                panic!("{text}: no resultType read");
            };
            let fast = match fast {
                ResultKind::Complete => "complete",
                ResultKind::InputRequired => "input_required",
                ResultKind::Task => "task",
            };
            assert_eq!(fast, scanned, "{text}");
        }
        assert_eq!(taken, 5, "the compact, single forms");
    }

    #[test]
    fn a_result_decodes_from_its_text_and_a_mismatch_names_the_method() {
        let raw =
            RawValue::from_string(r#"{"content":[{"type":"text","text":"hi"}]}"#.into()).unwrap();
        let r: smcp_proto::server::tools::CallToolResult = decode("tools/call", &raw).unwrap();
        assert_eq!(r.content[0].as_text(), Some("hi"));
        let e = decode::<smcp_proto::server::tools::CallToolResult>(
            "tools/call",
            &RawValue::from_string(r#"{"content":7}"#.into()).unwrap(),
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("malformed tools/call result"), "{e}");
    }
}
