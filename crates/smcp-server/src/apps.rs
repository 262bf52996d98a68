//! MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`): interactive views a host renders for
//! a tool's results (feature `apps`).
//!
//! A view is a resource with a `ui://` URI and an HTML5 document as its content ([`view`]);
//! a tool names the view that renders its results ([`ToolUi::ui`]); the [`Apps`] extension
//! declares the extension in `server/discover` and refuses, when the server is built, a
//! tool whose `_meta.ui` is malformed or names anything but a `ui://` URI. Hosts that do
//! not render views call the tool as any other: its `content` must stand on its own.
//!
//! ```
//! use smcp_server::apps::{Apps, ToolUi, view};
//! use smcp_server::prelude::*;
//! use smcp_server::proto::ext::ui::{UiToolMeta, Visibility};
//!
//! let counter = view("ui://counter/view", "Counter")
//!     .html("<!DOCTYPE html><html><body><button>+1</button></body></html>")
//!     .connect_domain("https://api.example.com")
//!     .prefers_border(true)
//!     .build()
//!     .unwrap();
//! let server = Server::builder("counter", "1.0.0")
//!     .extension(Apps)
//!     .resource(counter)
//!     .tool(
//!         tool("count")
//!             .ui(UiToolMeta::new("ui://counter/view"))
//!             .handler(|_call| async { Ok(CallToolResult::text("1")) }),
//!     )
//!     .tool(
//!         tool("reset")
//!             .ui(UiToolMeta::new("ui://counter/view").visibility([Visibility::App]))
//!             .handler(|_call| async { Ok(CallToolResult::text("0")) }),
//!     )
//!     .build()
//!     .unwrap();
//! ```

use std::sync::Arc;

use serde_json::{Map, Value};
use smcp_proto::capabilities::ServerCapabilities;
use smcp_proto::content::TextResourceContents;
use smcp_proto::ext::ui::{
    EXTENSION_ID, META_KEY, MIME_TYPE, URI_SCHEME, UiPermissions, UiResourceCsp, UiResourceMeta,
    UiToolMeta, is_safe_source,
};
use smcp_proto::server::tools::Tool;

use crate::core::extension::{Extension, ToolData, ToolRefused};
use crate::core::resources::ResourceBuilder;
use crate::core::tools::ToolBuilder;

/// Largest view document, in bytes: a host reads it whole into a frame.
pub const MAX_VIEW_BYTES: usize = 4 * 1024 * 1024;

/// The MCP Apps extension: register it with [`crate::ServerBuilder::extension`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Apps;

impl Extension for Apps {
    fn name(&self) -> &'static str {
        EXTENSION_ID
    }

    fn capabilities(&self, capabilities: &mut ServerCapabilities) {
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(EXTENSION_ID.to_owned(), Map::new());
    }

    fn register_tool(&self, tool: &Tool, _data: &mut ToolData) -> Result<(), ToolRefused> {
        let ui = UiToolMeta::from_meta(tool.meta.as_ref()).map_err(ToolRefused::new)?;
        if let Some(uri) = ui.and_then(|ui| ui.resource_uri)
            && !uri.starts_with(URI_SCHEME)
        {
            return Err(ToolRefused::new(format!(
                "_meta.ui.resourceUri: {uri:?} is not a {URI_SCHEME} URI"
            )));
        }
        Ok(())
    }
}

/// Links a tool to its view: [`ToolBuilder::ui`](ToolUi::ui).
pub trait ToolUi {
    /// The tool's `_meta.ui`: the view that renders its results, and who may call it.
    #[must_use]
    fn ui(self, ui: UiToolMeta) -> Self;
}

impl ToolUi for ToolBuilder {
    fn ui(self, ui: UiToolMeta) -> Self {
        let value = serde_json::to_value(ui).unwrap_or_else(|_| Value::Object(Map::new()));
        self.meta_entry(META_KEY, value)
    }
}

/// A browser feature a view asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Permission {
    /// `camera`.
    Camera,
    /// `microphone`.
    Microphone,
    /// `geolocation`.
    Geolocation,
    /// `clipboard-write`.
    ClipboardWrite,
}

/// Why a view cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ViewError {
    /// Its URI does not start with `ui://`.
    #[error("view {uri:?}: the URI must start with {URI_SCHEME}")]
    Uri {
        /// The URI given.
        uri: String,
    },
    /// No document was given.
    #[error("view {uri:?}: no HTML document (ViewBuilder::html)")]
    NoDocument {
        /// The view.
        uri: String,
    },
    /// The document is larger than [`MAX_VIEW_BYTES`].
    #[error("view {uri:?}: the document is {len} bytes, more than {MAX_VIEW_BYTES}")]
    TooLarge {
        /// The view.
        uri: String,
        /// Its size.
        len: usize,
    },
    /// A declared origin cannot be one CSP source.
    #[error(
        "view {uri:?}: csp.{field}: {origin:?} is not an origin (no spaces, quotes, ';' or ',')"
    )]
    Origin {
        /// The view.
        uri: String,
        /// The list it was declared in, e.g. `connectDomains`.
        field: &'static str,
        /// The origin given.
        origin: String,
    },
}

