//! Content blocks (`server/tools.mdx` §Tool Result, `server/resources.mdx` §Resource Contents,
//! `client/sampling.mdx`; `schema.ts` `ContentBlock`, `ResourceContents`,
//! `SamplingMessageContentBlock`).
//!
//! Each block struct writes its own `"type"` member when serialized. The unions
//! ([`ContentBlock`], [`SamplingMessageContentBlock`], [`ResourceContents`]) are deserialized by
//! hand: they read the discriminator and report an unknown one by name instead of guessing.
//! A block struct deserialized on its own (e.g. `TextContent`) does not check its `type`; go
//! through the union when the input is untrusted.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::basic::{Annotations, Icon, Meta};
use crate::json::{from_value, str_member};

/// Text content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "text", rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Client hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextContent {
    /// Text content with no annotations.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// Image content (base64 `data`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "image", rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded image data.
    pub data: String,
    /// The image MIME type.
    pub mime_type: String,
    /// Client hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ImageContent {
    /// Image content from base64 data and a MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// Audio content (base64 `data`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "audio", rename_all = "camelCase")]
pub struct AudioContent {
    /// Base64-encoded audio data.
    pub data: String,
    /// The audio MIME type.
    pub mime_type: String,
    /// Client hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl AudioContent {
    /// Audio content from base64 data and a MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// A link to a resource the client may read (`schema.ts` `ResourceLink extends Resource`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "resource_link", rename_all = "camelCase")]
pub struct ResourceLink {
    /// The resource URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Client hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Size in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ResourceLink {
    /// A link with a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            size: None,
            icons: None,
            meta: None,
        }
    }
}

/// A resource's contents embedded in a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "resource", rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Client hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl EmbeddedResource {
    /// Embeds contents with no annotations.
    pub fn new(resource: impl Into<ResourceContents>) -> Self {
        Self {
            resource: resource.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// Text contents of a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The text.
    pub text: String,
}

impl TextResourceContents {
    /// Text contents of `uri`.
    pub fn new(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: None,
            meta: None,
            text: text.into(),
        }
    }
}

/// Binary contents of a resource (base64 `blob`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Base64-encoded bytes, kept as sent.
    pub blob: String,
}

impl BlobResourceContents {
    /// Binary contents of `uri`, base64-encoding `bytes`.
    pub fn from_bytes(uri: impl Into<String>, bytes: &[u8]) -> Self {
        use base64::Engine as _;
        Self {
            uri: uri.into(),
            mime_type: None,
            meta: None,
            blob: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// Decodes `blob`.
    pub fn decode(&self) -> Result<Vec<u8>, base64::DecodeError> {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.decode(&self.blob)
    }
}

/// `TextResourceContents | BlobResourceContents`, told apart by `text` vs `blob`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
    /// File-backed contents (SEP-2631), only for clients that declared `files.download`.
    File(crate::ext::files::FileResourceContents),
}

impl ResourceContents {
    /// The text of text contents; `None` for binary or file contents.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// The resource URI.
    pub fn uri(&self) -> &str {
        match self {
            Self::Text(c) => &c.uri,
            Self::Blob(c) => &c.uri,
            Self::File(c) => &c.uri,
        }
    }
}

impl From<TextResourceContents> for ResourceContents {
    fn from(c: TextResourceContents) -> Self {
        Self::Text(c)
    }
}

impl From<BlobResourceContents> for ResourceContents {
    fn from(c: BlobResourceContents) -> Self {
        Self::Blob(c)
    }
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let has = |k: &str| value.get(k).is_some();
        match (has("text"), has("blob")) {
            (true, false) => from_value(value).map(Self::Text),
            (false, true) => from_value(value).map(Self::Blob),
            (true, true) => Err(de::Error::custom(
                "resource contents carry both \"text\" and \"blob\"",
            )),
            (false, false) if has("content") => from_value(value).map(Self::File),
            (false, false) => Err(de::Error::custom(
                "resource contents need \"text\" or \"blob\"",
            )),
        }
    }
}

