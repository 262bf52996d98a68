//! The top level of a JSON-RPC message read in one pass: the six members the classifier looks
//! at ([`Envelope`]), each as a [`Value`]. A message is classified without first becoming a
//! map of its whole object (an allocation, a hashed insert per member and a hashed removal per
//! member read back): the client reads every response this way. Every other member, and each
//! element of a batch, is still parsed in full and dropped, not skipped: skipping does not
//! check what it skips (a lone surrogate, a number out of range), and such a body must be
//! refused as malformed JSON exactly as by the full parse.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What a message is at its top level, as the classifier needs it.
pub(crate) enum Members {
    /// An object, by its envelope members.
    Object(Envelope),
    /// An array: a batch.
    Array,
    /// A string, number, boolean or `null`.
    Scalar,
}

/// The members of an object that make it a JSON-RPC message. A member given more than once
/// reads as its last occurrence, as in a full parse into a map.
#[derive(Debug, Default)]
pub(crate) struct Envelope {
    pub(crate) jsonrpc: Option<Value>,
    pub(crate) id: Option<Value>,
    pub(crate) method: Option<Value>,
    pub(crate) params: Option<Value>,
    pub(crate) result: Option<Value>,
    pub(crate) error: Option<Value>,
}

impl Members {
    /// The same reading of a value already parsed (its envelope members are taken out).
    pub(crate) fn of_value(value: Value) -> Self {
        match value {
            Value::Object(mut obj) => Self::Object(Envelope::take(&mut obj)),
            Value::Array(_) => Self::Array,
            _ => Self::Scalar,
        }
    }
}

impl Envelope {
    fn take(obj: &mut Map<String, Value>) -> Self {
        Self {
            jsonrpc: obj.remove("jsonrpc"),
            id: obj.remove("id"),
            method: obj.remove("method"),
            params: obj.remove("params"),
            result: obj.remove("result"),
            error: obj.remove("error"),
        }
    }
}

/// A member's name, as far as the classifier cares.
enum Key {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Key, E> {
                Ok(match name {
                    "jsonrpc" => Key::Jsonrpc,
                    "id" => Key::Id,
                    "method" => Key::Method,
                    "params" => Key::Params,
                    "result" => Key::Result,
                    "error" => Key::Error,
                    _ => Key::Other,
                })
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MembersVisitor)
    }
}

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Members;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
        let mut envelope = Envelope::default();
        while let Some(key) = map.next_key::<Key>()? {
            let slot = match key {
                Key::Jsonrpc => &mut envelope.jsonrpc,
                Key::Id => &mut envelope.id,
                Key::Method => &mut envelope.method,
                Key::Params => &mut envelope.params,
                Key::Result => &mut envelope.result,
                Key::Error => &mut envelope.error,
                Key::Other => {
                    map.next_value::<Value>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value()?);
        }
        Ok(Members::Object(envelope))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Members, A::Error> {
        while seq.next_element::<Value>()?.is_some() {}
        Ok(Members::Array)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Members, E> {
        Ok(Members::Scalar)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Members, E> {
        Ok(Members::Scalar)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Members, E> {
        Ok(Members::Scalar)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Members, E> {
        Ok(Members::Scalar)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Members, E> {
        Ok(Members::Scalar)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Members, E> {
        Ok(Members::Scalar)
    }
}
