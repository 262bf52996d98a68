//! `x-mcp-header` annotations in a tool's `inputSchema`
//! (`basic/transports/streamable-http.mdx` §Schema Extension; `server/tools.mdx` §x-mcp-header).
//!
//! A property annotated `"x-mcp-header": "Region"` is mirrored by the client into the header
//! `Mcp-Param-Region`, and the server checks that header against the body. Both sides must agree
//! on which annotations are valid, so both call [`validate_annotations`]: a client drops a tool
//! that fails it (and logs the [`InvalidAnnotation`]), a server refuses to register one.
//!
//! The schema is walked as JSON Schema (2020-12 plus the draft-07 keywords that still appear in
//! the wild): only keyword positions that hold subschemas are visited, so a property *named*
//! `x-mcp-header` or an `x-mcp-header` key inside `const`/`default`/`examples` data is not an
//! annotation. Subschemas reached through anything but a chain of `properties` are
//! "not statically reachable", and an annotation there invalidates the tool.

use std::fmt;

use serde_json::{Map, Value};

/// The schema keyword that marks a parameter for header mirroring.
pub const KEYWORD: &str = "x-mcp-header";
/// Prefix of the header name built from an annotation value.
pub const PARAM_HEADER_PREFIX: &str = "Mcp-Param-";

/// The JSON type an annotated property declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// `"type": "string"`.
    String,
    /// `"type": "integer"`.
    Integer,
    /// `"type": "boolean"`.
    Boolean,
}

/// One valid `x-mcp-header` annotation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HeaderParam {
    /// The annotation value, e.g. `Region`; the header is `Mcp-Param-Region`.
    pub header_name: String,
    /// The chain of `properties` keys from the schema root to the annotated property; it is
    /// also the path of the value inside `tools/call` `arguments`.
    pub path: Vec<String>,
    /// The declared type of the property.
    pub kind: ParamKind,
}

impl HeaderParam {
    /// The full HTTP header name, `Mcp-Param-<header_name>`.
    pub fn http_header_name(&self) -> String {
        format!("{PARAM_HEADER_PREFIX}{}", self.header_name)
    }
}

/// An `x-mcp-header` annotation that breaks a rule; the whole tool is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid x-mcp-header at {pointer}: {rule}")]
pub struct InvalidAnnotation {
    /// JSON Pointer (RFC 6901) of the schema object carrying the annotation,
    /// e.g. `/properties/region`.
    pub pointer: String,
    /// The rule the annotation breaks.
    pub rule: AnnotationRule,
}

/// The rule an [`InvalidAnnotation`] breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnnotationRule {
    /// The annotation value is not a JSON string.
    #[error("the value must be a string")]
    NotAString,
    /// The annotation value is the empty string.
    #[error("the value must not be empty")]
    Empty,
    /// The value contains a control character (including CR, LF and tab).
    #[error("the value contains the control character {0:?}")]
    ControlChar(char),
    /// The value contains a non-ASCII character.
    #[error("the value contains the non-ASCII character {0:?}")]
    NonAscii(char),
    /// The value contains an ASCII character that is not an RFC 9110 `tchar`.
    #[error("the value contains {0:?}, which is not an HTTP token character (RFC 9110 §5.1)")]
    NotTokenChar(char),
    /// The annotated subschema is reached through the named keyword, not only `properties`.
    #[error(
        "the property is not reachable from the root through `properties` only (found under `{0}`)"
    )]
    NotStaticallyReachable(String),
    /// The annotated property has no `type`.
    #[error("the property has no `type`; it must be integer, string or boolean")]
    MissingType,
    /// The annotated property's `type` is an array or other non-string.
    #[error("the property's `type` must be a single string (integer, string or boolean)")]
    TypeNotSingle,
    /// The annotated property's `type` is not a permitted primitive (e.g. `number`, `object`).
    #[error("the property's type `{0}` is not allowed; it must be integer, string or boolean")]
    UnsupportedType(String),
    /// Another annotation has the same value, compared case-insensitively.
    #[error("the value {name:?} duplicates {other_name:?} at {other_pointer} (case-insensitive)")]
    Duplicate {
        /// This annotation's value.
        name: String,
        /// The earlier annotation's value.
        other_name: String,
        /// The earlier annotation's JSON Pointer.
        other_pointer: String,
    },
}

