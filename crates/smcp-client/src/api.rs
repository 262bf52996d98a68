//! The typed methods of [`Client`]: discovery, tools, resources, prompts and completion.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Map, Value};
use smcp_proto::basic::LoggingLevel;
use smcp_proto::ext::tasks::DetailedTask;
use smcp_proto::jsonrpc::{Notification, RequestId};
use smcp_proto::messages::method;
use smcp_proto::meta;
use smcp_proto::patterns::progress::ProgressNotificationParams;
use smcp_proto::server::discover::DiscoverResult;
use smcp_proto::server::prompts::{GetPromptResult, Prompt};
use smcp_proto::server::resources::{ReadResourceResult, Resource, ResourceTemplate};
use smcp_proto::server::tools::{CallToolResult, Tool};
use smcp_proto::server::utilities::completion::{CompleteResult, CompletionReference};
use smcp_proto::server::utilities::logging::LoggingMessageNotificationParams;
use tokio_util::sync::CancellationToken;

use crate::client::{Client, Reply, decode, object_arg, with_timeout, within};
use crate::error::{Error, Result};
use crate::page::Page;
use crate::tasks::TaskHandle;

/// Progress tokens unique within this process (A9 item 74).
static NEXT_PROGRESS: AtomicU64 = AtomicU64::new(1);

type ProgressFn = Arc<dyn Fn(ProgressNotificationParams) + Send + Sync>;
type LogFn = Arc<dyn Fn(LoggingMessageNotificationParams) + Send + Sync>;
type StatusFn = Arc<dyn Fn(&DetailedTask) + Send + Sync>;

