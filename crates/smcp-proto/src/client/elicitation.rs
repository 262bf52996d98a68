//! Elicitation (`client/elicitation.mdx`; `schema.ts` `ElicitRequestParams`,
//! `ElicitRequestFormParams`, `ElicitRequestURLParams`, `PrimitiveSchemaDefinition`,
//! `ElicitResult`).
//!
//! Form mode (`mode` absent or `"form"`) carries a restricted, flat JSON Schema whose properties
//! are [`PrimitiveSchemaDefinition`]s; URL mode sends the user to a URL. The unions are
//! deserialized by hand from their discriminators (`mode`; `type` plus `enum`/`oneOf`/`items`).

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::{from_value, num, str_member};

/// The explicit `"mode": "form"` marker of a form elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FormMode {
    /// `"form"`.
    Form,
}

/// The restricted JSON Schema of a form (`requestedSchema`): `type: "object"`, flat properties.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "object")]
pub struct ElicitRequestedSchema {
    /// `$schema` dialect URI.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// The fields.
    pub properties: BTreeMap<String, PrimitiveSchemaDefinition>,
    /// Names of required fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
}

/// Params of a form-mode `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestFormParams {
    /// `"form"` when sent explicitly; absent also means form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormMode>,
    /// What is being asked, for the user.
    pub message: String,
    /// The form.
    pub requested_schema: ElicitRequestedSchema,
}

/// Params of a URL-mode `elicitation/create` (writes `"mode": "url"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename = "url")]
pub struct ElicitRequestURLParams {
    /// What is being asked, for the user.
    pub message: String,
    /// The URL to open (only with the user's consent; never prefetched).
    pub url: String,
}

/// `ElicitRequestFormParams | ElicitRequestURLParams`, dispatched on `mode`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ElicitRequestParams {
    /// Form mode.
    Form(ElicitRequestFormParams),
    /// URL mode.
    Url(ElicitRequestURLParams),
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match value.get("mode") {
            None => from_value(value).map(Self::Form),
            Some(Value::String(m)) if m == "form" => from_value(value).map(Self::Form),
            Some(Value::String(m)) if m == "url" => from_value(value).map(Self::Url),
            Some(other) => Err(de::Error::custom(format!(
                "unknown elicitation mode {other} (expected \"form\" or \"url\")"
            ))),
        }
    }
}

/// `format` of a [`StringSchema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StringFormat {
    /// `"email"`.
    Email,
    /// `"uri"`.
    Uri,
    /// `"date"`.
    Date,
    /// `"date-time"`.
    DateTime,
}

/// A free-text field (`"type": "string"`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string", rename_all = "camelCase")]
pub struct StringSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// SEP-2356/2631 file field declaration (additive member; REQUIREMENTS D-10). The value
    /// is a `data:` URI or a server-issued file URI.
    #[serde(
        rename = "x-mcp-file",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub x_mcp_file: Option<crate::ext::files::FileInputDescriptor>,
}

/// `"number"` or `"integer"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberType {
    /// `"number"`.
    Number,
    /// `"integer"`.
    Integer,
}

/// A numeric field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NumberSchema {
    /// `number` or `integer`.
    #[serde(rename = "type")]
    pub kind: NumberType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "num::opt_f64"
    )]
    pub minimum: Option<f64>,
    /// Maximum.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "num::opt_f64"
    )]
    pub maximum: Option<f64>,
    /// Default value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "num::opt_f64"
    )]
    pub default: Option<f64>,
}

/// A checkbox (`"type": "boolean"`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "boolean")]
pub struct BooleanSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

/// A titled choice: `{"const": value, "title": label}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnumOption {
    /// The value.
    #[serde(rename = "const")]
    pub value: String,
    /// The label.
    pub title: String,
}

/// Single choice from plain values (`"type": "string"`, `enum`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string")]
pub struct UntitledSingleSelectEnumSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// Single choice from titled values (`"type": "string"`, `oneOf`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string", rename_all = "camelCase")]
pub struct TitledSingleSelectEnumSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    pub one_of: Vec<EnumOption>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// `items` of an [`UntitledMultiSelectEnumSchema`]: `{"type": "string", "enum": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string")]
pub struct UntitledEnumItems {
    /// The values.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
}

/// `items` of a [`TitledMultiSelectEnumSchema`]: `{"anyOf": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledEnumItems {
    /// The choices.
    pub any_of: Vec<EnumOption>,
}

