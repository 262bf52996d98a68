//! The extension seam: how a protocol extension plugs into the core without the core knowing
//! it.
//!
//! An [`Extension`] can
//!
//! 1. **advertise** itself in `server/discover`'s capabilities ([`Extension::capabilities`]);
//! 2. **serve methods** of its own ([`Extension::methods`], [`Extension::call`]), routed by the
//!    same dispatch as the core's, with the params member `Mcp-Name` mirrors declared per
//!    method so the HTTP layer checks the header as for `tools/call`;
//! 3. **look at every tool** as it is registered, at build time or at runtime
//!    ([`Extension::register_tool`]): refuse a definition it cannot serve, or attach data the
//!    tool's calls will need ([`ToolData`]);
//! 4. **wrap every `tools/call`** ([`Extension::tool_call`]): resolve arguments before the
//!    handler runs (and hand the results to it through [`ToolCall::extensions`]), answer
//!    without running it, or gate its result after — or run it elsewhere and answer with
//!    something else (a task handle), since [`Next`] can be moved into a spawned task;
//! 5. **gate `resources/read`** results after the handler ([`Extension::resource_read`]);
//! 6. **honour filter members of `subscriptions/listen`** of its own ([`Extension::listen`]):
//!    acknowledge them, or refuse the request, and name the topics whose notifications
//!    ([`crate::Change::Topic`], published with [`crate::Server::publish`]) the stream
//!    receives.
//!
//! An extension that runs a call in the background (SEP-2663 tasks) runs the rest of the
//! chain again for each later round: [`Next`] is `Clone`, [`ToolCall::template`] keeps what a
//! later round's call is built from, [`crate::mrtr::Input::hold`] and
//! [`crate::mrtr::Input::resume`] carry the answers and the handler's state between rounds
//! without a `requestState`, and [`RequestContext::detach`] gives the work a context of its
//! own that outlives the request.
//!
//! Extensions run in registration order: the first registered is the outermost wrapper.
//! A server without extensions pays nothing: its tool calls go straight to the handler.
//!
//! SEP-2631 file transfer (`smcp-files`) is implemented entirely through this seam. Other
//! seams serve the other cross-cutting concerns: the caller's identity arrives as a
//! [`crate::Principal`] on the request context (an authentication layer supplies it), and
//! state shared between instances sits behind traits ([`crate::ChangeBus`],
//! [`crate::mrtr::ReplayGuard`]).

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};
use smcp_proto::capabilities::ServerCapabilities;
use smcp_proto::error::ErrorObject;
use smcp_proto::patterns::subscriptions::SubscriptionFilter;
use smcp_proto::server::resources::ReadResourceResult;
use smcp_proto::server::tools::{CallToolResult, Tool};

use super::context::RequestContext;
use super::error::BuildError;
use super::handler::HandlerError;
use super::tools::{BoxFuture, ToolCall, ToolEntry, ToolHandler};
pub use super::typemap::{Extensions, ToolData};

/// A method an extension serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodSpec {
    /// The JSON-RPC method, e.g. `"files/authorizeUpload"`.
    pub method: &'static str,
    /// The params member the `Mcp-Name` header must mirror (e.g. `"taskId"`), if any.
    pub name_member: Option<&'static str>,
}

impl MethodSpec {
    /// A method whose requests carry no `Mcp-Name`.
    pub const fn new(method: &'static str) -> Self {
        Self {
            method,
            name_member: None,
        }
    }

    /// A method whose `Mcp-Name` header mirrors `params[member]`.
    #[must_use]
    pub const fn named_by(mut self, member: &'static str) -> Self {
        self.name_member = Some(member);
        self
    }
}

/// One request for a method an extension serves.
#[derive(Debug)]
pub struct ExtensionRequest {
    /// The method (one of [`Extension::methods`]).
    pub method: &'static str,
    /// `params` without `_meta`.
    pub params: Map<String, Value>,
    /// The request context: client capabilities, principal, cancellation, …
    pub ctx: RequestContext,
}

/// Why an extension refused a tool definition (see [`Extension::register_tool`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct ToolRefused {
    /// What is wrong, naming the offending part of the tool.
    pub reason: String,
}

impl ToolRefused {
    /// A refusal for `reason`.
    pub fn new(reason: impl std::fmt::Display) -> Self {
        Self {
            reason: reason.to_string(),
        }
    }
}

/// What an extension method answers: a result object (the server adds `resultType` when it
/// is missing and its own `_meta`), or a JSON-RPC error.
pub type ExtensionResult = Result<Map<String, Value>, ErrorObject>;

/// What a wrapped `tools/call` ends with.
#[derive(Debug)]
pub enum ToolReply {
    /// The tool's result (possibly changed by an extension on the way out).
    Complete(CallToolResult),
    /// Another result shape an extension answers with instead, e.g. a task handle.
    Other(Map<String, Value>),
}

/// The outcome of a wrapped `tools/call`: a reply, or the handler's error (`input_required`
/// among them, which the core turns into an `InputRequiredResult`).
pub type ToolOutcome = Result<ToolReply, HandlerError>;

