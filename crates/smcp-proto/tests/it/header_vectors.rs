//! Every header-encoding vector of REQUIREMENTS A2 items 30–32 (spec §Value Encoding table and
//! the SEP-2243 conformance table), plus round-trip properties.

use std::borrow::Cow;

use proptest::prelude::*;
use serde_json::json;
use smcp_proto::header::{
    HeaderValueError, ParamValue, decode_header_value, encode_header_value, encode_param,
    is_valid_header_value_chars, needs_base64, param_matches,
};

/// (value, header value) pairs from A2 item 30.
const STRING_VECTORS: &[(&str, &str)] = &[
    ("us-west1", "us-west1"),
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    (" us-west1", "=?base64?IHVzLXdlc3Qx?="),
    ("us-west1 ", "=?base64?dXMtd2VzdDEg?="),
    (" us-west1 ", "=?base64?IHVzLXdlc3QxIA==?="),
    ("us west 1", "us west 1"),
    ("日本語", "=?base64?5pel5pys6Kqe?="),
    ("line1\r\nline2", "=?base64?bGluZTENCmxpbmUy?="),
    ("\tindented", "=?base64?CWluZGVudGVk?="),
    ("", ""),
];

#[test]
fn encode_string_vectors() {
    for (value, header) in STRING_VECTORS {
        assert_eq!(encode_header_value(value), *header, "encoding {value:?}");
        assert_eq!(
            encode_param(&ParamValue::String(value)),
            *header,
            "param {value:?}"
        );
    }
}

#[test]
fn decode_string_vectors() {
    for (value, header) in STRING_VECTORS {
        assert_eq!(
            decode_header_value(header).unwrap(),
            *value,
            "decoding {header:?}"
        );
    }
}

#[test]
fn safe_values_are_borrowed() {
    assert!(matches!(encode_header_value("us-west1"), Cow::Borrowed(_)));
    assert!(matches!(encode_header_value(""), Cow::Borrowed(_)));
    assert!(matches!(
        decode_header_value("us-west1").unwrap(),
        Cow::Borrowed(_)
    ));
}

#[test]
fn encode_primitives() {
    assert_eq!(encode_param(&ParamValue::Bool(true)), "true");
    assert_eq!(encode_param(&ParamValue::Bool(false)), "false");
    assert_eq!(encode_param(&ParamValue::Integer(42)), "42");
    assert_eq!(encode_param(&ParamValue::Integer(-7)), "-7");
}

#[test]
fn param_value_from_json() {
    assert_eq!(
        ParamValue::from_json(&json!("x")),
        Some(ParamValue::String("x"))
    );
    assert_eq!(
        ParamValue::from_json(&json!(42)),
        Some(ParamValue::Integer(42))
    );
    assert_eq!(
        ParamValue::from_json(&json!(42.0)),
        Some(ParamValue::Integer(42))
    );
    assert_eq!(
        ParamValue::from_json(&json!(true)),
        Some(ParamValue::Bool(true))
    );
    assert_eq!(ParamValue::from_json(&json!(42.5)), None);
    assert_eq!(ParamValue::from_json(&json!(null)), None);
    assert_eq!(ParamValue::from_json(&json!([1])), None);
    assert_eq!(ParamValue::from_json(&json!({})), None);
    let max = 9_007_199_254_740_991_i64;
    assert_eq!(
        ParamValue::from_json(&json!(max)),
        Some(ParamValue::Integer(max))
    );
    assert_eq!(
        ParamValue::from_json(&json!(-max)),
        Some(ParamValue::Integer(-max))
    );
    assert_eq!(ParamValue::from_json(&json!(max + 1)), None);
    assert_eq!(ParamValue::from_json(&json!(i64::MIN)), None);
    assert_eq!(ParamValue::from_json(&json!(u64::MAX)), None);
}

// ---- A2 item 31: decoding ----

