//! The stdio transport: the client launches the server as a child process and speaks
//! newline-delimited JSON-RPC over its stdin (requests and notifications only) and stdout
//! (everything the server sends). There are no headers: all request metadata is in `_meta`.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`StdioCommand`], [`ServerStderr`], the transport handle (send, close) |
//! | `process.rs` | launching, the stdin writer, stderr forwarding, exit and shutdown |
//! | `demux.rs` | requests in flight and the stdout reader that routes lines to them |
//! | `stream.rs` | one request's response stream; `notifications/cancelled` on drop |
//! | `lines.rs` | newline-delimited reading with a line length cap |

mod demux;
mod era;
mod lines;
mod link;
mod process;
mod stream;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use smcp_proto::jsonrpc::{Request, RequestId};
use smcp_proto::meta;
use smcp_proto::server::utilities::logging::LoggingMessageNotificationParams;
use tokio::process::ChildStdout;
use tokio::sync::mpsc;

use crate::error::{Error, Kind, Result};
use crate::legacy::stream::ListenStream;
use crate::transport::ResponseStream;
use demux::{Ended, Shared};
use process::Control;
pub(crate) use stream::StdioStream;

/// Default bound on each shutdown stage (after stdin closes, then after SIGTERM).
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(2);
/// Default cap on one line read from the server's stdout (the HTTP transport's JSON body cap).
pub const DEFAULT_MAX_LINE_BYTES: usize = 32 * 1024 * 1024;
/// Lines queued for the child's stdin before senders wait.
const WRITE_QUEUE: usize = 64;

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
    fn display(&self) -> String {
        let mut out = format!("stdio:{}", self.program.to_string_lossy());
        for a in &self.args {
            out.push(' ');
            out.push_str(&a.to_string_lossy());
        }
        out
    }
}

/// A running stdio connection: the child, its writer and reader tasks, the requests in flight.
/// Dropping it starts the shutdown.
#[derive(Debug)]
pub(crate) struct StdioTransport {
    display: String,
    shared: Arc<Shared>,
    writer: mpsc::Sender<Vec<u8>>,
    control: Control,
    /// The era, once probed (`server/discover` first, `initialize` for an older server).
    era: tokio::sync::Mutex<Option<era::StdioEra>>,
    /// A pinned version, and what an `initialize` needs.
    pin: Option<String>,
    /// Whether an unpinned client probes with `server/discover` first.
    probe: bool,
    legacy: crate::legacy::session::LegacyConfig,
}

impl StdioTransport {
    /// Launches the server and starts the writer and reader tasks. Needs a Tokio runtime.
    pub(crate) fn start(
        command: &StdioCommand,
        pin: Option<String>,
        probe: bool,
        legacy: crate::legacy::session::LegacyConfig,
    ) -> Result<Self> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(Error::config(
                "a stdio client must be built inside a Tokio runtime (it starts tasks)",
            ));
        }
        let spawned = process::spawn(command)?;
        let control = spawned.control;
        let shared = Shared::new(command.log.clone());
        let (writer, lines) = mpsc::channel(WRITE_QUEUE);
        tokio::spawn(process::write_loop(
            spawned.stdin,
            lines,
            control.close.clone(),
        ));
        tokio::spawn(watch_stdout(
            Arc::clone(&shared),
            spawned.stdout,
            command.max_line_bytes,
            control.clone(),
            command.shutdown_timeout,
        ));
        Ok(Self {
            display: command.display(),
            shared,
            writer,
            control,
            era: tokio::sync::Mutex::new(None),
            pin,
            probe,
            legacy,
        })
    }

    /// `stdio:` and the command line.
    pub(crate) fn display(&self) -> &str {
        &self.display
    }

    /// Sends `request` in the server's era (probing it first, once) and returns its stream.
    pub(crate) async fn send(&self, request: &Request) -> Result<ResponseStream> {
        match self.era().await? {
            era::StdioEra::Modern => self.send_raw(request).await.map(ResponseStream::Stdio),
            era::StdioEra::Legacy(info) => {
                if request.method == smcp_proto::messages::method::SUBSCRIPTIONS_LISTEN {
                    // Mapped onto the change notifications the session writes on stdout.
                    let link = Arc::new(link::StdioLink::new(
                        Arc::clone(&self.shared),
                        self.writer.clone(),
                        info,
                    ));
                    return ListenStream::open(link, request)
                        .await
                        .map(ResponseStream::Listen);
                }
                // A log level asked in `_meta` keeps routing log lines to this call.
                let wants_log = wants_log(request);
                let request = crate::legacy::to_session_request(request, &info.protocol_version)?;
                self.send_routed(&request, wants_log)
                    .await
                    .map(ResponseStream::Stdio)
            }
        }
    }

    /// Writes `request` as one line and returns the stream its messages are routed to.
    pub(crate) async fn send_raw(&self, request: &Request) -> Result<StdioStream> {
        self.send_routed(request, wants_log(request)).await
    }

    /// [`send_raw`](Self::send_raw), with whether log lines go to this request.
    async fn send_routed(&self, request: &Request, wants_log: bool) -> Result<StdioStream> {
        send_on(&self.shared, &self.writer, request, wants_log).await
    }

    /// Fails what is in flight, closes stdin and waits for the exit (escalating to SIGTERM
    /// and SIGKILL), returning the exit status.
    pub(crate) async fn close(&self) -> Option<ExitStatus> {
        let _ = self.shared.end(Ended::Closed);
        self.control.close.cancel();
        self.control.exited().await
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // The supervisor task carries the shutdown on; kill_on_drop covers a runtime that
        // stops first.
        let _ = self.shared.end(Ended::Closed);
        self.control.close.cancel();
    }
}