/// What an extension honours of a `subscriptions/listen` filter (see [`Extension::listen`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListenGrant {
    /// The members of the filter this extension honours, as they go into the
    /// acknowledgement (members it leaves `None` stay as the core decided).
    pub honoured: SubscriptionFilter,
    /// The topics of [`crate::Change::Topic`] notifications the stream receives.
    pub topics: Vec<String>,
}

/// A protocol extension. Every method has a default that does nothing, so an extension
/// implements only the hooks it needs.
///
/// # Examples
///
/// See [`ServerBuilder::extension`](crate::ServerBuilder::extension).
pub trait Extension: Send + Sync + 'static {
    /// A name for logs and errors, e.g. `"io.modelcontextprotocol/files"`.
    fn name(&self) -> &'static str;

    /// Adds the extension to `server/discover`'s `capabilities`.
    fn capabilities(&self, capabilities: &mut ServerCapabilities) {
        let _ = capabilities;
    }

    /// The methods this extension serves. Asked once, when the server is built.
    fn methods(&self) -> Vec<MethodSpec> {
        Vec::new()
    }

    /// Serves one of [`Extension::methods`].
    fn call(&self, request: ExtensionRequest) -> BoxFuture<ExtensionResult> {
        let method = request.method;
        Box::pin(async move { Err(ErrorObject::method_not_found(method)) })
    }

    /// Looks at a tool as it is registered. `Err` refuses the definition (the message says
    /// why, naming the offending part of the tool); data put in `data` is available to every
    /// call of the tool ([`ToolCall::tool_data`]).
    fn register_tool(&self, tool: &Tool, data: &mut ToolData) -> Result<(), ToolRefused> {
        let _ = (tool, data);
        Ok(())
    }

    /// Wraps a `tools/call`: by default it just runs `next` (the remaining extensions, then
    /// the handler).
    fn tool_call(&self, call: ToolCall, next: Next) -> BoxFuture<ToolOutcome> {
        next.run(call)
    }

    /// Looks at a `resources/read` result before it is sent (e.g. to gate contents the
    /// client cannot use).
    fn resource_read(&self, ctx: &RequestContext, result: &mut ReadResourceResult) {
        let _ = (ctx, result);
    }

    /// Whether this extension takes part in `subscriptions/listen` ([`Extension::listen`]);
    /// a server whose extensions all say no pays nothing for the hook. One that says yes
    /// also makes the server serve `subscriptions/listen` when it has no change
    /// notifications of its own.
    fn listens(&self) -> bool {
        false
    }

    /// Looks at a `subscriptions/listen` request (only when [`Extension::listens`]), before
    /// its stream opens: `Ok` with what this extension honours of `requested` (the filter as
    /// the client sent it), or a JSON-RPC error refusing the whole request (e.g. −32021 when
    /// the request did not declare the extension).
    fn listen(
        &self,
        ctx: RequestContext,
        requested: SubscriptionFilter,
    ) -> BoxFuture<Result<ListenGrant, ErrorObject>> {
        let _ = (ctx, requested);
        Box::pin(async { Ok(ListenGrant::default()) })
    }
}

impl fmt::Debug for dyn Extension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Extension({})", self.name())
    }
}

/// The rest of a `tools/call` chain: the extensions after this one, then the handler.
/// `'static`, so an extension may run it in a task of its own; `Clone` (three reference
/// counts), so it may run it again for a later round of the same call.
#[derive(Clone)]
pub struct Next {
    extensions: Arc<[Arc<dyn Extension>]>,
    index: usize,
    handler: Arc<dyn ToolHandler>,
}

impl fmt::Debug for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next")
            .field("remaining", &(self.extensions.len() - self.index))
            .finish_non_exhaustive()
    }
}

impl Next {
    /// The whole chain for a tool with `handler`.
    pub(crate) fn chain(
        extensions: Arc<[Arc<dyn Extension>]>,
        handler: Arc<dyn ToolHandler>,
    ) -> Self {
        Self {
            extensions,
            index: 0,
            handler,
        }
    }

    /// Runs the rest of the chain.
    pub fn run(self, call: ToolCall) -> BoxFuture<ToolOutcome> {
        match self.extensions.get(self.index).cloned() {
            Some(extension) => extension.tool_call(
                call,
                Self {
                    extensions: self.extensions,
                    index: self.index + 1,
                    handler: self.handler,
                },
            ),
            None => {
                let fut = self.handler.call(call);
                Box::pin(async move { fut.await.map(ToolReply::Complete) })
            }
        }
    }
}

/// Lets every extension look at a tool being registered (see [`Extension::register_tool`]).
pub(crate) fn register_tool(
    extensions: &[Arc<dyn Extension>],
    entry: &mut ToolEntry,
) -> Result<(), BuildError> {
    for extension in extensions {
        extension
            .register_tool(&entry.tool, &mut entry.data)
            .map_err(|refused| BuildError::Extension {
                extension: extension.name(),
                item: entry.tool.name.clone(),
                reason: refused.reason,
            })?;
    }
    Ok(())
}