/// A tool call requested by the model in a sampling result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "tool_use", rename_all = "camelCase")]
pub struct ToolUseContent {
    /// Unique id of this tool use.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments.
    pub input: Map<String, Value>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of a tool use, sent back to the model in a sampling request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "tool_result", rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The `id` of the matching [`ToolUseContent`].
    pub tool_use_id: String,
    /// Unstructured result.
    pub content: Vec<ContentBlock>,
    /// Structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool use failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Content of prompts, tool results and messages (`schema.ts` `ContentBlock`), tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ContentBlock {
    /// `"text"`.
    Text(TextContent),
    /// `"image"`.
    Image(ImageContent),
    /// `"audio"`.
    Audio(AudioContent),
    /// `"resource_link"`.
    ResourceLink(ResourceLink),
    /// `"resource"`.
    Resource(EmbeddedResource),
    /// `"file"` (SEP-2631). Servers emit it only to clients that declared `files.download`.
    File(crate::ext::files::FileContent),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent::new(text))
    }

    /// An image block from base64 data.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image(ImageContent::new(data, mime_type))
    }

    /// An audio block from base64 data.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Audio(AudioContent::new(data, mime_type))
    }

    /// A resource link block.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self::ResourceLink(ResourceLink::new(uri, name))
    }

    /// An embedded resource block.
    pub fn resource(contents: impl Into<ResourceContents>) -> Self {
        Self::Resource(EmbeddedResource::new(contents))
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(BlockVisitor)
    }
}

/// The error for a block without a string `type`.
fn missing_type<E: de::Error>() -> E {
    E::custom("content block is missing a string \"type\"")
}

impl ContentBlock {
    /// The block of type `tag`, its other members read by `rest`.
    fn of_type<'de, D: Deserializer<'de>>(tag: &str, rest: D) -> Result<Self, D::Error> {
        match tag {
            "text" => TextContent::deserialize(rest).map(Self::Text),
            "image" => ImageContent::deserialize(rest).map(Self::Image),
            "audio" => AudioContent::deserialize(rest).map(Self::Audio),
            "resource_link" => ResourceLink::deserialize(rest).map(Self::ResourceLink),
            "resource" => EmbeddedResource::deserialize(rest).map(Self::Resource),
            "file" => crate::ext::files::FileContent::deserialize(rest).map(Self::File),
            other => Err(de::Error::custom(format!(
                "unknown content block type {other:?} (expected text, image, audio, \
                 resource_link, resource or file)"
            ))),
        }
    }
}

/// A block's first member name: `type`, or another, kept.
enum FirstName {
    Type,
    Other(String),
}

impl<'de> Deserialize<'de> for FirstName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl de::Visitor<'_> for Name {
            type Value = FirstName;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<FirstName, E> {
                Ok(if name == "type" {
                    FirstName::Type
                } else {
                    FirstName::Other(name.to_owned())
                })
            }
        }
        deserializer.deserialize_identifier(Name)
    }
}

/// Reads a [`ContentBlock`]. When `type` is its first member, as every SDK writes it, the
/// block's own type reads the other members straight from the input; otherwise the block is
/// read whole first and its `type` looked up. (A `type` given twice reads as its first on
/// the one way and its last on the other: JSON leaves a repeated name's meaning open.)
struct BlockVisitor;

impl<'de> de::Visitor<'de> for BlockVisitor {
    type Value = ContentBlock;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a content block: an object with a string \"type\"")
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<ContentBlock, A::Error> {
        let first = match map.next_key::<FirstName>()? {
            None => return Err(missing_type()),
            Some(FirstName::Type) => {
                let Value::String(tag) = map.next_value::<Value>()? else {
                    return Err(missing_type());
                };
                return ContentBlock::of_type(&tag, de::value::MapAccessDeserializer::new(map));
            }
            Some(FirstName::Other(name)) => name,
        };
        let mut whole = Map::new();
        whole.insert(first, map.next_value()?);
        while let Some((name, value)) = map.next_entry::<String, Value>()? {
            whole.insert(name, value);
        }
        let whole = Value::Object(whole);
        let Some(tag) = str_member(&whole, "type") else {
            return Err(missing_type());
        };
        let tag = tag.to_owned();
        ContentBlock::of_type(&tag, whole).map_err(de::Error::custom)
    }
}

/// Content allowed in a sampling message (`schema.ts` `SamplingMessageContentBlock`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SamplingMessageContentBlock {
    /// `"text"`.
    Text(TextContent),
    /// `"image"`.
    Image(ImageContent),
    /// `"audio"`.
    Audio(AudioContent),
    /// `"tool_use"`.
    ToolUse(ToolUseContent),
    /// `"tool_result"`.
    ToolResult(ToolResultContent),
}

