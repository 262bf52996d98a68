//! `x-mcp-file` declarations in tool input schemas and elicitation schemas (A16 item 94).

use serde_json::{Map, Value};
use smcp_proto::ext::files::{FileInputDescriptor, X_MCP_FILE};

/// One file-valued field of a schema.
#[derive(Debug, Clone, PartialEq)]
pub struct FileField {
    /// Top-level property name.
    pub name: String,
    /// Whether the property is an array of file URIs.
    pub array: bool,
    /// The declaration.
    pub descriptor: FileInputDescriptor,
}

fn is_uri_string(schema: &Map<String, Value>) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("string")
        && schema.get("format").and_then(Value::as_str) == Some("uri")
}

/// A misplaced or malformed `x-mcp-file` declaration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("property {property:?}: {reason}")]
pub struct DeclarationError {
    /// The top-level property that carries it.
    pub property: String,
    /// What is wrong with it.
    pub reason: String,
}

fn refuse(property: &str, reason: String) -> DeclarationError {
    DeclarationError {
        property: property.to_owned(),
        reason,
    }
}

fn descriptor(name: &str, value: &Value) -> Result<FileInputDescriptor, DeclarationError> {
    serde_json::from_value(value.clone())
        .map_err(|e| refuse(name, format!("invalid {X_MCP_FILE} value: {e}")))
}

/// The file fields of an object schema's top-level `properties`. `allow_arrays` is true for
/// tools and false for elicitation forms. A misplaced `x-mcp-file` (not on a
/// `{"type":"string","format":"uri"}` property or its array `items`) is an error.
pub fn file_fields(
    schema: &Map<String, Value>,
    allow_arrays: bool,
) -> Result<Vec<FileField>, DeclarationError> {
    let mut out = Vec::new();
    let Some(Value::Object(props)) = schema.get("properties") else {
        return Ok(out);
    };
    for (name, prop) in props {
        let Value::Object(prop) = prop else { continue };
        if let Some(value) = prop.get(X_MCP_FILE) {
            if !is_uri_string(prop) {
                return Err(refuse(
                    name,
                    format!(
                        "{X_MCP_FILE} is only allowed on a \
                         {{\"type\":\"string\",\"format\":\"uri\"}} property"
                    ),
                ));
            }
            out.push(FileField {
                name: name.clone(),
                array: false,
                descriptor: descriptor(name, value)?,
            });
            continue;
        }
        if let Some(Value::Object(items)) = prop.get("items")
            && let Some(value) = items.get(X_MCP_FILE)
        {
            if !allow_arrays {
                return Err(refuse(
                    name,
                    "elicitation file fields must be single URI strings".to_owned(),
                ));
            }
            if prop.get("type").and_then(Value::as_str) != Some("array") || !is_uri_string(items) {
                return Err(refuse(
                    name,
                    format!(
                        "{X_MCP_FILE} on items needs an array of \
                         {{\"type\":\"string\",\"format\":\"uri\"}}"
                    ),
                ));
            }
            out.push(FileField {
                name: name.clone(),
                array: true,
                descriptor: descriptor(name, value)?,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: &Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn finds_single_and_array_fields() {
        let s = obj(&json!({"type": "object", "properties": {
            "doc": {"type": "string", "format": "uri", "x-mcp-file": {"maxSize": 5}},
            "docs": {"type": "array", "items": {"type": "string", "format": "uri",
                     "x-mcp-file": {"transferModes": ["upload"]}}},
            "plain": {"type": "string"}
        }}));
        let fields = file_fields(&s, true).unwrap_or_default();
        assert_eq!(fields.len(), 2);
        assert_eq!(fields[0].name, "doc");
        assert_eq!(fields[0].descriptor.max_size, Some(5));
        assert!(fields[1].array);
        assert!(file_fields(&s, false).is_err());
    }

    #[test]
    fn misplaced_declarations_are_refused() {
        for bad in [
            json!({"properties": {"x": {"type": "string", "x-mcp-file": {}}}}),
            json!({"properties": {"x": {"type": "integer", "format": "uri", "x-mcp-file": {}}}}),
            json!({"properties": {"x": {"type": "object", "items": {"type": "string", "format": "uri", "x-mcp-file": {}}}}}),
            json!({"properties": {"x": {"type": "string", "format": "uri", "x-mcp-file": {"maxSize": "big"}}}}),
        ] {
            assert!(file_fields(&obj(&bad), true).is_err(), "{bad}");
        }
    }
}
