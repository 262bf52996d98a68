//! What a handler can ask the client for, one line per question.
//!
//! ```no_run
//! # use smcp_server::{mrtr, HandlerError, ToolCall};
//! # use serde_json::json;
//! # async fn handler(call: ToolCall) -> Result<(), HandlerError> {
//! // One input…
//! let answer = call.input.ask(mrtr::elicit_form(
//!     "confirm",
//!     "Delete 3 files?",
//!     json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
//! ))?;
//! // …or several in the same round.
//! let (name, roots) = call.input.ask((
//!     mrtr::elicit_form("name", "Your name?", json!({"type": "object", "properties": {"name": {"type": "string"}}})),
//!     mrtr::list_roots("roots"),
//! ))?;
//! # Ok(()) }
//! ```
//!
//! An answer that does not fit the question (an elicitation result whose content does not
//! match `requestedSchema`, a sampling result of the wrong shape) is treated as no answer: the
//! question is asked again. Questions the client did not declare it can answer on this request
//! are never sent; the call fails with −32021 instead.

use serde_json::Value;
use smcp_proto::client::elicitation::{
    ElicitAction, ElicitRequestFormParams, ElicitRequestParams, ElicitRequestURLParams,
    ElicitResult,
};
use smcp_proto::client::roots::ListRootsResult;
use smcp_proto::client::sampling::{CreateMessageRequestParams, CreateMessageResult};
use smcp_proto::patterns::mrtr::InputRequest;

use super::input::Input;
use crate::core::handler::HandlerError;
use crate::core::schema::SchemaValidator;

/// One question to the client.
pub trait Ask {
    /// The typed answer.
    type Output;
    /// The key in `inputRequests` / `inputResponses`.
    fn key(&self) -> &str;
    /// The request sent when there is no usable answer yet.
    fn request(&self) -> Result<InputRequest, HandlerError>;
    /// The typed answer, if `response` is a valid answer to this question.
    fn accept(&self, response: &Value) -> Option<Self::Output>;
}

/// One question or a tuple of up to five, answered together in one round.
pub trait AskSet {
    /// The answers, in the same shape.
    type Output;
    /// Every answer, or `HandlerError::InputRequired` asking for all that are missing.
    fn resolve(self, input: &Input) -> Result<Self::Output, HandlerError>;
}

impl<A: Ask> AskSet for A {
    type Output = A::Output;
    fn resolve(self, input: &Input) -> Result<A::Output, HandlerError> {
        let mut missing = Vec::new();
        match input.lookup(
            self.key(),
            |r| self.accept(r),
            || self.request(),
            &mut missing,
        )? {
            Some(answer) => Ok(answer),
            None => Err(input.input_required(missing)),
        }
    }
}

macro_rules! ask_tuple {
    ($($name:ident $idx:tt),+) => {
        impl<$($name: Ask),+> AskSet for ($($name,)+) {
            type Output = ($($name::Output,)+);
            #[allow(non_snake_case)]
            fn resolve(self, input: &Input) -> Result<Self::Output, HandlerError> {
                let mut missing = Vec::new();
                $(let $name = input.lookup(self.$idx.key(), |r| self.$idx.accept(r), || self.$idx.request(), &mut missing)?;)+
                match ($($name,)+) {
                    ($(Some($name),)+) => Ok(($($name,)+)),
                    _ => Err(input.input_required(missing)),
                }
            }
        }
    };
}

ask_tuple!(A 0, B 1);
ask_tuple!(A 0, B 1, C 2);
ask_tuple!(A 0, B 1, C 2, D 3);
ask_tuple!(A 0, B 1, C 2, D 3, E 4);

