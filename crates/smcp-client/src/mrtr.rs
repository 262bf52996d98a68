//! Multi Round-Trip Requests, client side (A6): the [`InputHandler`] a host installs and the
//! helpers that answer an `InputRequiredResult`.
//!
//! The client loop itself lives in `client.rs` (`Client::request_with_input`): it retries the
//! same method and params with a *new* JSON-RPC id, the `inputResponses` produced here and the
//! `requestState` copied byte for byte, and stops after a configurable number of rounds.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use smcp_proto::capabilities::{
    ClientCapabilities, ElicitationCapability, RootsCapability, SamplingCapability,
};
use smcp_proto::client::elicitation::{ElicitRequestParams, ElicitResult};
use smcp_proto::client::roots::{ListRootsRequestParams, ListRootsResult};
use smcp_proto::client::sampling::{CreateMessageRequestParams, CreateMessageResult};
use smcp_proto::patterns::mrtr::{InputRequest, InputRequests};

use crate::error::{Error, Kind, Result};

/// Which kinds of input request a handler answers. The client declares exactly these in
/// `_meta["io.modelcontextprotocol/clientCapabilities"]` of every request, so a server never
/// asks for something the host cannot provide (A6 item 58).
///
/// # Examples
///
/// ```
/// use smcp_client::InputKinds;
///
/// let kinds = InputKinds { elicitation_form: true, ..InputKinds::default() };
/// let caps = kinds.to_capabilities();
/// assert!(caps.elicitation.is_some());
/// assert!(caps.sampling.is_none() && caps.roots.is_none());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputKinds {
    /// Form-mode elicitation (`elicitation.form`).
    pub elicitation_form: bool,
    /// URL-mode elicitation (`elicitation.url`): the host shows the URL and asks consent.
    pub elicitation_url: bool,
    /// Sampling (`sampling/createMessage`).
    pub sampling: bool,
    /// Roots (`roots/list`).
    pub roots: bool,
}

impl InputKinds {
    /// Every kind.
    pub fn all() -> Self {
        Self {
            elicitation_form: true,
            elicitation_url: true,
            sampling: true,
            roots: true,
        }
    }

    /// The capabilities object declaring these kinds.
    pub fn to_capabilities(self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        if self.elicitation_form || self.elicitation_url {
            caps.elicitation = Some(ElicitationCapability {
                form: self.elicitation_form.then(Map::new),
                url: self.elicitation_url.then(Map::new),
                ..ElicitationCapability::default()
            });
        }
        if self.sampling {
            caps.sampling = Some(SamplingCapability::default());
        }
        if self.roots {
            caps.roots = Some(RootsCapability::default());
        }
        caps
    }
}

/// The error an [`InputHandler`] returns when it cannot answer an input request (elicitation,
/// sampling, roots). The call that needed the input then fails with an [`Error`](crate::Error)
/// of kind [`ErrorKind::InputHandler`](crate::ErrorKind::InputHandler).
///
/// Named for what it is: not the failure of a server-side handler (that is
/// `smcp_server::HandlerError`), the failure of this client's input handler.
///
/// # Examples
///
/// ```
/// use smcp_client::InputHandlerError;
/// use smcp_client::proto::client::elicitation::ElicitResult;
///
/// async fn ask_user() -> Result<ElicitResult, InputHandlerError> {
///     let console = std::io::stdin();
///     let mut line = String::new();
///     console.read_line(&mut line).map_err(|e| InputHandlerError::new(format!("no terminal: {e}")))?;
///     Ok(if line.trim() == "y" { ElicitResult::accept(Default::default()) } else { ElicitResult::decline() })
/// }
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct InputHandlerError(pub String);

/// The former name of [`InputHandlerError`], kept so code written against it still builds
/// (with a deprecation warning).
#[deprecated(
    since = "0.1.0",
    note = "renamed `InputHandlerError` (the error of an input handler; `smcp_server::HandlerError` is the server's)"
)]
pub type HandlerError = InputHandlerError;

impl InputHandlerError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

