//! [`TasksExtension`]: SEP-2663 on the server's extension seam.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use smcp_proto::capabilities::ServerCapabilities;
use smcp_proto::error::ErrorObject;
use smcp_proto::ext::tasks::{
    CreateTaskResult, EXTENSION_ID, GetTaskResult, METHOD_CANCEL, METHOD_GET, METHOD_UPDATE,
    NAME_MEMBER, TaskStatus,
};
use smcp_proto::patterns::mrtr::InputRequests;
use smcp_proto::patterns::subscriptions::SubscriptionFilter;
use smcp_server::extension::{ExtensionRequest, ExtensionResult, ToolOutcome};
use smcp_server::mrtr;
use smcp_server::tools::BoxFuture;
use smcp_server::{
    Clock, Extension, HandlerError, ListenGrant, MethodSpec, Next, RequestContext, ToolCall,
    ToolReply, keys,
};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use crate::core::{Core, topic};
use crate::registry::Runner;
use crate::runner::{self, Running};
use crate::store::{MemoryTaskStore, TaskRecord, TaskStore, TaskStoreError, new_task_id};
use crate::support::{TaskMode, TaskSupport};

/// Default [`TasksBuilder::ttl`]: one hour.
pub const DEFAULT_TTL: Duration = Duration::from_secs(3600);
/// Default [`TasksBuilder::poll_interval`]: one second.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// Default [`TasksBuilder::immediate_window`]: 250 ms. A call that finishes (or asks for input)
/// within it is answered as a plain call; anything slower becomes a task (the conformance
/// suite's `slow_compute` with `seconds: 1` or `2` does).
pub const DEFAULT_IMMEDIATE_WINDOW: Duration = Duration::from_millis(250);
/// Default [`TasksBuilder::cancel_grace`]: how long a cancelled handler may run on before it
/// is dropped.
pub const DEFAULT_CANCEL_GRACE: Duration = Duration::from_secs(10);
/// Default [`TasksBuilder::max_rounds`]: how many times one task may ask for input.
pub const DEFAULT_MAX_ROUNDS: u32 = 64;
/// Default [`TasksBuilder::lease`]: 5 s. With a store that keeps leases, a task whose instance
/// died is failed within about 1⅓ of it (renewed every third of it, swept as often).
pub const DEFAULT_LEASE: Duration = Duration::from_secs(5);
/// The shortest [`TasksBuilder::lease`]: 100 ms.
pub const MIN_LEASE: Duration = Duration::from_millis(100);
/// The longest `taskId` accepted in params (ids this server mints are 32 characters).
pub const MAX_TASK_ID_LEN: usize = 256;
/// The most `taskIds` one `subscriptions/listen` may name.
pub const MAX_LISTEN_TASK_IDS: usize = 100;

/// SEP-2663 tasks as a server extension. Register it with
/// [`smcp_server::ServerBuilder::extension`]; mark tools with
/// [`TaskToolExt::task_support`](crate::TaskToolExt::task_support).
///
/// Cheap to clone: clones share the store and the running tasks.
#[derive(Clone, Debug)]
pub struct TasksExtension {
    core: Arc<Core>,
}

/// Settings of a [`TasksExtension`].
pub struct TasksBuilder {
    ttl: Option<Duration>,
    poll_interval: Duration,
    immediate_window: Duration,
    cancel_grace: Duration,
    max_rounds: u32,
    max_tasks: usize,
    lease: Duration,
    store: Option<Arc<dyn TaskStore>>,
    clock: Option<Clock>,
}