/// Writes `request` as one line on `writer` and returns the stream its messages are routed to
/// by `shared`; `wants_log`: whether log lines go to this request.
async fn send_on(
    shared: &Arc<Shared>,
    writer: &mpsc::Sender<Vec<u8>>,
    request: &Request,
    wants_log: bool,
) -> Result<StdioStream> {
    let line = encode(request)?;
    let params_meta = request
        .params
        .as_ref()
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object);
    let progress_token = params_meta
        .and_then(|m| m.get(meta::PROGRESS_TOKEN))
        .and_then(RequestId::from_value);
    let registration = shared.register(&request.id, progress_token, wants_log)?;
    let mut stream = StdioStream::new(
        request.id.clone(),
        Arc::clone(shared),
        writer.clone(),
        registration,
    );
    if writer.send(line).await.is_err() {
        // The error for a connection whose writer is gone.
        return Err(shared.ended().map_or_else(
            || Error::new(Kind::ServerExited { status: None }),
            Ended::error,
        ));
    }
    stream.mark_sent();
    Ok(stream)
}

/// Whether a request asks for log lines (`_meta` log level).
fn wants_log(request: &Request) -> bool {
    request
        .params
        .as_ref()
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|m| m.contains_key(meta::LOG_LEVEL))
}

/// Serializes a request as one line: compact JSON has no raw newline (newlines inside strings
/// are escaped), which is checked anyway since one would desynchronise the stream.
fn encode(request: &Request) -> Result<Vec<u8>> {
    let mut line = serde_json::to_vec(request)
        .map_err(|e| Error::config(format!("cannot serialize the request: {e}")))?;
    if line.contains(&b'\n') {
        return Err(Error::protocol(
            "a serialized request contains a raw newline",
        ));
    }
    line.push(b'\n');
    Ok(line)
}

/// Runs the stdout reader; when stdout closes or the child exits (whichever is first, with a
/// grace period for the other), ends the connection with the exit status.
async fn watch_stdout(
    shared: Arc<Shared>,
    stdout: ChildStdout,
    max_line: usize,
    control: Control,
    grace: Duration,
) {
    let read = shared.read_loop(stdout, max_line);
    tokio::pin!(read);
    let status = tokio::select! {
        () = &mut read => tokio::time::timeout(grace, control.exited()).await.ok().flatten(),
        status = control.exited() => {
            // Lines written just before the exit are still in the pipe.
            let _ = tokio::time::timeout(grace, &mut read).await;
            status
        }
    };
    // Requests in flight learn it from their error; otherwise only the log can tell.
    match (shared.end(Ended::Exited(status)), status) {
        (Some(0), Some(s)) => tracing::warn!(status = %s, "the stdio server exited"),
        (Some(0), None) => tracing::warn!("the stdio server closed its stdout"),
        (Some(failed), _) => tracing::debug!(?status, failed, "the stdio server exited"),
        (None, _) => tracing::debug!(?status, "the stdio server exited after the client closed"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_request_is_one_line() {
        let request = Request {
            id: RequestId::from(7),
            method: "tools/call".to_owned(),
            params: Some(serde_json::json!({"name": "echo", "arguments": {"text": "a\nb\r\nc"}})),
        };
        let line = encode(&request).unwrap();
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        assert_eq!(line.last(), Some(&b'\n'));
        let back: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(back["params"]["arguments"]["text"], "a\nb\r\nc");
    }
}
