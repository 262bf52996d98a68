//! Tools (`server/tools.mdx`): a tool is a name, a JSON Schema and an async function.
//!
//! ```no_run
//! # use smcp_server::{tool, HandlerError};
//! # use smcp_proto::server::tools::CallToolResult;
//! # use serde_json::json;
//! let echo = tool("echo")
//!     .description("Returns its input")
//!     .input_schema(json!({
//!         "type": "object",
//!         "properties": {"text": {"type": "string"}},
//!         "required": ["text"]
//!     }))
//!     .handler(|call| async move {
//!         let text = call.arguments["text"].as_str().unwrap_or_default().to_owned();
//!         Ok::<_, HandlerError>(CallToolResult::text(text))
//!     });
//! ```
//!
//! At registration the input schema is compiled once (JSON Schema 2020-12 unless `$schema`
//! says otherwise; remote `$ref` is never fetched) and its `x-mcp-header` annotations are
//! checked, so a tool that clients would reject never gets listed.

use std::future::Future;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use smcp_proto::basic::{Icon, Meta};
use smcp_proto::server::tools::{CallToolResult, Tool, ToolAnnotations};
use smcp_proto::x_mcp_header::{self, HeaderParam};

use super::error::BuildError;
use super::handler::HandlerError;
use super::schema::SchemaValidator;
use super::typemap::{Extensions, ToolData};
use crate::core::context::RequestContext;

pub use super::future::BoxFuture;

/// One `tools/call` as the handler sees it.
///
/// # Examples
///
/// A handler reads its arguments, reports progress, stops when the client goes away, and can
/// ask the client for input:
///
/// ```
/// use smcp_server::prelude::*;
///
/// #[derive(serde::Deserialize)]
/// struct Count {
///     to: u32,
/// }
///
/// let count = tool("count")
///     .input_schema(serde_json::json!({
///         "type": "object",
///         "properties": {"to": {"type": "integer", "minimum": 1, "maximum": 100}},
///         "required": ["to"]
///     }))
///     .handler(|call: ToolCall| async move {
///         let Count { to } = call.args()?;
///         for i in 1..=to {
///             if call.ctx.is_cancelled() {
///                 break;
///             }
///             call.ctx.progress(f64::from(i), Some(f64::from(to)), None).await?;
///         }
///         Ok(CallToolResult::text(format!("counted to {to}")))
///     });
/// ```
#[derive(Debug)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// The arguments, already validated against the input schema.
    pub arguments: Map<String, Value>,
    /// The request context: progress, logging, cancellation, client capabilities.
    pub ctx: RequestContext,
    /// Multi round-trip input: ask the client for answers, carry state between rounds.
    pub input: crate::core::mrtr::Input,
    /// What extensions resolved for this call before the handler runs (e.g. SEP-2631 file
    /// handles), by type.
    pub extensions: Extensions,
    pub(crate) tool: Arc<ToolEntry>,
}

impl ToolCall {
    /// Deserializes the arguments into `T`; a mismatch is an ordinary tool failure (an
    /// `isError` result, like the schema check's) that names the argument, never its value.
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// #[derive(serde::Deserialize)]
    /// struct Search {
    ///     query: String,
    ///     #[serde(default)]
    ///     limit: Option<u32>,
    /// }
    ///
    /// let search = tool("search").handler(|call| async move {
    ///     let args: Search = call.args()?; // a mismatch is an `isError` result naming the field
    ///     let limit = args.limit.unwrap_or(10);
    ///     Ok(CallToolResult::text(format!("top {limit} for {:?}", args.query)))
    /// });
    /// ```
    pub fn args<T: DeserializeOwned>(&self) -> Result<T, HandlerError> {
        deserialize_arguments(&self.name, &self.arguments)
    }

    /// A string argument, if present.
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// let greet = tool("greet").handler(|call| async move {
    ///     let name = call.str_arg("name").unwrap_or("world");
    ///     Ok(CallToolResult::text(format!("Hello, {name}!")))
    /// });
    /// ```
    pub fn str_arg(&self, key: &str) -> Option<&str> {
        self.arguments.get(key).and_then(Value::as_str)
    }

