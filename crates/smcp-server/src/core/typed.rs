//! Schemas derived from Rust types (cargo feature `schemars`, on by default).
//!
//! A tool's `inputSchema` and `outputSchema`, an elicitation's `requestedSchema` and a
//! prompt's arguments can be written by hand or derived from a type that implements
//! [`schemars::JsonSchema`], so the schema and the type the handler reads cannot drift apart:
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use smcp_server::typed::Json;
//! use smcp_server::tool;
//!
//! /// Arguments of `weather`.
//! #[derive(Deserialize, JsonSchema)]
//! struct WeatherArgs {
//!     /// City name, e.g. "Lisbon".
//!     city: String,
//!     /// Days ahead, 0 for today.
//!     #[serde(default)]
//!     days: u8,
//! }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct Forecast {
//!     city: String,
//!     celsius: f64,
//! }
//!
//! let weather = tool("weather")
//!     .description("Tomorrow's weather")
//!     .typed(|_call, args: WeatherArgs| async move {
//!         Ok(Json(Forecast { city: args.city, celsius: 21.5 }))
//!     });
//! ```
//!
//! The schemas are JSON Schema 2020-12 (the dialect MCP assumes when `$schema` is absent, so
//! none is emitted), with every subschema inlined (no `$defs`/`$ref` except for recursive
//! types), so an `x-mcp-header` annotation
//! (`#[schemars(extend("x-mcp-header" = "Region"))]`) on a field of a nested struct is still
//! reachable through `properties`. An input schema describes what deserializes (`Option`
//! fields and `#[serde(default)]` fields are not required; `Option<T>` also accepts `null`,
//! except on a field annotated `x-mcp-header`, which a header cannot carry); an output schema
//! describes what serializes.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde_json::{Map, Value};
use smcp_proto::client::elicitation::ElicitRequestedSchema;
use smcp_proto::server::prompts::PromptArgument;
use smcp_proto::server::tools::CallToolResult;

use super::handler::HandlerError;

pub use schemars;

/// A tool's structured result: serialized into `structuredContent`, with the same JSON in a
/// text block for clients that read only `content` (`server/tools.mdx` §Structured Content:
/// a tool that returns structured content SHOULD also return it as text). Returning it from
/// a handler also derives the tool's `outputSchema` from `T`, and the server validates every
/// result against it before it is sent.
///
/// # Examples
///
/// ```
/// use smcp_server::prelude::*;
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Stock {
///     sku: String,
///     count: u32,
/// }
///
/// let stock = tool("stock").typed(|_call, sku: Sku| async move {
///     Ok(Json(Stock { sku: sku.sku, count: 3 }))
/// });
/// # #[derive(serde::Deserialize, schemars::JsonSchema)]
/// # struct Sku { sku: String }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

/// A success result whose `structuredContent` is `value` serialized, with the same JSON as its
/// one text block (for a handler that declares its `outputSchema` by hand).
///
/// # Examples
///
/// ```
/// use smcp_server::typed::structured_result;
///
/// let result = structured_result(&serde_json::json!({"count": 2}))?;
/// assert_eq!(result.structured_content, Some(serde_json::json!({"count": 2})));
/// assert_eq!(result.text_content(), r#"{"count":2}"#);
/// # Ok::<(), smcp_server::HandlerError>(())
/// ```
pub fn structured_result<T: Serialize + ?Sized>(value: &T) -> Result<CallToolResult, HandlerError> {
    serde_json::to_value(value)
        .map(CallToolResult::structured)
        .map_err(|e| HandlerError::internal(format!("structuredContent: {e}")))
}

fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|s| {
        s.meta_schema = None;
        s.inline_subschemas = true;
    })
}

