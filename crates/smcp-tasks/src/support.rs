//! Which tools may run as tasks: [`TaskSupport`], attached when the tool is defined.

use std::time::Duration;

use smcp_server::ToolBuilder;

/// Whether a tool may run without a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskMode {
    /// The server may answer with a task when the request declared the extension; without it
    /// the tool runs synchronously, as any tool.
    Optional,
    /// The tool only runs for a request that declared the extension; otherwise the call fails
    /// with −32021 naming `extensions["io.modelcontextprotocol/tasks"]`.
    Required,
}

/// How a tool takes part in SEP-2663 tasks. Attach it with [`TaskToolExt::task_support`] (or
/// [`ToolBuilder::data`]); a tool without it never becomes a task.
///
/// ```
/// use std::time::Duration;
/// use smcp_server::proto::server::tools::CallToolResult;
/// use smcp_server::{HandlerError, tool};
/// use smcp_tasks::{TaskSupport, TaskToolExt};
///
/// let build = tool("build")
///     .task_support(TaskSupport::optional())
///     .handler(|call| async move {
///         // Progress is sent for a plain call and silently dropped inside a task.
///         call.ctx.progress(1.0, Some(2.0), Some("compiling")).await.ok();
///         Ok::<_, HandlerError>(CallToolResult::text("built"))
///     });
/// // Always a task, however fast the handler is:
/// let deploy = tool("deploy").task_support(TaskSupport::required().immediate_window(Duration::ZERO));
/// # let _ = (build, deploy);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSupport {
    mode: TaskMode,
    immediate_window: Option<Duration>,
}

impl TaskSupport {
    /// Task-capable: a task when the request declared the extension and the handler does not
    /// finish within the immediate window; a plain call otherwise.
    pub const fn optional() -> Self {
        Self {
            mode: TaskMode::Optional,
            immediate_window: None,
        }
    }

    /// Task-required: as [`TaskSupport::optional`] for a request that declared the extension,
    /// −32021 for one that did not.
    pub const fn required() -> Self {
        Self {
            mode: TaskMode::Required,
            immediate_window: None,
        }
    }

    /// This tool's own immediate window, instead of the extension's: how long a call runs
    /// inline before it becomes a task. `Duration::ZERO` makes every call (that declared the
    /// extension) a task at once, even one that asks for input first.
    #[must_use]
    pub const fn immediate_window(mut self, window: Duration) -> Self {
        self.immediate_window = Some(window);
        self
    }

    /// Optional or required.
    pub const fn mode(&self) -> TaskMode {
        self.mode
    }

    /// The tool's own immediate window, if set.
    pub const fn window(&self) -> Option<Duration> {
        self.immediate_window
    }
}

/// [`TaskSupport`] on a [`ToolBuilder`].
pub trait TaskToolExt {
    /// Marks the tool as task-capable or task-required.
    #[must_use]
    fn task_support(self, support: TaskSupport) -> Self;
}

impl TaskToolExt for ToolBuilder {
    fn task_support(self, support: TaskSupport) -> Self {
        self.data(support)
    }
}
