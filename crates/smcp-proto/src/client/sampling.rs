//! Sampling (`client/sampling.mdx`, deprecated; `schema.ts` `CreateMessageRequestParams`,
//! `CreateMessageResult`, `SamplingMessage`, `ModelPreferences`, `ToolChoice`).

use serde::de::Deserializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::basic::{Meta, Role};
use crate::content::SamplingMessageContentBlock;
use crate::json::{JsonObject, from_value, num, open_string_enum};
use crate::server::tools::definition::Tool;

/// One block or a list of blocks (`SamplingMessageContentBlock | SamplingMessageContentBlock[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SamplingContent {
    /// A single block (a JSON object).
    Single(SamplingMessageContentBlock),
    /// Several blocks (a JSON array).
    Multiple(Vec<SamplingMessageContentBlock>),
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.is_array() {
            from_value(value).map(Self::Multiple)
        } else {
            from_value(value).map(Self::Single)
        }
    }
}

impl SamplingContent {
    /// The blocks as a slice, whatever the wire shape.
    pub fn blocks(&self) -> &[SamplingMessageContentBlock] {
        match self {
            Self::Single(b) => std::slice::from_ref(b),
            Self::Multiple(v) => v,
        }
    }
}

/// A message in a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: SamplingContent,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SamplingMessage {
    /// A user message with one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: SamplingContent::Single(SamplingMessageContentBlock::text(text)),
            meta: None,
        }
    }
}

/// A hint for model selection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelHint {
    /// A (sub)string of a model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The server's model selection preferences; priorities are 0–1.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model name hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much to prioritize cost.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "num::opt_f64"
    )]
    pub cost_priority: Option<f64>,
    /// How much to prioritize speed.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "num::opt_f64"
    )]
    pub speed_priority: Option<f64>,
    /// How much to prioritize intelligence.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "num::opt_f64"
    )]
    pub intelligence_priority: Option<f64>,
}

/// Which server context to include (`includeContext`; soft-deprecated).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// `"none"`.
    None,
    /// `"thisServer"`.
    ThisServer,
    /// `"allServers"`.
    AllServers,
}

/// How the model may use tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoiceMode {
    /// The model decides.
    Auto,
    /// The model must use a tool.
    Required,
    /// The model must not use tools.
    None,
}

/// Tool choice for sampling.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolChoice {
    /// The mode (absent = auto).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

/// Params of a `sampling/createMessage` input request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// System prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Context to include.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "num::opt_f64"
    )]
    pub temperature: Option<f64>,
    /// Maximum tokens to sample.
    pub max_tokens: u64,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use (needs `sampling.tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
}

impl CreateMessageRequestParams {
    /// A request with `messages` and `max_tokens` only.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        Self {
            messages,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
        }
    }
}

open_string_enum! {
    /// Why sampling stopped.
    StopReason {
        /// `"endTurn"`.
        EndTurn = "endTurn",
        /// `"stopSequence"`.
        StopSequence = "stopSequence",
        /// `"maxTokens"`.
        MaxTokens = "maxTokens",
        /// `"toolUse"`.
        ToolUse = "toolUse",
    }
}

/// The client's answer to `sampling/createMessage`. Not a `Result`: it has no `resultType`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who says it (normally the assistant).
    pub role: Role,
    /// What is said.
    pub content: SamplingContent,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The model that produced it.
    pub model: String,
    /// Why sampling stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_single_or_array_round_trips() {
        for v in [
            json!({"role": "user", "content": {"type": "text", "text": "a"}}),
            json!({"role": "user", "content": [{"type": "text", "text": "a"}]}),
        ] {
            let m: SamplingMessage = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(m.content.blocks().len(), 1);
            assert_eq!(serde_json::to_value(&m).unwrap(), v);
        }
    }

    #[test]
    fn stop_reason_is_open() {
        let r: StopReason = serde_json::from_value(json!("refusal")).unwrap();
        assert_eq!(r, StopReason::Other("refusal".into()));
        assert_eq!(StopReason::from("toolUse"), StopReason::ToolUse);
    }
}