impl SamplingMessageContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent::new(text))
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for SamplingMessageContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match str_member(&value, "type") {
            Some("text") => from_value(value).map(Self::Text),
            Some("image") => from_value(value).map(Self::Image),
            Some("audio") => from_value(value).map(Self::Audio),
            Some("tool_use") => from_value(value).map(Self::ToolUse),
            Some("tool_result") => from_value(value).map(Self::ToolResult),
            Some(other) => Err(de::Error::custom(format!(
                "unknown sampling content type {other:?} (expected text, image, audio, \
                 tool_use or tool_result)"
            ))),
            None => Err(de::Error::custom(
                "sampling content is missing a string \"type\"",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_write_their_type() {
        assert_eq!(
            serde_json::to_value(ContentBlock::text("hi")).unwrap(),
            json!({"type": "text", "text": "hi"})
        );
        assert_eq!(
            serde_json::to_value(TextContent::new("hi")).unwrap(),
            json!({"type": "text", "text": "hi"})
        );
    }

    #[test]
    fn unknown_block_type_is_a_clear_error() {
        let err = serde_json::from_value::<ContentBlock>(json!({"type": "video", "data": ""}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"video\""), "{err}");
        let err = serde_json::from_value::<ContentBlock>(json!({"text": "x"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"type\""), "{err}");
        // tool_use is sampling-only.
        assert!(
            serde_json::from_value::<ContentBlock>(
                json!({"type": "tool_use", "id": "1", "name": "n", "input": {}})
            )
            .is_err()
        );
    }

    #[test]
    fn a_block_reads_the_same_whether_type_comes_first_or_not() {
        let blocks = [
            json!({"type": "text", "text": "hi", "annotations": {"priority": 0.5}, "_meta": {"k": 1}}),
            json!({"type": "image", "data": "AAE=", "mimeType": "image/png"}),
            json!({"type": "audio", "data": "AAE=", "mimeType": "audio/wav"}),
            json!({"type": "resource_link", "uri": "a://x", "name": "x"}),
            json!({"type": "resource", "resource": {"uri": "a://x", "text": "t"}}),
        ];
        for block in blocks {
            let Value::Object(first) = block else {
                unreachable!()
            };
            // The same members with `type` last.
            let mut last: Vec<(String, Value)> = first.clone().into_iter().collect();
            last.rotate_left(1);
            let last: Map<String, Value> = last.into_iter().collect();
            for text in [
                serde_json::to_string(&first).unwrap(),
                serde_json::to_string(&last).unwrap(),
            ] {
                let read: ContentBlock = serde_json::from_str(&text).unwrap();
                let by_value: ContentBlock =
                    serde_json::from_value(Value::Object(first.clone())).unwrap();
                assert_eq!(read, by_value, "{text}");
                assert_eq!(
                    serde_json::to_value(&read).unwrap(),
                    Value::Object(first.clone()),
                    "{text}"
                );
            }
        }
        for (text, names) in [
            (r#"{"type":"video","data":""}"#, "\"video\""),
            (r#"{"data":"","type":"video"}"#, "\"video\""),
            (r#"{"type":7,"text":"x"}"#, "\"type\""),
            (r#"{"text":"x","type":null}"#, "\"type\""),
            (r#"{"text":"x"}"#, "\"type\""),
            (r#"{}"#, "\"type\""),
            (r#""text""#, "\"type\""),
            (r#"{"type":"text"}"#, "text"),
        ] {
            let err = serde_json::from_str::<ContentBlock>(text)
                .unwrap_err()
                .to_string();
            assert!(err.contains(names), "{text}: {err}");
        }
    }

    #[test]
    fn resource_contents_split_on_text_or_blob() {
        let t: ResourceContents = serde_json::from_value(json!({"uri": "a:", "text": ""})).unwrap();
        assert!(matches!(t, ResourceContents::Text(_)));
        let b: ResourceContents =
            serde_json::from_value(json!({"uri": "a:", "blob": "AAE="})).unwrap();
        let ResourceContents::Blob(b) = b else {
            panic!("not a blob")
        };
        assert_eq!(b.decode().unwrap(), vec![0, 1]);
        assert!(
            serde_json::from_value::<ResourceContents>(
                json!({"uri": "a:", "text": "", "blob": ""})
            )
            .is_err()
        );
        assert!(serde_json::from_value::<ResourceContents>(json!({"uri": "a:"})).is_err());
    }
}
