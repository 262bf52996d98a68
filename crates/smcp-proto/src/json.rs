//! The JSON helpers every wire type shares: [`JsonObject`], the string-enum generator that
//! keeps unknown values, integral numbers written as integers, and the readers for
//! hand-written `Deserialize` impls. A leaf: the wire-type files (`basic`, `capabilities`, the
//! features) import it, so none of them needs another to read JSON.

use serde::Deserialize;
use serde::de;
use serde_json::{Map, Value};

/// A JSON object (`schema.ts` `JSONObject`), kept verbatim.
pub type JsonObject = Map<String, Value>;

/// Generates a string enum with known values plus `Other(String)` for forward compatibility.
macro_rules! open_string_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $variant:ident = $wire:literal,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vm])* $variant,)*
            /// A value this crate does not know, kept verbatim.
            Other(String),
        }

        impl $name {
            /// The wire string.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $wire,)*
                    Self::Other(s) => s,
                }
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $($wire => Self::$variant,)*
                    other => Self::Other(other.to_owned()),
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s = <String as ::serde::Deserialize>::deserialize(deserializer)?;
                Ok(Self::from(s.as_str()))
            }
        }
    };
}
pub(crate) use open_string_enum;

/// Serializers that write an integral `f64` as a JSON integer (`50` rather than `50.0`).
pub(crate) mod num {
    use serde::Serializer;

    /// The largest integer below which every integral f64 is exact.
    const EXACT: f64 = 9_007_199_254_740_992.0;

    #[allow(clippy::cast_possible_truncation)]
    pub(crate) fn f64<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        let v = *v;
        if v.fract() == 0.0 && v.abs() < EXACT {
            // Exact: |v| < 2^53 and integral, so the cast loses nothing.
            s.serialize_i64(v as i64)
        } else {
            s.serialize_f64(v)
        }
    }

    #[allow(clippy::ref_option)]
    pub(crate) fn opt_f64<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => f64(v, s),
            None => s.serialize_none(),
        }
    }
}

/// Reads a struct only from a JSON object (serde's derived structs also accept arrays).
pub(crate) fn object_only<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: de::Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct ObjectOnly<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> de::Visitor<'de> for ObjectOnly<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(de::value::MapAccessDeserializer::new(map))
        }
    }
    deserializer.deserialize_map(ObjectOnly(std::marker::PhantomData))
}

/// Reads `value[key]` as a string, for hand-written dispatch on a discriminator member.
pub(crate) fn str_member<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// Deserializes `T` from an owned value, mapping the error into `E`.
pub(crate) fn from_value<T: de::DeserializeOwned, E: de::Error>(value: Value) -> Result<T, E> {
    serde_json::from_value(value).map_err(E::custom)
}