impl std::fmt::Debug for TasksBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TasksBuilder")
            .field("ttl", &self.ttl)
            .field("poll_interval", &self.poll_interval)
            .field("immediate_window", &self.immediate_window)
            .field("max_tasks", &self.max_tasks)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl TasksBuilder {
    /// How long a task (and its result) is kept after its creation: `ttlMs`. Default
    /// [`DEFAULT_TTL`]. `None` keeps tasks until the store is full (`ttlMs: null`).
    #[must_use]
    pub fn ttl(mut self, ttl: Option<Duration>) -> Self {
        self.ttl = ttl;
        self
    }

    /// The polling interval suggested to clients: `pollIntervalMs` (at least 1 ms). Default
    /// [`DEFAULT_POLL_INTERVAL`].
    #[must_use]
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// How long a task-capable call runs inline before it becomes a task (a tool may set its
    /// own, [`TaskSupport::immediate_window`]). Default [`DEFAULT_IMMEDIATE_WINDOW`].
    #[must_use]
    pub fn immediate_window(mut self, window: Duration) -> Self {
        self.immediate_window = window;
        self
    }

    /// How long a cancelled task's handler may run on (cancellation is cooperative) before
    /// it is dropped. Default [`DEFAULT_CANCEL_GRACE`].
    #[must_use]
    pub fn cancel_grace(mut self, grace: Duration) -> Self {
        self.cancel_grace = grace;
        self
    }

    /// How many times one task may ask for input (the MRTR rounds before the task was
    /// created do not count). Default [`DEFAULT_MAX_ROUNDS`].
    #[must_use]
    pub fn max_rounds(mut self, rounds: u32) -> Self {
        self.max_rounds = rounds.max(1);
        self
    }

    /// The bound on live tasks of the default [`MemoryTaskStore`] (ignored with
    /// [`TasksBuilder::store`]). Default [`crate::DEFAULT_MAX_TASKS`].
    #[must_use]
    pub fn max_tasks(mut self, max: usize) -> Self {
        self.max_tasks = max;
        self
    }

    /// With a store that keeps leases (a shared one, [`TaskStore::keeps_leases`]): how long
    /// the lease of a task this instance runs lasts without renewal. It is renewed every third
    /// of it; when this instance dies, another one fails the task (−32603,
    /// [`crate::WORKER_LOST`]) once the lease lapsed, within about 1⅓ leases of the death.
    /// Shorter finds lost tasks sooner; longer tolerates longer stalls (a pause, a slow store)
    /// before a live instance's tasks are failed. Default [`DEFAULT_LEASE`], at least
    /// [`MIN_LEASE`]; ignored by a store without leases.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(MIN_LEASE);
        self
    }

    /// Where task state lives, instead of a [`MemoryTaskStore`] (e.g. one shared by several
    /// instances).
    #[must_use]
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// The clock timestamps and TTLs are read from (the same one the store uses).
    #[must_use]
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// The extension.
    pub fn build(self) -> TasksExtension {
        let clock = self.clock.unwrap_or_else(keys::system_clock);
        let store = self.store.unwrap_or_else(|| {
            Arc::new(MemoryTaskStore::with_clock(self.max_tasks, clock.clone()))
        });
        TasksExtension {
            core: Arc::new(Core {
                store,
                runner: Runner::default(),
                ttl: self.ttl,
                poll_interval: self.poll_interval,
                immediate_window: self.immediate_window,
                cancel_grace: self.cancel_grace,
                max_rounds: self.max_rounds,
                lease: self.lease,
                keeper: std::sync::atomic::AtomicBool::new(false),
                bus: std::sync::OnceLock::new(),
                clock,
            }),
        }
    }
}

impl Default for TasksExtension {
    fn default() -> Self {
        Self::builder().build()
    }
}

impl TasksExtension {
    /// The extension with default settings and an in-memory store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Settings.
    pub fn builder() -> TasksBuilder {
        TasksBuilder {
            ttl: Some(DEFAULT_TTL),
            poll_interval: DEFAULT_POLL_INTERVAL,
            immediate_window: DEFAULT_IMMEDIATE_WINDOW,
            cancel_grace: DEFAULT_CANCEL_GRACE,
            max_rounds: DEFAULT_MAX_ROUNDS,
            max_tasks: crate::store::DEFAULT_MAX_TASKS,
            lease: DEFAULT_LEASE,
            store: None,
            clock: None,
        }
    }

    /// The task store.
    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.core.store
    }

    /// Tasks whose handler runs on this instance now.
    pub fn running(&self) -> usize {
        self.core.runner.len()
    }

    /// With a store that keeps leases: starts, on the current Tokio runtime, the background
    /// loop that renews the leases of the tasks this instance runs and ends the tasks of lost
    /// instances, publishing their final status on `server`'s change bus. Call it once the
    /// server is built, so that an instance sweeps before it serves its first task request
    /// (the loop also starts by itself on the first request that reaches the extension).
    /// Idempotent; does nothing for a store without leases. The loop ends when the extension
    /// is dropped.
    pub fn attach(&self, server: &smcp_server::Server) {
        crate::lease::start(&self.core, Some(server.change_bus()));
    }
}

