//! JSON Schema validation of tool arguments (`basic/index.mdx` §JSON Schema Usage).
//!
//! Wraps `jsonschema` behind our own type so the pinned 0.x API stays in one file. Schemas
//! default to draft 2020-12; a `$schema` member selects another dialect. The validator is
//! built **offline**: a `$ref` to anything outside the schema document fails at registration
//! instead of making the server fetch a URL (SSRF).

use serde_json::Value;

/// How many validation errors a message names before it stops.
const MAX_REPORTED_ERRORS: usize = 5;

/// A compiled schema.
pub(crate) struct SchemaValidator {
    validator: jsonschema::Validator,
}

impl SchemaValidator {
    /// Compiles `schema` (`what` names it in the error, e.g. `"inputSchema"`); the error
    /// names what is wrong with it.
    pub(crate) fn compile(schema: &Value, what: &str) -> Result<Self, String> {
        let mut options = jsonschema::options().offline();
        if schema.get("$schema").is_none() {
            options = options.with_draft(jsonschema::Draft::Draft202012);
        }
        let validator = options.build(schema).map_err(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                format!("{what} is not a valid JSON Schema: {e}")
            } else {
                format!("{what} is not a valid JSON Schema at {at}: {e}")
            }
        })?;
        Ok(Self { validator })
    }

    /// Validates `instance`; on failure returns one line per problem (at most five), each
    /// naming the JSON pointer of the offending member. The lines never quote the values
    /// (they reach the model, and an argument may be a secret or a `data:` payload): "the
    /// value" stands in for them.
    pub(crate) fn validate(&self, instance: &Value) -> Result<(), Vec<String>> {
        if self.validator.is_valid(instance) {
            return Ok(());
        }
        let problems: Vec<String> = self
            .validator
            .iter_errors(instance)
            .take(MAX_REPORTED_ERRORS)
            .map(|e| {
                let path = e.instance_path().to_string();
                let at = if path.is_empty() {
                    "/".to_owned()
                } else {
                    path
                };
                format!("{at}: {}", e.masked_with("the value"))
            })
            .collect();
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl SchemaValidator {
        fn compile_test(schema: &Value) -> Result<Self, String> {
            Self::compile(schema, "inputSchema")
        }
    }
    use serde_json::json;

    #[test]
    fn reports_the_field() {
        let v = SchemaValidator::compile_test(&json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            "required": ["a"]
        }))
        .unwrap();
        assert!(v.validate(&json!({"a": 1})).is_ok());
        let errs = v.validate(&json!({"a": "x"})).unwrap_err();
        assert!(errs[0].starts_with("/a:"), "{errs:?}");
        let errs = v.validate(&json!({})).unwrap_err();
        assert!(errs[0].contains("\"a\""), "{errs:?}");
    }

    /// No keyword's message quotes the argument it rejects.
    #[test]
    fn messages_never_quote_the_value() {
        let secret = "data:text/plain;base64,U0VDUkVUU0VDUkVUU0VDUkVU";
        let v = SchemaValidator::compile_test(&json!({
            "type": "object",
            "properties": {
                "long": {"type": "string", "maxLength": 5},
                "pattern": {"type": "string", "pattern": "^mcp-file://"},
                "enum": {"enum": ["a", "b"]},
                "const": {"const": "a"},
                "type": {"type": "integer"},
                "not": {"not": {"type": "string"}},
                "any": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
                "one": {"oneOf": [{"type": "integer"}, {"type": "boolean"}]},
                "items": {"type": "array", "items": {"type": "integer"}}
            }
        }))
        .unwrap();
        for member in [
            "long", "pattern", "enum", "const", "type", "not", "any", "one", "items",
        ] {
            let value = if member == "items" {
                json!([secret])
            } else {
                json!(secret)
            };
            let errs = v.validate(&json!({ member: value })).unwrap_err();
            assert!(!errs.is_empty(), "{member}");
            for e in &errs {
                assert!(e.starts_with(&format!("/{member}")), "{member}: {e}");
                assert!(!e.contains("U0VDUkVU"), "{member} quotes the value: {e}");
            }
        }
    }

    #[test]
    fn never_fetches_remote_refs() {
        let err = SchemaValidator::compile_test(&json!({
            "type": "object",
            "properties": {"a": {"$ref": "https://example.com/schema.json"}}
        }))
        .err()
        .unwrap();
        assert!(err.contains("not a valid JSON Schema"), "{err}");
    }

    #[test]
    fn local_refs_and_2020_12_keywords_work() {
        let v = SchemaValidator::compile_test(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"n": {"$anchor": "num", "type": "integer"}},
            "properties": {"a": {"$ref": "#/$defs/n"}, "b": {"$ref": "#num"}},
            "additionalProperties": false
        }))
        .unwrap();
        assert!(v.validate(&json!({"a": 1, "b": 2})).is_ok());
        assert!(v.validate(&json!({"a": 1, "c": 2})).is_err());
    }

    /// A schema its dialect's meta-schema refuses is refused when compiled, whatever the
    /// dialect: the meta-schema check is the crate's compiled-in validators, not a
    /// best-effort compile.
    #[test]
    fn schemas_their_meta_schema_refuses_are_refused() {
        for (schema, at) in [
            (
                json!({"type": "object", "properties": {"a": {"type": "strin"}}}),
                "/properties/a/type",
            ),
            (
                json!({"type": "object", "properties": {"a": {"minLength": -1}}}),
                "/properties/a/minLength",
            ),
            (json!({"type": "object", "required": "a"}), "/required"),
            (json!({"type": "object", "properties": []}), "/properties"),
            (
                json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "required": [1]}),
                "/required/0",
            ),
        ] {
            let err = SchemaValidator::compile_test(&schema)
                .err()
                .unwrap_or_default();
            assert!(
                err.starts_with("inputSchema is not a valid JSON Schema"),
                "{schema}: {err}"
            );
            assert!(err.contains(&format!(" at {at}: ")), "{schema}: {err}");
        }
        assert!(
            SchemaValidator::compile_test(&json!({
                "type": "object",
                "properties": {"a": {"type": "string", "minLength": 1}},
                "required": ["a"]
            }))
            .is_ok()
        );
    }
}