    /// The tool's definition, as `tools/list` shows it.
    pub fn tool(&self) -> &Tool {
        &self.tool.tool
    }

    /// What an extension attached to this tool when it was registered, or the application
    /// with [`ToolBuilder::data`].
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// struct Region(&'static str);
    ///
    /// let lookup = tool("lookup").data(Region("eu")).handler(|call| async move {
    ///     let region = call.tool_data::<Region>().map_or("?", |r| r.0);
    ///     Ok(CallToolResult::text(format!("served from {region}")))
    /// });
    /// ```
    pub fn tool_data<T: std::any::Any + Send + Sync>(&self) -> Option<&T> {
        self.tool.data.get::<T>()
    }

    /// The same call with another request context, e.g. a [`RequestContext::detach`]ed one
    /// for work that outlives the request. `input` keeps the context it was prepared with
    /// (it only reads the client's declared capabilities from it, which a detached context
    /// keeps).
    #[must_use]
    pub fn with_context(mut self, ctx: RequestContext) -> Self {
        self.ctx = ctx;
        self
    }

    /// What a later round of this call is built from (see [`CallTemplate::round`]): its
    /// tool, name and arguments. Cheap: the arguments are copied, the tool is shared.
    pub fn template(&self) -> CallTemplate {
        CallTemplate {
            name: self.name.clone(),
            arguments: self.arguments.clone(),
            tool: self.tool.clone(),
        }
    }
}

/// A `tools/call` without its context and input, kept by an extension that runs the call
/// again for a later round ([`ToolCall::template`]), e.g. a task whose handler asked for
/// input: each round's [`ToolCall`] comes from [`CallTemplate::round`], and runs through
/// the rest of the chain ([`crate::Next`], which is `Clone`) again, so extensions after the
/// one that holds the template resolve their part of the call anew.
#[derive(Clone)]
pub struct CallTemplate {
    name: String,
    arguments: Map<String, Value>,
    tool: Arc<ToolEntry>,
}

impl std::fmt::Debug for CallTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallTemplate")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl CallTemplate {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The call of one round: this tool and arguments, with `ctx` and `input` (typically
    /// [`crate::mrtr::Input::resume`] with the answers collected so far), nothing resolved
    /// by extensions yet.
    pub fn round(&self, ctx: RequestContext, input: crate::core::mrtr::Input) -> ToolCall {
        ToolCall {
            name: self.name.clone(),
            arguments: self.arguments.clone(),
            ctx,
            input,
            extensions: Extensions::new(),
            tool: self.tool.clone(),
        }
    }
}

/// The function behind a tool.
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs the tool.
    fn call(&self, call: ToolCall) -> BoxFuture<Result<CallToolResult, HandlerError>>;
}

impl<F, Fut> ToolHandler for F
where
    F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CallToolResult, HandlerError>> + Send + 'static,
{
    fn call(&self, call: ToolCall) -> BoxFuture<Result<CallToolResult, HandlerError>> {
        Box::pin(self(call))
    }
}

/// What a tool handler returns, for `async fn` handlers: `ToolResult` is
/// `Result<CallToolResult, HandlerError>`, `ToolResult<Json<Forecast>>` a typed result.
pub type ToolResult<T = CallToolResult> = Result<T, HandlerError>;

/// The success value of a [`ToolBuilder::typed`] handler: a [`CallToolResult`], a `String`
/// (one text block), or a typed [`Json`](crate::typed::Json) result.
pub trait IntoToolResult {
    /// The result sent to the client, or the handler's error.
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError>;

    /// The `outputSchema` this type of result implies, if any (a typed
    /// [`Json`](crate::typed::Json) result derives it from its type).
    fn output_schema() -> Option<Value>
    where
        Self: Sized,
    {
        None
    }
}

// The typed result lives with the trait, so the schema helpers of `typed` never reach back here.
#[cfg(feature = "schemars")]
impl<T: serde::Serialize + schemars::JsonSchema> IntoToolResult for super::typed::Json<T> {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        super::typed::structured_result(&self.0)
    }

    fn output_schema() -> Option<Value> {
        Some(super::typed::output_schema::<T>())
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, HandlerError> {
        Ok(CallToolResult::text(self))
    }
}

