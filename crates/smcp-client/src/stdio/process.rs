//! The child process: launching it, the stdin writer, the stderr reader, and the supervisor
//! that records its exit or shuts it down.
//!
//! Shutdown (spec: stdio, "Shutdown"): close the child's stdin, wait up to the shutdown
//! timeout, then SIGTERM, wait up to the timeout again, then SIGKILL. SIGTERM goes through
//! `rustix::process::kill_process` (a safe wrapper already in the dependency tree; the
//! workspace forbids `unsafe`); tokio's `start_kill` sends the SIGKILL. The child is also
//! spawned with `kill_on_drop`, so it cannot outlive a runtime that shuts down mid-way.

use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::command::{ServerStderr, StdioCommand};
use super::lines::{Line, read_line};
use crate::error::{Error, Kind, Result};

/// Longest stderr line passed to a callback (the rest of the line is cut).
const MAX_STDERR_LINE: usize = 64 * 1024;

/// The exit of the child: `None` while it runs, then `Some(status)` (`None` inside when it
/// could not be reaped).
pub(crate) type Exit = Option<Option<ExitStatus>>;

/// A running child: its pipes (taken by the caller) and the handles to stop it.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
    pub(crate) control: Control,
}

/// What the client keeps to stop the child and learn how it ended.
#[derive(Debug, Clone)]
pub(crate) struct Control {
    /// Cancelled to start the shutdown (the writer drops stdin, the supervisor escalates).
    pub(crate) close: CancellationToken,
    /// The exit, once known.
    pub(crate) exit: watch::Receiver<Exit>,
}

impl Control {
    /// Waits until the child exited and returns its status.
    pub(crate) async fn exited(&self) -> Option<ExitStatus> {
        let mut exit = self.exit.clone();
        match exit.wait_for(Option::is_some).await {
            Ok(status) => status.flatten(),
            // The supervisor is gone without a word: only when the runtime is shutting down.
            Err(_) => None,
        }
    }
}