/// Whether the request declared the extension (per request, in `_meta`).
pub fn negotiated(ctx: &RequestContext) -> bool {
    ctx.has_capability(&["extensions", EXTENSION_ID])
}

/// −32021 naming the extension as the missing capability.
fn missing_extension(message: String) -> ErrorObject {
    let mut extensions = Map::new();
    extensions.insert(EXTENSION_ID.to_owned(), Value::Object(Map::new()));
    let mut caps = Map::new();
    caps.insert("extensions".to_owned(), Value::Object(extensions));
    ErrorObject::missing_required_client_capability(message, caps)
}

fn to_map<T: serde::Serialize>(value: &T) -> Result<Map<String, Value>, ErrorObject> {
    match serde_json::to_value(value) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ErrorObject::internal("a task result is not an object")),
        Err(e) => Err(ErrorObject::internal(e.to_string())),
    }
}

/// The error for a task the request cannot reach.
fn task_error(action: &str, error: &TaskStoreError) -> ErrorObject {
    match error {
        TaskStoreError::NotFound | TaskStoreError::Expired => {
            ErrorObject::invalid_params(format!("Failed to {action} task: {error}"))
        }
        TaskStoreError::Full { limit } => {
            ErrorObject::internal(format!("Failed to {action} task: {error}"))
                .with_data(json!({ "limit": limit }))
        }
        TaskStoreError::Unavailable(_) => {
            ErrorObject::internal(format!("Failed to {action} task: {error}"))
        }
    }
}

/// `params.taskId`, checked.
fn task_id_param(params: &Map<String, Value>) -> Result<String, ErrorObject> {
    match params.get(NAME_MEMBER) {
        None | Some(Value::Null) => Err(ErrorObject::invalid_params(
            "Invalid params: \"taskId\" is required",
        )),
        Some(Value::String(id)) if id.len() > MAX_TASK_ID_LEN => Err(ErrorObject::invalid_params(
            format!("Invalid params: \"taskId\" is longer than {MAX_TASK_ID_LEN} bytes"),
        )),
        Some(Value::String(id)) => Ok(id.clone()),
        Some(_) => Err(ErrorObject::invalid_params(
            "Invalid params: \"taskId\" must be a string",
        )),
    }
}

