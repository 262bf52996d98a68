//! Argument completion (`server/utilities/completion.mdx`).

use std::collections::BTreeMap;
use std::future::Future;

use smcp_proto::server::utilities::completion::{Completion, CompletionReference};

use super::handler::HandlerError;
use super::tools::BoxFuture;
use crate::core::context::RequestContext;

/// The most values one completion may return (spec: at most 100). More are cut, and
/// `hasMore` and `total` are set.
pub const MAX_COMPLETION_VALUES: usize = 100;

/// One `completion/complete` as the handler sees it.
///
/// # Examples
///
/// Completes the `language` argument of the `translate` prompt; other references get nothing:
///
/// ```
/// use smcp_server::proto::server::utilities::completion::CompletionReference;
/// use smcp_server::{Completion, CompletionRequest, Server};
///
/// async fn complete(request: CompletionRequest) -> Result<Completion, smcp_server::HandlerError> {
///     let for_translate = matches!(&request.reference, CompletionReference::Prompt(p) if p.name == "translate");
///     if !for_translate || request.argument != "language" {
///         return Ok(Completion::values(Vec::new()));
///     }
///     let values = ["English", "French", "German"]
///         .into_iter()
///         .filter(|l| l.starts_with(request.value.as_str()))
///         .map(String::from)
///         .collect();
///     Ok(Completion::values(values))
/// }
///
/// let server = Server::builder("demo", "1.0.0").completion(complete).build()?;
/// # let _ = server;
/// # Ok::<(), smcp_server::BuildError>(())
/// ```
#[derive(Debug)]
pub struct CompletionRequest {
    /// The prompt (`ref/prompt`) or resource template (`ref/resource`).
    pub reference: CompletionReference,
    /// The argument's name.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Values of arguments already resolved, from `context.arguments`.
    pub context_arguments: BTreeMap<String, String>,
    /// The request context.
    pub ctx: RequestContext,
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

impl std::fmt::Debug for dyn CompletionHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompletionHandler")
    }
}

/// At most [`MAX_COMPLETION_VALUES`] values; when cut, `hasMore` is set and `total` is at
/// least the number there were.
pub(crate) fn truncated(mut completion: Completion) -> Completion {
    if completion.values.len() > MAX_COMPLETION_VALUES {
        let total = completion.values.len() as u64;
        completion.values.truncate(MAX_COMPLETION_VALUES);
        completion.has_more = Some(true);
        completion.total = Some(completion.total.unwrap_or(total).max(total));
    }
    completion
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_at_the_limit() {
        let c = truncated(Completion {
            values: (0..150).map(|i| i.to_string()).collect(),
            total: None,
            has_more: None,
        });
        assert_eq!(c.values.len(), MAX_COMPLETION_VALUES);
        assert_eq!((c.total, c.has_more), (Some(150), Some(true)));
        let small = Completion {
            values: vec!["a".into()],
            total: Some(9),
            has_more: Some(true),
        };
        assert_eq!(truncated(small.clone()), small);
    }
}