impl Client {
    /// `server/discover`: versions, capabilities, instructions and server info.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// let info = client.discover().await?;
    /// println!("versions: {:?}", info.supported_versions);
    /// if let Some(instructions) = info.instructions {
    ///     println!("{instructions}");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn discover(&self) -> Result<DiscoverResult> {
        let v = with_timeout(
            self.inner.timeout,
            self.request(method::DISCOVER, Map::new()),
        )
        .await?;
        decode(method::DISCOVER, &v)
    }

    /// `tools/list`, every page. Tools with invalid `x-mcp-header` annotations are dropped
    /// (with a warning) and refused by [`call_tool`](Self::call_tool); the annotations of the
    /// others drive the `Mcp-Param-*` headers of later calls.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// for tool in client.list_tools().await? {
    ///     let required = tool.input_schema.get("required").cloned().unwrap_or_default();
    ///     println!("{} (required: {required})", tool.name);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn list_tools(&self) -> Result<Vec<Tool>> {
        let tools = with_timeout(
            self.inner.timeout,
            self.list_all::<Tool>(method::TOOLS_LIST, "tools"),
        )
        .await?;
        Ok(self.catalog().replace(tools))
    }

    /// Checks a result of `name` against the `outputSchema` of its last listing, if any.
    pub(crate) fn check_output(&self, name: &str, result: &CallToolResult) -> Result<()> {
        let check = self.catalog().output_check(name);
        match check {
            Some(check) => check.check(name, result),
            None => Ok(()),
        }
    }

    /// `tools/call` with `arguments` (a JSON object or `null`). When the tool was listed
    /// with an `outputSchema` (by [`list_tools`](Self::list_tools) or a page of it), a
    /// successful result whose `structuredContent` does not conform (or is missing) is an
    /// `Err` for which [`Error::is_protocol_violation`] is true and
    /// [`Error::output_schema_path`] names the first failing member (REQUIREMENTS A13.81). See [`tool_call`](Self::tool_call)
    /// for progress, log callbacks, a per-call timeout and cancellation.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// #[derive(serde::Deserialize)]
    /// struct Forecast {
    ///     celsius: f64,
    /// }
    ///
    /// let result = client.call_tool("weather", serde_json::json!({"city": "Lisbon"})).await?;
    /// if result.is_error() {
    ///     // A tool-level failure, for the model to read: not an `Err`.
    ///     eprintln!("tool failed: {}", result.text_content());
    /// } else if let Some(Ok(forecast)) = result.structured_as::<Forecast>() {
    ///     println!("{} °C", forecast.celsius);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult> {
        self.tool_call(name).arguments(arguments).send().await
    }

    /// A `tools/call` to configure before [`ToolCall::send`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use smcp_client::proto::basic::LoggingLevel;
    ///
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// let result = client
    ///     .tool_call("import")
    ///     .arguments(serde_json::json!({"file": "data.csv"}))
    ///     .on_progress(|p| println!("{}/{:?}", p.progress, p.total))
    ///     .on_log(LoggingLevel::Info, |log| println!("{:?}: {}", log.level, log.data))
    ///     .timeout(Some(Duration::from_secs(300)))
    ///     .send()
    ///     .await?;
    /// println!("{}", result.text_content());
    /// # Ok(()) }
    /// ```
    pub fn tool_call(&self, name: &str) -> ToolCall {
        ToolCall {
            client: self.clone(),
            name: name.to_owned(),
            arguments: Value::Null,
            progress: None,
            log: None,
            log_level: None,
            timeout: self.inner.timeout,
            cancel: None,
            on_status: None,
        }
    }

    /// `tools/call` returning either the result or, when the server runs the call as a task
    /// (SEP-2663), a [`TaskHandle`] for its lifecycle. Same as
    /// `tool_call(name).arguments(arguments).start()`.
    ///
    /// # Examples
    ///
    /// See [`ToolCall::start`].
    pub async fn call_tool_task(&self, name: &str, arguments: Value) -> Result<ToolCallOutcome> {
        self.tool_call(name).arguments(arguments).start().await
    }

    /// One page of `tools/list`: `cursor` is `None` for the first page, then the previous
    /// page's [`Page::next_cursor`] (an opaque string, never parsed). The tools are
    /// checked and remembered as [`list_tools`](Self::list_tools) does (the first page starts
    /// a fresh catalog, later pages add to it).
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// let mut cursor = None;
    /// loop {
    ///     let page = client.list_tools_page(cursor.as_deref()).await?;
    ///     for tool in &page.items {
    ///         println!("{}", tool.name);
    ///     }
    ///     match page.next_cursor {
    ///         Some(next) => cursor = Some(next),
    ///         None => break,
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn list_tools_page(&self, cursor: Option<&str>) -> Result<Page<Tool>> {
        let mut page = with_timeout(
            self.inner.timeout,
            self.list_page::<Tool>(method::TOOLS_LIST, "tools", cursor),
        )
        .await?;
        page.items = if cursor.is_none() {
            self.catalog().replace(page.items)
        } else {
            self.catalog().extend(page.items)
        };
        Ok(page)
    }

    /// One page of `resources/list` (see [`list_tools_page`](Self::list_tools_page)).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// let first = client.list_resources_page(None).await?;
    /// if let Some(cursor) = &first.next_cursor {
    ///     let second = client.list_resources_page(Some(cursor)).await?;
    ///     println!("{} more", second.items.len());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn list_resources_page(&self, cursor: Option<&str>) -> Result<Page<Resource>> {
        with_timeout(
            self.inner.timeout,
            self.list_page(method::RESOURCES_LIST, "resources", cursor),
        )
        .await
    }

    /// One page of `resources/templates/list` (see [`list_tools_page`](Self::list_tools_page)).
    pub async fn list_resource_templates_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<Page<ResourceTemplate>> {
        with_timeout(
            self.inner.timeout,
            self.list_page(
                method::RESOURCES_TEMPLATES_LIST,
                "resourceTemplates",
                cursor,
            ),
        )
        .await
    }

    /// One page of `prompts/list` (see [`list_tools_page`](Self::list_tools_page)).
    pub async fn list_prompts_page(&self, cursor: Option<&str>) -> Result<Page<Prompt>> {
        with_timeout(
            self.inner.timeout,
            self.list_page(method::PROMPTS_LIST, "prompts", cursor),
        )
        .await
    }

    /// `resources/list`, every page.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// for resource in client.list_resources().await? {
    ///     println!("{} ({})", resource.uri, resource.name);
    /// }
    /// for template in client.list_resource_templates().await? {
    ///     println!("template {}", template.uri_template);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn list_resources(&self) -> Result<Vec<Resource>> {
        with_timeout(
            self.inner.timeout,
            self.list_all(method::RESOURCES_LIST, "resources"),
        )
        .await
    }

    /// `resources/templates/list`, every page.
    ///
    /// # Examples
    ///
    /// See [`list_resources`](Self::list_resources).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>> {
        with_timeout(
            self.inner.timeout,
            self.list_all(method::RESOURCES_TEMPLATES_LIST, "resourceTemplates"),
        )
        .await
    }

    /// `resources/read` (answers input requests through the installed handler).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// let readme = client.read_resource("docs://readme").await?;
    /// println!("{}", readme.text()); // the text items, joined
    /// for contents in &readme.contents {
    ///     println!("{}", contents.uri());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult> {
        let mut params = Map::new();
        params.insert("uri".to_owned(), Value::String(uri.to_owned()));
        let mut sink = |n: Notification| tracing::debug!(method = %n.method, "notification");
        let v = with_timeout(
            self.inner.timeout,
            self.request_with_input(method::RESOURCES_READ, params, None, &mut sink),
        )
        .await?
        .complete(method::RESOURCES_READ)?;
        decode(method::RESOURCES_READ, &v)
    }

    /// `prompts/list`, every page.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// for prompt in client.list_prompts().await? {
    ///     let arguments: Vec<_> = prompt.arguments.iter().flatten().map(|a| a.name.as_str()).collect();
    ///     println!("{}({})", prompt.name, arguments.join(", "));
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>> {
        with_timeout(
            self.inner.timeout,
            self.list_all(method::PROMPTS_LIST, "prompts"),
        )
        .await
    }

    /// `prompts/get` with string arguments.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::collections::BTreeMap;
    ///
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// let arguments = BTreeMap::from([("name".to_owned(), "Ada".to_owned())]);
    /// let prompt = client.get_prompt("greet", arguments).await?;
    /// println!("{}", prompt.text());
    /// # Ok(()) }
    /// ```
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult> {
        let mut params = Map::new();
        params.insert("name".to_owned(), Value::String(name.to_owned()));
        if !arguments.is_empty() {
            let args = arguments
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            params.insert("arguments".to_owned(), Value::Object(args));
        }
        let mut sink = |n: Notification| tracing::debug!(method = %n.method, "notification");
        let v = with_timeout(
            self.inner.timeout,
            self.request_with_input(method::PROMPTS_GET, params, None, &mut sink),
        )
        .await?
        .complete(method::PROMPTS_GET)?;
        decode(method::PROMPTS_GET, &v)
    }

    /// `completion/complete` for one argument of a prompt or resource template.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::collections::BTreeMap;
    /// use smcp_client::proto::server::utilities::completion::{CompletionReference, PromptReference};
    ///
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// let reference = CompletionReference::Prompt(PromptReference { name: "travel".into(), title: None });
    /// let answer = client.complete(reference, "city", "Li", BTreeMap::new()).await?;
    /// println!("{:?}", answer.completion.values); // e.g. ["Lisbon"]
    /// # Ok(()) }
    /// ```
    pub async fn complete(
        &self,
        reference: CompletionReference,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
    ) -> Result<CompleteResult> {
        let mut params = Map::new();
        let reference = serde_json::to_value(reference)
            .map_err(|e| Error::config(format!("cannot encode the reference: {e}")))?;
        params.insert("ref".to_owned(), reference);
        let mut arg = Map::new();
        arg.insert("name".to_owned(), Value::String(argument.to_owned()));
        arg.insert("value".to_owned(), Value::String(value.to_owned()));
        params.insert("argument".to_owned(), Value::Object(arg));
        if !context.is_empty() {
            let args: Map<String, Value> = context
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            let mut ctx = Map::new();
            ctx.insert("arguments".to_owned(), Value::Object(args));
            params.insert("context".to_owned(), Value::Object(ctx));
        }
        let v = with_timeout(self.inner.timeout, self.request(method::COMPLETE, params)).await?;
        decode(method::COMPLETE, &v)
    }
}

