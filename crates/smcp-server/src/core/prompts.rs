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
///
/// # Examples
///
/// ```
/// # use smcp_server::prelude::*;
/// let translate = prompt("translate")
///     .argument("text", "What to translate", true)
///     .argument("to", "Target language (default: English)", false)
///     .handler(|get: PromptGet| async move {
///         let to = get.arg("to").unwrap_or("English");
///         let text = get.arg("text").unwrap_or_default();
///         Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
///             "Translate into {to}:\n{text}"
///         ))]))
///     });
/// ```
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
///
/// Declare its arguments with [`PromptBuilder::argument`] and render it with
/// [`PromptBuilder::handler`], or derive both from a type with [`PromptBuilder::typed`].
///
/// # Examples
///
/// ```
/// use smcp_server::prelude::*;
///
/// let standup = prompt("standup")
///     .title("Daily stand-up")
///     .description("Summarize yesterday's work")
///     .handler(|_get| async {
///         Ok(GetPromptResult::new(vec![PromptMessage::user_text(
///             "Summarize what I did yesterday in three bullets.",
///         )]))
///     });
/// let server = Server::builder("demo", "1.0.0").prompt(standup).build()?;
/// # let _ = server;
/// # Ok::<(), smcp_server::BuildError>(())
/// ```
pub fn prompt(name: impl Into<String>) -> PromptBuilder {
    PromptBuilder {
        prompt: Prompt::new(name),
        handler: None,
        scopes: Vec::new(),
        invalid: None,
    }
}

/// Builder for a prompt.
///
/// Made by [`prompt`]; registered with [`ServerBuilder::prompt`](crate::ServerBuilder::prompt)
/// or, on a running server, [`Server::add_prompt`](crate::Server::add_prompt).
pub struct PromptBuilder {
    prompt: Prompt,
    handler: Option<Arc<dyn PromptHandler>>,
    scopes: Vec<String>,
    /// Why the arguments derived by `typed` cannot be prompt arguments.
    invalid: Option<String>,
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
    ///
    /// # Examples
    ///
    /// See [`PromptGet`].
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

    /// Declares an argument as a [`PromptArgument`] (title, description and requiredness as
    /// given), e.g. one another server listed.
    #[must_use]
    pub fn argument_definition(mut self, argument: PromptArgument) -> Self {
        self.prompt
            .arguments
            .get_or_insert_with(Vec::new)
            .push(argument);
        self
    }

    /// A scope a request for this prompt (and completing its arguments) needs, on top of any the server's policy asks
    /// (checked when an authentication layer set the request's
    /// [`Access`](crate::core::access::Access); a refusal names every needed scope and is
    /// answered with `403`). Repeatable.
    #[must_use]
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        crate::core::access::declare(&mut self.scopes, scope.into());
        self
    }

    /// The async function that renders it.
    ///
    /// # Examples
    ///
    /// See [`prompt`] and [`PromptGet`].
    #[must_use]
    pub fn handler<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(PromptGet) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, HandlerError>> + Send + 'static,
    {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// The async function that renders it, with the arguments deserialized into `A`; the
    /// prompt's arguments are declared from `A`'s fields (strings, required unless `Option`
    /// or defaulted, described by their doc comments; see
    /// [`crate::typed::prompt_arguments`]). Arguments declared with
    /// [`PromptBuilder::argument`] before are replaced.
    ///
    /// ```
    /// # use smcp_server::prompt;
    /// # use smcp_server::proto::server::prompts::{GetPromptResult, PromptMessage};
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Review {
    ///     /// The code to review.
    ///     code: String,
    ///     /// What to focus on.
    ///     focus: Option<String>,
    /// }
    ///
    /// let review = prompt("review").typed(|_get, args: Review| async move {
    ///     let focus = args.focus.unwrap_or_else(|| "anything".into());
    ///     Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
    ///         "Review this, focusing on {focus}:\n{}",
    ///         args.code
    ///     ))]))
    /// });
    /// ```
    #[cfg(feature = "schemars")]
    #[must_use]
    pub fn typed<A, F, Fut>(mut self, handler: F) -> Self
    where
        A: schemars::JsonSchema + serde::de::DeserializeOwned + Send + 'static,
        F: Fn(PromptGet, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, HandlerError>> + Send + 'static,
    {
        match crate::typed::prompt_arguments::<A>() {
            Ok(arguments) => self.prompt.arguments = Some(arguments),
            Err(reason) => self.invalid = Some(reason),
        }
        let handler = Arc::new(handler);
        self.handler = Some(Arc::new(move |get: PromptGet| {
            let handler = handler.clone();
            async move {
                let args = prompt_args::<A>(&get.arguments)?;
                handler(get, args).await
            }
        }));
        self
    }

    pub(crate) fn build(self) -> Result<PromptEntry, BuildError> {
        if let Some(reason) = self.invalid {
            return Err(BuildError::InvalidPromptArguments {
                prompt: self.prompt.name,
                reason,
            });
        }
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
            scopes: self.scopes,
            handler,
        })
    }
}

/// The arguments of a typed prompt; a mismatch is −32602 naming the argument, never its value.
#[cfg(feature = "schemars")]
fn prompt_args<A: serde::de::DeserializeOwned>(
    arguments: &BTreeMap<String, String>,
) -> Result<A, HandlerError> {
    use serde::de::IntoDeserializer;
    // Each value as a JSON string, whose deserializer also fills `Option<String>` fields (a
    // bare `&str` deserializer cannot: it has no `deserialize_option`).
    let entries = arguments.iter().map(|(k, v)| {
        (
            k.as_str(),
            serde_json::Value::String(v.clone()).into_deserializer(),
        )
    });
    let deserializer = serde::de::value::MapDeserializer::<_, serde_json::Error>::new(entries);
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let path = e.path().to_string();
        HandlerError::invalid_params(format!(
            "Invalid prompt arguments: {path}: {}",
            crate::core::tools::masked_serde_message(&e.into_inner().to_string())
        ))
    })
}

/// A registered prompt.
pub(crate) struct PromptEntry {
    pub(crate) prompt: Prompt,
    pub(crate) required: Vec<String>,
    /// The scopes a request needs beyond the policy's ([`PromptBuilder::scope`]).
    pub(crate) scopes: Vec<String>,
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