#[test]
fn decode_valid_base64() {
    assert_eq!(decode_header_value("=?base64?SGVsbG8=?=").unwrap(), "Hello");
}

#[test]
fn decode_rejects_bad_padding() {
    assert!(matches!(
        decode_header_value("=?base64?SGVsbG8?="),
        Err(HeaderValueError::InvalidBase64(_))
    ));
}

#[test]
fn decode_rejects_bad_chars() {
    assert!(matches!(
        decode_header_value("=?base64?SGVs!!!bG8=?="),
        Err(HeaderValueError::InvalidBase64(_))
    ));
}

#[test]
fn decode_rejects_non_utf8_payload() {
    // 0xFF 0xFE
    assert_eq!(
        decode_header_value("=?base64?//4=?="),
        Err(HeaderValueError::InvalidUtf8)
    );
}

#[test]
fn decode_rejects_non_canonical_trailing_bits() {
    // "SGVsbG9=" would decode "Hello" only if trailing bits were ignored.
    assert!(decode_header_value("=?base64?SGVsbG9=?=").is_err());
}

#[test]
fn decode_literal_without_prefix_or_suffix() {
    assert_eq!(decode_header_value("SGVsbG8=").unwrap(), "SGVsbG8=");
    assert_eq!(
        decode_header_value("=?base64?SGVsbG8=").unwrap(),
        "=?base64?SGVsbG8="
    );
    assert_eq!(decode_header_value("SGVsbG8=?=").unwrap(), "SGVsbG8=?=");
    assert_eq!(
        decode_header_value("=?BASE64?SGVsbG8=?=").unwrap(),
        "=?BASE64?SGVsbG8=?="
    );
    assert_eq!(
        decode_header_value("=?Base64?SGVsbG8=?=").unwrap(),
        "=?Base64?SGVsbG8=?="
    );
    // Prefix and suffix overlap: too short to carry a payload, so it is a literal.
    assert_eq!(decode_header_value("=?base64?=").unwrap(), "=?base64?=");
}

#[test]
fn decode_empty_payload() {
    assert_eq!(decode_header_value("=?base64??=").unwrap(), "");
}

#[test]
fn decode_trims_ows() {
    assert_eq!(decode_header_value("  foo ").unwrap(), "foo");
    assert_eq!(decode_header_value("\tfoo\t").unwrap(), "foo");
    assert_eq!(
        decode_header_value(" =?base64?SGVsbG8=?= ").unwrap(),
        "Hello"
    );
    assert_eq!(decode_header_value("   ").unwrap(), "");
}

#[test]
fn decode_rejects_invalid_literal_chars() {
    assert_eq!(
        decode_header_value("a\u{0}b"),
        Err(HeaderValueError::InvalidChar('\u{0}'))
    );
    assert_eq!(
        decode_header_value("a\nb"),
        Err(HeaderValueError::InvalidChar('\n'))
    );
    assert_eq!(
        decode_header_value("a\u{7f}"),
        Err(HeaderValueError::InvalidChar('\u{7f}'))
    );
    assert_eq!(
        decode_header_value("Région"),
        Err(HeaderValueError::InvalidChar('é'))
    );
    // Inner space and tab are fine.
    assert_eq!(decode_header_value("a b\tc").unwrap(), "a b\tc");
}

#[test]
fn field_value_chars() {
    assert!(is_valid_header_value_chars(""));
    assert!(is_valid_header_value_chars("us-west1"));
    assert!(is_valid_header_value_chars("us west\t1"));
    assert!(is_valid_header_value_chars("=?base64?SGVsbG8=?="));
    assert!(!is_valid_header_value_chars(" x"));
    assert!(!is_valid_header_value_chars("x\t"));
    assert!(!is_valid_header_value_chars("a\rb"));
    assert!(!is_valid_header_value_chars("a\u{7f}"));
    assert!(!is_valid_header_value_chars("世界"));
}