/// A configured `tools/call` (from [`Client::tool_call`]).
///
/// Dropping the future returned by [`send`](Self::send) closes the response stream, which is
/// how Streamable HTTP cancels a request (A8 item 71); over stdio it sends
/// `notifications/cancelled` for the request's id.
///
/// # Examples
///
/// See [`Client::tool_call`]; cancelling:
///
/// ```no_run
/// use smcp_client::CancellationToken;
///
/// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
/// let token = CancellationToken::new();
/// let stop = token.clone();
/// tokio::spawn(async move {
///     let _ = tokio::signal::ctrl_c().await;
///     stop.cancel();
/// });
/// match client.tool_call("slow").cancellation(token).send().await {
///     Ok(result) => println!("{}", result.text_content()),
///     Err(e) if e.is_cancelled() => println!("cancelled"),
///     Err(e) => return Err(e),
/// }
/// # Ok(()) }
/// ```
#[must_use = "a ToolCall does nothing until sent"]
pub struct ToolCall {
    client: Client,
    name: String,
    arguments: Value,
    progress: Option<ProgressFn>,
    log: Option<LogFn>,
    log_level: Option<LoggingLevel>,
    timeout: Option<Duration>,
    cancel: Option<CancellationToken>,
    on_status: Option<StatusFn>,
}

