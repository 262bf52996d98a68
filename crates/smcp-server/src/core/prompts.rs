//! Prompts (`server/prompts.mdx`).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use smcp_proto::basic::{Icon, Meta};
use smcp_proto::server::prompts::{GetPromptResult, Prompt, PromptArgument};

use super::error::BuildError;
use super::handler::HandlerError;
use super::tools::BoxFuture;
use crate::core::context::RequestContext;

/// One `prompts/get` as the handler sees it.
#[derive(Debug)]
pub struct PromptGet {
    /// The prompt's name.
    pub name: String,
    /// The arguments; every required argument is present.
    pub arguments: BTreeMap<String, String>,
    /// The request context.
    pub ctx: RequestContext,
    /// Multi round-trip input.
    pub input: crate::core::mrtr::Input,
}

impl PromptGet {
    /// An argument, if present.
    pub fn arg(&self, key: &str) -> Option<&str> {
        self.arguments.get(key).map(String::as_str)
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
        prompt: Prompt::new(name),
        handler: None,
    }
}

/// Builder for a prompt.
pub struct PromptBuilder {
    prompt: Prompt,
    handler: Option<Arc<dyn PromptHandler>>,
}

impl std::fmt::Debug for PromptBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptBuilder")
            .field("name", &self.prompt.name)
            .finish_non_exhaustive()
    }
}

impl PromptBuilder {
    /// A human-readable title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.prompt.title = Some(title.into());
        self
    }

    /// A description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.prompt.description = Some(description.into());
        self
    }

    /// Icons.
    #[must_use]
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.prompt.icons = Some(icons);
        self
    }

    /// The prompt's `_meta` object.
    #[must_use]
    pub fn meta(mut self, meta: Meta) -> Self {
        self.prompt.meta = Some(meta);
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
        let mut argument = PromptArgument::new(name, required);
        argument.description = Some(description.into());
        self.prompt
            .arguments
            .get_or_insert_with(Vec::new)
            .push(argument);
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
            name: self.prompt.name.clone(),
        })?;
        let required = self
            .prompt
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true))
            .map(|a| a.name.clone())
            .collect();
        Ok(PromptEntry {
            prompt: self.prompt,
            required,
            handler,
        })
    }
}

/// A registered prompt.
pub(crate) struct PromptEntry {
    pub(crate) prompt: Prompt,
    pub(crate) required: Vec<String>,
    pub(crate) handler: Arc<dyn PromptHandler>,
}

impl PromptEntry {
    pub(crate) fn name(&self) -> &str {
        &self.prompt.name
    }
}

impl std::fmt::Debug for PromptEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptEntry")
            .field("name", &self.prompt.name)
            .finish_non_exhaustive()
    }
}