#[test]
fn needs_base64_rules() {
    assert!(!needs_base64("us west 1"));
    assert!(needs_base64("a\u{7f}"));
    assert!(needs_base64("a\u{1}"));
    assert!(needs_base64("=?base64??="));
    assert!(needs_base64("=?base64?="));
    assert!(!needs_base64("=?base64?x"));
    assert!(!needs_base64("=?BASE64?x?="));
}

// ---- A2 item 32 and server comparison ----

#[test]
fn matches_strings_exactly() {
    assert!(param_matches("us-west1", &json!("us-west1")).unwrap());
    assert!(!param_matches("US-WEST1", &json!("us-west1")).unwrap());
    assert!(param_matches("=?base64?SGVsbG8=?=", &json!("Hello")).unwrap());
    assert!(param_matches("SGVsbG8=", &json!("SGVsbG8=")).unwrap());
    assert!(param_matches("=?base64?SGVsbG8=", &json!("=?base64?SGVsbG8=")).unwrap());
    assert!(param_matches("  foo ", &json!("foo")).unwrap());
    assert!(param_matches("", &json!("")).unwrap());
    assert!(!param_matches("Hello", &json!("=?base64?SGVsbG8=?=")).unwrap());
    for (value, header) in STRING_VECTORS {
        assert!(param_matches(header, &json!(value)).unwrap(), "{header:?}");
    }
}

#[test]
fn matches_reject_undecodable() {
    assert!(param_matches("=?base64?SGVsbG8?=", &json!("Hello")).is_err());
    assert!(param_matches("=?base64?SGVs!!!bG8=?=", &json!("Hello")).is_err());
}

#[test]
fn matches_integers_numerically() {
    assert!(param_matches("42", &json!(42)).unwrap());
    assert!(param_matches("42.0", &json!(42)).unwrap());
    assert!(param_matches("42", &json!(42.0)).unwrap());
    assert!(param_matches("4.2e1", &json!(42)).unwrap());
    assert!(param_matches("-7", &json!(-7)).unwrap());
    assert!(param_matches("9007199254740993", &json!(9_007_199_254_740_993_i64)).unwrap());
    assert!(!param_matches("9007199254740992", &json!(9_007_199_254_740_993_i64)).unwrap());
    assert!(!param_matches("43", &json!(42)).unwrap());
    assert!(!param_matches("42a", &json!(42)).unwrap());
    assert!(!param_matches("+42", &json!(42)).unwrap());
    assert!(!param_matches("042", &json!(42)).unwrap());
    assert!(!param_matches("inf", &json!(42)).unwrap());
    assert!(!param_matches("", &json!(0)).unwrap());
    assert!(param_matches("=?base64?NDI=?=", &json!(42)).unwrap());
}

#[test]
fn matches_booleans_exactly() {
    assert!(param_matches("true", &json!(true)).unwrap());
    assert!(param_matches("false", &json!(false)).unwrap());
    assert!(!param_matches("True", &json!(true)).unwrap());
    assert!(!param_matches("1", &json!(true)).unwrap());
    assert!(!param_matches("false", &json!(true)).unwrap());
}

#[test]
fn never_matches_null_or_structures() {
    assert!(!param_matches("null", &json!(null)).unwrap());
    assert!(!param_matches("", &json!(null)).unwrap());
    assert!(!param_matches("[]", &json!([])).unwrap());
    assert!(!param_matches("{}", &json!({})).unwrap());
}

#[test]
fn errors_display() {
    let e = decode_header_value("=?base64?SGVsbG8?=").unwrap_err();
    assert!(e.to_string().starts_with("invalid base64 in header value"));
}