impl std::fmt::Debug for ToolCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCall")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl ToolCall {
    /// The arguments: a JSON object (or `null` for none).
    pub fn arguments(mut self, arguments: Value) -> Self {
        self.arguments = arguments;
        self
    }

    /// Asks for progress (sends a `progressToken`) and calls `f` for each notification while
    /// the call runs.
    pub fn on_progress(
        mut self,
        f: impl Fn(ProgressNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Asks for log messages at or above `level` and calls `f` for each one. Over stdio a log
    /// line names no request: every call in flight that asked for logs gets it (see
    /// [`StdioCommand::on_log`](crate::StdioCommand::on_log)).
    pub fn on_log(
        mut self,
        level: LoggingLevel,
        f: impl Fn(LoggingMessageNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.log_level = Some(level);
        self.log = Some(Arc::new(f));
        self
    }

    /// Overrides the client's timeout for this call (`None`: no timeout).
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Cancels the call (closing its stream, or over stdio sending `notifications/cancelled`)
    /// when `token` is cancelled; the call then fails with an error for which
    /// [`Error::is_cancelled`] is true.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Calls `f` with each state of the task a server runs this call as (SEP-2663): the seed
    /// state of its `CreateTaskResult`, then every `tasks/get` answer, as polls return. Not
    /// called for a call answered inline.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// let result = client
    ///     .tool_call("long_job")
    ///     .on_task_status(|t| println!("task {}: {}", t.task.task_id, t.task.status))
    ///     .send()
    ///     .await?;
    /// # let _ = result;
    /// # Ok(()) }
    /// ```
    pub fn on_task_status(mut self, f: impl Fn(&DetailedTask) + Send + Sync + 'static) -> Self {
        self.on_status = Some(Arc::new(f));
        self
    }

    /// Sends the call, running the MRTR loop, and returns the final result. A tool-level
    /// failure is a result with `isError: true`, not an `Err`.
    ///
    /// When the server runs the call as a task (SEP-2663), the task is followed to its end
    /// ([`TaskHandle::wait`]): its input requests are answered through the installed
    /// [`InputHandler`](crate::InputHandler), a `failed` task is an `Err` with its JSON-RPC
    /// error ([`Error::jsonrpc_code`], [`ErrorKind::TaskFailed`](crate::ErrorKind::TaskFailed)), a
    /// `cancelled` one an `Err` of kind [`ErrorKind::TaskCancelled`](crate::ErrorKind::TaskCancelled). The timeout then bounds each request
    /// (the call, each poll, each update), and following the task is bounded by its TTL and
    /// [`TaskPolling::max_wait`](crate::TaskPolling::max_wait). Dropping the future, or
    /// cancelling the [`cancellation`](Self::cancellation) token, sends `tasks/cancel`.
    ///
    /// # Examples
    ///
    /// See [`Client::tool_call`] and [`ToolCall`].
    pub async fn send(self) -> Result<CallToolResult> {
        let on_status = self.on_status.clone();
        let cancel = self.cancel.clone();
        let client = self.client.clone();
        let name = self.name.clone();
        match self.start().await? {
            ToolCallOutcome::Complete(result) => Ok(result),
            ToolCallOutcome::Task(handle) => {
                let mut notify = |t: &DetailedTask| {
                    if let Some(f) = &on_status {
                        f(t);
                    }
                };
                // Boxed: following a task is the rare way, and inline it would more than
                // double every call's future.
                let result = Box::pin(handle.follow(&mut notify, cancel)).await?;
                client.check_output(&name, &result)?;
                Ok(result)
            }
        }
    }

    /// Sends the call, running the MRTR loop, and returns either its result or, when the
    /// server runs it as a task (SEP-2663), a [`TaskHandle`] to follow it with. The timeout
    /// and the cancellation token cover this first exchange only; the handle's requests use
    /// the same timeout each.
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// use smcp_client::ToolCallOutcome;
    /// match client.tool_call("long_job").arguments(serde_json::json!({"seconds": 30})).start().await? {
    ///     ToolCallOutcome::Complete(result) => println!("inline: {result:?}"),
    ///     ToolCallOutcome::Task(task) => {
    ///         println!("task {} is {}", task.id(), task.task().status);
    ///         let result = task.wait_with(|t| println!("{}", t.task.status)).await?;
    ///         println!("done: {result:?}");
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn start(self) -> Result<ToolCallOutcome> {
        let mut params = Map::new();
        params.insert("name".to_owned(), Value::String(self.name.clone()));
        let arguments = object_arg("tool arguments", self.arguments)?;
        params.insert("arguments".to_owned(), Value::Object(arguments));
        let mut meta_obj = Map::new();
        let token = self.progress.as_ref().map(|_| {
            RequestId::from(format!(
                "smcp-progress-{}",
                NEXT_PROGRESS.fetch_add(1, Ordering::Relaxed)
            ))
        });
        if let Some(t) = &token {
            meta_obj.insert(meta::PROGRESS_TOKEN.to_owned(), t.to_value());
        }
        if let Some(level) = &self.log_level {
            meta_obj.insert(
                meta::LOG_LEVEL.to_owned(),
                serde_json::to_value(level).unwrap_or(Value::Null),
            );
        }
        if !meta_obj.is_empty() {
            params.insert("_meta".to_owned(), Value::Object(meta_obj));
        }
        let progress = self.progress.clone();
        let log = self.log.clone();
        let mut sink = move |n: Notification| match n.method.as_str() {
            method::PROGRESS => {
                if let (Some(f), Some(p)) = (&progress, n.params) {
                    match serde_json::from_value::<ProgressNotificationParams>(p) {
                        Ok(p) if Some(&p.progress_token) == token.as_ref() => f(p),
                        Ok(_) => tracing::debug!("progress for another token ignored"),
                        Err(e) => tracing::warn!(error = %e, "malformed progress notification"),
                    }
                }
            }
            method::MESSAGE => {
                if let (Some(f), Some(p)) = (&log, n.params) {
                    match serde_json::from_value::<LoggingMessageNotificationParams>(p) {
                        Ok(p) => f(p),
                        Err(e) => tracing::warn!(error = %e, "malformed log notification"),
                    }
                }
            }
            other => tracing::debug!(method = %other, "notification ignored"),
        };
        let client = self.client.clone();
        let name = self.name.clone();
        let timeout = self.timeout;
        let reply = within(timeout, self.cancel, async move {
            client
                .request_with_input(method::TOOLS_CALL, params, Some(&name), &mut sink)
                .await
        })
        .await?;
        match reply {
            Reply::Complete(v) => {
                let result: CallToolResult = decode(method::TOOLS_CALL, &v)?;
                self.client.check_output(&self.name, &result)?;
                Ok(ToolCallOutcome::Complete(result))
            }
            Reply::Task(created) => Ok(ToolCallOutcome::Task(TaskHandle::new(
                self.client,
                created.task,
                timeout,
            ))),
        }
    }
}

/// What [`ToolCall::start`] ended with.
///
/// # Examples
///
/// See [`ToolCall::start`].
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum ToolCallOutcome {
    /// The server answered inline.
    Complete(CallToolResult),
    /// The server runs the call as a task (SEP-2663).
    Task(TaskHandle),
}
