//! `Mcp-Param-*`: the client and the server agree (issue #16 item 12). For any tool schema
//! the client accepts and any arguments, the headers the client sends pass the server's
//! check against the body the server parses; neither side panics on anything.

#![no_main]

use http::HeaderMap;
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};
use smcp_proto::x_mcp_header::validate_annotations;

/// A schema with an annotation of each kind, flat and nested, for inputs that are only
/// arguments.
fn default_schema() -> Value {
    json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "flag": {"type": "boolean", "x-mcp-header": "Flag"},
        "t": {"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Tenant"}}}
    }})
}

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Object(input)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let (schema, arguments) = match (input.get("schema"), input.get("arguments")) {
        (Some(Value::Object(schema)), Some(Value::Object(arguments))) => {
            (schema.clone(), arguments.clone())
        }
        _ => match default_schema() {
            Value::Object(schema) => (schema, input.clone()),
            _ => return,
        },
    };
    let Ok(params) = validate_annotations(&schema) else {
        return;
    };
    let mut call = Map::new();
    call.insert("name".into(), json!("t"));
    call.insert("arguments".into(), Value::Object(arguments.clone()));
    let headers = smcp_client::fuzzing::request_headers("2026-07-28", "tools/call", &call, &params)
        .unwrap_or_else(|e| panic!("the client cannot build its headers: {e}"));
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        assert!(!map.contains_key(&name), "{name} twice");
        map.insert(name, value);
    }
    // The server reads the arguments from the body the client wrote.
    let text = serde_json::to_string(&arguments).unwrap_or_default();
    let received: Map<String, Value> = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the client's body does not parse: {e}"));
    if let Err(e) = smcp_server::fuzzing::check_param_headers(&map, &params, &received) {
        panic!("the server refuses the client's headers: {e}");
    }
    // Headers from the input itself: checked without panicking.
    if let Some(Value::Object(extra)) = input.get("headers") {
        let mut map = HeaderMap::new();
        for (k, v) in extra {
            if let (Ok(name), Some(Ok(value))) = (
                http::HeaderName::from_bytes(k.as_bytes()),
                v.as_str().map(http::HeaderValue::from_str),
            ) {
                map.append(name, value);
            }
        }
        let _ = smcp_server::fuzzing::check_param_headers(&map, &params, &received);
    }
});