/// Keywords whose value is a map of name → subschema.
const MAP_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];
/// Keywords whose value is a subschema.
const SCHEMA_KEYWORDS: &[&str] = &[
    "items",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
];
/// Keywords whose value is an array of subschemas.
const ARRAY_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];

/// Finds and checks every `x-mcp-header` annotation in `input_schema`.
///
/// Returns the annotations in schema order, or the first rule broken. An empty vector means the
/// tool mirrors no parameters.
pub fn validate_annotations(
    input_schema: &Map<String, Value>,
) -> Result<Vec<HeaderParam>, InvalidAnnotation> {
    let mut found = Vec::new();
    let mut pointer = Pointer::default();
    walk(
        input_schema,
        Some(&mut Vec::new()),
        &mut pointer,
        &mut found,
    )?;
    Ok(found.into_iter().map(|(param, _)| param).collect())
}

/// Where a walk is: the pointer and, for the first non-`properties` hop, its keyword.
#[derive(Debug, Default)]
struct Pointer {
    segments: Vec<String>,
    /// The first keyword other than `properties` on the way here, if any.
    unreachable_via: Option<String>,
}

impl fmt::Display for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.segments.is_empty() {
            return f.write_str("(root)");
        }
        for s in &self.segments {
            write!(f, "/{}", s.replace('~', "~0").replace('/', "~1"))?;
        }
        Ok(())
    }
}

/// Visits one schema object. `path` is `Some` while the node is statically reachable.
fn walk(
    schema: &Map<String, Value>,
    path: Option<&mut Vec<String>>,
    pointer: &mut Pointer,
    found: &mut Vec<(HeaderParam, String)>,
) -> Result<(), InvalidAnnotation> {
    let mut path = path;
    if let Some(value) = schema.get(KEYWORD) {
        let param = check_annotation(schema, value, path.as_deref(), pointer)?;
        let here = pointer.to_string();
        let lower = param.header_name.to_ascii_lowercase();
        if let Some((other, other_pointer)) = found
            .iter()
            .find(|(p, _)| p.header_name.to_ascii_lowercase() == lower)
        {
            return Err(InvalidAnnotation {
                pointer: here,
                rule: AnnotationRule::Duplicate {
                    name: param.header_name,
                    other_name: other.header_name.clone(),
                    other_pointer: other_pointer.clone(),
                },
            });
        }
        found.push((param, here));
    }

    for (keyword, value) in schema {
        let is_properties = keyword == "properties";
        let enter_keyword = |pointer: &mut Pointer| {
            pointer.segments.push(keyword.clone());
            let set_via = !is_properties && pointer.unreachable_via.is_none();
            if set_via {
                pointer.unreachable_via = Some(keyword.clone());
            }
            set_via
        };
        let leave_keyword = |pointer: &mut Pointer, set_via: bool| {
            if set_via {
                pointer.unreachable_via = None;
            }
            pointer.segments.pop();
        };

        if MAP_KEYWORDS.contains(&keyword.as_str()) {
            let Value::Object(map) = value else { continue };
            let set_via = enter_keyword(pointer);
            for (name, sub) in map {
                let Value::Object(sub) = sub else { continue };
                pointer.segments.push(name.clone());
                match (is_properties, path.as_deref_mut()) {
                    (true, Some(p)) => {
                        p.push(name.clone());
                        let r = walk(sub, Some(p), pointer, found);
                        p.pop();
                        r?;
                    }
                    _ => walk(sub, None, pointer, found)?,
                }
                pointer.segments.pop();
            }
            leave_keyword(pointer, set_via);
        } else if SCHEMA_KEYWORDS.contains(&keyword.as_str())
            || ARRAY_KEYWORDS.contains(&keyword.as_str())
        {
            let set_via = enter_keyword(pointer);
            match value {
                Value::Object(sub) => walk(sub, None, pointer, found)?,
                Value::Array(items) if ARRAY_KEYWORDS.contains(&keyword.as_str()) => {
                    for (i, sub) in items.iter().enumerate() {
                        let Value::Object(sub) = sub else { continue };
                        pointer.segments.push(i.to_string());
                        walk(sub, None, pointer, found)?;
                        pointer.segments.pop();
                    }
                }
                _ => {}
            }
            leave_keyword(pointer, set_via);
        }
    }
    Ok(())
}