/// Multiple choice from plain values (`"type": "array"`, `items.enum`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "array", rename_all = "camelCase")]
pub struct UntitledMultiSelectEnumSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The values.
    pub items: UntitledEnumItems,
    /// Default selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// Multiple choice from titled values (`"type": "array"`, `items.anyOf`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "array", rename_all = "camelCase")]
pub struct TitledMultiSelectEnumSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of selections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: TitledEnumItems,
    /// Default selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// Deprecated single choice with parallel `enumNames` labels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "string", rename_all = "camelCase")]
pub struct LegacyTitledEnumSchema {
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Labels, parallel to `enum`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// One form field (`schema.ts` `PrimitiveSchemaDefinition`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PrimitiveSchemaDefinition {
    /// Free text.
    String(StringSchema),
    /// A number or integer.
    Number(NumberSchema),
    /// A boolean.
    Boolean(BooleanSchema),
    /// Single choice, plain values.
    UntitledSingleSelectEnum(UntitledSingleSelectEnumSchema),
    /// Single choice, titled values.
    TitledSingleSelectEnum(TitledSingleSelectEnumSchema),
    /// Multiple choice, plain values.
    UntitledMultiSelectEnum(UntitledMultiSelectEnumSchema),
    /// Multiple choice, titled values.
    TitledMultiSelectEnum(TitledMultiSelectEnumSchema),
    /// Deprecated single choice with `enumNames`.
    LegacyTitledEnum(LegacyTitledEnumSchema),
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let has = |k: &str| value.get(k).is_some();
        match str_member(&value, "type") {
            Some("string") if has("enumNames") => from_value(value).map(Self::LegacyTitledEnum),
            Some("string") if has("enum") => from_value(value).map(Self::UntitledSingleSelectEnum),
            Some("string") if has("oneOf") => from_value(value).map(Self::TitledSingleSelectEnum),
            Some("string") => from_value(value).map(Self::String),
            Some("number" | "integer") => from_value(value).map(Self::Number),
            Some("boolean") => from_value(value).map(Self::Boolean),
            Some("array") => {
                let items = value.get("items");
                if items.and_then(|i| i.get("anyOf")).is_some() {
                    from_value(value).map(Self::TitledMultiSelectEnum)
                } else if items.and_then(|i| i.get("enum")).is_some() {
                    from_value(value).map(Self::UntitledMultiSelectEnum)
                } else {
                    Err(de::Error::custom(
                        "an array field needs items.enum or items.anyOf",
                    ))
                }
            }
            Some(other) => Err(de::Error::custom(format!(
                "unsupported form field type {other:?} (expected string, number, integer, \
                 boolean or array)"
            ))),
            None => Err(de::Error::custom("form field is missing a string \"type\"")),
        }
    }
}

/// The user's choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted (URL mode: consented to open the URL).
    Accept,
    /// Explicitly declined.
    Decline,
    /// Dismissed.
    Cancel,
}

/// A submitted form value: `string | number | boolean | string[]`.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitValue {
    /// A string.
    String(String),
    /// A number.
    Number(f64),
    /// A boolean.
    Bool(bool),
    /// A multi-select answer.
    StringArray(Vec<String>),
}

impl Serialize for ElicitValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::String(s) => serializer.serialize_str(s),
            Self::Number(n) => num::f64(n, serializer),
            Self::Bool(b) => serializer.serialize_bool(*b),
            Self::StringArray(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(s) => Ok(Self::String(s)),
            Value::Bool(b) => Ok(Self::Bool(b)),
            Value::Number(n) => n
                .as_f64()
                .map(Self::Number)
                .ok_or_else(|| de::Error::custom("number out of range")),
            v @ Value::Array(_) => from_value(v).map(Self::StringArray),
            other => Err(de::Error::custom(format!(
                "a form value must be a string, number, boolean or string array, not {other}"
            ))),
        }
    }
}

/// The client's answer to `elicitation/create`. Not a `Result`: it has no `resultType`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// Submitted values (form mode with `accept` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<BTreeMap<String, ElicitValue>>,
}

impl ElicitResult {
    /// An `accept` with `content`.
    pub fn accept(content: BTreeMap<String, ElicitValue>) -> Self {
        Self {
            action: ElicitAction::Accept,
            content: Some(content),
        }
    }

    /// A `decline`.
    pub fn decline() -> Self {
        Self {
            action: ElicitAction::Decline,
            content: None,
        }
    }

    /// A `cancel`.
    pub fn cancel() -> Self {
        Self {
            action: ElicitAction::Cancel,
            content: None,
        }
    }

