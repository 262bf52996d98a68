//! `MetaView` (the `_meta` members a server reads on every request, without parsing the rest)
//! against the full parse of the same `_meta`: the view accepts exactly the objects the full
//! parser reads (issue #16 item 11), and each member it borrows is the one the full parse
//! keeps (the last of repeated members). The exception is an object with a member named like
//! one of serde_json's private markers, which `serde_json::Value` reads as something else: the
//! view refuses those, and the target checks the refusal against the member names it collects.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::de::{self, Deserializer as _};
use serde_json::Value;
use serde_json::value::RawValue;
use smcp_proto::meta::{self, MetaError, MetaView, raw_str};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // `RawValue` itself only skims its input (a lone surrogate passes), as a raw `_meta` does.
    let Ok(raw) = RawValue::from_string(text.to_owned()) else {
        return;
    };
    let full = serde_json::from_str::<Value>(raw.get());
    match MetaView::parse(&raw) {
        Ok(view) => {
            let Ok(Value::Object(map)) = &full else {
                panic!("the view reads what the full parser reads as {full:?}");
            };
            for (member, key) in [
                (view.protocol_version, meta::PROTOCOL_VERSION),
                (view.client_capabilities, meta::CLIENT_CAPABILITIES),
                (view.client_info, meta::CLIENT_INFO),
                (view.log_level, meta::LOG_LEVEL),
                (view.progress_token, meta::PROGRESS_TOKEN),
            ] {
                match (member, map.get(key)) {
                    (None, None) => {}
                    (Some(raw), Some(value)) => {
                        let read: Value = serde_json::from_str(raw.get())
                            .unwrap_or_else(|e| panic!("{key}: {e}"));
                        assert_eq!(&read, value, "{key}");
                        if let Value::String(s) = value {
                            assert_eq!(raw_str(raw).as_deref(), Some(s.as_str()), "{key}");
                        } else {
                            assert!(raw_str(raw).is_none(), "{key}");
                        }
                    }
                    (a, b) => panic!("{key}: the view has {a:?}, the full parse {b:?}"),
                }
            }
        }
        Err(MetaError::ReservedName(name)) => {
            let mut names = Vec::new();
            let _ =
                serde_json::Deserializer::from_str(raw.get()).deserialize_any(Names(&mut names));
            assert!(
                names.iter().any(|n| n == name),
                "{name} refused but not in {names:?}"
            );
        }
        Err(MetaError::NotAnObject) => {
            assert!(!matches!(full, Ok(Value::Object(_))), "an object refused");
        }
        Err(MetaError::Malformed(_)) => {
            assert!(
                !matches!(full, Ok(Value::Object(_))),
                "an object the full parser reads refused as malformed"
            );
        }
    }
});

/// Collects every member name at any depth, unescaped (stops at the first syntax error).
struct Names<'n>(&'n mut Vec<String>);

impl<'de> de::Visitor<'de> for Names<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(name) = map.next_key::<String>()? {
            self.0.push(name);
            map.next_value_seed(Names(&mut *self.0))?;
        }
        Ok(())
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Names(&mut *self.0))?.is_some() {}
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

impl<'de> de::DeserializeSeed<'de> for Names<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}
