//! MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`, stable 2026-01-26): wire types.
//!
//! A server declares interactive views as resources with `ui://` URIs and the MIME type
//! [`MIME_TYPE`] (an HTML5 document), and links a tool to one through the tool's
//! `_meta.ui` ([`UiToolMeta`]). A host that declared the extension ([`UiClientCapability`])
//! reads the resource, renders it in a sandboxed frame under the content security policy
//! the resource's `_meta.ui` asks for ([`UiResourceMeta`]), and passes the tool's input and
//! result to it; the view calls the server's tools back through the host.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::capabilities::ClientCapabilities;

/// The extension identifier, the key under `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an HTML view (the only one defined so far).
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The scheme every view's URI has.
pub const URI_SCHEME: &str = "ui://";
/// The `_meta` member holding a tool's or a view's metadata.
pub const META_KEY: &str = "ui";
/// The flat `_meta` member of earlier drafts naming a tool's view (read, never written).
pub const DEPRECATED_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// What a host declares under `capabilities.extensions["io.modelcontextprotocol/ui"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiClientCapability {
    /// The view content types it renders (required; [`MIME_TYPE`] for HTML).
    pub mime_types: Vec<String>,
}

impl UiClientCapability {
    /// A host rendering HTML views.
    pub fn html() -> Self {
        Self {
            mime_types: vec![MIME_TYPE.to_owned()],
        }
    }

    /// What `capabilities` declares of the extension, if anything (a malformed declaration
    /// counts as none).
    pub fn of(capabilities: &ClientCapabilities) -> Option<Self> {
        let declared = capabilities.extensions.as_ref()?.get(EXTENSION_ID)?;
        serde_json::from_value(Value::Object(declared.clone())).ok()
    }

    /// Whether HTML views are among the declared types.
    pub fn renders_html(&self) -> bool {
        self.mime_types.iter().any(|m| m == MIME_TYPE)
    }
}

/// Who may call a tool linked to a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// The model sees and calls it (it is in the agent's tool list).
    Model,
    /// The view calls it, through the host, on the same server only.
    App,
}

/// A tool's `_meta.ui`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiToolMeta {
    /// The `ui://` resource that renders the tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call the tool; `["model", "app"]` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<Visibility>>,
}

impl UiToolMeta {
    /// A tool rendered by the view at `resource_uri`.
    pub fn new(resource_uri: impl Into<String>) -> Self {
        Self {
            resource_uri: Some(resource_uri.into()),
            visibility: None,
        }
    }

    /// Who may call it.
    #[must_use]
    pub fn visibility(mut self, visibility: impl IntoIterator<Item = Visibility>) -> Self {
        self.visibility = Some(visibility.into_iter().collect());
        self
    }

    /// The metadata of a tool's `_meta`: `ui`, else the deprecated flat `ui/resourceUri`.
    ///
    /// # Errors
    ///
    /// `_meta.ui` that is not a valid [`UiToolMeta`] (the message names the member).
    pub fn from_meta(meta: Option<&Map<String, Value>>) -> Result<Option<Self>, String> {
        let Some(meta) = meta else { return Ok(None) };
        if let Some(ui) = meta.get(META_KEY) {
            return serde_json::from_value(ui.clone())
                .map(Some)
                .map_err(|e| format!("_meta.ui: {e}"));
        }
        Ok(meta
            .get(DEPRECATED_RESOURCE_URI_KEY)
            .and_then(Value::as_str)
            .map(Self::new))
    }

    /// Whether the model may see and call the tool (the default).
    pub fn model_visible(&self) -> bool {
        self.visibility
            .as_ref()
            .is_none_or(|v| v.contains(&Visibility::Model))
    }

    /// Whether a view may call the tool (the default).
    pub fn app_callable(&self) -> bool {
        self.visibility
            .as_ref()
            .is_none_or(|v| v.contains(&Visibility::App))
    }
}

/// The origins a view may reach, each list one CSP directive; an empty or absent list allows
/// none (nested frames, connections) or only the view's own origin (base URI).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiResourceCsp {
    /// `connect-src`: fetch, XHR, WebSocket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_domains: Option<Vec<String>>,
    /// `script-src`, `style-src`, `img-src`, `font-src`, `media-src`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_domains: Option<Vec<String>>,
    /// `frame-src`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_domains: Option<Vec<String>>,
    /// `base-uri`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_uri_domains: Option<Vec<String>>,
}

/// Browser features a view asks for (each an empty object when asked); a host may grant
/// them through the frame's `allow` attribute.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiPermissions {
    /// `camera`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<Map<String, Value>>,
    /// `microphone`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microphone: Option<Map<String, Value>>,
    /// `geolocation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<Map<String, Value>>,
    /// `clipboard-write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clipboard_write: Option<Map<String, Value>>,
}

/// A view's `_meta.ui`, on its resource and on its `resources/read` contents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiResourceMeta {
    /// The origins it may reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<UiResourceCsp>,
    /// The browser features it asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<UiPermissions>,
    /// A dedicated origin for its frame, in the host's own format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether it wants a visible border and background (absent: the host decides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
}

impl UiResourceMeta {
    /// The metadata in a `_meta` object, if any.
    ///
    /// # Errors
    ///
    /// `_meta.ui` that is not a valid [`UiResourceMeta`].
    pub fn from_meta(meta: Option<&Map<String, Value>>) -> Result<Option<Self>, String> {
        match meta.and_then(|m| m.get(META_KEY)) {
            None => Ok(None),
            Some(ui) => serde_json::from_value(ui.clone())
                .map(Some)
                .map_err(|e| format!("_meta.ui: {e}")),
        }
    }