/// The `inputSchema` for arguments of type `T` (what `T` deserializes from).
///
/// # Examples
///
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Args {
///     city: String,
///     days: Option<u8>,
/// }
///
/// let schema = smcp_server::typed::input_schema::<Args>();
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["required"], serde_json::json!(["city"]));
/// ```
pub fn input_schema<T: JsonSchema + ?Sized>() -> Value {
    let schema = settings()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(root) = &mut value {
        header_fields_not_null(root);
    }
    value
}

/// The `outputSchema` for results of type `T` (what `T` serializes to).
///
/// # Examples
///
/// ```
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Forecast {
///     celsius: f64,
/// }
///
/// let schema = smcp_server::typed::output_schema::<Forecast>();
/// assert_eq!(schema["properties"]["celsius"]["type"], "number");
/// ```
pub fn output_schema<T: JsonSchema + ?Sized>() -> Value {
    settings()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// A property annotated `x-mcp-header` is mirrored into a header, which cannot carry `null`:
/// an `Option<String>` field's `"type": ["string", "null"]` becomes `"type": "string"` (the
/// field stays optional), so the annotation is valid. Walks `properties` chains only, the
/// places an annotation may be.
fn header_fields_not_null(schema: &mut Map<String, Value>) {
    if schema.contains_key(smcp_proto::x_mcp_header::KEYWORD)
        && let Some(Value::Array(types)) = schema.get("type")
    {
        let rest: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if let [single] = rest.as_slice() {
            let single = (*single).clone();
            schema.insert("type".to_owned(), single);
        }
    }
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for property in properties.values_mut() {
            if let Value::Object(property) = property {
                header_fields_not_null(property);
            }
        }
    }
}

/// The `requestedSchema` of a form elicitation that `T` deserializes from: a flat object of
/// primitive fields (`client/elicitation.mdx` §Requested Schema). `Option` fields are
/// optional, unit enums become single-select fields (titled by their doc comments, if any),
/// a `Vec` of a unit enum a multi-select field.
///
/// # Errors
///
/// What `T` has that a form cannot ask, naming the field: a nested object, an array of
/// anything but an enum, a number with a `format` the form cannot enforce is dropped rather
/// than refused.
///
/// # Examples
///
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Signup {
///     email: String,
///     newsletter: Option<bool>,
/// }
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Nested {
///     address: Signup,
/// }
///
/// assert!(smcp_server::typed::elicitation_schema::<Signup>().is_ok());
/// let err = smcp_server::typed::elicitation_schema::<Nested>().unwrap_err();
/// assert!(err.contains("address"), "{err}");
/// ```
pub fn elicitation_schema<T: JsonSchema + ?Sized>() -> Result<ElicitRequestedSchema, String> {
    let Value::Object(mut root) = input_schema::<T>() else {
        return Err("the type's schema is not an object".to_owned());
    };
    if root.get("type") != Some(&Value::String("object".to_owned())) {
        return Err("a form elicitation asks for an object: the type must be a struct".into());
    }
    let mut out = Map::new();
    out.insert("type".to_owned(), Value::from("object"));
    let mut properties = Map::new();
    if let Some(Value::Object(props)) = root.remove("properties") {
        for (name, field) in props {
            let field = form_field(field).map_err(|reason| format!("field {name:?}: {reason}"))?;
            properties.insert(name, field);
        }
    }
    out.insert("properties".to_owned(), Value::Object(properties));
    if let Some(required) = root.remove("required") {
        out.insert("required".to_owned(), required);
    }
    serde_json::from_value(Value::Object(out)).map_err(|e| e.to_string())
}

/// One property of a derived schema as a form field, or why it cannot be one.
fn form_field(field: Value) -> Result<Value, String> {
    let Value::Object(mut field) = field else {
        return Err("the field's schema is not an object".into());
    };
    // `Option<T>`: `"type": [T, "null"]`, or `anyOf: [T, {"type": "null"}]` for enums.
    if let Some(Value::Array(types)) = field.get("type") {
        let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        match <[Value; 1]>::try_from(rest) {
            Ok([single]) => {
                field.insert("type".to_owned(), single);
            }
            Err(_) => return Err("a form field has one type".into()),
        }
    }
    if let Some(Value::Array(any_of)) = field.get("anyOf").cloned() {
        let rest: Vec<Value> = any_of
            .into_iter()
            .filter(|s| s.get("type") != Some(&Value::from("null")))
            .collect();
        match <[Value; 1]>::try_from(rest) {
            Ok([Value::Object(inner)]) => {
                field.remove("anyOf");
                for (k, v) in inner {
                    field.entry(k).or_insert(v);
                }
            }
            _ => return Err("a form field cannot be one of several schemas".into()),
        }
    }
    // A unit enum with documented variants: `oneOf: [{const, description}]` → titled choices.
    if let Some(Value::Array(one_of)) = field.get("oneOf").cloned() {
        let mut choices = Vec::with_capacity(one_of.len());
        for choice in one_of {
            let Some(value) = choice.get("const").and_then(Value::as_str) else {
                return Err("only unit enum variants can be choices".into());
            };
            let title = choice
                .get("description")
                .or_else(|| choice.get("title"))
                .and_then(Value::as_str)
                .unwrap_or(value);
            choices.push(serde_json::json!({"const": value, "title": title}));
        }
        field.insert("oneOf".to_owned(), Value::Array(choices));
        field.insert("type".to_owned(), Value::from("string"));
    }
    match field.get("type").and_then(Value::as_str) {
        Some("string" | "boolean") => {}
        Some("integer" | "number") => {
            // `format: "uint8"` and the like are documentation; the bounds schemars adds
            // (`minimum`, `maximum`) stay.
            field.remove("format");
        }
        Some("array") => {
            let items = field.get("items");
            let enumerated =
                items.is_some_and(|i| i.get("enum").is_some() || i.get("anyOf").is_some());
            if !enumerated {
                return Err("an array field must be a list of unit enum values".into());
            }
            field.remove("uniqueItems");
        }
        Some("object") => return Err("a form cannot ask for a nested object".into()),
        Some(other) => return Err(format!("a form field cannot have type {other:?}")),
        None => return Err("the field has no type a form can ask for".into()),
    }
    Ok(Value::Object(field))
}

/// The prompt arguments `T` deserializes from: every property of `T` is a string argument
/// (`server/prompts.mdx`: prompt arguments are strings), required unless it is an `Option` or
/// has a default, described by its doc comment.
///
/// # Errors
///
/// A field that is not a string, naming it.
///
/// # Examples
///
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Review {
///     /// The code to review.
///     code: String,
///     focus: Option<String>,
/// }
///
/// let arguments = smcp_server::typed::prompt_arguments::<Review>()?;
/// assert_eq!(arguments[0].name, "code");
/// assert_eq!(arguments[0].required, Some(true));
/// assert_eq!(arguments[0].description.as_deref(), Some("The code to review."));
/// # Ok::<(), String>(())
/// ```
pub fn prompt_arguments<T: JsonSchema + ?Sized>() -> Result<Vec<PromptArgument>, String> {
    let root = input_schema::<T>();
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err("prompt arguments come from a struct".into());
    }
    let required: Vec<&str> = root
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut arguments = Vec::new();
    for (name, field) in root
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let is_string = match field.get("type") {
            Some(Value::String(t)) => t == "string",
            Some(Value::Array(types)) => types.iter().all(|t| t == "string" || t == "null"),
            _ => false,
        };
        if !is_string {
            return Err(format!(
                "field {name:?}: prompt arguments are strings (use String or Option<String>)"
            ));
        }
        let mut argument = PromptArgument::new(name.clone(), required.contains(&name.as_str()));
        argument.title = field
            .get("title")
            .and_then(Value::as_str)
            .map(str::to_owned);
        argument.description = field
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned);
        arguments.push(argument);
    }
    Ok(arguments)
}
