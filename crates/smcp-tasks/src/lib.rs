//! SEP-2663 "Tasks" (`io.modelcontextprotocol/tasks`) for `smcp-server`: a long-running
//! `tools/call` answered with a task handle the client polls (`tasks/get`), feeds
//! (`tasks/update`) and stops (`tasks/cancel`), with `notifications/tasks` on listen streams.
//!
//! The handler API is the one every tool has: an async function that may report progress and
//! may `ask` for input. Whether a call runs as a task is the server's decision, per request:
//!
//! * a tool without [`TaskSupport`] never becomes a task;
//! * a request that did not declare the extension runs a task-capable tool synchronously,
//!   and gets −32021 for a task-required one;
//! * otherwise the handler runs inline for the *immediate window*
//!   ([`TasksBuilder::immediate_window`], default 250 ms): if it finishes, the plain result is
//!   the answer; if it asks for input, an ordinary `InputRequiredResult` is (SEP-2322 before
//!   the task, SEP-2663 §Composition); if it is still running, the task is stored (durably,
//!   before the answer) and the client gets a `CreateTaskResult`.
//!
//! Inside a task, `call.input.ask(...)` puts the task in `input_required` with those
//! `inputRequests`; once `tasks/update` has answered them all, the handler runs again from the
//! top with every answer so far (the server holds them: no `requestState`). Progress and log
//! calls succeed and send nothing. `call.ctx.cancelled()` fires on `tasks/cancel`.
//!
//! ```
//! use std::time::Duration;
//! use serde_json::json;
//! use smcp_server::proto::server::tools::CallToolResult;
//! use smcp_server::{HandlerError, Server, mrtr, tool};
//! use smcp_tasks::{TaskSupport, TaskToolExt, TasksExtension};
//!
//! let tasks = TasksExtension::builder()
//!     .ttl(Some(Duration::from_secs(600)))
//!     .poll_interval(Duration::from_millis(500))
//!     .max_tasks(1000)
//!     .build();
//! let server = Server::builder("demo", "1.0.0")
//!     .extension(tasks)
//!     .tool(
//!         tool("report")
//!             .task_support(TaskSupport::optional())
//!             .handler(|call| async move {
//!                 let ok = call.input.ask(mrtr::elicit_form(
//!                     "go",
//!                     "Build the report?",
//!                     json!({"type": "object", "properties": {"go": {"type": "boolean"}}}),
//!                 ))?;
//!                 for step in 1..=3 {
//!                     tokio::select! {
//!                         () = call.ctx.cancelled() => return Err(HandlerError::failed("cancelled")),
//!                         () = tokio::time::sleep(Duration::from_millis(10)) => {}
//!                     }
//!                     call.ctx.progress(f64::from(step), Some(3.0), None).await.ok();
//!                 }
//!                 Ok::<_, HandlerError>(CallToolResult::text(format!("done: {:?}", ok.action)))
//!             }),
//!     )
//!     .build()?;
//! # let _ = server;
//! # Ok::<(), smcp_server::BuildError>(())
//! ```
//!
//! # Layout
//!
//! | item | responsibility |
//! |---|---|
//! | [`TasksExtension`], [`TasksBuilder`] | the extension: capability, `tasks/*` methods, the task decision, listen `taskIds` |
//! | [`TaskSupport`], [`TaskToolExt`] | which tools may run as tasks |
//! | [`TaskStore`], [`TaskRecord`], [`MemoryTaskStore`] | task state, the multi-instance seam, and its bounded in-memory default |
//! | `runner.rs` | the handler futures this instance runs, from first round to terminal status |
//! | `lease.rs` | with a store that keeps leases: renewing this instance's, ending the tasks of lost instances |
//!
//! See `docs/tasks/README.md` for the wire behaviour and multi-instance deployments.

mod core;
mod extension;
mod lease;
mod registry;
mod runner;
mod store;
mod support;

pub use extension::{
    DEFAULT_CANCEL_GRACE, DEFAULT_IMMEDIATE_WINDOW, DEFAULT_LEASE, DEFAULT_MAX_ROUNDS,
    DEFAULT_POLL_INTERVAL, DEFAULT_TTL, MAX_LISTEN_TASK_IDS, MAX_TASK_ID_LEN, MIN_LEASE,
    TasksBuilder, TasksExtension, negotiated,
};
pub use smcp_proto::ext::tasks::EXTENSION_ID;
#[allow(deprecated)]
pub use store::StoreError;
pub use store::{
    DEFAULT_MAX_TASKS, MemoryTaskStore, Mutation, TaskRecord, TaskStore, TaskStoreError,
    WORKER_LOST, new_task_id,
};
pub use support::{TaskMode, TaskSupport, TaskToolExt};
