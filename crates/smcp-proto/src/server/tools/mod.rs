//! Tools (`server/tools.mdx`; `schema.ts` `Tool`, `ListToolsResult`, `CallToolRequestParams`,
//! `CallToolResult`).
//!
//! `inputSchema` and `outputSchema` are kept as JSON objects, verbatim: they are JSON Schema
//! (2020-12 by default) documents and are never reordered or normalized here.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::basic::{CacheScope, Meta, RequestMeta, ResultType};
use crate::content::ContentBlock;
use crate::patterns::mrtr::InputResponses;

pub(crate) mod definition;

pub use definition::{Tool, ToolAnnotations};

/// The result of `tools/list`. Paginated and cacheable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result type.
    #[serde(default)]
    pub result_type: ResultType,
    /// The tools on this page.
    pub tools: Vec<Tool>,
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

impl ListToolsResult {
    /// A complete, uncached, single-page list.
    pub fn new(tools: Vec<Tool>) -> Self {
        Self {
            meta: None,
            result_type: ResultType::Complete,
            tools,
            next_cursor: None,
            ttl_ms: 0,
            cache_scope: CacheScope::Private,
        }
    }
}

/// Params of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// Request metadata (required by the schema).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
    /// The tool name.
    pub name: String,
    /// The arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// Responses to the input requests of a previous `InputRequiredResult` (MRTR retry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The `requestState` of a previous `InputRequiredResult`, echoed verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl CallToolRequestParams {
    /// A call of `name` with `arguments` and no `_meta`.
    pub fn new(name: impl Into<String>, arguments: Option<Map<String, Value>>) -> Self {
        Self {
            meta: None,
            name: name.into(),
            arguments,
            input_responses: None,
            request_state: None,
        }
    }
}

/// The result of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result type.
    #[serde(default)]
    pub result_type: ResultType,
    /// Unstructured result.
    pub content: Vec<ContentBlock>,
    /// Structured result, conforming to the tool's `outputSchema` if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed (absent = false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

impl CallToolResult {
    /// A complete result with `content`.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        Self {
            meta: None,
            result_type: ResultType::Complete,
            content,
            structured_content: None,
            is_error: None,
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }

    /// A failed result (`isError: true`) with one text block, for the model to read.
    pub fn error_text(text: impl Into<String>) -> Self {
        Self {
            is_error: Some(true),
            ..Self::text(text)
        }
    }

    /// A result with `structuredContent` and its serialized JSON as a text block.
    pub fn structured(value: Value) -> Self {
        let text = value.to_string();
        Self {
            structured_content: Some(value),
            ..Self::text(text)
        }
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }

    /// The text blocks of `content`, joined with newlines (empty when there are none).
    pub fn text_content(&self) -> String {
        join_texts(self.content.iter().filter_map(ContentBlock::as_text))
    }

    /// `structuredContent` deserialized into `T`: `None` when the result has none.
    pub fn structured_as<T: serde::de::DeserializeOwned>(
        &self,
    ) -> Option<Result<T, serde_json::Error>> {
        self.structured_content.as_ref().map(|v| T::deserialize(v))
    }
}

/// Texts joined with newlines, in order.
pub(crate) fn join_texts<'a>(texts: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for (i, text) in texts.enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patterns::mrtr::{InputRequiredResult, ResultOrInputRequired};
    use serde_json::json;

    #[test]
    fn constructors_build_the_expected_json() {
        assert_eq!(
            serde_json::to_value(CallToolResult::error_text("bad")).unwrap(),
            json!({"resultType": "complete", "content": [{"type": "text", "text": "bad"}], "isError": true})
        );
        let t = Tool::new("t", Tool::empty_input_schema()).with_description("d");
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({"name": "t", "description": "d", "inputSchema": {"type": "object"}})
        );
    }

    #[test]
    fn text_helpers_read_the_text_blocks() {
        let mut r = CallToolResult::new(vec![
            ContentBlock::text("one"),
            serde_json::from_value(
                json!({"type": "image", "data": "AA==", "mimeType": "image/png"}),
            )
            .unwrap(),
            ContentBlock::text("two"),
        ]);
        assert_eq!(r.text_content(), "one\ntwo");
        assert!(r.structured_as::<Value>().is_none());
        r.structured_content = Some(json!({"n": 3}));
        #[derive(serde::Deserialize)]
        struct N {
            n: u8,
        }
        assert_eq!(r.structured_as::<N>().unwrap().unwrap().n, 3);
        assert!(r.structured_as::<String>().unwrap().is_err());
        assert_eq!(CallToolResult::new(Vec::new()).text_content(), "");
    }

    #[test]
    fn absent_result_type_is_complete() {
        let r: CallToolResult = serde_json::from_value(json!({"content": []})).unwrap();
        assert_eq!(r.result_type, ResultType::Complete);
        assert!(!r.is_error());
    }

    #[test]
    fn input_schema_is_kept_verbatim() {
        let schema =
            json!({"type": "object", "$defs": {"a": {"$ref": "#/$defs/a"}}, "oneOf": [{}]});
        let t: Tool = serde_json::from_value(json!({"name": "x", "inputSchema": schema})).unwrap();
        assert_eq!(Value::Object(t.input_schema), schema);
    }

    #[test]
    fn result_or_input_required_dispatches_on_result_type() {
        let v = json!({"resultType": "input_required", "requestState": "s"});
        let r: ResultOrInputRequired<CallToolResult> = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(
            r,
            ResultOrInputRequired::InputRequired(InputRequiredResult::new().with_state("s"))
        );
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        let r: ResultOrInputRequired<CallToolResult> =
            serde_json::from_value(json!({"content": []})).unwrap();
        assert!(matches!(r, ResultOrInputRequired::Result(_)));
    }
}