/// Whether `response` answers `request` as a handler's [`Ask`] would take it: an elicitation
/// result whose accepted content fits the form's `requestedSchema`, a sampling result, a
/// roots list. For a server that collects answers outside a retry (SEP-2663's
/// `tasks/update`) and must judge them as a retry's `inputResponses` are judged.
pub fn accepts(request: &InputRequest, response: &Value) -> bool {
    match request {
        InputRequest::Elicit(params) => elicit("", params.clone()).accept(response).is_some(),
        InputRequest::CreateMessage(params) => {
            sample("", params.clone()).accept(response).is_some()
        }
        InputRequest::ListRoots(_) => list_roots("").accept(response).is_some(),
    }
}

/// An `elicitation/create` question.
#[derive(Debug)]
pub struct Elicit {
    key: String,
    params: Result<ElicitRequestParams, String>,
}

/// Asks the user to fill a form. `requested_schema` is the restricted JSON Schema of
/// `client/elicitation.mdx` (a flat object of primitive fields).
///
/// # Examples
///
/// ```
/// # use smcp_server::prelude::*;
/// use smcp_server::proto::client::elicitation::ElicitAction;
///
/// let book = tool("book_table").handler(|call| async move {
///     let answer = call.input.ask(mrtr::elicit_form(
///         "guests",
///         "How many guests?",
///         serde_json::json!({
///             "type": "object",
///             "properties": {"count": {"type": "integer", "minimum": 1, "maximum": 12}},
///             "required": ["count"]
///         }),
///     ))?;
///     if answer.action != ElicitAction::Accept {
///         return Ok(CallToolResult::text("not booked"));
///     }
///     let count = answer.content.as_ref().and_then(|c| c.get("count")).map(|v| format!("{v:?}"));
///     Ok(CallToolResult::text(format!("booked for {}", count.unwrap_or_default())))
/// });
/// ```
///
/// To get a typed value back, derive the form from a struct with [`elicit_typed`].
pub fn elicit_form(
    key: impl Into<String>,
    message: impl Into<String>,
    requested_schema: Value,
) -> Elicit {
    let params = serde_json::from_value(requested_schema)
        .map(|requested_schema| {
            ElicitRequestParams::Form(ElicitRequestFormParams {
                mode: None,
                message: message.into(),
                requested_schema,
            })
        })
        .map_err(|e| format!("invalid requestedSchema: {e}"));
    Elicit {
        key: key.into(),
        params,
    }
}

/// Asks the user to visit a URL (for example to sign in elsewhere). `accept` only means the
/// user consented; the handler learns completion by checking its own records on the retry.
///
/// # Examples
///
/// ```
/// # use smcp_server::prelude::*;
/// let connect = tool("connect_calendar").handler(|call| async move {
///     let consent = call.input.ask(mrtr::elicit_url(
///         "oauth",
///         "Sign in to your calendar",
///         "https://calendar.example.com/oauth/authorize?state=abc",
///     ))?;
///     // On the retry, check your own records for the completed sign-in.
///     Ok(CallToolResult::text(format!("{:?}", consent.action)))
/// });
/// ```
pub fn elicit_url(
    key: impl Into<String>,
    message: impl Into<String>,
    url: impl Into<String>,
) -> Elicit {
    Elicit {
        key: key.into(),
        params: Ok(ElicitRequestParams::Url(ElicitRequestURLParams {
            message: message.into(),
            url: url.into(),
        })),
    }
}

/// Asks with fully built elicitation params.
///
/// # Examples
///
/// ```
/// # use smcp_server::prelude::*;
/// use smcp_server::proto::client::elicitation::{ElicitRequestParams, ElicitRequestURLParams};
///
/// let params = ElicitRequestParams::Url(ElicitRequestURLParams {
///     message: "Approve the payment".into(),
///     url: "https://pay.example.com/approve/42".into(),
/// });
/// let pay = tool("pay").handler(move |call| {
///     let ask = mrtr::elicit("approve", params.clone());
///     async move {
///         let answer = call.input.ask(ask)?;
///         Ok(CallToolResult::text(format!("{:?}", answer.action)))
///     }
/// });
/// ```
pub fn elicit(key: impl Into<String>, params: ElicitRequestParams) -> Elicit {
    Elicit {
        key: key.into(),
        params: Ok(params),
    }
}

