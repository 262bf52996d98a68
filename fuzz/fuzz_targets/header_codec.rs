//! The `Mcp-Name` / `Mcp-Param-*` value codec: every string encodes to a valid header value
//! that decodes back to it; decoding any header never panics and is stable; a number matches
//! itself.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use smcp_proto::header::{
    decode_header_value, encode_header_value, is_valid_header_value_chars, param_header_value,
    param_matches,
};

fuzz_target!(|data: &[u8]| {
    // What a server receives is bytes; only visible ASCII, space and tab survive `to_str`.
    if let Ok(value) = http::HeaderValue::from_bytes(data)
        && let Ok(header) = value.to_str()
        && let Ok(decoded) = decode_header_value(header)
    {
        let again = encode_header_value(&decoded);
        assert_eq!(decode_header_value(&again).as_deref(), Ok(&*decoded));
        for body in [
            Value::String(decoded.clone().into_owned()),
            Value::Bool(true),
        ] {
            let _ = param_matches(header, &body);
        }
        if !header.contains([' ', '\t'])
            && let Ok(number @ Value::Number(_)) = serde_json::from_str::<Value>(header)
        {
            assert_eq!(param_matches(header, &number), Ok(true), "{header}");
        }
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let encoded = encode_header_value(text);
    assert!(is_valid_header_value_chars(&encoded), "{encoded:?}");
    assert!(http::HeaderValue::from_str(&encoded).is_ok(), "{encoded:?}");
    assert_eq!(decode_header_value(&encoded).as_deref(), Ok(text));
    let string = Value::String(text.to_owned());
    let mirrored = param_header_value(&string).unwrap_or_else(|| panic!("a string has a header"));
    assert_eq!(param_matches(&mirrored, &string), Ok(true));
});
