//! Argument completion (`server/utilities/completion.mdx`; `schema.ts` `CompleteRequestParams`,
//! `CompleteResult`, `PromptReference`, `ResourceTemplateReference`).

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::basic::{Meta, RequestMeta, ResultType};
use crate::json::{from_value, str_member};

/// A reference to a prompt (`"type": "ref/prompt"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "ref/prompt", rename_all = "camelCase")]
pub struct PromptReference {
    /// The prompt name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// A reference to a resource template (`"type": "ref/resource"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "ref/resource")]
pub struct ResourceTemplateReference {
    /// The URI or URI template.
    pub uri: String,
}

/// What is being completed: `PromptReference | ResourceTemplateReference`, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum CompletionReference {
    /// `ref/prompt`.
    Prompt(PromptReference),
    /// `ref/resource`.
    ResourceTemplate(ResourceTemplateReference),
}

impl<'de> Deserialize<'de> for CompletionReference {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match str_member(&value, "type") {
            Some("ref/prompt") => from_value(value).map(Self::Prompt),
            Some("ref/resource") => from_value(value).map(Self::ResourceTemplate),
            Some(other) => Err(de::Error::custom(format!(
                "unknown completion reference type {other:?} (expected ref/prompt or ref/resource)"
            ))),
            None => Err(de::Error::custom(
                "completion reference is missing a string \"type\"",
            )),
        }
    }
}

/// The argument being completed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionArgument {
    /// Argument name.
    pub name: String,
    /// The partial value typed so far.
    pub value: String,
}

/// Context of a completion: already-resolved argument values.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionContext {
    /// Previously resolved argument values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// Params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteRequestParams {
    /// Request metadata (required by the schema).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: CompletionReference,
    /// The argument and its partial value (a JSON object).
    #[serde(deserialize_with = "crate::json::object_only")]
    pub argument: CompletionArgument,
    /// Extra context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
}

/// The completion values.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// Suggested values (at most 100).
    pub values: Vec<String>,
    /// Total number of matches, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more matches exist than were returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// Completion with these values.
    pub fn values(values: Vec<String>) -> Self {
        Self {
            values,
            ..Self::default()
        }
    }
}

/// The result of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result type.
    #[serde(default)]
    pub result_type: ResultType,
    /// The completion.
    pub completion: Completion,
}

impl CompleteResult {
    /// A complete result with `values` (no total, no `hasMore`).
    pub fn new(values: Vec<String>) -> Self {
        Self {
            meta: None,
            result_type: ResultType::Complete,
            completion: Completion {
                values,
                total: None,
                has_more: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reference_dispatches_on_type() {
        let r: CompletionReference =
            serde_json::from_value(json!({"type": "ref/resource", "uri": "file:///{p}"})).unwrap();
        assert!(matches!(r, CompletionReference::ResourceTemplate(_)));
        let err = serde_json::from_value::<CompletionReference>(json!({"type": "ref/tool"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("ref/tool"), "{err}");
    }
}