/// Checks one annotation's value, position and property type.
fn check_annotation(
    schema: &Map<String, Value>,
    value: &Value,
    path: Option<&Vec<String>>,
    pointer: &Pointer,
) -> Result<HeaderParam, InvalidAnnotation> {
    let fail = |rule| InvalidAnnotation {
        pointer: pointer.to_string(),
        rule,
    };
    let Value::String(name) = value else {
        return Err(fail(AnnotationRule::NotAString));
    };
    if name.is_empty() {
        return Err(fail(AnnotationRule::Empty));
    }
    if let Some(c) = name.chars().find(|&c| !is_tchar(c)) {
        let rule = if c.is_ascii_control() {
            AnnotationRule::ControlChar(c)
        } else if !c.is_ascii() {
            AnnotationRule::NonAscii(c)
        } else {
            AnnotationRule::NotTokenChar(c)
        };
        return Err(fail(rule));
    }
    let Some(path) = path else {
        let via = pointer.unreachable_via.clone().unwrap_or_default();
        return Err(fail(AnnotationRule::NotStaticallyReachable(via)));
    };
    if path.is_empty() {
        // The root is the arguments object itself, never a primitive.
        return Err(fail(AnnotationRule::UnsupportedType("object".to_owned())));
    }
    let kind = match schema.get("type") {
        None => return Err(fail(AnnotationRule::MissingType)),
        Some(Value::String(t)) => match t.as_str() {
            "string" => ParamKind::String,
            "integer" => ParamKind::Integer,
            "boolean" => ParamKind::Boolean,
            other => return Err(fail(AnnotationRule::UnsupportedType(other.to_owned()))),
        },
        Some(_) => return Err(fail(AnnotationRule::TypeNotSingle)),
    };
    Ok(HeaderParam {
        header_name: name.clone(),
        path: path.clone(),
        kind,
    })
}

/// RFC 9110 §5.6.2 `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// The value of each annotated parameter in `arguments`, paired with its full header name
/// (`Mcp-Param-<Name>`). A value that is absent, or `null`, is `None`: the client omits the
/// header and the server must not expect it.
pub fn extract_values<'a>(
    params: &[HeaderParam],
    arguments: &'a Map<String, Value>,
) -> Vec<(String, Option<&'a Value>)> {
    params
        .iter()
        .map(|p| (p.http_header_name(), value_at(arguments, &p.path)))
        .collect()
}

