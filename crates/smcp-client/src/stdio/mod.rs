//! The stdio transport: the client launches the server as a child process and speaks
//! newline-delimited JSON-RPC over its stdin (requests and notifications only) and stdout
//! (everything the server sends). There are no headers: all request metadata is in `_meta`.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | the transport handle (era, send, close) |
//! | `command.rs` | [`StdioCommand`], [`ServerStderr`]: how to launch the server |
//! | `process.rs` | launching, the stdin writer, stderr forwarding, exit and shutdown |
//! | `demux.rs` | requests in flight and the stdout reader that routes lines to them |
//! | `pipe.rs` | a request written as one line, and the stream its messages are routed to |
//! | `stream.rs` | one request's response stream; `notifications/cancelled` on drop |
//! | `era.rs` | the era probe and the `initialize` of an older-revision session |
//! | `link.rs` | a stdio session as the connection under a listen stream |
//! | `lines.rs` | newline-delimited reading with a line length cap |

mod command;
mod demux;
mod era;
mod lines;
mod link;
mod pipe;
mod process;
mod stream;

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use smcp_proto::jsonrpc::Request;
use tokio::process::ChildStdout;
use tokio::sync::mpsc;

use crate::error::{Error, Result};
use crate::legacy::adapter::Adapter;
use crate::legacy::listen::ListenStream;
use crate::legacy::{LegacyConfig, SessionInfo};
use crate::transport::ResponseStream;
pub use command::{DEFAULT_MAX_LINE_BYTES, DEFAULT_SHUTDOWN_TIMEOUT, ServerStderr, StdioCommand};
use demux::{Ended, Shared};
use era::{Handshake, StdioEra};
use pipe::{Pipe, wants_log};
use process::Control;

/// Lines queued for the child's stdin before senders wait.
const WRITE_QUEUE: usize = 64;

/// A running stdio connection: the child, its writer and reader tasks, the requests in flight.
/// Dropping it starts the shutdown.
#[derive(Debug)]
pub(crate) struct StdioTransport {
    display: String,
    pipe: Pipe,
    control: Control,
    /// The era, once probed (`server/discover` first, `initialize` for an older server).
    era: tokio::sync::Mutex<Option<StdioEra>>,
    /// A pinned version, and what an `initialize` needs.
    pin: Option<String>,
    /// Whether an unpinned client probes with `server/discover` first.
    probe: bool,
    legacy: LegacyConfig,
    /// The level last set with `logging/setLevel` on an older-revision session.
    log_level: std::sync::Mutex<Option<String>>,
}

impl StdioTransport {
    /// Launches the server and starts the writer and reader tasks. Needs a Tokio runtime.
    pub(crate) fn start(
        command: &StdioCommand,
        tap: Option<crate::wire::WireTap>,
        pin: Option<String>,
        probe: bool,
        legacy: LegacyConfig,
    ) -> Result<Self> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(Error::config(
                "a stdio client must be built inside a Tokio runtime (it starts tasks)",
            ));
        }
        let spawned = process::spawn(command)?;
        let control = spawned.control;
        let shared = Shared::new(command.log.clone(), tap.clone());
        let (writer, lines) = mpsc::channel(WRITE_QUEUE);
        tokio::spawn(process::write_loop(
            spawned.stdin,
            lines,
            control.close.clone(),
            tap,
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
            pipe: Pipe { shared, writer },
            control,
            era: tokio::sync::Mutex::new(None),
            pin,
            probe,
            legacy,
            log_level: std::sync::Mutex::new(None),
        })
    }

    /// `stdio:` and the command line.
    pub(crate) fn display(&self) -> &str {
        &self.display
    }

    /// The server's era, found out on first use.
    pub(crate) async fn era(&self) -> Result<StdioEra> {
        let mut era = self.era.lock().await;
        if let Some(e) = &*era {
            return Ok(e.clone());
        }
        let handshake = Handshake {
            pipe: &self.pipe,
            config: &self.legacy,
            close: &self.control.close,
        };
        let found = handshake.find(self.pin.as_deref(), self.probe).await?;
        *era = Some(found.clone());
        Ok(found)
    }

    /// The older-revision session, if the server speaks one (without waiting).
    pub(crate) fn legacy_info(&self) -> Option<SessionInfo> {
        match self.era.try_lock().ok()?.as_ref()? {
            StdioEra::Legacy(info) => Some(info.clone()),
            StdioEra::Modern => None,
        }
    }

    /// Sends `request` in the server's era (probing it first, once) and returns its stream.
    pub(crate) async fn send(&self, request: &Request) -> Result<ResponseStream> {
        match self.era().await? {
            StdioEra::Modern => self.pipe.send(request).await.map(ResponseStream::new),
            StdioEra::Legacy(info) => {
                if request.method == smcp_proto::messages::method::SUBSCRIPTIONS_LISTEN {
                    // Mapped onto the change notifications the session writes on stdout.
                    let link = Arc::new(link::StdioLink::new(self.pipe.clone(), info));
                    return ListenStream::open(link, request)
                        .await
                        .map(ResponseStream::new);
                }
                // A log level asked in `_meta` keeps routing log lines to this call, once the
                // session's level is set to it.
                let wants_log = wants_log(request);
                if wants_log {
                    self.set_log_level(&info, request).await;
                }
                let request = Adapter::new(&info.protocol_version).request(request)?;
                self.pipe
                    .send_routed(&request, wants_log)
                    .await
                    .map(ResponseStream::new)
            }
        }
    }

    /// A request that asks for log messages (`_meta` log level in 2026-07-28) becomes
    /// `logging/setLevel` on an older-revision session when the level changes, as over HTTP:
    /// such a server sends `notifications/message` only at the level set. A refusal is logged;
    /// the request goes on.
    async fn set_log_level(&self, info: &SessionInfo, request: &smcp_proto::jsonrpc::Request) {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let Some(level) = crate::legacy::adapter::requested_log_level(request) else {
            return;
        };
        let logs = info
            .capabilities
            .get("logging")
            .is_some_and(serde_json::Value::is_object);
        let same = self
            .log_level
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_deref()
            == Some(level.as_str());
        if !logs || same {
            return;
        }
        let id = smcp_proto::jsonrpc::RequestId::from(format!(
            "smcp-log-level-{}",
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let set = smcp_proto::jsonrpc::Request {
            id: id.clone(),
            method: crate::legacy::adapter::method::LOGGING_SET_LEVEL.to_owned(),
            params: Some(serde_json::json!({"level": level})),
        };
        let answered = async {
            let mut stream = ResponseStream::new(self.pipe.send(&set).await?);
            let mut ignore = |_n: smcp_proto::jsonrpc::Notification| {};
            crate::response::read_response(&mut stream, &id, &mut ignore).await
        };
        match tokio::time::timeout(crate::legacy::adapter::HANDSHAKE_TIMEOUT, answered).await {
            Ok(Ok(_)) => {
                *self
                    .log_level
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(level);
            }
            Ok(Err(e)) => tracing::info!(error = %e, "logging/setLevel refused"),
            Err(_) => tracing::info!("logging/setLevel not answered in time"),
        }
    }

    /// Fails what is in flight, closes stdin and waits for the exit (escalating to SIGTERM
    /// and SIGKILL), returning the exit status.
    pub(crate) async fn close(&self) -> Option<ExitStatus> {
        let _ = self.pipe.shared.end(Ended::Closed);
        self.control.close.cancel();
        self.control.exited().await
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // The supervisor task carries the shutdown on; kill_on_drop covers a runtime that
        // stops first.
        let _ = self.pipe.shared.end(Ended::Closed);
        self.control.close.cancel();
    }
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