/// Deserializes `arguments` into `T`; the error names the tool and the path of the argument,
/// never its value (it reaches the model, and may be a secret).
pub(crate) fn deserialize_arguments<T: DeserializeOwned>(
    tool: &str,
    arguments: &Map<String, Value>,
) -> Result<T, HandlerError> {
    use serde::de::IntoDeserializer;
    // Deserialize straight from the map: no clone of the arguments. The plain pass is the hot
    // path (every `call.args()`); only when it fails is the map read again with path tracking,
    // to name where.
    let entries = || {
        arguments
            .iter()
            .map(|(k, v)| (k.as_str(), v.into_deserializer()))
    };
    let plain = serde::de::value::MapDeserializer::<_, serde_json::Error>::new(entries());
    if let Ok(value) = T::deserialize(plain) {
        return Ok(value);
    }
    let deserializer = serde::de::value::MapDeserializer::<_, serde_json::Error>::new(entries());
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let path = e.path().to_string();
        let at = if path == "." {
            "/".to_owned()
        } else {
            format!("/{}", path.replace('.', "/"))
        };
        HandlerError::failed(format!(
            "Invalid arguments for tool {tool:?}: {at}: {}",
            masked_serde_message(&e.into_inner().to_string())
        ))
    })
}

/// A serde message without the value it quotes: `invalid type: string "…", expected u32`
/// keeps what was expected; `missing field `x`` and `unknown field `x`` name fields only.
pub(crate) fn masked_serde_message(message: &str) -> String {
    if message.starts_with("missing field") || message.starts_with("unknown field") {
        // "unknown field `x`, expected one of …": names only.
        return message.to_owned();
    }
    match message.find(", expected ") {
        Some(i) => format!("the value is invalid{}", &message[i..]),
        None => "the value is invalid".to_owned(),
    }
}

/// Starts the definition of a tool.
///
/// The name is 1–128 characters of `[A-Za-z0-9_.-]` (checked by
/// [`ServerBuilder::build`](crate::ServerBuilder::build)). Give it a handler: untyped with
/// [`ToolBuilder::handler`], or typed with [`ToolBuilder::typed`].
///
/// # Examples
///
/// ```
/// use smcp_server::prelude::*;
///
/// let ping = tool("ping")
///     .title("Ping")
///     .description("Answers pong")
///     .annotations(ToolAnnotations::new().read_only(true))
///     .handler(|_call| async { Ok(CallToolResult::text("pong")) });
/// let server = Server::builder("demo", "1.0.0").tool(ping).build()?;
/// # let _ = server;
/// # Ok::<(), smcp_server::BuildError>(())
/// ```
pub fn tool(name: impl Into<String>) -> ToolBuilder {
    ToolBuilder {
        tool: Tool::new(name, Map::new()),
        input_schema: None,
        output_schema: None,
        derived_input_schema: None,
        derived_output_schema: None,
        required_capabilities: Vec::new(),
        scopes: Vec::new(),
        single_use_state: None,
        data: ToolData::new(),
        handler: None,
    }
}

/// Builder for a tool definition.
///
/// Made by [`tool`]; registered with [`ServerBuilder::tool`](crate::ServerBuilder::tool) or,
/// on a running server, [`Server::add_tool`](crate::Server::add_tool). See [`tool`] for an
/// example.
pub struct ToolBuilder {
    tool: Tool,
    input_schema: Option<Value>,
    output_schema: Option<Value>,
    /// Derived from the handler's types; a schema set by hand wins.
    derived_input_schema: Option<Value>,
    derived_output_schema: Option<Value>,
    required_capabilities: Vec<String>,
    scopes: Vec<String>,
    single_use_state: Option<bool>,
    data: ToolData,
    handler: Option<Arc<dyn ToolHandler>>,
}

impl std::fmt::Debug for ToolBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolBuilder")
            .field("name", &self.tool.name)
            .finish_non_exhaustive()
    }
}