impl Core {
    /// A task-capable call from a request that declared the extension.
    async fn call(
        self: Arc<Self>,
        call: ToolCall,
        next: Next,
        support: TaskSupport,
    ) -> ToolOutcome {
        crate::lease::start_from(&self, &call.ctx);
        let window = support.window().unwrap_or(self.immediate_window);
        let cancel = CancellationToken::new();
        let ctx = call.ctx.detach(cancel.clone());
        let template = call.template();
        let input = call.input.clone();
        let rounds_before = input.round();
        let principal = call.ctx.principal().map(|p| p.0.clone());
        let mut fut = runner::round(next.clone(), call.with_context(ctx.clone()));
        if !window.is_zero() {
            match tokio::time::timeout(window, &mut fut).await {
                // Inline: the plain result, or `input_required` for an ordinary MRTR round.
                Ok(Ok(outcome)) => return outcome,
                Ok(Err(panic)) => std::panic::resume_unwind(panic),
                Err(_elapsed) => {}
            }
        }
        let now = self.now_ms();
        let task_id = match new_task_id() {
            Ok(id) => id,
            Err(e) => return Err(HandlerError::Rpc(task_error("create", &e))),
        };
        let record = TaskRecord {
            task_id: task_id.clone(),
            principal: principal.clone(),
            tool: template.name().to_owned(),
            status: TaskStatus::Working,
            status_message: Some("The operation is now in progress.".to_owned()),
            created_at_ms: now,
            last_updated_at_ms: now,
            ttl_ms: self
                .ttl
                .map(|ttl| u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)),
            poll_interval_ms: u64::try_from(self.poll_interval.as_millis()).unwrap_or(u64::MAX),
            input_requests: InputRequests::new(),
            responses: Map::new(),
            issued_keys: Vec::new(),
            held: None,
            result: None,
            error: None,
            cancel_requested: false,
            lease_ms: self
                .store
                .keeps_leases()
                .then(|| u64::try_from(self.lease.as_millis()).unwrap_or(u64::MAX)),
        };
        // Durable before the handle is sent: `tasks/get` resolves it from now on.
        if let Err(e) = self.store.create(record.clone()).await {
            cancel.cancel();
            tracing::warn!(error = %e, "task not created");
            return Err(HandlerError::Rpc(task_error("create", &e)));
        }
        let wake = self.runner.insert(&task_id, cancel.clone());
        let expires = self.ttl.map(|ttl| tokio::time::Instant::now() + ttl);
        let span = tracing::debug_span!("mcp.task", task_id = %task_id, tool = template.name());
        let running = Running {
            task_id,
            principal,
            ctx,
            cancel,
            wake,
            template,
            next,
            input,
            rounds_before,
            expires,
        };
        tokio::spawn(runner::drive(self.clone(), running, fut).instrument(span));
        let created = to_map(&CreateTaskResult::new(record.task()))?;
        Ok(ToolReply::Other(created))
    }

    async fn method(self: Arc<Self>, request: ExtensionRequest) -> ExtensionResult {
        let ExtensionRequest {
            method,
            params,
            ctx,
        } = request;
        crate::lease::start_from(&self, &ctx);
        if !negotiated(&ctx) {
            return Err(missing_extension(format!(
                "{method} requires the client capability extensions[\"{EXTENSION_ID}\"] on the request"
            )));
        }
        let task_id = task_id_param(&params)?;
        let principal = ctx.principal().map(|p| p.0.clone());
        let principal = principal.as_deref();
        match method {
            METHOD_GET => {
                let record = self
                    .store
                    .get(&task_id, principal)
                    .await
                    .map_err(|e| task_error("retrieve", &e))?;
                to_map(&GetTaskResult::new(record.detailed()))
            }
            METHOD_UPDATE => self.update(&ctx, &task_id, principal, &params).await,
            METHOD_CANCEL => {
                let now = self.now_ms();
                let record = self
                    .store
                    .update(
                        &task_id,
                        principal,
                        Box::new(move |r: &mut TaskRecord| {
                            if !r.status.is_terminal() && !r.cancel_requested {
                                r.cancel_requested = true;
                                r.status_message = Some("Cancellation requested".to_owned());
                                r.last_updated_at_ms = now;
                            }
                        }),
                    )
                    .await
                    .map_err(|e| task_error("cancel", &e))?;
                if !record.status.is_terminal() {
                    self.runner.cancel(&task_id);
                }
                Ok(Map::new())
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    /// `tasks/update`: answers for the outstanding requests are checked as a retry's
    /// `inputResponses` are and stored; keys not outstanding are ignored; a task not waiting
    /// for input acknowledges and ignores everything.
    async fn update(
        &self,
        ctx: &RequestContext,
        task_id: &str,
        principal: Option<&str>,
        params: &Map<String, Value>,
    ) -> ExtensionResult {
        let responses = match params.get("inputResponses") {
            Some(Value::Object(responses)) => responses,
            None | Some(Value::Null) => {
                return Err(ErrorObject::invalid_params(
                    "Invalid params: \"inputResponses\" is required",
                ));
            }
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "Invalid params: \"inputResponses\" must be an object",
                ));
            }
        };
        let record = self
            .store
            .get(task_id, principal)
            .await
            .map_err(|e| task_error("update", &e))?;
        if record.status != TaskStatus::InputRequired {
            return Ok(Map::new());
        }
        let mut accepted = Map::new();
        for (key, response) in responses {
            let Some(request) = record.input_requests.get(key) else {
                continue;
            };
            if !mrtr::accepts(request, response) {
                return Err(ErrorObject::invalid_params(format!(
                    "Invalid params: inputResponses[{key:?}] does not answer the {} request issued under that key",
                    request.method()
                )));
            }
            accepted.insert(key.clone(), response.clone());
        }
        if accepted.is_empty() {
            return Ok(Map::new());
        }
        let now = self.now_ms();
        let record = self
            .store
            .update(
                task_id,
                principal,
                Box::new(move |r: &mut TaskRecord| {
                    if r.status != TaskStatus::InputRequired {
                        return;
                    }
                    for (key, response) in &accepted {
                        if r.input_requests.remove(key).is_some() {
                            r.responses.insert(key.clone(), response.clone());
                        }
                    }
                    if r.input_requests.is_empty() {
                        r.status = TaskStatus::Working;
                        r.status_message = Some("Input received; resuming".to_owned());
                    } else {
                        let waiting: Vec<&str> =
                            r.input_requests.keys().map(String::as_str).collect();
                        r.status_message =
                            Some(format!("Waiting for input: {}", waiting.join(", ")));
                    }
                    r.last_updated_at_ms = now;
                }),
            )
            .await
            .map_err(|e| task_error("update", &e))?;
        self.runner.wake(task_id);
        self.publish(ctx, &record);
        Ok(Map::new())
    }

    async fn listen(
        self: Arc<Self>,
        ctx: RequestContext,
        requested: SubscriptionFilter,
    ) -> Result<ListenGrant, ErrorObject> {
        let Some(ids) = requested.task_ids else {
            return Ok(ListenGrant::default());
        };
        if !negotiated(&ctx) {
            return Err(missing_extension(format!(
                "\"taskIds\" on subscriptions/listen requires the client capability extensions[\"{EXTENSION_ID}\"] on the request"
            )));
        }
        if ids.len() > MAX_LISTEN_TASK_IDS {
            return Err(ErrorObject::invalid_params(format!(
                "\"params.notifications.taskIds\" has {} ids; at most {MAX_LISTEN_TASK_IDS} are allowed",
                ids.len()
            )));
        }
        let principal = ctx.principal().map(|p| p.0.clone());
        let mut honoured: Vec<String> = Vec::new();
        for id in ids {
            if id.len() > MAX_TASK_ID_LEN || honoured.contains(&id) {
                continue;
            }
            // Unknown, expired and foreign ids are silently not acknowledged.
            if self.store.get(&id, principal.as_deref()).await.is_ok() {
                honoured.push(id);
            }
        }
        Ok(ListenGrant {
            topics: honoured.iter().map(|id| topic(id)).collect(),
            honoured: SubscriptionFilter {
                task_ids: Some(honoured),
                ..SubscriptionFilter::default()
            },
        })
    }
}