/// A view: the `ui://` resource a host renders in a sandboxed frame ([`view`]).
#[derive(Debug, Clone)]
#[must_use]
pub struct ViewBuilder {
    uri: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    html: Option<Arc<str>>,
    meta: UiResourceMeta,
}

/// A view at `uri` (`ui://…`) named `name`; give its document with [`ViewBuilder::html`].
pub fn view(uri: impl Into<String>, name: impl Into<String>) -> ViewBuilder {
    ViewBuilder {
        uri: uri.into(),
        name: name.into(),
        title: None,
        description: None,
        html: None,
        meta: UiResourceMeta::default(),
    }
}

impl ViewBuilder {
    /// Its display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What it shows and does.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The HTML5 document, served as it is on every `resources/read`.
    pub fn html(mut self, document: impl Into<String>) -> Self {
        self.html = Some(Arc::from(document.into()));
        self
    }

    /// An origin it may connect to (fetch, XHR, WebSocket). Repeatable.
    pub fn connect_domain(mut self, origin: impl Into<String>) -> Self {
        push(&mut self.csp().connect_domains, origin.into());
        self
    }

    /// An origin it may load scripts, styles, images, fonts and media from. Repeatable.
    pub fn resource_domain(mut self, origin: impl Into<String>) -> Self {
        push(&mut self.csp().resource_domains, origin.into());
        self
    }

    /// An origin it may nest frames from. Repeatable.
    pub fn frame_domain(mut self, origin: impl Into<String>) -> Self {
        push(&mut self.csp().frame_domains, origin.into());
        self
    }

    /// An origin its `<base>` may name. Repeatable.
    pub fn base_uri_domain(mut self, origin: impl Into<String>) -> Self {
        push(&mut self.csp().base_uri_domains, origin.into());
        self
    }

    /// A browser feature it asks for (a host may or may not grant it). Repeatable.
    pub fn permission(mut self, permission: Permission) -> Self {
        let p = self
            .meta
            .permissions
            .get_or_insert_with(UiPermissions::default);
        let slot = match permission {
            Permission::Camera => &mut p.camera,
            Permission::Microphone => &mut p.microphone,
            Permission::Geolocation => &mut p.geolocation,
            Permission::ClipboardWrite => &mut p.clipboard_write,
        };
        *slot = Some(Map::new());
        self
    }

    /// A dedicated origin for its frame, in the format the host documents.
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.meta.domain = Some(domain.into());
        self
    }

    /// Whether it wants the host's border and background (by default the host decides).
    pub fn prefers_border(mut self, prefers: bool) -> Self {
        self.meta.prefers_border = Some(prefers);
        self
    }

    fn csp(&mut self) -> &mut UiResourceCsp {
        self.meta.csp.get_or_insert_with(UiResourceCsp::default)
    }

    /// The resource to register with [`crate::ServerBuilder::resource`]: listed with the
    /// view MIME type and its `_meta.ui`, read as the document with the same metadata.
    ///
    /// # Errors
    ///
    /// [`ViewError`]: a URI that is not `ui://`, no document or one over
    /// [`MAX_VIEW_BYTES`], a declared origin that is not one CSP source.
    pub fn build(self) -> Result<ResourceBuilder, ViewError> {
        let uri = self.uri;
        if !uri.starts_with(URI_SCHEME) {
            return Err(ViewError::Uri { uri });
        }
        let Some(html) = self.html else {
            return Err(ViewError::NoDocument { uri });
        };
        if html.len() > MAX_VIEW_BYTES {
            return Err(ViewError::TooLarge {
                uri,
                len: html.len(),
            });
        }
        if let Some(csp) = &self.meta.csp {
            for (field, list) in [
                ("connectDomains", &csp.connect_domains),
                ("resourceDomains", &csp.resource_domains),
                ("frameDomains", &csp.frame_domains),
                ("baseUriDomains", &csp.base_uri_domains),
            ] {
                if let Some(origin) = list.iter().flatten().find(|o| !is_safe_source(o)) {
                    return Err(ViewError::Origin {
                        uri,
                        field,
                        origin: origin.clone(),
                    });
                }
            }
        }
        let mut meta = Map::new();
        meta.insert(
            META_KEY.to_owned(),
            serde_json::to_value(&self.meta).unwrap_or_else(|_| Value::Object(Map::new())),
        );
        let mut resource = crate::core::resources::resource(uri, self.name)
            .mime_type(MIME_TYPE)
            .meta(meta.clone())
            .size(html.len() as u64);
        if let Some(title) = self.title {
            resource = resource.title(title);
        }
        if let Some(description) = self.description {
            resource = resource.description(description);
        }
        Ok(resource.handler(move |read| {
            let mut contents = TextResourceContents::new(read.uri, html.as_ref());
            contents.mime_type = Some(MIME_TYPE.to_owned());
            contents.meta = Some(meta.clone());
            async move { Ok(vec![contents.into()]) }
        }))
    }
}

fn push(list: &mut Option<Vec<String>>, origin: String) {
    let list = list.get_or_insert_with(Vec::new);
    if !list.contains(&origin) {
        list.push(origin);
    }
}