/// Answers the input requests of an `InputRequiredResult` (elicitation, sampling, roots).
///
/// Implement the methods for the kinds named by [`InputHandler::kinds`]; the others keep their
/// default, which refuses. Declining an elicitation is an answer (`ElicitResult::decline()`),
/// not an error: return `Err` only when no answer can be produced at all.
///
/// # Examples
///
/// A handler of its own type, here one that answers every form from a fixed set of values
/// (for an unattended agent) and declines the rest; [`FnInputHandler`] builds one from
/// closures instead.
///
/// ```
/// use std::collections::BTreeMap;
/// use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult, ElicitValue};
/// use smcp_client::{BoxFuture, Client, InputHandlerError, InputHandler, InputKinds};
///
/// struct Preset {
///     answers: BTreeMap<String, ElicitValue>,
/// }
///
/// impl InputHandler for Preset {
///     fn kinds(&self) -> InputKinds {
///         InputKinds { elicitation_form: true, ..InputKinds::default() }
///     }
///
///     fn elicit(&self, params: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, InputHandlerError>> {
///         Box::pin(async move {
///             Ok(match params {
///                 ElicitRequestParams::Form(_) => ElicitResult::accept(self.answers.clone()),
///                 _ => ElicitResult::decline(),
///             })
///         })
///     }
/// }
///
/// let preset = Preset { answers: BTreeMap::from([("ok".to_owned(), ElicitValue::Bool(true))]) };
/// let client = Client::builder("http://127.0.0.1:8931/mcp").input_handler(preset).build()?;
/// # let _ = client;
/// # Ok::<(), smcp_client::Error>(())
/// ```
pub trait InputHandler: Send + Sync + 'static {
    /// The kinds this handler answers; declared as client capabilities on every request.
    fn kinds(&self) -> InputKinds;

    /// Answers `elicitation/create` (form or URL mode). For URL mode the host must show the
    /// full URL and get consent, never open or prefetch it on its own.
    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, InputHandlerError>> {
        let _ = params;
        Box::pin(async { Err(InputHandlerError::new("elicitation is not supported")) })
    }

    /// Answers `sampling/createMessage`.
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, InputHandlerError>> {
        let _ = params;
        Box::pin(async { Err(InputHandlerError::new("sampling is not supported")) })
    }

    /// Answers `roots/list`.
    fn list_roots(
        &self,
        params: Option<ListRootsRequestParams>,
    ) -> BoxFuture<'_, Result<ListRootsResult, InputHandlerError>> {
        let _ = params;
        Box::pin(async { Err(InputHandlerError::new("roots are not supported")) })
    }
}

type ElicitFn = Arc<
    dyn Fn(ElicitRequestParams) -> BoxFuture<'static, Result<ElicitResult, InputHandlerError>>
        + Send
        + Sync,
>;
type SampleFn = Arc<
    dyn Fn(
            CreateMessageRequestParams,
        ) -> BoxFuture<'static, Result<CreateMessageResult, InputHandlerError>>
        + Send
        + Sync,
>;
type RootsFn = Arc<
    dyn Fn(
            Option<ListRootsRequestParams>,
        ) -> BoxFuture<'static, Result<ListRootsResult, InputHandlerError>>
        + Send
        + Sync,
>;

/// An [`InputHandler`] made of closures, one per kind; the kinds with a closure are the ones
/// declared.
///
/// ```
/// use smcp_client::FnInputHandler;
/// use smcp_client::proto::client::elicitation::ElicitResult;
/// use smcp_client::proto::client::roots::{ListRootsResult, Root};
///
/// #[derive(serde::Serialize)]
/// struct Confirm {
///     ok: bool,
/// }
///
/// let handler = FnInputHandler::new()
///     .on_elicit(|params| async move {
///         // A real host shows `params` to the user; this one always confirms.
///         let _ = params;
///         Ok(ElicitResult::accept_with(&Confirm { ok: true })?)
///     })
///     .on_roots(|_params| async move {
///         Ok(ListRootsResult { roots: vec![Root::new("file:///work", "work")] })
///     });
/// let client = smcp_client::Client::builder("http://127.0.0.1:8931/mcp")
///     .input_handler(handler)
///     .build();
/// ```
#[derive(Clone, Default)]
pub struct FnInputHandler {
    elicit: Option<ElicitFn>,
    url_elicitation: bool,
    sample: Option<SampleFn>,
    roots: Option<RootsFn>,
}

impl std::fmt::Debug for FnInputHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnInputHandler")
            .field("kinds", &self.kinds())
            .finish()
    }
}

impl FnInputHandler {
    /// A handler that answers nothing yet (declares no kind).
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers form-mode `elicitation/create` with `f` (declares `elicitation.form`). Decline
    /// with `Ok(ElicitResult::decline())`; `Err` only when no answer can be given.
    #[must_use]
    pub fn on_elicit<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<ElicitResult, InputHandlerError>> + Send + 'static,
    {
        self.elicit = Some(Arc::new(move |p| Box::pin(f(p))));
        self
    }

    /// Also declares URL-mode elicitation (`elicitation.url`): the `on_elicit` closure then
    /// receives [`ElicitRequestParams::Url`] too, and must show the full URL and get the
    /// user's consent, never open it on its own.
    #[must_use]
    pub fn with_url_elicitation(mut self) -> Self {
        self.url_elicitation = true;
        self
    }

    /// Answers `sampling/createMessage` with `f` (declares `sampling`).
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_client::FnInputHandler;
    /// use smcp_client::proto::basic::Role;
    /// use smcp_client::proto::client::sampling::{CreateMessageResult, SamplingContent};
    /// use smcp_client::proto::content::SamplingMessageContentBlock;
    ///
    /// let handler = FnInputHandler::new().on_sampling(|params| async move {
    ///     // A real host sends `params.messages` to its model.
    ///     let reply = format!("{} messages seen", params.messages.len());
    ///     Ok(CreateMessageResult {
    ///         role: Role::Assistant,
    ///         content: SamplingContent::Single(SamplingMessageContentBlock::text(reply)),
    ///         meta: None,
    ///         model: "echo-model".into(),
    ///         stop_reason: None,
    ///     })
    /// });
    /// ```
    #[must_use]
    pub fn on_sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<CreateMessageResult, InputHandlerError>>
            + Send
            + 'static,
    {
        self.sample = Some(Arc::new(move |p| Box::pin(f(p))));
        self
    }

