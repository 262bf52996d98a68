//! Resources and resource templates (`server/resources.mdx`).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use smcp_proto::basic::{Annotations, Icon, Meta};
use smcp_proto::content::ResourceContents;
use smcp_proto::server::resources::{Resource, ResourceTemplate};

use super::error::BuildError;
use super::handler::HandlerError;
use super::tools::BoxFuture;
use super::uri_template::UriTemplate;
use crate::config::CacheHint;
use crate::core::context::RequestContext;

/// One `resources/read` as the handler sees it.
///
/// # Examples
///
/// ```
/// # use smcp_server::prelude::*;
/// let user = resource_template("users://{id}/profile", "profile").handler(|read: ResourceRead| async move {
///     let id = &read.variables["id"]; // every variable of the template is present
///     Ok(vec![TextResourceContents::new(&read.uri, format!("user {id}")).into()])
/// });
/// ```
#[derive(Debug)]
pub struct ResourceRead {
    /// The URI requested.
    pub uri: String,
    /// For a template, the values of its variables.
    pub variables: BTreeMap<String, String>,
    /// The request context.
    pub ctx: RequestContext,
    /// Multi round-trip input.
    pub input: crate::core::mrtr::Input,
}

/// The function that reads a resource.
pub trait ResourceHandler: Send + Sync + 'static {
    /// Produces the contents of `read.uri`.
    fn read(&self, read: ResourceRead) -> BoxFuture<Result<Vec<ResourceContents>, HandlerError>>;
}

impl<F, Fut> ResourceHandler for F
where
    F: Fn(ResourceRead) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<ResourceContents>, HandlerError>> + Send + 'static,
{
    fn read(&self, read: ResourceRead) -> BoxFuture<Result<Vec<ResourceContents>, HandlerError>> {
        Box::pin(self(read))
    }
}

/// Starts the definition of a concrete resource.
///
/// # Examples
///
/// ```
/// use smcp_server::prelude::*;
///
/// let config = resource("config://app", "App configuration")
///     .description("The running configuration")
///     .mime_type("application/json")
///     .handler(|read| async move {
///         let json = serde_json::json!({"debug": false}).to_string();
///         Ok(vec![TextResourceContents::new(read.uri, json).into()])
///     });
/// let server = Server::builder("demo", "1.0.0").resource(config).build()?;
/// # let _ = server;
/// # Ok::<(), smcp_server::BuildError>(())
/// ```
pub fn resource(uri: impl Into<String>, name: impl Into<String>) -> ResourceBuilder {
    ResourceBuilder {
        kind: Kind::Resource(Resource::new(uri, name)),
        cache: None,
        scopes: Vec::new(),
        handler: None,
    }
}

/// Starts the definition of a resource template such as `file:///{+path}`.
///
/// The template is an RFC 6570 URI template (checked by
/// [`ServerBuilder::build`](crate::ServerBuilder::build)); the handler gets the values of its
/// variables in [`ResourceRead::variables`].
///
/// # Examples
///
/// ```
/// use smcp_server::prelude::*;
///
/// let files = resource_template("file:///{+path}", "files")
///     .mime_type("text/plain")
///     .handler(|read| async move {
///         let path = read.variables.get("path").cloned().unwrap_or_default();
///         if path.contains("..") {
///             return Err(HandlerError::invalid_params("path must not contain .."));
///         }
///         Ok(vec![TextResourceContents::new(read.uri, format!("contents of {path}")).into()])
///     });
/// let server = Server::builder("demo", "1.0.0").resource(files).build()?;
/// # let _ = server;
/// # Ok::<(), smcp_server::BuildError>(())
/// ```
pub fn resource_template(
    uri_template: impl Into<String>,
    name: impl Into<String>,
) -> ResourceBuilder {
    ResourceBuilder {
        kind: Kind::Template(ResourceTemplate::new(uri_template, name)),
        cache: None,
        scopes: Vec::new(),
        handler: None,
    }
}

#[derive(Debug)]
enum Kind {
    Resource(Resource),
    Template(ResourceTemplate),
}

/// Builder for a resource or a resource template.
///
/// Made by [`resource`] or [`resource_template`]; registered with
/// [`ServerBuilder::resource`](crate::ServerBuilder::resource) or, on a running server,
/// [`Server::add_resource`](crate::Server::add_resource).
pub struct ResourceBuilder {
    kind: Kind,
    cache: Option<CacheHint>,
    scopes: Vec<String>,
    handler: Option<Arc<dyn ResourceHandler>>,
}