impl Extension for TasksExtension {
    fn name(&self) -> &'static str {
        EXTENSION_ID
    }

    fn capabilities(&self, capabilities: &mut ServerCapabilities) {
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(EXTENSION_ID.to_owned(), Map::new());
    }

    fn methods(&self) -> Vec<MethodSpec> {
        [METHOD_GET, METHOD_UPDATE, METHOD_CANCEL]
            .into_iter()
            .map(|m| MethodSpec::new(m).named_by(NAME_MEMBER))
            .collect()
    }

    fn call(&self, request: ExtensionRequest) -> BoxFuture<ExtensionResult> {
        Box::pin(self.core.clone().method(request))
    }

    fn tool_call(&self, call: ToolCall, next: Next) -> BoxFuture<ToolOutcome> {
        let Some(support) = call.tool_data::<TaskSupport>().copied() else {
            return next.run(call);
        };
        if negotiated(&call.ctx) {
            return Box::pin(self.core.clone().call(call, next, support));
        }
        match support.mode() {
            TaskMode::Optional => next.run(call),
            TaskMode::Required => {
                let error = missing_extension(format!(
                    "Tool {:?} runs only as a task: the request must declare the client capability extensions[\"{EXTENSION_ID}\"]",
                    call.name
                ));
                Box::pin(async move { Err(HandlerError::Rpc(error)) })
            }
        }
    }

    fn listens(&self) -> bool {
        true
    }

    fn listen(
        &self,
        ctx: RequestContext,
        requested: SubscriptionFilter,
    ) -> BoxFuture<Result<ListenGrant, ErrorObject>> {
        Box::pin(self.core.clone().listen(ctx, requested))
    }
}
