//! Resources and resource templates (`server/resources.mdx`).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};
use smcp_proto::content::ResourceContents;

use super::handler::HandlerError;
use super::tools::BoxFuture;
use super::uri_template::UriTemplate;
use crate::config::CacheHint;
use crate::context::RequestContext;
use crate::error::BuildError;

/// One `resources/read` as the handler sees it.
#[derive(Debug)]
pub struct ResourceRead {
    /// The URI requested.
    pub uri: String,
    /// For a template, the values of its variables.
    pub variables: BTreeMap<String, String>,
    /// The request context.
    pub ctx: RequestContext,
    /// Multi round-trip input.
    pub input: crate::mrtr::Input,
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
pub fn resource(uri: impl Into<String>, name: impl Into<String>) -> ResourceBuilder {
    let uri = uri.into();
    let mut descriptor = Map::new();
    descriptor.insert("uri".into(), Value::String(uri.clone()));
    descriptor.insert("name".into(), Value::String(name.into()));
    ResourceBuilder {
        key: uri,
        descriptor,
        cache: None,
        handler: None,
        template: false,
    }
}

/// Starts the definition of a resource template such as `file:///{+path}`.
pub fn resource_template(
    uri_template: impl Into<String>,
    name: impl Into<String>,
) -> ResourceBuilder {
    let template = uri_template.into();
    let mut descriptor = Map::new();
    descriptor.insert("uriTemplate".into(), Value::String(template.clone()));
    descriptor.insert("name".into(), Value::String(name.into()));
    ResourceBuilder {
        key: template,
        descriptor,
        cache: None,
        handler: None,
        template: true,
    }
}

/// Builder for a resource or a resource template.
pub struct ResourceBuilder {
    key: String,
    descriptor: Map<String, Value>,
    cache: Option<CacheHint>,
    handler: Option<Arc<dyn ResourceHandler>>,
    template: bool,
}

impl std::fmt::Debug for ResourceBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceBuilder")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl ResourceBuilder {
    /// A human-readable title.
    #[must_use]
    pub fn title(self, title: impl Into<String>) -> Self {
        self.member("title", Value::String(title.into()))
    }

    /// A description.
    #[must_use]
    pub fn description(self, description: impl Into<String>) -> Self {
        self.member("description", Value::String(description.into()))
    }

    /// The MIME type of the contents.
    #[must_use]
    pub fn mime_type(self, mime_type: impl Into<String>) -> Self {
        self.member("mimeType", Value::String(mime_type.into()))
    }

    /// The size in bytes, when known (concrete resources only).
    #[must_use]
    pub fn size(self, size: u64) -> Self {
        self.member("size", Value::from(size))
    }

    /// `Annotations`, as JSON.
    #[must_use]
    pub fn annotations(self, annotations: Value) -> Self {
        self.member("annotations", annotations)
    }

    /// Caching hints for `resources/read` of this resource (default: the server's).
    #[must_use]
    pub fn cache(mut self, hint: CacheHint) -> Self {
        self.cache = Some(hint);
        self
    }

    /// The async function that reads it.
    #[must_use]
    pub fn handler<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ResourceRead) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, HandlerError>> + Send + 'static,
    {
        self.handler = Some(Arc::new(handler));
        self
    }

    fn member(mut self, key: &str, value: Value) -> Self {
        self.descriptor.insert(key.to_owned(), value);
        self
    }

    pub(crate) fn build(self) -> Result<ResourceEntry, BuildError> {
        let kind = if self.template {
            "resource template"
        } else {
            "resource"
        };
        let handler = self.handler.ok_or_else(|| BuildError::MissingHandler {
            kind,
            name: self.key.clone(),
        })?;
        let template = if self.template {
            Some(UriTemplate::parse(&self.key).map_err(|reason| {
                BuildError::InvalidUriTemplate {
                    template: self.key.clone(),
                    reason,
                }
            })?)
        } else {
            None
        };
        Ok(ResourceEntry {
            key: self.key,
            descriptor: Value::Object(self.descriptor),
            template,
            cache: self.cache,
            handler,
        })
    }
}

/// A registered resource or template.
pub(crate) struct ResourceEntry {
    /// The URI, or the URI template.
    pub(crate) key: String,
    pub(crate) descriptor: Value,
    pub(crate) template: Option<UriTemplate>,
    pub(crate) cache: Option<CacheHint>,
    pub(crate) handler: Arc<dyn ResourceHandler>,
}

impl std::fmt::Debug for ResourceEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceEntry")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}