    /// Answers `roots/list` with `f` (declares `roots`).
    #[must_use]
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Option<ListRootsRequestParams>) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<ListRootsResult, InputHandlerError>>
            + Send
            + 'static,
    {
        self.roots = Some(Arc::new(move |p| Box::pin(f(p))));
        self
    }
}

impl InputHandler for FnInputHandler {
    fn kinds(&self) -> InputKinds {
        InputKinds {
            elicitation_form: self.elicit.is_some(),
            elicitation_url: self.elicit.is_some() && self.url_elicitation,
            sampling: self.sample.is_some(),
            roots: self.roots.is_some(),
        }
    }

    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, InputHandlerError>> {
        match &self.elicit {
            Some(f) => f(params),
            None => Box::pin(async { Err(InputHandlerError::new("elicitation is not supported")) }),
        }
    }

    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, InputHandlerError>> {
        match &self.sample {
            Some(f) => f(params),
            None => Box::pin(async { Err(InputHandlerError::new("sampling is not supported")) }),
        }
    }

    fn list_roots(
        &self,
        params: Option<ListRootsRequestParams>,
    ) -> BoxFuture<'_, Result<ListRootsResult, InputHandlerError>> {
        match &self.roots {
            Some(f) => f(params),
            None => Box::pin(async { Err(InputHandlerError::new("roots are not supported")) }),
        }
    }
}

impl From<serde_json::Error> for InputHandlerError {
    fn from(error: serde_json::Error) -> Self {
        Self(error.to_string())
    }
}

/// True when `request` is of a kind declared in `kinds`.
fn declared(kinds: InputKinds, request: &InputRequest) -> bool {
    match request {
        InputRequest::Elicit(ElicitRequestParams::Url(_)) => kinds.elicitation_url,
        InputRequest::Elicit(_) => kinds.elicitation_form,
        InputRequest::CreateMessage(_) => kinds.sampling,
        InputRequest::ListRoots(_) => kinds.roots,
    }
}

/// Fulfils every input request, in key order, and returns the `inputResponses` object.
///
/// A request of an undeclared kind is a protocol violation by the server (A6 item 58).
pub(crate) async fn fulfil(
    handler: Option<&dyn InputHandler>,
    requests: InputRequests,
    files: Option<&dyn ElicitedFiles>,
) -> Result<Map<String, Value>> {
    let kinds = handler.map(InputHandler::kinds).unwrap_or_default();
    let mut responses = Map::new();
    for (key, request) in requests {
        let method = request.method();
        let handler = match handler {
            Some(h) if declared(kinds, &request) => h,
            _ => {
                return Err(Error::protocol(format!(
                    "the server sent a {method} input request ({key:?}) although this client \
                     did not declare that capability"
                )));
            }
        };
        let fail = |e: InputHandlerError| {
            Error::new(Kind::InputHandler {
                method: method.to_owned(),
                message: e.0,
            })
        };
        let value = match request {
            InputRequest::Elicit(p) => {
                let schema = match &p {
                    ElicitRequestParams::Form(f) => serde_json::to_value(&f.requested_schema).ok(),
                    ElicitRequestParams::Url(_) => None,
                };
                let mut answer = handler.elicit(p).await.map_err(fail)?;
                if let (Some(files), Some(schema)) = (files, schema) {
                    files.resolve(&schema, &mut answer).await?;
                }
                serde_json::to_value(answer)
            }
            InputRequest::CreateMessage(p) => {
                serde_json::to_value(handler.create_message(p).await.map_err(fail)?)
            }
            InputRequest::ListRoots(p) => {
                serde_json::to_value(handler.list_roots(p).await.map_err(fail)?)
            }
        }
        .map_err(|e| {
            Error::new(Kind::InputHandler {
                method: method.to_owned(),
                message: format!("cannot serialize the answer: {e}"),
            })
        })?;
        responses.insert(key, value);
    }
    Ok(responses)
}

/// An installed input handler (a newtype so the builder can be `Debug`).
#[derive(Clone)]
pub(crate) struct HandlerBox(pub(crate) Arc<dyn InputHandler>);

impl std::fmt::Debug for HandlerBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InputHandler({:?})", self.0.kinds())
    }
}

/// Resolves the file references in an elicitation answer (SEP-2631). Implemented by the
/// client (`files/arguments.rs`), so that this module does not depend on it.
pub(crate) trait ElicitedFiles: Sync {
    /// Uploads the files the answer to a form with `schema` names and puts their references
    /// in their place.
    fn resolve<'a>(
        &'a self,
        schema: &'a Value,
        answer: &'a mut ElicitResult,
    ) -> BoxFuture<'a, Result<()>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(deprecated)]
    fn the_former_name_still_builds_the_same_error() {
        let old: HandlerError = HandlerError::new("no terminal");
        let new: InputHandlerError = old.clone();
        assert_eq!(new.to_string(), "no terminal");
        assert_eq!(new.0, old.0);
    }
}
