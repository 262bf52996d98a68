//! Client and server capabilities (`basic/lifecycle` / `server/discover.mdx`; `schema.ts`
//! `ClientCapabilities`, `ServerCapabilities`).
//!
//! Every capability object keeps members this crate does not know in an `extra` map, so a
//! proxy or a per-request stamp never drops an extension's settings (REQUIREMENTS A15 item 93).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::json::JsonObject;

/// Capabilities a client declares on each request in
/// `_meta["io.modelcontextprotocol/clientCapabilities"]`. `{}` means nothing optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<BTreeMap<String, JsonObject>>,
    /// The client can answer `roots/list` input requests (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// The client can answer `sampling/createMessage` input requests (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// The client can answer `elicitation/create` input requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Extensions the client supports, keyed by prefixed name; the value holds its settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<BTreeMap<String, JsonObject>>,
    /// Members this crate does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `ClientCapabilities.roots` (an empty object in this revision).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RootsCapability {
    /// Members this crate does not know (e.g. a legacy `listChanged`), kept verbatim.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `ClientCapabilities.sampling`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplingCapability {
    /// The client honours `includeContext` other than `"none"` (soft-deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// The client supports `tools` and `toolChoice` in sampling requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
    /// Members this crate does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `ClientCapabilities.elicitation`. `{}` is the same as `{"form": {}}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ElicitationCapability {
    /// Form-mode elicitation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// URL-mode elicitation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
    /// Members this crate does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitationCapability {
    /// Whether form mode is supported: `form` is present, or neither mode is named.
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// Whether URL mode is supported.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

impl ClientCapabilities {
    /// Whether the client accepts form-mode elicitation on this request.
    pub fn supports_elicitation_form(&self) -> bool {
        self.elicitation
            .as_ref()
            .is_some_and(ElicitationCapability::supports_form)
    }

    /// Whether the client accepts URL-mode elicitation on this request.
    pub fn supports_elicitation_url(&self) -> bool {
        self.elicitation
            .as_ref()
            .is_some_and(ElicitationCapability::supports_url)
    }

    /// Whether the client accepts sampling requests.
    pub fn supports_sampling(&self) -> bool {
        self.sampling.is_some()
    }

    /// Whether the client accepts sampling requests that carry `tools`.
    pub fn supports_sampling_tools(&self) -> bool {
        self.sampling.as_ref().is_some_and(|s| s.tools.is_some())
    }

    /// Whether the client answers `roots/list`.
    pub fn supports_roots(&self) -> bool {
        self.roots.is_some()
    }

    /// The settings of a named extension, if the client declared it.
    pub fn extension(&self, name: &str) -> Option<&JsonObject> {
        self.extensions.as_ref()?.get(name)
    }
}

/// Capabilities a server advertises in `DiscoverResult.capabilities`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<BTreeMap<String, JsonObject>>,
    /// The server can send `notifications/message` (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// The server answers `completion/complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// The server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// The server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// The server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Extensions the server supports, keyed by prefixed name; the value holds its settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<BTreeMap<String, JsonObject>>,
    /// Members this crate does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ServerCapabilities {
    /// The settings of a named extension, if the server advertises it.
    pub fn extension(&self, name: &str) -> Option<&JsonObject> {
        self.extensions.as_ref()?.get(name)
    }
}

/// `ServerCapabilities.prompts`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// The server sends `notifications/prompts/list_changed` to listeners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this crate does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `ServerCapabilities.resources`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// The server honours `resourceSubscriptions` in `subscriptions/listen`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// The server sends `notifications/resources/list_changed` to listeners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this crate does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `ServerCapabilities.tools`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// The server sends `notifications/tools/list_changed` to listeners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this crate does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: JsonObject,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_members_round_trip_at_every_level() {
        let v = json!({
            "roots": {"listChanged": true},
            "sampling": {"tools": {}, "future": 1},
            "elicitation": {"url": {}, "x": [1]},
            "files": {"maxBytes": 10},
            "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}},
        });
        let c: ClientCapabilities = serde_json::from_value(v.clone()).unwrap();
        assert!(c.extra.contains_key("files"));
        assert!(c.supports_elicitation_url() && !c.supports_elicitation_form());
        assert!(c.supports_sampling_tools());
        assert_eq!(serde_json::to_value(&c).unwrap(), v);

        let v = json!({
            "tools": {"listChanged": true, "paged": true},
            "resources": {"subscribe": true, "y": {}},
            "prompts": {"z": null},
            "files": {},
        });
        let s: ServerCapabilities = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&s).unwrap(), v);
    }

    #[test]
    fn empty_elicitation_means_form() {
        let c: ClientCapabilities = serde_json::from_value(json!({"elicitation": {}})).unwrap();
        assert!(c.supports_elicitation_form());
        assert!(!c.supports_elicitation_url());
        assert!(!ClientCapabilities::default().supports_elicitation_form());
    }
}