/// The non-null value at a `properties` path inside `arguments`.
fn value_at<'a>(arguments: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let (last, parents) = path.split_last()?;
    let mut map = arguments;
    for key in parents {
        map = map.get(key)?.as_object()?;
    }
    map.get(last).filter(|v| !v.is_null())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("schema must be an object"),
        }
    }

    fn validate(v: Value) -> Result<Vec<HeaderParam>, InvalidAnnotation> {
        validate_annotations(&schema(v))
    }

    /// Validates a one-property schema `{"type":"object","properties":{"p": prop}}`.
    fn one(prop: Value) -> Result<Vec<HeaderParam>, InvalidAnnotation> {
        let mut properties = Map::new();
        properties.insert("p".to_owned(), prop);
        validate(json!({"type": "object", "properties": Value::Object(properties)}))
    }

    fn rule(r: Result<Vec<HeaderParam>, InvalidAnnotation>) -> AnnotationRule {
        r.unwrap_err().rule
    }

    fn param(name: &str, path: &[&str], kind: ParamKind) -> HeaderParam {
        HeaderParam {
            header_name: name.to_owned(),
            path: path.iter().map(|s| (*s).to_owned()).collect(),
            kind,
        }
    }

    #[test]
    fn valid_tool_of_the_conformance_suite() {
        let got = validate(json!({
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            "required": ["region"]
        }))
        .unwrap();
        assert_eq!(got, [param("Region", &["region"], ParamKind::String)]);
        assert_eq!(got[0].http_header_name(), "Mcp-Param-Region");
    }

    #[test]
    fn all_primitive_kinds_and_unannotated_ignored() {
        let got = validate(json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "x-mcp-header": "A"},
                "b": {"type": "integer", "x-mcp-header": "B"},
                "c": {"type": "boolean", "x-mcp-header": "C"},
                "d": {"type": "number"},
                "e": {"type": "string"}
            }
        }))
        .unwrap();
        assert_eq!(
            got,
            [
                param("A", &["a"], ParamKind::String),
                param("B", &["b"], ParamKind::Integer),
                param("C", &["c"], ParamKind::Boolean),
            ]
        );
    }

    #[test]
    fn no_annotations_is_empty() {
        assert_eq!(validate(json!({"type": "object"})).unwrap(), []);
        assert_eq!(validate(json!({})).unwrap(), []);
    }

    #[test]
    fn nested_properties_are_reachable() {
        let got = validate(json!({
            "type": "object",
            "properties": {
                "target": {
                    "type": "object",
                    "properties": {
                        "location": {
                            "type": "object",
                            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}
                        },
                        "tenant": {"type": "integer", "x-mcp-header": "Tenant"}
                    }
                }
            }
        }))
        .unwrap();
        assert_eq!(
            got,
            [
                param(
                    "Region",
                    &["target", "location", "region"],
                    ParamKind::String
                ),
                param("Tenant", &["target", "tenant"], ParamKind::Integer),
            ]
        );
    }

    #[test]
    fn tchar_punctuation_allowed() {
        let name = "A!#$%&'*+-.^_`|~9";
        assert_eq!(
            one(json!({"type": "string", "x-mcp-header": name})).unwrap()[0].header_name,
            name
        );
    }

    // ---- the invalid tools of `http-invalid-tool-headers` (CONFORMANCE.md §6.2) ----

    #[test]
    fn empty_value() {
        assert_eq!(
            rule(one(json!({"type": "string", "x-mcp-header": ""}))),
            AnnotationRule::Empty
        );
    }

    #[test]
    fn object_array_null_number_types() {
        for t in ["object", "array", "null", "number"] {
            assert_eq!(
                rule(one(json!({"type": t, "x-mcp-header": "X"}))),
                AnnotationRule::UnsupportedType(t.to_owned()),
                "{t}"
            );
        }
        let array_with_items = json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}}
        });
        assert_eq!(
            rule(validate(array_with_items)),
            AnnotationRule::UnsupportedType("array".to_owned())
        );
    }

    #[test]
    fn missing_or_array_type() {
        assert_eq!(
            rule(one(json!({"x-mcp-header": "X"}))),
            AnnotationRule::MissingType
        );
        assert_eq!(
            rule(one(
                json!({"type": ["string", "null"], "x-mcp-header": "X"})
            )),
            AnnotationRule::TypeNotSingle
        );
    }

    #[test]
    fn duplicate_same_case() {
        let err = validate(json!({
            "type": "object",
            "properties": {
                "field1": {"type": "string", "x-mcp-header": "Region"},
                "field2": {"type": "string", "x-mcp-header": "Region"}
            }
        }))
        .unwrap_err();
        assert_eq!(err.pointer, "/properties/field2");
        assert_eq!(
            err.rule,
            AnnotationRule::Duplicate {
                name: "Region".to_owned(),
                other_name: "Region".to_owned(),
                other_pointer: "/properties/field1".to_owned(),
            }
        );
    }

    #[test]
    fn duplicate_different_case() {
        let err = validate(json!({
            "type": "object",
            "properties": {
                "field1": {"type": "string", "x-mcp-header": "MyField"},
                "field2": {"type": "string", "x-mcp-header": "myfield"}
            }
        }))
        .unwrap_err();
        assert!(
            matches!(err.rule, AnnotationRule::Duplicate { .. }),
            "{err}"
        );
    }

    #[test]
    fn duplicate_across_nesting_levels() {
        let err = validate(json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "x-mcp-header": "Region"},
                "b": {"type": "object", "properties": {"c": {"type": "string", "x-mcp-header": "REGION"}}}
            }
        }))
        .unwrap_err();
        assert_eq!(err.pointer, "/properties/b/properties/c");
    }

    #[test]
    fn space_in_name() {
        assert_eq!(
            rule(one(json!({"type": "string", "x-mcp-header": "My Region"}))),
            AnnotationRule::NotTokenChar(' ')
        );
    }

    #[test]
    fn colon_in_name() {
        assert_eq!(
            rule(one(
                json!({"type": "string", "x-mcp-header": "Region:Primary"})
            )),
            AnnotationRule::NotTokenChar(':')
        );
    }

    #[test]
    fn non_ascii_name() {
        assert_eq!(
            rule(one(json!({"type": "string", "x-mcp-header": "Région"}))),
            AnnotationRule::NonAscii('é')
        );
    }

    #[test]
    fn control_chars_in_name() {
        for (name, c) in [
            ("Region\t1", '\t'),
            ("Region\r\n", '\r'),
            ("A\nB", '\n'),
            ("A\u{7f}", '\u{7f}'),
            ("\u{0}", '\u{0}'),
        ] {
            assert_eq!(
                rule(one(json!({"type": "string", "x-mcp-header": name}))),
                AnnotationRule::ControlChar(c),
                "{name:?}"
            );
        }
    }

    #[test]
    fn other_non_token_chars() {
        for c in [
            '(', ')', ',', '/', ';', '<', '=', '>', '?', '@', '[', '\\', ']', '{', '}', '"',
        ] {
            let name = format!("A{c}B");
            assert_eq!(
                rule(one(json!({"type": "string", "x-mcp-header": name}))),
                AnnotationRule::NotTokenChar(c)
            );
        }
    }

    #[test]
    fn non_string_value() {
        for v in [
            json!(1),
            json!(null),
            json!(true),
            json!(["A"]),
            json!({"a": 1}),
        ] {
            assert_eq!(
                rule(one(json!({"type": "string", "x-mcp-header": v}))),
                AnnotationRule::NotAString
            );
        }
    }

    // ---- static reachability ----

    #[test]
    fn forbidden_keywords() {
        let annotated = json!({"type": "string", "x-mcp-header": "X"});
        let cases: Vec<(&str, Value)> = vec![
            ("items", json!({"type": "array", "items": annotated})),
            ("items", json!({"type": "array", "items": [annotated]})),
            (
                "prefixItems",
                json!({"type": "array", "prefixItems": [annotated]}),
            ),
            ("contains", json!({"type": "array", "contains": annotated})),
            ("oneOf", json!({"oneOf": [annotated]})),
            ("anyOf", json!({"anyOf": [{"type": "string"}, annotated]})),
            ("allOf", json!({"allOf": [annotated]})),
            ("not", json!({"not": annotated})),
            ("if", json!({"if": annotated})),
            ("then", json!({"then": annotated})),
            ("else", json!({"else": annotated})),
            ("$defs", json!({"$defs": {"r": annotated}})),
            ("definitions", json!({"definitions": {"r": annotated}})),
            (
                "additionalProperties",
                json!({"type": "object", "additionalProperties": annotated}),
            ),
            (
                "patternProperties",
                json!({"type": "object", "patternProperties": {"^r": annotated}}),
            ),
            (
                "dependentSchemas",
                json!({"dependentSchemas": {"a": annotated}}),
            ),
            ("propertyNames", json!({"propertyNames": annotated})),
            (
                "unevaluatedProperties",
                json!({"unevaluatedProperties": annotated}),
            ),
        ];
        for (keyword, sub) in cases {
            // Both at the root and under a reachable property.
            for s in [
                sub.clone(),
                json!({"type": "object", "properties": {"p": sub}}),
            ] {
                assert_eq!(
                    rule(validate(s.clone())),
                    AnnotationRule::NotStaticallyReachable(keyword.to_owned()),
                    "{s}"
                );
            }
        }
    }

    #[test]
    fn properties_below_a_forbidden_keyword_stay_unreachable() {
        let err = validate(json!({
            "type": "object",
            "properties": {
                "list": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"r": {"type": "string", "x-mcp-header": "Region"}}
                    }
                }
            }
        }))
        .unwrap_err();
        assert_eq!(err.pointer, "/properties/list/items/properties/r");
        assert_eq!(
            err.rule,
            AnnotationRule::NotStaticallyReachable("items".to_owned())
        );
        assert_eq!(
            err.to_string(),
            "invalid x-mcp-header at /properties/list/items/properties/r: the property is not \
             reachable from the root through `properties` only (found under `items`)"
        );
    }

    #[test]
    fn ref_target_is_unreachable() {
        let err = validate(json!({
            "type": "object",
            "$defs": {"region": {"type": "string", "x-mcp-header": "Region"}},
            "properties": {"region": {"$ref": "#/$defs/region"}}
        }))
        .unwrap_err();
        assert_eq!(
            err.rule,
            AnnotationRule::NotStaticallyReachable("$defs".to_owned())
        );
        assert_eq!(err.pointer, "/$defs/region");
    }

    #[test]
    fn annotation_on_root_is_invalid() {
        assert_eq!(
            rule(validate(json!({"type": "object", "x-mcp-header": "Root"}))),
            AnnotationRule::UnsupportedType("object".to_owned())
        );
    }

    #[test]
    fn data_positions_are_not_annotations() {
        let got = validate(json!({
            "type": "object",
            "properties": {
                "x-mcp-header": {"type": "string"},
                "a": {
                    "type": "string",
                    "default": "v",
                    "const": {"x-mcp-header": "No"},
                    "examples": [{"x-mcp-header": "No"}]
                }
            },
            "x-vendor": {"x-mcp-header": "No"}
        }))
        .unwrap();
        assert_eq!(got, []);
    }

    #[test]
    fn pointer_escapes() {
        let err = validate(json!({
            "type": "object",
            "properties": {"a/b~c": {"type": "number", "x-mcp-header": "X"}}
        }))
        .unwrap_err();
        assert_eq!(err.pointer, "/properties/a~1b~0c");
    }

    // ---- extraction ----

    #[test]
    fn extract_values_at_exact_paths() {
        let params = validate(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
                "priority": {"type": "integer", "x-mcp-header": "Priority"},
                "t": {"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Tenant"}}}
            }
        }))
        .unwrap();
        let args = schema(json!({
            "region": "us-west1",
            "verbose": null,
            "t": {"id": 7},
            "extra": 1
        }));
        let mut got = extract_values(&params, &args);
        got.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            got,
            [
                ("Mcp-Param-Priority".to_owned(), None),
                ("Mcp-Param-Region".to_owned(), Some(&json!("us-west1"))),
                ("Mcp-Param-Tenant".to_owned(), Some(&json!(7))),
                ("Mcp-Param-Verbose".to_owned(), None),
            ]
        );
    }

    #[test]
    fn extract_through_non_object_is_none() {
        let params = [param("Tenant", &["t", "id"], ParamKind::Integer)];
        for args in [
            json!({"t": 5}),
            json!({"t": null}),
            json!({"t": [1]}),
            json!({}),
        ] {
            assert_eq!(
                extract_values(&params, &schema(args)),
                [("Mcp-Param-Tenant".to_owned(), None)]
            );
        }
    }
}
