//! The top level of a JSON-RPC message read in one pass: the six members the classifier looks
//! at ([`Envelope`]), each as a [`Value`] but `result`, which is read as `R` (a [`Value`], or
//! its raw text for a reader that decodes it into its own type). A message is classified
//! without first becoming a map of its whole object (an allocation, a hashed insert per member
//! and a hashed removal per member read back): the client reads every response this way.
//! Every other member, and each element of a batch, is still parsed in full and dropped, not
//! skipped: skipping does not check what it skips (a lone surrogate, a number out of range),
//! and such a body must be refused as malformed JSON exactly as by the full parse. A result
//! kept as text is checked that way when it is decoded.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What a message is at its top level, as the classifier needs it.
pub(crate) enum Members<R = Value> {
    /// An object, by its envelope members.
    Object(Envelope<R>),
    /// An array: a batch.
    Array,
    /// A string, number, boolean or `null`.
    Scalar,
}

/// The members of an object that make it a JSON-RPC message. A member given more than once
/// reads as its last occurrence, as in a full parse into a map.
#[derive(Debug)]
pub(crate) struct Envelope<R = Value> {
    pub(crate) jsonrpc: Option<Value>,
    pub(crate) id: Option<Value>,
    pub(crate) method: Option<Value>,
    pub(crate) params: Option<Value>,
    pub(crate) result: Option<R>,
    pub(crate) error: Option<Value>,
}

impl<R> Default for Envelope<R> {
    fn default() -> Self {
        Self {
            jsonrpc: None,
            id: None,
            method: None,
            params: None,
            result: None,
            error: None,
        }
    }
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

impl<'de, R: Deserialize<'de>> Deserialize<'de> for Members<R> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MembersVisitor(PhantomData))
    }
}

struct MembersVisitor<R>(PhantomData<R>);

impl<'de, R: Deserialize<'de>> Visitor<'de> for MembersVisitor<R> {
    type Value = Members<R>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<R>, A::Error> {
        let mut envelope = Envelope::default();
        while let Some(key) = map.next_key::<Key>()? {
            let slot = match key {
                Key::Jsonrpc => &mut envelope.jsonrpc,
                Key::Id => &mut envelope.id,
                Key::Method => &mut envelope.method,
                Key::Params => &mut envelope.params,
                Key::Result => {
                    envelope.result = Some(map.next_value()?);
                    continue;
                }
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

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Members<R>, A::Error> {
        while seq.next_element::<Value>()?.is_some() {}
        Ok(Members::Array)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Members<R>, E> {
        Ok(Members::Scalar)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Members<R>, E> {
        Ok(Members::Scalar)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Members<R>, E> {
        Ok(Members::Scalar)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Members<R>, E> {
        Ok(Members::Scalar)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Members<R>, E> {
        Ok(Members::Scalar)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Members<R>, E> {
        Ok(Members::Scalar)
    }
}