    /// The `Content-Security-Policy` a host sets for the view: the extension's restrictive
    /// default widened by exactly the declared origins.
    pub fn content_security_policy(&self) -> String {
        let csp = self.csp.clone().unwrap_or_default();
        let join = |list: &Option<Vec<String>>| {
            list.as_deref()
                .unwrap_or_default()
                .iter()
                .filter(|d| is_safe_source(d))
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(" ")
        };
        let resources = join(&csp.resource_domains);
        let with = |base: &str, extra: &str| {
            if extra.is_empty() {
                base.to_owned()
            } else {
                format!("{base} {extra}")
            }
        };
        let connect = join(&csp.connect_domains);
        let frames = join(&csp.frame_domains);
        let base = join(&csp.base_uri_domains);
        // Fonts only from declared origins: without, `default-src 'none'` covers them.
        let fonts = if resources.is_empty() {
            Vec::new()
        } else {
            vec![format!("font-src 'self' {resources}")]
        };
        [
            "default-src 'none'".to_owned(),
            with("script-src 'self' 'unsafe-inline'", &resources),
            with("style-src 'self' 'unsafe-inline'", &resources),
            with("img-src 'self' data:", &resources),
        ]
        .into_iter()
        .chain(fonts)
        .chain([
            with("media-src 'self' data:", &resources),
            if connect.is_empty() {
                "connect-src 'none'".to_owned()
            } else {
                format!("connect-src {connect}")
            },
            if frames.is_empty() {
                "frame-src 'none'".to_owned()
            } else {
                format!("frame-src {frames}")
            },
            "object-src 'none'".to_owned(),
            if base.is_empty() {
                "base-uri 'self'".to_owned()
            } else {
                format!("base-uri {base}")
            },
        ])
        .collect::<Vec<_>>()
        .join("; ")
    }

    /// The frame's `allow` attribute for the asked permissions.
    pub fn allow_attribute(&self) -> String {
        let Some(p) = &self.permissions else {
            return String::new();
        };
        [
            (p.camera.is_some(), "camera"),
            (p.microphone.is_some(), "microphone"),
            (p.geolocation.is_some(), "geolocation"),
            (p.clipboard_write.is_some(), "clipboard-write"),
        ]
        .into_iter()
        .filter(|(asked, _)| *asked)
        .map(|(_, name)| name)
        .collect::<Vec<_>>()
        .join("; ")
    }
}

/// Whether a declared origin can go into a CSP directive as one source: no whitespace,
/// `;` or `,` (which would add directives or sources), no quotes (keywords such as
/// `'unsafe-eval'` are not origins).
pub fn is_safe_source(source: &str) -> bool {
    !source.is_empty()
        && !source
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, ';' | ',' | '\'' | '"'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_meta_reads_the_nested_form_and_the_deprecated_flat_one() {
        let nested = json!({"ui": {"resourceUri": "ui://w/d", "visibility": ["app"]}});
        let meta = UiToolMeta::from_meta(nested.as_object()).unwrap().unwrap();
        assert_eq!(meta.resource_uri.as_deref(), Some("ui://w/d"));
        assert!(!meta.model_visible());
        assert!(meta.app_callable());
        let flat = json!({"ui/resourceUri": "ui://w/d"});
        let meta = UiToolMeta::from_meta(flat.as_object()).unwrap().unwrap();
        assert!(meta.model_visible() && meta.app_callable());
        let bad = json!({"ui": {"visibility": ["everyone"]}});
        let err = UiToolMeta::from_meta(bad.as_object()).unwrap_err();
        assert!(err.starts_with("_meta.ui: "), "{err}");
        assert_eq!(UiToolMeta::from_meta(None), Ok(None));
    }

    #[test]
    fn the_policy_is_the_restrictive_default_widened_by_declared_origins_only() {
        let none = UiResourceMeta::default();
        assert_eq!(
            none.content_security_policy(),
            "default-src 'none'; script-src 'self' 'unsafe-inline'; \
             style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
             media-src 'self' data:; connect-src 'none'; frame-src 'none'; \
             object-src 'none'; base-uri 'self'"
        );
        let meta: UiResourceMeta = serde_json::from_value(json!({
            "csp": {"connectDomains": ["https://api.example.com", "https://x; script-src *"],
                    "resourceDomains": ["https://cdn.example.com", "'unsafe-eval'"]},
            "permissions": {"camera": {}, "clipboardWrite": {}},
            "prefersBorder": true
        }))
        .unwrap();
        let policy = meta.content_security_policy();
        assert!(
            policy.contains("connect-src https://api.example.com;"),
            "{policy}"
        );
        assert!(policy.contains("img-src 'self' data: https://cdn.example.com;"));
        assert!(policy.contains("font-src 'self' https://cdn.example.com;"));
        assert!(
            !policy.contains("unsafe-eval") && !policy.contains('*'),
            "{policy}"
        );
        assert_eq!(meta.allow_attribute(), "camera; clipboard-write");
    }

    #[test]
    fn the_client_capability_matches_the_spec_example() {
        let example = json!({"extensions": {EXTENSION_ID: {"mimeTypes": [MIME_TYPE]}}});
        let caps: ClientCapabilities = serde_json::from_value(example).unwrap();
        let ui = UiClientCapability::of(&caps).unwrap();
        assert_eq!(ui, UiClientCapability::html());
        assert!(ui.renders_html());
        assert_eq!(UiClientCapability::of(&ClientCapabilities::default()), None);
    }
}