    /// An `accept` whose content is `value` serialized: a struct of primitive fields (or a
    /// map). Fails when `value` is not an object of strings, numbers, booleans and string
    /// lists.
    pub fn accept_with<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        let content = serde_json::to_value(value)?;
        // `null` members are absent answers.
        let content = match content {
            Value::Object(map) => {
                Value::Object(map.into_iter().filter(|(_, v)| !v.is_null()).collect())
            }
            other => other,
        };
        Ok(Self::accept(serde_json::from_value(content)?))
    }

    /// Whether the user submitted the form (or consented to the URL).
    pub fn is_accepted(&self) -> bool {
        self.action == ElicitAction::Accept
    }

    /// One submitted value as `T` (`bool`, `String`, `f64`, `u32`, `Vec<String>`, …): `None`
    /// when it is absent or not a `T`.
    pub fn get<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        let value = self.content.as_ref()?.get(key)?;
        serde_json::to_value(value)
            .ok()
            .and_then(|v| serde_json::from_value(v).ok())
    }

    /// The submitted content deserialized into `T` (a struct with a field per form field):
    /// `Ok(None)` when the user did not accept.
    pub fn content_as<T: serde::de::DeserializeOwned>(
        &self,
    ) -> Result<Option<T>, serde_json::Error> {
        match (&self.action, &self.content) {
            (ElicitAction::Accept, content) => {
                let value = serde_json::to_value(content.clone().unwrap_or_default())?;
                serde_json::from_value(value).map(Some)
            }
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_access_to_answers() {
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        struct Form {
            ok: bool,
            name: String,
            copies: u32,
            tags: Vec<String>,
            note: Option<String>,
        }
        let form = Form {
            ok: true,
            name: "Ada".into(),
            copies: 3,
            tags: vec!["a".into()],
            note: None,
        };
        let answer = ElicitResult::accept_with(&form).unwrap();
        assert!(answer.is_accepted());
        assert_eq!(
            serde_json::to_value(&answer).unwrap(),
            json!({"action": "accept", "content": {"ok": true, "name": "Ada", "copies": 3, "tags": ["a"]}})
        );
        assert_eq!(answer.get::<bool>("ok"), Some(true));
        assert_eq!(answer.get::<u32>("copies"), Some(3));
        assert_eq!(answer.get::<String>("ok"), None, "wrong type");
        assert_eq!(answer.get::<String>("note"), None, "absent");
        assert_eq!(answer.content_as::<Form>().unwrap(), Some(form));
        assert_eq!(ElicitResult::decline().content_as::<Form>().unwrap(), None);
        assert!(ElicitResult::accept_with(&json!({"nested": {"a": 1}})).is_err());
    }

    #[test]
    fn mode_dispatch() {
        let p: ElicitRequestParams = serde_json::from_value(json!({
            "message": "m", "requestedSchema": {"type": "object", "properties": {}}
        }))
        .unwrap();
        assert!(matches!(&p, ElicitRequestParams::Form(f) if f.mode.is_none()));
        let p: ElicitRequestParams =
            serde_json::from_value(json!({"mode": "url", "message": "m", "url": "https://x"}))
                .unwrap();
        assert!(matches!(p, ElicitRequestParams::Url(_)));
        assert!(
            serde_json::from_value::<ElicitRequestParams>(json!({"mode": "sms", "message": "m"}))
                .is_err()
        );
    }

    #[test]
    fn field_dispatch() {
        let cases = [
            (
                json!({"type": "string", "enum": ["a"], "enumNames": ["A"]}),
                "Legacy",
            ),
            (json!({"type": "string", "enum": ["a"]}), "UntitledSingle"),
            (
                json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}),
                "TitledSingle",
            ),
            (json!({"type": "string"}), "String"),
            (json!({"type": "integer", "minimum": 1}), "Number"),
            (
                json!({"type": "array", "items": {"type": "string", "enum": ["a"]}}),
                "UntitledMulti",
            ),
            (
                json!({"type": "array", "items": {"anyOf": []}}),
                "TitledMulti",
            ),
        ];
        for (v, want) in cases {
            let d: PrimitiveSchemaDefinition = serde_json::from_value(v.clone()).unwrap();
            assert!(format!("{d:?}").starts_with(want), "{v}: {d:?}");
            assert_eq!(serde_json::to_value(&d).unwrap(), v);
        }
        assert!(
            serde_json::from_value::<PrimitiveSchemaDefinition>(json!({"type": "object"})).is_err()
        );
    }

    #[test]
    fn elicit_values_round_trip() {
        let v = json!({"action": "accept", "content": {"a": "x", "n": 30, "f": 1.5, "b": true, "m": ["x"]}});
        let r: ElicitResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
    }
}
