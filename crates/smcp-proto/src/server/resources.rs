//! Resources (`server/resources.mdx`; `schema.ts` `Resource`, `ResourceTemplate`,
//! `ListResourcesResult`, `ListResourceTemplatesResult`, `ReadResourceRequestParams`,
//! `ReadResourceResult`).

use serde::{Deserialize, Serialize};

use crate::basic::{Annotations, CacheScope, Icon, Meta, RequestMeta, ResultType};
use crate::content::{ResourceContents, ResourceLink};
use crate::patterns::mrtr::InputResponses;

/// A resource the server can read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
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

impl Resource {
    /// A resource with a URI and a name.
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

impl From<Resource> for ResourceLink {
    fn from(r: Resource) -> Self {
        Self {
            uri: r.uri,
            name: r.name,
            title: r.title,
            description: r.description,
            mime_type: r.mime_type,
            annotations: r.annotations,
            size: r.size,
            icons: r.icons,
            meta: r.meta,
        }
    }
}

/// A family of resources described by an RFC 6570 URI template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of every matching resource, if uniform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Client hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ResourceTemplate {
    /// A template with a URI template and a name.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            icons: None,
            meta: None,
        }
    }
}

/// The result of `resources/list`. Paginated and cacheable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result type.
    #[serde(default)]
    pub result_type: ResultType,
    /// The resources on this page.
    pub resources: Vec<Resource>,
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

impl ListResourcesResult {
    /// A complete, uncached, single-page list.
    pub fn new(resources: Vec<Resource>) -> Self {
        Self {
            meta: None,
            result_type: ResultType::Complete,
            resources,
            next_cursor: None,
            ttl_ms: 0,
            cache_scope: CacheScope::Private,
        }
    }
}

/// The result of `resources/templates/list`. Paginated and cacheable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result type.
    #[serde(default)]
    pub result_type: ResultType,
    /// The templates on this page.
    pub resource_templates: Vec<ResourceTemplate>,
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

impl ListResourceTemplatesResult {
    /// A complete, uncached, single-page list.
    pub fn new(resource_templates: Vec<ResourceTemplate>) -> Self {
        Self {
            meta: None,
            result_type: ResultType::Complete,
            resource_templates,
            next_cursor: None,
            ttl_ms: 0,
            cache_scope: CacheScope::Private,
        }
    }
}

/// Params of `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceRequestParams {
    /// Request metadata (required by the schema).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
    /// The URI to read.
    pub uri: String,
    /// Responses to the input requests of a previous `InputRequiredResult` (MRTR retry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The `requestState` of a previous `InputRequiredResult`, echoed verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl ReadResourceRequestParams {
    /// A read of `uri` with no `_meta`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            meta: None,
            uri: uri.into(),
            input_responses: None,
            request_state: None,
        }
    }
}

/// The result of `resources/read`. Cacheable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result type.
    #[serde(default)]
    pub result_type: ResultType,
    /// The contents (the resource and possibly sub-resources). Never empty for a found resource.
    pub contents: Vec<ResourceContents>,
    /// Cache lifetime in milliseconds (absent = 0).
    #[serde(default)]
    pub ttl_ms: u64,
    /// Cache scope (absent = private).
    #[serde(default)]
    pub cache_scope: CacheScope,
}

impl ReadResourceResult {
    /// The text of every text item of `contents`, joined with newlines (binary and file
    /// contents are skipped).
    pub fn text(&self) -> String {
        super::tools::join_texts(self.contents.iter().filter_map(ResourceContents::as_text))
    }

    /// A complete, uncached result.
    pub fn new(contents: Vec<ResourceContents>) -> Self {
        Self {
            meta: None,
            result_type: ResultType::Complete,
            contents,
            ttl_ms: 0,
            cache_scope: CacheScope::Private,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::TextResourceContents;
    use serde_json::json;

    #[test]
    fn read_result_defaults_cache_members_and_writes_them() {
        let r: ReadResourceResult =
            serde_json::from_value(json!({"contents": [{"uri": "a:", "text": "x"}]})).unwrap();
        assert_eq!((r.ttl_ms, r.cache_scope), (0, CacheScope::Private));
        let built = ReadResourceResult::new(vec![TextResourceContents::new("a:", "x").into()]);
        assert_eq!(built, r);
        assert_eq!(r.text(), "x");
        assert_eq!(
            serde_json::to_value(&built).unwrap(),
            json!({"resultType": "complete", "contents": [{"uri": "a:", "text": "x"}],
                   "ttlMs": 0, "cacheScope": "private"})
        );
    }
}
