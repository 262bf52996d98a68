//! How to launch a stdio server ([`StdioCommand`]) and what happens to its stderr
//! ([`ServerStderr`]) and log lines: plain settings, below the process and the demultiplexer
//! that read them.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use smcp_proto::server::utilities::logging::LoggingMessageNotificationParams;

/// Default bound on each shutdown stage (after stdin closes, then after SIGTERM).
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(2);
/// Default cap on one line read from the server's stdout (the HTTP transport's JSON body cap).
pub const DEFAULT_MAX_LINE_BYTES: usize = 32 * 1024 * 1024;

/// A connection-wide receiver of `notifications/message` log lines.
pub(crate) type LogFn = Arc<dyn Fn(LoggingMessageNotificationParams) + Send + Sync>;

/// What happens to the server's stderr. The server may write anything there; it is never an
/// error.
///
/// # Examples
///
/// ```no_run
/// use smcp_client::{Client, ServerStderr, StdioCommand};
///
/// # async fn demo() -> Result<(), smcp_client::Error> {
/// let server = StdioCommand::new("my-mcp-server")
///     .stderr(ServerStderr::lines(|line| tracing::debug!(target: "server", "{line}")));
/// let client = Client::stdio(server).build()?;
/// # let _ = client;
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum ServerStderr {
    /// The child writes to this process's stderr (the default).
    #[default]
    Inherit,
    /// Discarded.
    Null,
    /// Each line (lossy UTF-8, cut at 64 KiB) is passed to the callback.
    Lines(Arc<dyn Fn(&str) + Send + Sync>),
}

impl ServerStderr {
    /// Passes each stderr line of the server to `f` (e.g. to log it or keep it in a buffer).
    pub fn lines(f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Self::Lines(Arc::new(f))
    }
}

impl std::fmt::Debug for ServerStderr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Inherit => "Inherit",
            Self::Null => "Null",
            Self::Lines(_) => "Lines(..)",
        })
    }
}

/// How to launch a stdio MCP server, for [`Client::stdio`](crate::Client::stdio).
///
/// ```no_run
/// # async fn demo() -> Result<(), smcp_client::Error> {
/// use smcp_client::{Client, ServerStderr, StdioCommand};
/// let server = StdioCommand::new("smcpd")
///     .arg("--stdio")
///     .env("RUST_LOG", "info")
///     .stderr(ServerStderr::Null);
/// let client = Client::stdio(server).build()?;
/// let tools = client.list_tools().await?;
/// client.close().await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct StdioCommand {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    /// `Some`: set; `None`: remove. Applied in order, after `env_clear`.
    pub(crate) env: Vec<(OsString, Option<OsString>)>,
    pub(crate) env_clear: bool,
    pub(crate) current_dir: Option<PathBuf>,
    pub(crate) own_process_group: bool,
    pub(crate) stderr: ServerStderr,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) max_line_bytes: usize,
    pub(crate) log: Option<LogFn>,
}

impl std::fmt::Debug for StdioCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioCommand")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &self.env)
            .field("env_clear", &self.env_clear)
            .field("current_dir", &self.current_dir)
            .field("own_process_group", &self.own_process_group)
            .field("stderr", &self.stderr)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("max_line_bytes", &self.max_line_bytes)
            .finish_non_exhaustive()
    }
}

impl StdioCommand {
    /// Runs `program` (looked up in `PATH` like [`std::process::Command`]).
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            env_clear: false,
            current_dir: None,
            own_process_group: false,
            stderr: ServerStderr::default(),
            shutdown_timeout: DEFAULT_SHUTDOWN_TIMEOUT,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            log: None,
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable of the child.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), Some(value.into())));
        self
    }

    /// Removes an environment variable from the child's environment.
    pub fn env_remove(mut self, key: impl Into<OsString>) -> Self {
        self.env.push((key.into(), None));
        self
    }

    /// Starts the child with an empty environment (plus what [`env`](Self::env) sets) instead
    /// of inheriting this process's.
    pub fn env_clear(mut self) -> Self {
        self.env_clear = true;
        self.env.clear();
        self
    }

    /// The child's working directory (default: this process's).
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.current_dir = Some(dir.into());
        self
    }

    /// Starts the server in a process group of its own (Unix; ignored elsewhere), so that a
    /// terminal's Ctrl-C (SIGINT to the foreground group) reaches only this process, which
    /// then shuts the server down through its stdin instead of it being interrupted mid-way.
    /// Default: off (the child shares this process's group).
    pub fn own_process_group(mut self, own: bool) -> Self {
        self.own_process_group = own;
        self
    }

    /// What happens to the child's stderr (default: inherited).
    pub fn stderr(mut self, stderr: ServerStderr) -> Self {
        self.stderr = stderr;
        self
    }

    /// Bound on each shutdown stage: after stdin is closed, the child gets this long to exit,
    /// then SIGTERM and this long again, then SIGKILL. Default 2 s.
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Longest line accepted from the child's stdout (default 32 MiB). A longer line is
    /// skipped without being buffered and every request in flight fails with a protocol error.
    pub fn max_line_bytes(mut self, max: usize) -> Self {
        self.max_line_bytes = max.max(1);
        self
    }

    /// Receives every `notifications/message` log line of the connection. Log lines cannot be
    /// correlated to a request on stdio: besides this sink, they go to every call in flight
    /// that asked for logs ([`ToolCall::on_log`](crate::ToolCall::on_log)).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use smcp_client::{Client, StdioCommand};
    ///
    /// # async fn demo() -> Result<(), smcp_client::Error> {
    /// let server = StdioCommand::new("smcpd")
    ///     .arg("--stdio")
    ///     .on_log(|log| eprintln!("[{:?}] {}", log.level, log.data));
    /// let client = Client::stdio(server).build()?;
    /// # let _ = client;
    /// # Ok(()) }
    /// ```
    pub fn on_log(
        mut self,
        f: impl Fn(LoggingMessageNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.log = Some(Arc::new(f));
        self
    }

    /// `stdio:` and the command line, for display.
    pub(crate) fn display(&self) -> String {
        let mut out = format!("stdio:{}", self.program.to_string_lossy());
        for a in &self.args {
            out.push(' ');
            out.push_str(&a.to_string_lossy());
        }
        out
    }
}