impl Ask for Elicit {
    type Output = ElicitResult;

    fn key(&self) -> &str {
        &self.key
    }

    fn request(&self) -> Result<InputRequest, HandlerError> {
        self.params
            .clone()
            .map(InputRequest::Elicit)
            .map_err(HandlerError::internal)
    }

    fn accept(&self, response: &Value) -> Option<ElicitResult> {
        let result: ElicitResult = serde_json::from_value(response.clone()).ok()?;
        if result.action != ElicitAction::Accept {
            return Some(result);
        }
        match &self.params {
            Ok(ElicitRequestParams::Form(form)) => {
                let schema = serde_json::to_value(&form.requested_schema).ok()?;
                let validator = SchemaValidator::compile(&schema, "requestedSchema").ok()?;
                let content = response.get("content")?;
                validator.validate(content).ok()?;
                Some(result)
            }
            _ => Some(result),
        }
    }
}

/// The answer to a typed form ([`elicit_typed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited<T> {
    /// The user submitted the form; its content, deserialized.
    Accept(T),
    /// The user explicitly declined.
    Decline,
    /// The user dismissed the form.
    Cancel,
}

impl<T> Elicited<T> {
    /// The submitted value, if the user accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Self::Accept(value) => Some(value),
            Self::Decline | Self::Cancel => None,
        }
    }
}

/// A form question whose `requestedSchema` is derived from `T`, answered with a `T`
/// ([`elicit_typed`]).
#[cfg(feature = "schemars")]
pub struct ElicitTyped<T> {
    inner: Elicit,
    answer: std::marker::PhantomData<fn() -> T>,
}

#[cfg(feature = "schemars")]
impl<T> std::fmt::Debug for ElicitTyped<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElicitTyped")
            .field("inner", &self.inner)
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

