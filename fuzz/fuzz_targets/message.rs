//! The full message parse: `Incoming::parse` classifies every body as the precise parser
//! does, never panics, and a parsed message serializes and parses back to itself. The
//! client's reading, a result kept as its text (`Message::from_slice_raw`), takes every body
//! the full parse takes, as the same message once its result is decoded.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use smcp_proto::jsonrpc::{Incoming, Message};

/// Equal JSON, numbers within a rounding error (serde_json's default float parsing is not
/// exact to the last bit, so a float may move by an ulp through text).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            _ if x == y => true,
            (Some(x), Some(y)) => (x - y).abs() <= f64::EPSILON * 4.0 * x.abs().max(y.abs()),
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fuzz_target!(|data: &[u8]| {
    let incoming = Incoming::parse(data);
    let message = Message::from_slice(data);
    match (&incoming, &message) {
        (Ok(Incoming::Request(r)), Ok(Message::Request(m))) => {
            assert_eq!(r.method, m.method);
            assert_eq!(r.id, m.id);
            let _ = r.name();
            if let Err(invalid) = &r.params {
                assert!(!invalid.message.is_empty());
                let _ = invalid.to_error_object();
            }
        }
        (Ok(Incoming::Notification(n)), Ok(Message::Notification(m))) => assert_eq!(n, m),
        (Ok(Incoming::Response(_)), Ok(Message::Result(_) | Message::Error(_))) => {}
        (Err(a), Err(b)) => {
            assert_eq!(a, b);
            let _ = a.to_error_object();
        }
        (a, b) => panic!("Incoming::parse {a:?} but Message::from_slice {b:?}"),
    }
    let raw = Message::from_slice_raw(data);
    match (&message, raw) {
        (Ok(Message::Result(m)), Ok(Message::Result(r))) => {
            assert_eq!(m.id, r.id);
            let decoded: Value = serde_json::from_str(r.result.get())
                .unwrap_or_else(|e| panic!("a result the full parse read does not decode: {e}"));
            assert_eq!(decoded, m.result);
        }
        (Ok(Message::Request(m)), Ok(Message::Request(r))) => assert_eq!(m, &r),
        (Ok(Message::Notification(m)), Ok(Message::Notification(r))) => assert_eq!(m, &r),
        (Ok(Message::Error(m)), Ok(Message::Error(r))) => assert_eq!(m, &r),
        // What the text of a result is not checked for until it is decoded: then it fails.
        (Err(_), Ok(Message::Result(r))) => assert!(
            serde_json::from_str::<Value>(r.result.get()).is_err(),
            "the full parse refused a body whose result decodes"
        ),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("Message::from_slice {a:?} but Message::from_slice_raw {b:?}"),
    }
    if let Ok(message) = message {
        let bytes = message.to_vec();
        let again = Message::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("a serialized message does not parse back: {e}"));
        let (a, b) = (
            serde_json::to_value(&message).unwrap_or_default(),
            serde_json::to_value(&again).unwrap_or_default(),
        );
        assert!(same(&a, &b), "{a} became {b}");
    }
});
