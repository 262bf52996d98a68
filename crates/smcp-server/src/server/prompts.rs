//! Prompts (`server/prompts.mdx`).

use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use smcp_proto::server::prompts::GetPromptResult;

use super::handler::HandlerError;
use super::tools::BoxFuture;
use crate::context::RequestContext;
use crate::error::BuildError;

/// One `prompts/get` as the handler sees it.
#[derive(Debug)]
pub struct PromptGet {
    /// The prompt's name.
    pub name: String,
    /// The arguments; every required argument is present.
    pub arguments: Map<String, Value>,
    /// The request context.
    pub ctx: RequestContext,
    /// Multi round-trip input.
    pub input: crate::mrtr::Input,
}

impl PromptGet {
    /// A string argument, if present.
    pub fn arg(&self, key: &str) -> Option<&str> {
        self.arguments.get(key).and_then(Value::as_str)
    }
}

/// The function behind a prompt.
pub trait PromptHandler: Send + Sync + 'static {
    /// Renders the prompt.
    fn get(&self, get: PromptGet) -> BoxFuture<Result<GetPromptResult, HandlerError>>;
}

impl<F, Fut> PromptHandler for F
where
    F: Fn(PromptGet) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<GetPromptResult, HandlerError>> + Send + 'static,
{
    fn get(&self, get: PromptGet) -> BoxFuture<Result<GetPromptResult, HandlerError>> {
        Box::pin(self(get))
    }
}

/// Starts the definition of a prompt.
pub fn prompt(name: impl Into<String>) -> PromptBuilder {
    PromptBuilder {
        name: name.into(),
        descriptor: Map::new(),
        arguments: Vec::new(),
        handler: None,
    }
}

/// Builder for a prompt.
pub struct PromptBuilder {
    name: String,
    descriptor: Map<String, Value>,
    arguments: Vec<(String, bool, Value)>,
    handler: Option<Arc<dyn PromptHandler>>,
}

impl std::fmt::Debug for PromptBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptBuilder")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl PromptBuilder {
    /// A human-readable title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.descriptor
            .insert("title".into(), Value::String(title.into()));
        self
    }

    /// A description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.descriptor
            .insert("description".into(), Value::String(description.into()));
        self
    }

    /// Declares an argument.
    #[must_use]
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        let name = name.into();
        let arg = json!({"name": name, "description": description.into(), "required": required});
        self.arguments.push((name, required, arg));
        self
    }

    /// The async function that renders it.
    #[must_use]
    pub fn handler<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(PromptGet) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, HandlerError>> + Send + 'static,
    {
        self.handler = Some(Arc::new(handler));
        self
    }

    pub(crate) fn build(self) -> Result<PromptEntry, BuildError> {
        let handler = self.handler.ok_or_else(|| BuildError::MissingHandler {
            kind: "prompt",
            name: self.name.clone(),
        })?;
        let mut descriptor = Map::with_capacity(self.descriptor.len() + 2);
        descriptor.insert("name".into(), Value::String(self.name.clone()));
        descriptor.extend(self.descriptor);
        if !self.arguments.is_empty() {
            descriptor.insert(
                "arguments".into(),
                Value::Array(self.arguments.iter().map(|a| a.2.clone()).collect()),
            );
        }
        Ok(PromptEntry {
            name: self.name,
            required: self
                .arguments
                .into_iter()
                .filter(|a| a.1)
                .map(|a| a.0)
                .collect(),
            descriptor: Value::Object(descriptor),
            handler,
        })
    }
}

/// A registered prompt.
pub(crate) struct PromptEntry {
    pub(crate) name: String,
    pub(crate) required: Vec<String>,
    pub(crate) descriptor: Value,
    pub(crate) handler: Arc<dyn PromptHandler>,
}

impl std::fmt::Debug for PromptEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptEntry")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