/// Asks the user to fill a form derived from `T` (a struct of primitive fields, see
/// [`crate::typed::elicitation_schema`]) and hands back a `T`:
///
/// ```
/// # use smcp_server::{mrtr, HandlerError, ToolCall};
/// # use smcp_server::proto::server::tools::CallToolResult;
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Confirm {
///     /// Really delete?
///     ok: bool,
/// }
///
/// # async fn handler(call: ToolCall) -> Result<CallToolResult, HandlerError> {
/// let answer = call.input.ask(mrtr::elicit_typed::<Confirm>("confirm", "Delete 3 files?"))?;
/// let confirmed = answer.accepted().is_some_and(|c| c.ok);
/// # Ok(CallToolResult::text(confirmed.to_string())) }
/// ```
///
/// A type a form cannot ask for (a nested struct, a list of anything but unit enum values)
/// fails the call with −32603 naming the field; [`crate::typed::elicitation_schema`] checks a
/// type ahead of time. An accepted answer that does not deserialize into `T` is asked again,
/// like one that does not fit the schema.
#[cfg(feature = "schemars")]
pub fn elicit_typed<T: schemars::JsonSchema + serde::de::DeserializeOwned>(
    key: impl Into<String>,
    message: impl Into<String>,
) -> ElicitTyped<T> {
    let params = crate::typed::elicitation_schema::<T>()
        .map(|requested_schema| {
            ElicitRequestParams::Form(ElicitRequestFormParams {
                mode: None,
                message: message.into(),
                requested_schema,
            })
        })
        .map_err(|e| {
            format!(
                "cannot ask for {} with a form: {e}",
                std::any::type_name::<T>()
            )
        });
    ElicitTyped {
        inner: Elicit {
            key: key.into(),
            params,
        },
        answer: std::marker::PhantomData,
    }
}

#[cfg(feature = "schemars")]
impl<T: serde::de::DeserializeOwned> Ask for ElicitTyped<T> {
    type Output = Elicited<T>;

    fn key(&self) -> &str {
        self.inner.key()
    }

    fn request(&self) -> Result<InputRequest, HandlerError> {
        self.inner.request()
    }

    fn accept(&self, response: &Value) -> Option<Elicited<T>> {
        let result = self.inner.accept(response)?;
        Some(match result.action {
            ElicitAction::Accept => {
                let content = response.get("content")?.clone();
                Elicited::Accept(serde_json::from_value(content).ok()?)
            }
            ElicitAction::Decline => Elicited::Decline,
            ElicitAction::Cancel => Elicited::Cancel,
        })
    }
}

/// A `sampling/createMessage` question (an LLM completion by the client's model).
#[derive(Debug)]
pub struct Sample {
    key: String,
    params: CreateMessageRequestParams,
}

/// Asks the client's model for a completion.
///
/// # Examples
///
/// ```
/// # use smcp_server::prelude::*;
/// use smcp_server::proto::client::sampling::{CreateMessageRequestParams, SamplingMessage};
///
/// let title = tool("suggest_title").handler(|call| async move {
///     let text = call.str_arg("text").unwrap_or_default().to_owned();
///     let params = CreateMessageRequestParams::new(
///         vec![SamplingMessage::user_text(format!("A title for:\n{text}"))],
///         50,
///     );
///     let answer = call.input.ask(mrtr::sample("title", params))?;
///     Ok(CallToolResult::text(format!("suggested by {}", answer.model)))
/// });
/// ```
pub fn sample(key: impl Into<String>, params: CreateMessageRequestParams) -> Sample {
    Sample {
        key: key.into(),
        params,
    }
}

impl Ask for Sample {
    type Output = CreateMessageResult;

    fn key(&self) -> &str {
        &self.key
    }

    fn request(&self) -> Result<InputRequest, HandlerError> {
        Ok(InputRequest::CreateMessage(self.params.clone()))
    }

    fn accept(&self, response: &Value) -> Option<CreateMessageResult> {
        serde_json::from_value(response.clone()).ok()
    }
}

/// A `roots/list` question.
#[derive(Debug)]
pub struct Roots {
    key: String,
}

/// Asks the client for its roots.
///
/// # Examples
///
/// ```
/// # use smcp_server::prelude::*;
/// let roots = tool("workspace").handler(|call| async move {
///     let listed = call.input.ask(mrtr::list_roots("roots"))?;
///     let uris: Vec<String> = listed.roots.iter().map(|r| r.uri.clone()).collect();
///     Ok(CallToolResult::text(uris.join("\n")))
/// });
/// ```
pub fn list_roots(key: impl Into<String>) -> Roots {
    Roots { key: key.into() }
}

impl Ask for Roots {
    type Output = ListRootsResult;

    fn key(&self) -> &str {
        &self.key
    }

    fn request(&self) -> Result<InputRequest, HandlerError> {
        Ok(InputRequest::ListRoots(None))
    }

    fn accept(&self, response: &Value) -> Option<ListRootsResult> {
        serde_json::from_value(response.clone()).ok()
    }
}

// The asking side of `Input`: defined with the asks, so `input.rs` does not know them.
impl Input {
    /// Asks one question or a tuple of questions (see [`crate::mrtr`]). Returns the answers
    /// when all are present and valid; otherwise an `Err` that the framework turns into an
    /// `InputRequiredResult` asking for what is missing — return it with `?`.
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// let setup = tool("setup").handler(|call| async move {
    ///     // Both questions go out in one round; the handler continues when both are answered.
    ///     let (name, roots) = call.input.ask((
    ///         mrtr::elicit_form(
    ///             "name",
    ///             "Project name?",
    ///             serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}}),
    ///         ),
    ///         mrtr::list_roots("roots"),
    ///     ))?;
    ///     Ok(CallToolResult::text(format!("{:?} in {} roots", name.action, roots.roots.len())))
    /// });
    /// ```
    pub fn ask<A: AskSet>(&self, asks: A) -> Result<A::Output, HandlerError> {
        asks.resolve(self)
    }
}
