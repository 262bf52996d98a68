//! What the fixtures share: the suite's image and audio payloads and the small builders every
//! group of fixtures uses. A leaf: the groups import it, not their parent, which names them.

use serde_json::{Value, json};
use smcp_proto::content::{ContentBlock, TextResourceContents};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::HandlerError;

/// A 1×1 PNG, as the suite's reference server uses.
pub const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A minimal WAV file.
pub const WAV_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

pub(super) fn image() -> ContentBlock {
    ContentBlock::image(PNG_BASE64, "image/png")
}

pub(super) fn text_resource(uri: &str, mime: &str, text: &str) -> TextResourceContents {
    let mut contents = TextResourceContents::new(uri, text);
    contents.mime_type = Some(mime.to_owned());
    contents
}

pub(super) fn ok(result: CallToolResult) -> Result<CallToolResult, HandlerError> {
    Ok(result)
}

pub(super) fn form(field: &str, kind: &str) -> Value {
    json!({"type": "object", "properties": {field: {"type": kind}}, "required": [field]})
}

pub(super) fn text_of(
    answer: &smcp_proto::client::elicitation::ElicitResult,
    field: &str,
) -> String {
    answer
        .content
        .as_ref()
        .and_then(|c| c.get(field))
        .map(|v| match v {
            smcp_proto::client::elicitation::ElicitValue::String(s) => s.clone(),
            other => serde_json::to_string(other).unwrap_or_default(),
        })
        .unwrap_or_default()
}