impl ToolBuilder {
    /// A human-readable title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.tool.title = Some(title.into());
        self
    }

    /// What the tool does (shown to the model).
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.tool.description = Some(description.into());
        self
    }

    /// The JSON Schema of the arguments: an object schema (`"type": "object"`). Defaults to
    /// `{"type": "object"}` (no arguments).
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// let echo = tool("echo")
    ///     .input_schema(serde_json::json!({
    ///         "type": "object",
    ///         "properties": {"text": {"type": "string", "maxLength": 1000}},
    ///         "required": ["text"]
    ///     }))
    ///     .handler(|call| async move {
    ///         Ok(CallToolResult::text(call.str_arg("text").unwrap_or_default()))
    ///     });
    /// ```
    #[must_use]
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// The JSON Schema of `structuredContent`. With one, every successful result must carry
    /// a `structuredContent` that conforms: the server checks it before the result leaves
    /// (`server/tools.mdx` §Output Schema: servers MUST provide structured results that
    /// conform), and answers −32603 naming the first failing path when it does not (a bug in
    /// the tool, logged at `error`). Results with `isError: true` are not checked.
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// let stats = tool("stats")
    ///     .output_schema(serde_json::json!({
    ///         "type": "object",
    ///         "properties": {"count": {"type": "integer"}},
    ///         "required": ["count"]
    ///     }))
    ///     .handler(|_call| async {
    ///         // `structured` also puts the JSON in a text block for clients that read only text.
    ///         Ok(CallToolResult::structured(serde_json::json!({"count": 42})))
    ///     });
    /// ```
    ///
    /// With a typed handler, return [`Json`](crate::typed::Json) and the schema is derived.
    #[must_use]
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Behaviour hints (`readOnlyHint`, `destructiveHint`, …).
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// let delete = tool("delete_note")
    ///     .annotations(ToolAnnotations::new().destructive(true).idempotent(true))
    ///     .handler(|_call| async { Ok(CallToolResult::text("deleted")) });
    /// ```
    #[must_use]
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = Some(annotations);
        self
    }

    /// Icons.
    #[must_use]
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.tool.icons = Some(icons);
        self
    }

    /// The tool's `_meta` object.
    #[must_use]
    pub fn meta(mut self, meta: Meta) -> Self {
        self.tool.meta = Some(meta);
        self
    }

    /// Sets one member of the tool's `_meta`, keeping the others (an extension's metadata,
    /// e.g. MCP Apps' `ui`).
    #[must_use]
    pub fn meta_entry(mut self, key: impl Into<String>, value: Value) -> Self {
        self.tool
            .meta
            .get_or_insert_with(Meta::new)
            .insert(key.into(), value);
        self
    }

    /// The tool cannot run unless the client declared this top-level capability on the
    /// request (e.g. `"sampling"`); otherwise the call fails with −32021 before the handler
    /// runs.
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// use smcp_server::proto::client::sampling::{CreateMessageRequestParams, SamplingMessage};
    ///
    /// let summarize = tool("summarize")
    ///     .requires_client_capability("sampling")
    ///     .handler(|call| async move {
    ///         let params = CreateMessageRequestParams::new(
    ///             vec![SamplingMessage::user_text("Summarize: ...")],
    ///             200,
    ///         );
    ///         let answer = call.input.ask(mrtr::sample("summary", params))?;
    ///         Ok(CallToolResult::text(format!("{:?}", answer.content)))
    ///     });
    /// ```
    #[must_use]
    pub fn requires_client_capability(mut self, capability: impl Into<String>) -> Self {
        self.required_capabilities.push(capability.into());
        self
    }

    /// A scope a request for this tool needs, on top of any the server's policy asks
    /// (checked when an authentication layer set the request's
    /// [`Access`](crate::core::access::Access); a refusal names every needed scope and is
    /// answered with `403`). Repeatable.
    /// With `hide_tools` on the server's policy, `tools/list` hides the tool from a token
    /// without them.
    ///
    /// ```
    /// let wipe = smcp_server::tool("wipe").scope("admin");
    /// # let _ = wipe;
    /// ```
    #[must_use]
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        crate::core::access::declare(&mut self.scopes, scope.into());
        self
    }

    /// Every `requestState` this tool receives may be used once only: a second retry with
    /// the same state is refused (−32602) before the handler runs, checked by the server's
    /// [`crate::mrtr::ReplayGuard`]. The default for a tool annotated destructive
    /// (`destructiveHint: true`, not read-only); [`Self::reusable_state`] opts out.
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// let pay = tool("pay")
    ///     .single_use_state() // a replayed confirmation is refused
    ///     .handler(|call| async move {
    ///         let answer = call.input.ask(mrtr::elicit_form(
    ///             "confirm",
    ///             "Pay 10 EUR?",
    ///             serde_json::json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
    ///         ))?;
    ///         Ok(CallToolResult::text(format!("{:?}", answer.action)))
    ///     });
    /// ```
    #[must_use]
    pub fn single_use_state(mut self) -> Self {
        self.single_use_state = Some(true);
        self
    }

    /// Lets a retry's `requestState` be presented more than once, also for a tool annotated
    /// destructive (its handler must then tolerate running its effect again).
    #[must_use]
    pub fn reusable_state(mut self) -> Self {
        self.single_use_state = Some(false);
        self
    }

    /// Attaches `value` to the tool, for an extension to read when the tool is registered
    /// ([`crate::Extension::register_tool`]'s `data`) and on every call
    /// ([`ToolCall::tool_data`]); e.g. `smcp-tasks`' `TaskSupport`. One value per type.
    ///
    /// # Examples
    ///
    /// See [`ToolCall::tool_data`].
    #[must_use]
    pub fn data<T: std::any::Any + Send + Sync>(mut self, value: T) -> Self {
        self.data.insert(value);
        self
    }

    /// The async function that runs the tool.
    ///
    /// ```
    /// # use smcp_server::tool;
    /// # use smcp_server::proto::server::tools::CallToolResult;
    /// let slow = tool("slow").handler(|call| async move {
    ///     call.ctx.progress(1.0, Some(2.0), None).await?; // a NotifyError ends the call
    ///     let text = call.str_arg("text").unwrap_or_default();
    ///     Ok(CallToolResult::text(text))
    /// });
    /// ```
    #[must_use]
    pub fn handler<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, HandlerError>> + Send + 'static,
    {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// The async function that runs the tool, with its arguments deserialized into `A`; the
    /// tool's `inputSchema` is derived from `A` (unless one is set by hand), and a typed
    /// [`Json`](crate::typed::Json) result derives its `outputSchema`. Arguments that pass
    /// the schema but do not deserialize get the same `isError` result as the schema check,
    /// naming the argument. See [`crate::typed`].
    ///
    /// # Examples
    ///
    /// The handler's success value is a [`CallToolResult`], a `String`, or a typed
    /// [`Json`](crate::typed::Json) result (which also derives and enforces the `outputSchema`):
    ///
    /// ```
    /// use smcp_server::prelude::*;
    ///
    /// /// Arguments of `weather`.
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Weather {
    ///     /// City name.
    ///     city: String,
    /// }
    ///
    /// #[derive(serde::Serialize, schemars::JsonSchema)]
    /// struct Forecast {
    ///     celsius: f64,
    /// }
    ///
    /// let weather = tool("weather").typed(|_call, args: Weather| async move {
    ///     let _ = args.city;
    ///     Ok(Json(Forecast { celsius: 21.5 }))
    /// });
    /// let server = Server::builder("demo", "1.0.0").tool(weather).build()?;
    /// # let _ = server;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    ///
    /// An `async fn` works as well as a closure:
    ///
    /// ```
    /// use smcp_server::prelude::*;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Shout {
    ///     text: String,
    /// }
    ///
    /// async fn shout(_call: ToolCall, args: Shout) -> ToolResult<String> {
    ///     Ok(args.text.to_uppercase())
    /// }
    ///
    /// let tool = tool("shout").typed(shout);
    /// ```
    #[cfg(feature = "schemars")]
    #[must_use]
    pub fn typed<A, F, Fut, O>(mut self, handler: F) -> Self
    where
        A: schemars::JsonSchema + DeserializeOwned + Send + 'static,
        F: Fn(ToolCall, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
        O: IntoToolResult + 'static,
    {
        self.derived_input_schema = Some(crate::typed::input_schema::<A>());
        self.derived_output_schema = O::output_schema();
        let handler = Arc::new(handler);
        self.handler = Some(Arc::new(move |call: ToolCall| {
            let handler = handler.clone();
            async move {
                let args = deserialize_arguments::<A>(&call.name, &call.arguments)?;
                handler(call, args).await?.into_tool_result()
            }
        }));
        self
    }

    /// Derives the `inputSchema` from `A` (for a [`ToolBuilder::handler`] that reads
    /// [`ToolCall::args`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Query {
    ///     q: String,
    /// }
    ///
    /// let search = tool("search").input_type::<Query>().handler(|call| async move {
    ///     let query: Query = call.args()?;
    ///     Ok(CallToolResult::text(query.q))
    /// });
    /// ```
    #[cfg(feature = "schemars")]
    #[must_use]
    pub fn input_type<A: schemars::JsonSchema>(mut self) -> Self {
        self.input_schema = Some(crate::typed::input_schema::<A>());
        self
    }

    /// Derives the `outputSchema` from `T` (for a handler that builds its `structuredContent`
    /// itself, e.g. with [`crate::typed::structured_result`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// use smcp_server::typed::structured_result;
    ///
    /// #[derive(serde::Serialize, schemars::JsonSchema)]
    /// struct Total {
    ///     sum: i64,
    /// }
    ///
    /// let total = tool("total")
    ///     .output_type::<Total>()
    ///     .handler(|_call| async { structured_result(&Total { sum: 3 }) });
    /// ```
    #[cfg(feature = "schemars")]
    #[must_use]
    pub fn output_type<T: schemars::JsonSchema>(mut self) -> Self {
        self.output_schema = Some(crate::typed::output_schema::<T>());
        self
    }

    /// Like [`ToolBuilder::handler`], for a type implementing [`ToolHandler`] itself.
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_server::prelude::*;
    /// use smcp_server::tools::BoxFuture;
    /// use smcp_server::ToolHandler;
    ///
    /// /// A handler with configuration of its own.
    /// struct Greeter {
    ///     greeting: String,
    /// }
    ///
    /// impl ToolHandler for Greeter {
    ///     fn call(&self, call: ToolCall) -> BoxFuture<Result<CallToolResult, HandlerError>> {
    ///         let text = format!("{}, {}!", self.greeting, call.str_arg("name").unwrap_or("you"));
    ///         Box::pin(async move { Ok(CallToolResult::text(text)) })
    ///     }
    /// }
    ///
    /// let hello = tool("hello").handler_impl(Greeter { greeting: "Hello".into() });
    /// ```
    #[must_use]
    pub fn handler_impl(mut self, handler: impl ToolHandler) -> Self {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.tool.name
    }

    /// Validates the definition (extensions look at it next: `extension::register_tool`).
    pub(crate) fn build(self) -> Result<ToolEntry, BuildError> {
        let mut tool = self.tool;
        if !valid_tool_name(&tool.name) {
            return Err(BuildError::InvalidToolName(tool.name));
        }
        let handler = self.handler.ok_or_else(|| BuildError::MissingHandler {
            kind: "tool",
            name: tool.name.clone(),
        })?;
        let invalid = |name: &str, reason: String| BuildError::InvalidInputSchema {
            tool: name.to_owned(),
            reason,
        };
        let schema = self
            .input_schema
            .or(self.derived_input_schema)
            .unwrap_or_else(|| serde_json::json!({"type": "object"}));
        let Value::Object(object) = &schema else {
            return Err(invalid(
                &tool.name,
                "inputSchema must be a JSON object".into(),
            ));
        };
        if object.get("type") != Some(&Value::String("object".into())) {
            return Err(invalid(
                &tool.name,
                "inputSchema must have \"type\": \"object\"".into(),
            ));
        }
        let validator =
            SchemaValidator::compile(&schema, "inputSchema").map_err(|r| invalid(&tool.name, r))?;
        let Value::Object(schema) = schema else {
            return Err(invalid(
                &tool.name,
                "inputSchema must be a JSON object".into(),
            ));
        };
        let header_params = x_mcp_header::validate_annotations(&schema).map_err(|e| {
            BuildError::InvalidHeaderAnnotation {
                tool: tool.name.clone(),
                reason: e.to_string(),
            }
        })?;
        tool.input_schema = schema;
        let mut handler = handler;
        tool.output_schema = match self.output_schema.or(self.derived_output_schema) {
            None => None,
            Some(Value::Object(schema)) => {
                let validator =
                    SchemaValidator::compile(&Value::Object(schema.clone()), "outputSchema")
                        .map_err(|reason| BuildError::InvalidOutputSchema {
                            tool: tool.name.clone(),
                            reason,
                        })?;
                handler = Arc::new(CheckedOutput {
                    inner: handler,
                    validator: Arc::new(validator),
                });
                Some(schema)
            }
            Some(_) => {
                return Err(BuildError::InvalidOutputSchema {
                    tool: tool.name,
                    reason: "outputSchema must be a JSON object".into(),
                });
            }
        };
        let single_use_state = self.single_use_state.unwrap_or_else(|| {
            tool.annotations
                .as_ref()
                .is_some_and(|a| a.destructive_hint == Some(true) && a.read_only_hint != Some(true))
        });
        Ok(ToolEntry {
            tool,
            validator,
            header_params,
            required_capabilities: self.required_capabilities,
            scopes: self.scopes,
            single_use_state,
            handler,
            data: self.data,
        })
    }
}

/// A tool handler whose successful results are checked against the tool's `outputSchema`
/// before they leave the server (`server/tools.mdx` §Output Schema; REQUIREMENTS A13.81).
/// It wraps the handler itself, so every path to a result is checked: a direct call, a call
/// through extensions, a task run in the background.
struct CheckedOutput {
    inner: Arc<dyn ToolHandler>,
    validator: Arc<SchemaValidator>,
}

impl ToolHandler for CheckedOutput {
    fn call(&self, call: ToolCall) -> BoxFuture<Result<CallToolResult, HandlerError>> {
        let name = call.name.clone();
        let fut = self.inner.call(call);
        let validator = self.validator.clone();
        Box::pin(async move {
            let result = fut.await?;
            check_output(&name, &validator, &result)?;
            Ok(result)
        })
    }
}

/// A successful result of a tool with an `outputSchema` must carry a conforming
/// `structuredContent`; anything else is a bug in the tool, so the client gets −32603 naming
/// the first failing path (never the value) rather than a result that breaks its contract.
fn check_output(
    tool: &str,
    validator: &SchemaValidator,
    result: &CallToolResult,
) -> Result<(), HandlerError> {
    if result.is_error() {
        return Ok(());
    }
    let problem = match &result.structured_content {
        None => "structuredContent is missing".to_owned(),
        Some(structured) => match validator.validate(structured) {
            Ok(()) => return Ok(()),
            Err(problems) => problems.into_iter().next().unwrap_or_default(),
        },
    };
    tracing::error!(
        tool,
        problem = %problem,
        "tool result does not conform to its outputSchema; answering -32603"
    );
    Err(HandlerError::internal(format!(
        "tool {tool:?} returned a result that does not conform to its outputSchema: {problem}"
    )))
}

/// A registered tool, ready to serve.
pub(crate) struct ToolEntry {
    /// The `Tool` object as listed by `tools/list`.
    pub(crate) tool: Tool,
    pub(crate) validator: SchemaValidator,
    pub(crate) header_params: Vec<HeaderParam>,
    pub(crate) required_capabilities: Vec<String>,
    /// The scopes a call needs beyond the policy's ([`ToolBuilder::scope`]).
    pub(crate) scopes: Vec<String>,
    pub(crate) single_use_state: bool,
    pub(crate) handler: Arc<dyn ToolHandler>,
    /// What extensions attached at registration.
    pub(crate) data: ToolData,
}

impl ToolEntry {
    pub(crate) fn name(&self) -> &str {
        &self.tool.name
    }
}

impl std::fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolEntry")
            .field("name", &self.tool.name)
            .finish_non_exhaustive()
    }
}

/// Tool names: 1–128 characters of `[A-Za-z0-9_.-]` (`server/tools.mdx` §Tool Names).
pub(crate) fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        assert!(valid_tool_name("test_simple_text"));
        assert!(valid_tool_name("a.b-c_9"));
        assert!(!valid_tool_name(""));
        assert!(!valid_tool_name("with space"));
        assert!(!valid_tool_name("slash/name"));
        assert!(!valid_tool_name(&"x".repeat(129)));
    }
}