proptest! {
    #[test]
    fn round_trip_any_string(s in any::<String>()) {
        let encoded = encode_header_value(&s);
        prop_assert!(is_valid_header_value_chars(&encoded), "{encoded:?}");
        prop_assert_eq!(decode_header_value(&encoded).unwrap(), s.as_str());
    }

    #[test]
    fn round_trip_tricky_strings(s in "[ \t=?a-zA-Z0-9+/\u{0}-\u{1f}\u{7f}é]{0,24}") {
        let encoded = encode_header_value(&s);
        prop_assert!(is_valid_header_value_chars(&encoded), "{encoded:?}");
        prop_assert_eq!(decode_header_value(&encoded).unwrap(), s.as_str());
        prop_assert!(param_matches(&encoded, &json!(s)).unwrap());
    }

    #[test]
    fn sentinel_lookalikes_round_trip(inner in "[ -~]{0,16}") {
        let s = format!("=?base64?{inner}?=");
        let encoded = encode_header_value(&s);
        prop_assert_ne!(encoded.as_ref(), s.as_str());
        prop_assert_eq!(decode_header_value(&encoded).unwrap(), s.as_str());
    }

    #[test]
    fn integers_round_trip(i in any::<i64>()) {
        let encoded = encode_param(&ParamValue::Integer(i));
        prop_assert!(param_matches(&encoded, &json!(i)).unwrap());
    }

    #[test]
    fn decode_never_panics(s in any::<String>()) {
        let _ = decode_header_value(&s);
        let _ = param_matches(&s, &json!(1));
    }
}

// ---- issue #16 item 12: the client's header for every value, and the server's verdict ----

#[test]
fn every_value_with_a_header_form_is_mirrored_and_accepted() {
    use smcp_proto::header::param_header_value;
    // What a server sees: the argument as it parses it from the body the client wrote.
    let as_received = |value: &serde_json::Value| -> serde_json::Value {
        serde_json::from_str(&value.to_string()).unwrap()
    };
    let values = [
        json!("us-west1"),
        json!(" padded "),
        json!(true),
        json!(0),
        json!(-7),
        json!(42.0),
        json!(9_007_199_254_740_991_i64),
        json!(9_007_199_254_740_993_i64),
        json!(-9_007_199_254_740_993_i64),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(1e300),
        json!(-1.8446744073709552e19),
        json!(2.5),
        json!(0.1),
        json!(1.2345678901234567e-300),
        json!(-0.0),
    ];
    for value in values {
        let header = param_header_value(&value)
            .unwrap_or_else(|| panic!("{value} has a header form"))
            .into_owned();
        assert!(
            param_matches(&header, &as_received(&value)).unwrap(),
            "{value} -> {header}"
        );
    }
    assert_eq!(
        param_header_value(&json!(9_007_199_254_740_993_i64)).as_deref(),
        Some("9007199254740993"),
        "integers in decimal, whatever their size"
    );
    assert_eq!(
        param_header_value(&json!(u64::MAX)).as_deref(),
        Some("18446744073709551615")
    );
    assert_eq!(param_header_value(&json!(42.0)).as_deref(), Some("42"));
    for none in [json!(null), json!([1]), json!({"a": 1})] {
        assert_eq!(param_header_value(&none), None, "{none}");
    }
}

#[test]
fn integers_compare_exactly_beyond_2_53() {
    for (header, body, same) in [
        ("18446744073709551614", json!(u64::MAX), false),
        ("18446744073709551615", json!(u64::MAX), true),
        ("1.8446744073709551615e19", json!(u64::MAX), true),
        ("18446744073709551615.0", json!(u64::MAX), true),
        ("18446744073709551616", json!(u64::MAX), false),
        ("9007199254740993", json!(9_007_199_254_740_992_i64), false),
        ("-9223372036854775808", json!(i64::MIN), true),
        ("-9223372036854775807", json!(i64::MIN), false),
        ("42e0", json!(42), true),
        ("4200e-2", json!(42), true),
        ("4.2", json!(42), false),
        ("-0", json!(0), true),
        ("0e999999999999999999999", json!(0), true),
        ("1e999999999999999999999", json!(0), false),
    ] {
        assert_eq!(
            param_matches(header, &body).unwrap(),
            same,
            "{header} vs {body}"
        );
    }
}
