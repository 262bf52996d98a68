//! A digest of a request's salient params, stable under key reordering, so a retry that
//! re-serializes its arguments differently still matches its `requestState`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Writes `value` as JSON with object keys sorted, recursively.
fn canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                // Serializing a string to a Vec cannot fail.
                let _ = serde_json::to_writer(&mut *out, key);
                out.push(b':');
                canonical(&map[key], out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        scalar => {
            let _ = serde_json::to_writer(&mut *out, scalar);
        }
    }
}

/// sha-256 (base64url) of `method` and the salient params in canonical form.
pub(crate) fn salient_digest(method: &str, salient: &Value) -> String {
    let mut buf = Vec::with_capacity(128);
    buf.extend_from_slice(method.as_bytes());
    buf.push(0);
    canonical(salient, &mut buf);
    URL_SAFE_NO_PAD.encode(Sha256::digest(&buf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_matter_values_do() {
        let a = salient_digest(
            "tools/call",
            &json!({"name": "t", "arguments": {"x": 1, "y": [1, {"b": 2, "a": 1}]}}),
        );
        let b = salient_digest(
            "tools/call",
            &json!({"arguments": {"y": [1, {"a": 1, "b": 2}], "x": 1}, "name": "t"}),
        );
        assert_eq!(a, b);
        let c = salient_digest(
            "tools/call",
            &json!({"name": "t", "arguments": {"x": 2, "y": [1, {"a": 1, "b": 2}]}}),
        );
        assert_ne!(a, c);
        let d = salient_digest(
            "prompts/get",
            &json!({"name": "t", "arguments": {"x": 1, "y": [1, {"a": 1, "b": 2}]}}),
        );
        assert_ne!(a, d);
    }
}