impl std::fmt::Debug for ResourceBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceBuilder")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// Sets a member common to resources and templates.
macro_rules! both {
    ($self:ident, $field:ident = $value:expr) => {{
        match &mut $self.kind {
            Kind::Resource(r) => r.$field = $value,
            Kind::Template(t) => t.$field = $value,
        }
        $self
    }};
}

impl ResourceBuilder {
    /// A human-readable title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        both!(self, title = Some(title.into()))
    }

    /// A description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        both!(self, description = Some(description.into()))
    }

    /// The MIME type of the contents.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        both!(self, mime_type = Some(mime_type.into()))
    }

    /// `Annotations` (audience, priority, last modified).
    #[must_use]
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        both!(self, annotations = Some(annotations))
    }

    /// Icons.
    #[must_use]
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        both!(self, icons = Some(icons))
    }

    /// The `_meta` object of the descriptor.
    #[must_use]
    pub fn meta(mut self, meta: Meta) -> Self {
        both!(self, meta = Some(meta))
    }

    /// The size in bytes, when known (concrete resources only; ignored for templates).
    #[must_use]
    pub fn size(mut self, size: u64) -> Self {
        if let Kind::Resource(r) = &mut self.kind {
            r.size = Some(size);
        }
        self
    }

    /// Caching hints for `resources/read` of this resource (default: the server's).
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use smcp_server::prelude::*;
    /// use smcp_server::{CacheHint, CacheScope};
    ///
    /// let logo = resource("assets://logo.svg", "logo")
    ///     .cache(CacheHint::new(Duration::from_secs(3600), CacheScope::Public))
    ///     .handler(|read| async move {
    ///         Ok(vec![TextResourceContents::new(read.uri, "<svg/>").into()])
    ///     });
    /// ```
    #[must_use]
    pub fn cache(mut self, hint: CacheHint) -> Self {
        self.cache = Some(hint);
        self
    }

    /// A scope a request for this resource (for a template: every URI it matches, and completing its variables) needs, on top of any the server's policy asks
    /// (checked when an authentication layer set the request's
    /// [`Access`](crate::core::access::Access); a refusal names every needed scope and is
    /// answered with `403`). Repeatable.
    #[must_use]
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        crate::core::access::declare(&mut self.scopes, scope.into());
        self
    }

    /// The async function that reads it.
    ///
    /// # Examples
    ///
    /// See [`resource`] and [`resource_template`]. A handler may also ask the client for input
    /// ([`crate::mrtr`]) through `read.input`.
    #[must_use]
    pub fn handler<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ResourceRead) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, HandlerError>> + Send + 'static,
    {
        self.handler = Some(Arc::new(handler));
        self
    }

    pub(crate) fn build(self) -> Result<ResourceEntry, BuildError> {
        let (kind_name, key) = match &self.kind {
            Kind::Resource(r) => ("resource", r.uri.clone()),
            Kind::Template(t) => ("resource template", t.uri_template.clone()),
        };
        let handler = self.handler.ok_or_else(|| BuildError::MissingHandler {
            kind: kind_name,
            name: key.clone(),
        })?;
        let descriptor = match self.kind {
            Kind::Resource(r) => Descriptor::Resource(r),
            Kind::Template(t) => {
                let template =
                    UriTemplate::parse(&key).map_err(|reason| BuildError::InvalidUriTemplate {
                        template: key.clone(),
                        reason,
                    })?;
                Descriptor::Template(t, template)
            }
        };
        Ok(ResourceEntry {
            key,
            descriptor,
            cache: self.cache,
            scopes: self.scopes,
            handler,
        })
    }
}

/// What a registered entry lists as.
pub(crate) enum Descriptor {
    Resource(Resource),
    Template(ResourceTemplate, UriTemplate),
}

/// A registered resource or template.
pub(crate) struct ResourceEntry {
    /// The URI, or the URI template.
    pub(crate) key: String,
    pub(crate) descriptor: Descriptor,
    pub(crate) cache: Option<CacheHint>,
    /// The scopes a read needs beyond the policy's ([`ResourceBuilder::scope`]).
    pub(crate) scopes: Vec<String>,
    pub(crate) handler: Arc<dyn ResourceHandler>,
}

impl ResourceEntry {
    pub(crate) fn is_template(&self) -> bool {
        matches!(self.descriptor, Descriptor::Template(..))
    }

    /// The variables of `uri` when this is a template that matches it.
    pub(crate) fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        match &self.descriptor {
            Descriptor::Template(_, template) => template.matches(uri),
            Descriptor::Resource(_) => None,
        }
    }
}

impl std::fmt::Debug for ResourceEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceEntry")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}