/// Launches `command` with piped stdin/stdout and starts its supervisor and stderr reader.
pub(crate) fn spawn(command: &StdioCommand) -> Result<Spawned> {
    let mut cmd = Command::new(&command.program);
    cmd.args(&command.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    if command.env_clear {
        cmd.env_clear();
    }
    for (key, value) in &command.env {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    if let Some(dir) = &command.current_dir {
        cmd.current_dir(dir);
    }
    #[cfg(unix)]
    if command.own_process_group {
        cmd.process_group(0);
    }
    cmd.stderr(match &command.stderr {
        ServerStderr::Inherit => Stdio::inherit(),
        ServerStderr::Null => Stdio::null(),
        ServerStderr::Lines(_) => Stdio::piped(),
    });
    let mut child = cmd.spawn().map_err(|source| {
        Error::new(Kind::Spawn {
            program: command.program.to_string_lossy().into_owned(),
            source,
        })
    })?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(Error::protocol("the child's stdin or stdout is not piped"));
    };
    if let (ServerStderr::Lines(f), Some(stderr)) = (&command.stderr, child.stderr.take()) {
        tokio::spawn(forward_stderr(stderr, Arc::clone(f)));
    }
    tracing::debug!(program = %command.program.to_string_lossy(), pid = ?child.id(), "stdio server started");
    let close = CancellationToken::new();
    let (exit_tx, exit) = watch::channel(None);
    tokio::spawn(supervise(
        child,
        close.clone(),
        exit_tx,
        command.shutdown_timeout,
    ));
    Ok(Spawned {
        stdin,
        stdout,
        control: Control { close, exit },
    })
}

/// Most bytes of queued lines written to the child in one `write`.
const BATCH_BYTES: usize = 64 * 1024;

/// Writes each queued line to the child's stdin until the queue ends, a write fails (the
/// child is gone) or the shutdown starts; then drops stdin, which the child sees as EOF.
/// Lines queued meanwhile go in the same write (up to [`BATCH_BYTES`]): one wake-up of the
/// child for several requests under load.
pub(crate) async fn write_loop(
    mut stdin: ChildStdin,
    mut lines: mpsc::Receiver<Vec<u8>>,
    close: CancellationToken,
    tap: Option<crate::wire::WireTap>,
) {
    let mut batch: Vec<u8> = Vec::new();
    let show = |line: &[u8]| {
        if let Some(tap) = &tap {
            tap.emit(0, crate::wire::WireKind::StdioOut(crate::wire::line(line)));
        }
    };
    loop {
        let mut line = tokio::select! {
            biased;
            () = close.cancelled() => break,
            line = lines.recv() => match line {
                Some(line) => line,
                None => break,
            },
        };
        show(&line);
        if let Ok(next) = lines.try_recv() {
            show(&next);
            batch.clear();
            batch.append(&mut line);
            batch.extend_from_slice(&next);
            while batch.len() < BATCH_BYTES {
                let Ok(more) = lines.try_recv() else { break };
                show(&more);
                batch.extend_from_slice(&more);
            }
            std::mem::swap(&mut line, &mut batch);
        }
        // A child that stops reading must not hold up the shutdown.
        let written = tokio::select! {
            biased;
            () = close.cancelled() => break,
            written = stdin.write_all(&line) => written,
        };
        if let Err(e) = written {
            tracing::debug!(error = %e, "writing to the server's stdin failed (it is gone)");
            break;
        }
    }
    drop(stdin);
    tracing::debug!("closed the server's stdin");
}

/// Waits for the child to exit on its own, or shuts it down when asked, and publishes the exit.
async fn supervise(
    mut child: Child,
    close: CancellationToken,
    exit: watch::Sender<Exit>,
    timeout: Duration,
) {
    let status = tokio::select! {
        status = child.wait() => status,
        () = close.cancelled() => shut_down(&mut child, timeout).await,
    };
    let status = match status {
        Ok(s) => {
            tracing::debug!(status = %s, "stdio server exited");
            Some(s)
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot reap the stdio server");
            None
        }
    };
    exit.send_replace(Some(status));
}

/// Stdin is being closed by the writer; escalates to SIGTERM and SIGKILL as needed.
async fn shut_down(child: &mut Child, timeout: Duration) -> std::io::Result<ExitStatus> {
    if let Ok(status) = tokio::time::timeout(timeout, child.wait()).await {
        return status;
    }
    if let Some(pid) = child.id() {
        tracing::info!(
            pid,
            ?timeout,
            "the stdio server did not exit after stdin closed; sending SIGTERM"
        );
        terminate(pid);
        if let Ok(status) = tokio::time::timeout(timeout, child.wait()).await {
            return status;
        }
        tracing::warn!(pid, "the stdio server ignored SIGTERM; sending SIGKILL");
    }
    child.start_kill()?;
    child.wait().await
}

/// Sends SIGTERM to `pid` (a child not reaped yet, so the pid cannot have been reused).
#[cfg(unix)]
fn terminate(pid: u32) {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    if let Err(e) = rustix::process::kill_process(pid, rustix::process::Signal::TERM) {
        tracing::debug!(error = %e, "SIGTERM failed");
    }
}

/// Elsewhere there is no SIGTERM: the caller goes on to kill the child.
#[cfg(not(unix))]
fn terminate(_pid: u32) {}

/// Passes each stderr line to `f` (lossy UTF-8, long lines cut).
async fn forward_stderr(stderr: impl AsyncRead + Unpin, f: Arc<dyn Fn(&str) + Send + Sync>) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        match read_line(&mut reader, &mut buf, MAX_STDERR_LINE).await {
            Ok(Line::Complete) => f(&String::from_utf8_lossy(&buf)),
            Ok(Line::TooLong { .. }) => f(&format!("{}…", String::from_utf8_lossy(&buf))),
            Ok(Line::Eof) | Err(_) => return,
        }
    }
}
