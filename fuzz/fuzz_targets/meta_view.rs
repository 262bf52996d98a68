//! `MetaView` (the `_meta` members a server reads on every request, without parsing the rest)
//! against the full parse of the same `_meta`: the view accepts exactly the objects the full
//! parser reads (issue #16 item 11), and each member it borrows is the one the full parse
//! keeps (the last of repeated members).

#![no_main]

use libfuzzer_sys::fuzz_target;
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
