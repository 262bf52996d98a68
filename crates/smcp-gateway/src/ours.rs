//! An upstream's result made the gateway's own: decoded straight from the text the upstream
//! sent into the result type the gateway answers with, without the upstream's `serverInfo`
//! (the gateway puts its own in `_meta`). That member is skipped as the text is read, not
//! decoded and then removed: every result of a 2026-07-28 upstream carries one.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::value::CowStrDeserializer;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use smcp_proto::basic::Meta;
use smcp_proto::meta;
use smcp_proto::server::prompts::GetPromptResult;
use smcp_proto::server::resources::ReadResourceResult;
use smcp_proto::server::tools::CallToolResult;
use smcp_proto::server::utilities::completion::CompleteResult;

/// A result type the gateway answers with, read from an upstream's.
pub(crate) trait Ours: DeserializeOwned {
    /// The result's `_meta`.
    fn meta_mut(&mut self) -> &mut Option<Meta>;
}

macro_rules! ours_for {
    ($($result:ty),*) => {$(
        impl Ours for $result {
            fn meta_mut(&mut self) -> &mut Option<Meta> {
                &mut self.meta
            }
        }
    )*};
}

ours_for!(
    CallToolResult,
    GetPromptResult,
    ReadResourceResult,
    CompleteResult
);

/// An upstream's result as `T`, read from its text without the upstream's `serverInfo`; a
/// `_meta` left empty is no `_meta`.
pub(crate) fn ours<T: Ours>(result: &RawValue) -> Result<T, serde_json::Error> {
    let mut reader = serde_json::Deserializer::from_str(result.get());
    let mut answer = T::deserialize(TopLevel(&mut reader))?;
    reader.end()?;
    let meta = answer.meta_mut();
    if meta.as_ref().is_some_and(Map::is_empty) {
        *meta = None;
    }
    Ok(answer)
}

/// [`ours`] as a value, for the answers the gateway relays without a type of its own (the
/// task methods').
pub(crate) fn ours_value(result: &RawValue) -> Result<Value, serde_json::Error> {
    let mut value: Value = serde_json::from_str(result.get())?;
    if let Some(Value::Object(meta)) = value.get_mut("_meta") {
        meta.remove(meta::SERVER_INFO);
        if meta.is_empty()
            && let Value::Object(result) = &mut value
        {
            result.remove("_meta");
        }
    }
    Ok(value)
}

/// The result object: its members as they are, but `_meta`, read by [`MetaSeed`].
struct TopLevel<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for TopLevel<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(Members(visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(Members(visitor))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The visitor of the result type, handed the members through [`Filtered`].
struct Members<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for Members<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(Filtered {
            map,
            at_meta: false,
        })
    }
}

/// The members of the result object; the value of `_meta` is read by [`MetaSeed`].
struct Filtered<A> {
    map: A,
    /// The member whose value comes next is `_meta`.
    at_meta: bool,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Filtered<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let Some(Name(name)) = self.map.next_key()? else {
            return Ok(None);
        };
        self.at_meta = name == "_meta";
        seed.deserialize(CowStrDeserializer::new(name)).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        if !std::mem::take(&mut self.at_meta) {
            return self.map.next_value_seed(seed);
        }
        let meta = self.map.next_value_seed(MetaSeed)?;
        seed.deserialize(meta).map_err(de::Error::custom)
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// A member name, borrowed from the text where it has no escape.
struct Name<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> Visitor<'de> for Text {
            type Value = Name<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: de::Error>(self, name: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(name)))
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(name.to_owned())))
            }
        }
        deserializer.deserialize_str(Text)
    }
}

/// `_meta` without `serverInfo` (skipped unread), as a value: an object, or `null`.
struct MetaSeed;

impl<'de> DeserializeSeed<'de> for MetaSeed {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MetaSeed {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object (a result's _meta)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut meta = Map::new();
        while let Some(name) = map.next_key::<String>()? {
            if name == meta::SERVER_INFO {
                map.next_value::<IgnoredAny>()?;
            } else {
                meta.insert(name, map.next_value()?);
            }
        }
        Ok(Value::Object(meta))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smcp_proto::jsonrpc::RawResult;

    fn raw(text: &str) -> RawResult {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    const INFO: &str = r#""io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"}"#;

    #[test]
    fn an_upstream_result_is_ours_without_its_server_info() {
        let only = format!(r#"{{"content":[{{"type":"text","text":"hi"}}],"_meta":{{{INFO}}}}}"#);
        let result: CallToolResult = ours(&raw(&only)).unwrap();
        assert_eq!(result.meta, None);
        assert_eq!(result.content[0].as_text(), Some("hi"));
        let more = format!(r#"{{"content":[],"_meta":{{"k":1,{INFO},"z":[2]}}}}"#);
        let result: CallToolResult = ours(&raw(&more)).unwrap();
        assert_eq!(
            serde_json::to_value(result.meta).unwrap(),
            serde_json::json!({"k": 1, "z": [2]})
        );
        let value = ours_value(&raw(&more)).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"content": [], "_meta": {"k": 1, "z": [2]}})
        );
        assert_eq!(
            ours_value(&raw(&only)).unwrap(),
            serde_json::json!({"content": [{"type": "text", "text": "hi"}]})
        );
    }

    /// Every member of every result type reads as the plain decode reads it, `serverInfo`
    /// aside, and what the plain decode refuses is refused.
    #[test]
    fn read_this_way_a_result_is_what_the_plain_decode_gives() {
        fn same<T: Ours + PartialEq + fmt::Debug>(text: &str) {
            let plain: Result<T, _> = serde_json::from_str(text);
            let read: Result<T, _> = ours(&raw(text));
            match (plain, read) {
                (Ok(mut plain), Ok(read)) => {
                    let meta = plain.meta_mut();
                    if let Some(m) = meta {
                        m.remove(meta::SERVER_INFO);
                        if m.is_empty() {
                            *meta = None;
                        }
                    }
                    assert_eq!(plain, read, "{text}");
                }
                (Err(_), Err(_)) => {}
                (plain, read) => panic!("{text}: {plain:?} but {read:?}"),
            }
        }
        let tool = [
            format!(
                r#"{{"resultType":"complete","content":[{{"type":"text","text":"a\"b"}}],"structuredContent":{{"x":[1,2]}},"isError":false,"_meta":{{{INFO},"k":"v"}}}}"#
            ),
            r#"{"_meta":null,"content":[]}"#.to_owned(),
            r#"{"content":[],"_meta":{}}"#.to_owned(),
            r#"{"content":[],"_m\u0065ta":{"k":1}}"#.to_owned(),
            r#"{"content":[],"_meta":7}"#.to_owned(),
            r#"{"content":[],"_meta":{"k":1},"_meta":{"j":2}}"#.to_owned(),
            r#"{"content":7}"#.to_owned(),
            r#"["content"]"#.to_owned(),
            r#"{"content":[],"isError":"no"}"#.to_owned(),
        ];
        for text in &tool {
            same::<CallToolResult>(text);
        }
        same::<GetPromptResult>(&format!(
            r#"{{"messages":[{{"role":"user","content":{{"type":"text","text":"q"}}}}],"description":"d","_meta":{{{INFO}}}}}"#
        ));
        same::<ReadResourceResult>(&format!(
            r#"{{"contents":[{{"uri":"a://x","text":"t"}}],"_meta":{{{INFO},"k":1}}}}"#
        ));
        same::<CompleteResult>(&format!(
            r#"{{"completion":{{"values":["a"],"hasMore":false}},"_meta":{{{INFO}}}}}"#
        ));
    }
}
