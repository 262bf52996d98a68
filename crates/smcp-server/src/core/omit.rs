//! A struct serialized without some of its own members, written straight to the output.
//!
//! The earlier revisions' results are the 2026-07-28 result types without the members only
//! 2026-07-28 defines (`resultType`, `ttlMs`, `cacheScope`). Rather than serialize a result,
//! parse it back and remove them, the reply writer serializes it through [`Without`]: the
//! result's own `Serialize` runs unchanged, and the named fields of the outermost struct are
//! skipped as they come; everything inside them goes to the real serializer untouched.
//! A value that is not a struct (a map, a sequence) is written as it is.

use serde::ser::{Serialize, SerializeStruct, Serializer};

/// `value` as it serializes, without the outermost struct's fields named in `skip`.
pub(crate) struct Without<'a, T: ?Sized> {
    pub(crate) value: &'a T,
    pub(crate) skip: &'static [&'static str],
}

impl<T: Serialize + ?Sized> Serialize for Without<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(Top {
            inner: serializer,
            skip: self.skip,
        })
    }
}

/// The serializer of the outermost value: a struct's fields are filtered, anything else
/// goes to `inner` as is.
struct Top<S> {
    inner: S,
    skip: &'static [&'static str],
}

/// The fields of the outermost struct, those named in `skip` left out.
struct Fields<S> {
    inner: S,
    skip: &'static [&'static str],
}

impl<S: SerializeStruct> SerializeStruct for Fields<S> {
    type Ok = S::Ok;
    type Error = S::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), S::Error> {
        if self.skip.contains(&key) {
            self.inner.skip_field(key)
        } else {
            self.inner.serialize_field(key, value)
        }
    }

    fn skip_field(&mut self, key: &'static str) -> Result<(), S::Error> {
        self.inner.skip_field(key)
    }

    fn end(self) -> Result<S::Ok, S::Error> {
        self.inner.end()
    }
}

/// Serializer methods that hand their value to `inner` unchanged.
macro_rules! as_is {
    ($($name:ident($($arg:ident: $t:ty),*) -> $ret:ty;)*) => {
        $(fn $name(self, $($arg: $t),*) -> Result<$ret, S::Error> {
            self.inner.$name($($arg),*)
        })*
    };
}

impl<S: Serializer> Serializer for Top<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = S::SerializeSeq;
    type SerializeTuple = S::SerializeTuple;
    type SerializeTupleStruct = S::SerializeTupleStruct;
    type SerializeTupleVariant = S::SerializeTupleVariant;
    type SerializeMap = S::SerializeMap;
    type SerializeStruct = Fields<S::SerializeStruct>;
    type SerializeStructVariant = S::SerializeStructVariant;

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        Ok(Fields {
            inner: self.inner.serialize_struct(name, len)?,
            skip: self.skip,
        })
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.inner.serialize_some(value)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.inner.serialize_newtype_struct(name, value)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.inner
            .serialize_newtype_variant(name, index, variant, value)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }

    as_is! {
        serialize_bool(v: bool) -> S::Ok;
        serialize_i8(v: i8) -> S::Ok;
        serialize_i16(v: i16) -> S::Ok;
        serialize_i32(v: i32) -> S::Ok;
        serialize_i64(v: i64) -> S::Ok;
        serialize_i128(v: i128) -> S::Ok;
        serialize_u8(v: u8) -> S::Ok;
        serialize_u16(v: u16) -> S::Ok;
        serialize_u32(v: u32) -> S::Ok;
        serialize_u64(v: u64) -> S::Ok;
        serialize_u128(v: u128) -> S::Ok;
        serialize_f32(v: f32) -> S::Ok;
        serialize_f64(v: f64) -> S::Ok;
        serialize_char(v: char) -> S::Ok;
        serialize_str(v: &str) -> S::Ok;
        serialize_bytes(v: &[u8]) -> S::Ok;
        serialize_none() -> S::Ok;
        serialize_unit() -> S::Ok;
        serialize_unit_struct(name: &'static str) -> S::Ok;
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str) -> S::Ok;
        serialize_seq(len: Option<usize>) -> S::SerializeSeq;
        serialize_tuple(len: usize) -> S::SerializeTuple;
        serialize_tuple_struct(name: &'static str, len: usize) -> S::SerializeTupleStruct;
        serialize_tuple_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> S::SerializeTupleVariant;
        serialize_map(len: Option<usize>) -> S::SerializeMap;
        serialize_struct_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> S::SerializeStructVariant;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Shape {
        result_type: &'static str,
        inner: Inner,
        #[serde(skip_serializing_if = "Option::is_none")]
        absent: Option<u8>,
        ttl_ms: u64,
    }

    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Inner {
        result_type: &'static str,
        n: u8,
    }

    const SKIP: &[&str] = &["resultType", "ttlMs"];

    #[test]
    fn only_the_outer_fields_are_left_out() {
        let shape = Shape {
            result_type: "complete",
            inner: Inner {
                result_type: "kept",
                n: 1,
            },
            absent: None,
            ttl_ms: 5,
        };
        let written = serde_json::to_string(&Without {
            value: &shape,
            skip: SKIP,
        })
        .unwrap();
        assert_eq!(written, r#"{"inner":{"resultType":"kept","n":1}}"#);
    }

    #[test]
    fn other_values_are_written_as_they_are() {
        let map = json!({"resultType": "x", "ttlMs": 1});
        for value in [map, json!([1, "a"]), json!("s"), json!(null), json!(1.5)] {
            let written = serde_json::to_string(&Without {
                value: &value,
                skip: SKIP,
            })
            .unwrap();
            assert_eq!(written, serde_json::to_string(&value).unwrap());
        }
        let nothing: &[&str] = &[];
        let all = serde_json::to_string(&Without {
            value: &Inner {
                result_type: "r",
                n: 2,
            },
            skip: nothing,
        })
        .unwrap();
        assert_eq!(all, r#"{"resultType":"r","n":2}"#);
    }
}
