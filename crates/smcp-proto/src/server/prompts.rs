//! Prompts (`server/prompts.mdx`; `schema.ts` `Prompt`, `PromptArgument`, `PromptMessage`,
//! `ListPromptsResult`, `GetPromptRequestParams`, `GetPromptResult`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::basic::{CacheScope, Icon, Meta, RequestMeta, ResultType, Role};
use crate::content::ContentBlock;
use crate::patterns::mrtr::InputResponses;

/// A prompt template the server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Arguments the prompt accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Prompt {
    /// A prompt with only a name.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            arguments: None,
            icons: None,
            meta: None,
        }
    }
}

/// An argument of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be provided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

impl PromptArgument {
    /// An argument with a name and whether it is required.
    pub fn new(name: impl Into<String>, required: bool) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            required: Some(required),
        }
    }
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

impl PromptMessage {
    /// A user message with text.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: ContentBlock::text(text),
        }
    }

    /// An assistant message with text.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: ContentBlock::text(text),
        }
    }
}

/// The result of `prompts/list`. Paginated and cacheable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result type.
    #[serde(default)]
    pub result_type: ResultType,
    /// The prompts on this page.
    pub prompts: Vec<Prompt>,
    /// Cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Cache lifetime in milliseconds (absent = 0).
    #[serde(default)]
    pub ttl_ms: u64,
    /// Cache scope (absent = private).
    #[serde(default)]
    pub cache_scope: CacheScope,
}

impl ListPromptsResult {
    /// A complete, uncached, single-page list.
    pub fn new(prompts: Vec<Prompt>) -> Self {
        Self {
            meta: None,
            result_type: ResultType::Complete,
            prompts,
            next_cursor: None,
            ttl_ms: 0,
            cache_scope: CacheScope::Private,
        }
    }
}

/// Params of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptRequestParams {
    /// Request metadata (required by the schema).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
    /// The prompt name.
    pub name: String,
    /// Argument values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
    /// Responses to the input requests of a previous `InputRequiredResult` (MRTR retry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The `requestState` of a previous `InputRequiredResult`, echoed verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl GetPromptRequestParams {
    /// A get of `name` with no arguments and no `_meta`.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            meta: None,
            name: name.into(),
            arguments: None,
            input_responses: None,
            request_state: None,
        }
    }
}

/// The result of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result type.
    #[serde(default)]
    pub result_type: ResultType,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

impl GetPromptResult {
    /// The text of every text message, joined with newlines.
    pub fn text(&self) -> String {
        super::tools::join_texts(self.messages.iter().filter_map(|m| m.content.as_text()))
    }

    /// A complete result with `messages`.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        Self {
            meta: None,
            result_type: ResultType::Complete,
            description: None,
            messages,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn get_prompt_result_round_trips() {
        let v = json!({"resultType": "complete", "messages": [
            {"role": "assistant", "content": {"type": "text", "text": "hi"}}
        ]});
        let r: GetPromptResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(
            r,
            GetPromptResult::new(vec![PromptMessage::assistant_text("hi")])
        );
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        assert_eq!(r.text(), "hi");
        let two = GetPromptResult::new(vec![
            PromptMessage::user_text("a"),
            PromptMessage::assistant_text("b"),
        ]);
        assert_eq!(two.text(), "a\nb");
    }
}
