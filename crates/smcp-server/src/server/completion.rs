//! Argument completion (`server/utilities/completion.mdx`).

use std::future::Future;

use serde::Serialize;
use serde_json::{Map, Value};

use super::handler::HandlerError;
use super::tools::BoxFuture;
use crate::context::RequestContext;

/// The most values one completion may return (spec: at most 100).
pub const MAX_COMPLETION_VALUES: usize = 100;

/// What is being completed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionRef {
    /// An argument of the named prompt (`ref/prompt`).
    Prompt(String),
    /// A variable of the resource template with this URI (`ref/resource`).
    Resource(String),
}

/// One `completion/complete` as the handler sees it.
#[derive(Debug)]
pub struct CompletionRequest {
    /// The prompt or resource template.
    pub reference: CompletionRef,
    /// The argument's name.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Values of arguments already resolved, from `context.arguments`.
    pub context_arguments: Map<String, Value>,
    /// The request context.
    pub ctx: RequestContext,
}

/// The completion values. More than [`MAX_COMPLETION_VALUES`] are cut, and `hasMore` is set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// Suggested values.
    pub values: Vec<String>,
    /// The total number of matches, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more values exist than were returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// Completion with these values.
    pub fn values(values: Vec<String>) -> Self {
        Self {
            values,
            ..Self::default()
        }
    }

    pub(crate) fn truncated(mut self) -> Self {
        if self.values.len() > MAX_COMPLETION_VALUES {
            let total = self.values.len() as u64;
            self.values.truncate(MAX_COMPLETION_VALUES);
            self.has_more = Some(true);
            self.total = Some(self.total.unwrap_or(total).max(total));
        }
        self
    }
}

/// The function that completes arguments.
pub trait CompletionHandler: Send + Sync + 'static {
    /// Suggests values.
    fn complete(&self, request: CompletionRequest) -> BoxFuture<Result<Completion, HandlerError>>;
}

impl<F, Fut> CompletionHandler for F
where
    F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Completion, HandlerError>> + Send + 'static,
{
    fn complete(&self, request: CompletionRequest) -> BoxFuture<Result<Completion, HandlerError>> {
        Box::pin(self(request))
    }
}
