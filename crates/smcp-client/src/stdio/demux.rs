//! The table of requests in flight on one stdio connection and the reader that routes the
//! server's stdout lines to them.
//!
//! Routing rules (stdio has one stream for everything):
//!
//! * a response or error response goes to the request with its id; a response for an id not in
//!   flight (or with a null id) is logged and skipped, never taken as another request's answer;
//! * a notification carrying `_meta["io.modelcontextprotocol/subscriptionId"]` goes to the
//!   `subscriptions/listen` request with that id;
//! * `notifications/progress` goes to the request whose `progressToken` it names;
//! * an untagged `list_changed` or `notifications/resources/updated` (an older-revision
//!   session's) goes to the listen streams mapped onto that session;
//! * `notifications/message` (a log line) has no correlation on stdio: it goes to the
//!   connection-wide log sink, if one is set, and to every request in flight that asked for log
//!   messages (a `logLevel` in its `_meta`);
//! * anything else, a server-to-client request, or a line that is not one JSON-RPC message is
//!   logged and skipped;
//! * a line longer than the cap is skipped without being buffered, and every request in flight
//!   fails with a protocol error, since any of them may have lost its response.
//!
//! Each request gets a bounded channel of notifications and a one-shot slot for its final
//! message, so a slow consumer can never block the reader: past the bound its notifications are
//! dropped (with a warning), while its final response always gets through.

use std::collections::{HashMap, VecDeque};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;
use smcp_proto::jsonrpc::{Message, Notification, RequestId};
use smcp_proto::messages::method;
use smcp_proto::meta;
use smcp_proto::server::utilities::logging::LoggingMessageNotificationParams;
use tokio::io::{AsyncRead, BufReader};
use tokio::sync::{broadcast, mpsc, oneshot};

use super::command::LogFn;
use super::lines::{Line, read_line};
use crate::error::{Error, Kind, Result};
use crate::transport::Inbound;

/// Notifications buffered per request before new ones are dropped.
pub(crate) const NOTIFICATION_BUFFER: usize = 256;
/// Ids remembered after a cancellation, so a late response to one is not reported as unknown.
const RECENTLY_CANCELLED: usize = 256;
/// How much of a skipped line is quoted in the log.
const QUOTE: usize = 120;

/// Why a connection is over; every later request fails with the matching error.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ended {
    /// The server exited (status when reaped) or closed its stdout.
    Exited(Option<ExitStatus>),
    /// [`crate::Client::close`] was called, or the client was dropped.
    Closed,
}

impl Ended {
    pub(crate) fn error(self) -> Error {
        match self {
            Self::Exited(status) => Error::new(Kind::ServerExited { status }),
            Self::Closed => Error::new(Kind::Closed),
        }
    }
}

/// One request in flight.
#[derive(Debug)]
struct Pending {
    notes: mpsc::Sender<Notification>,
    done: oneshot::Sender<Result<Inbound>>,
    progress_token: Option<RequestId>,
    wants_log: bool,
}

/// What a new request registers; see [`Shared::register`].
#[derive(Debug)]
pub(crate) struct Registration {
    pub(crate) notes: mpsc::Receiver<Notification>,
    pub(crate) done: oneshot::Receiver<Result<Inbound>>,
}

#[derive(Debug, Default)]
struct Table {
    pending: HashMap<RequestId, Pending>,
    /// progressToken → request id.
    progress: HashMap<RequestId, RequestId>,
    recently_cancelled: VecDeque<RequestId>,
    ended: Option<Ended>,
}

/// The state shared by the client handle, the reader task and every request stream.
pub(crate) struct Shared {
    table: Mutex<Table>,
    log_sink: Option<LogFn>,
    /// Where server-to-client requests go once an older-revision session is up (they are
    /// answered there); before that they are skipped.
    server_requests: std::sync::OnceLock<mpsc::Sender<smcp_proto::jsonrpc::Request>>,
    /// An older-revision session's change notifications (untagged `list_changed`,
    /// `resources/updated`), for the listen streams mapped onto it.
    changes: broadcast::Sender<Notification>,
    /// Where each line read is shown ([`crate::wire`]).
    tap: Option<crate::wire::WireTap>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("in_flight", &self.lock().pending.len())
            .finish_non_exhaustive()
    }
}

impl Shared {
    pub(crate) fn new(log_sink: Option<LogFn>, tap: Option<crate::wire::WireTap>) -> Arc<Self> {
        Arc::new(Self {
            table: Mutex::new(Table::default()),
            log_sink,
            server_requests: std::sync::OnceLock::new(),
            changes: broadcast::channel(NOTIFICATION_BUFFER).0,
            tap,
        })
    }

    /// Hands server-to-client requests to `tx` from now on (older-revision sessions).
    pub(crate) fn answer_requests_with(&self, tx: mpsc::Sender<smcp_proto::jsonrpc::Request>) {
        let _ = self.server_requests.set(tx);
    }

    /// The change notifications of an older-revision session, from now on.
    pub(crate) fn changes(&self) -> broadcast::Receiver<Notification> {
        self.changes.subscribe()
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Puts a request in flight, or fails if the connection is over or the id is taken.
    pub(crate) fn register(
        &self,
        id: &RequestId,
        progress_token: Option<RequestId>,
        wants_log: bool,
    ) -> Result<Registration> {
        let mut table = self.lock();
        if let Some(ended) = table.ended {
            return Err(ended.error());
        }
        if table.pending.contains_key(id) {
            return Err(Error::config(format!(
                "request id {id} is already in flight"
            )));
        }
        let (notes_tx, notes) = mpsc::channel(NOTIFICATION_BUFFER);
        let (done_tx, done) = oneshot::channel();
        if let Some(token) = &progress_token {
            table.progress.insert(token.clone(), id.clone());
        }
        table.pending.insert(
            id.clone(),
            Pending {
                notes: notes_tx,
                done: done_tx,
                progress_token,
                wants_log,
            },
        );
        Ok(Registration { notes, done })
    }

    /// Takes a request out of flight (if it still is); `cancelled` remembers its id so that a
    /// late response to it is not reported as unknown.
    pub(crate) fn forget(&self, id: &RequestId, cancelled: bool) {
        let mut table = self.lock();
        remove(&mut table, id);
        if cancelled {
            if table.recently_cancelled.len() >= RECENTLY_CANCELLED {
                table.recently_cancelled.pop_front();
            }
            table.recently_cancelled.push_back(id.clone());
        }
    }

    /// Why the connection is over, if it is.
    pub(crate) fn ended(&self) -> Option<Ended> {
        self.lock().ended
    }

    /// Ends the connection (the first reason wins) and fails every request in flight with it.
    /// Returns how many requests it failed, `None` when the connection had already ended.
    pub(crate) fn end(&self, why: Ended) -> Option<usize> {
        let drained: Vec<Pending> = {
            let mut table = self.lock();
            if table.ended.is_some() {
                return None;
            }
            table.ended = Some(why);
            table.progress.clear();
            table.pending.drain().map(|(_, p)| p).collect()
        };
        let failed = drained.len();
        for p in drained {
            let _ = p.done.send(Err(why.error()));
        }
        Some(failed)
    }

    /// Fails every request in flight with an error made by `error` (the connection stays up).
    fn fail_in_flight(&self, error: impl Fn() -> Error) {
        let drained: Vec<Pending> = {
            let mut table = self.lock();
            table.progress.clear();
            table.pending.drain().map(|(_, p)| p).collect()
        };
        for p in drained {
            let _ = p.done.send(Err(error()));
        }
    }

    /// Routes one line of the server's stdout.
    pub(crate) fn dispatch(&self, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match Message::from_slice_raw(line) {
            Err(e) => tracing::warn!(
                error = %e,
                line = %quote(line),
                "skipping a stdout line that is not one JSON-RPC message"
            ),
            Ok(Message::Result(r)) => {
                let id = r.id.clone();
                self.finish(&id, Message::Result(r));
            }
            Ok(Message::Error(e)) => match e.id.clone() {
                Some(id) => self.finish(&id, Message::Error(e)),
                None => tracing::warn!(
                    code = e.error.code,
                    message = %e.error.message,
                    "skipping an error response without an id (it cannot be matched to a request on stdio)"
                ),
            },
            Ok(Message::Notification(n)) => self.route(n),
            Ok(Message::Request(r)) => match self.server_requests.get() {
                Some(tx) => {
                    if tx.try_send(r).is_err() {
                        tracing::warn!("too many server requests waiting for an answer; skipped");
                    }
                }
                None => tracing::warn!(
                    method = %r.method,
                    "skipping a JSON-RPC request from the server (2026-07-28 servers ask for \
                     input with InputRequiredResult; a client never answers on stdio)"
                ),
            },
        }
    }

    /// Delivers the final message of request `id`.
    fn finish(&self, id: &RequestId, message: Inbound) {
        let mut table = self.lock();
        match remove(&mut table, id) {
            Some(p) => {
                drop(table);
                let _ = p.done.send(Ok(message));
            }
            None if table.recently_cancelled.contains(id) => {
                tracing::debug!(%id, "response to a cancelled request skipped");
            }
            None => tracing::warn!(%id, "skipping a response for an id that is not in flight"),
        }
    }

    /// Routes a notification (see the module documentation).
    fn route(&self, n: Notification) {
        if let Some(sub) = meta_of(&n)
            .and_then(|m| m.get(meta::SUBSCRIPTION_ID))
            .map(RequestId::from_value)
        {
            let Some(sub) = sub else {
                tracing::warn!(method = %n.method, "skipping a notification with a malformed subscriptionId");
                return;
            };
            let table = self.lock();
            match table.pending.get(&sub) {
                Some(p) => deliver(&sub, p, n),
                None => {
                    tracing::debug!(subscription = %sub, method = %n.method, "notification for no open subscription skipped");
                }
            }
            return;
        }
        match n.method.as_str() {
            method::PROGRESS => {
                let token = n
                    .params
                    .as_ref()
                    .and_then(|p| p.get(meta::PROGRESS_TOKEN))
                    .and_then(RequestId::from_value);
                let table = self.lock();
                let target = token
                    .as_ref()
                    .and_then(|t| table.progress.get(t))
                    .and_then(|id| table.pending.get_key_value(id));
                match target {
                    Some((id, p)) => deliver(id, p, n),
                    None => {
                        tracing::debug!(token = ?token, "progress for no request in flight skipped");
                    }
                }
            }
            method::MESSAGE => {
                {
                    let table = self.lock();
                    for (id, p) in table.pending.iter().filter(|(_, p)| p.wants_log) {
                        deliver(id, p, n.clone());
                    }
                }
                if let Some(sink) = &self.log_sink {
                    match n
                        .params
                        .map(serde_json::from_value::<LoggingMessageNotificationParams>)
                    {
                        Some(Ok(p)) => sink(p),
                        _ => tracing::warn!("malformed notifications/message skipped"),
                    }
                }
            }
            method::TOOLS_LIST_CHANGED
            | method::PROMPTS_LIST_CHANGED
            | method::RESOURCES_LIST_CHANGED
            | method::RESOURCES_UPDATED => {
                // An older-revision session's changes (a 2026-07-28 server tags its own with
                // the subscription id, above); no listener: nobody asked.
                if self.changes.send(n).is_err() {
                    tracing::debug!("change notification with no listener skipped");
                }
            }
            other => tracing::debug!(method = %other, "uncorrelated notification skipped"),
        }
    }

    /// Reads the server's stdout until it ends, routing every line. Returns when stdout is
    /// closed or unreadable.
    pub(crate) async fn read_loop(&self, stdout: impl AsyncRead + Unpin, max_line: usize) {
        let mut reader = BufReader::with_capacity(64 * 1024, stdout);
        let mut buf = Vec::new();
        loop {
            match read_line(&mut reader, &mut buf, max_line).await {
                Ok(Line::Complete) => {
                    if let Some(tap) = &self.tap {
                        tap.emit(0, crate::wire::WireKind::StdioIn(crate::wire::line(&buf)));
                    }
                    self.dispatch(&buf);
                }
                Ok(Line::TooLong { len }) => {
                    tracing::warn!(
                        len,
                        max_line,
                        "the server wrote a line longer than the limit; every request in flight fails"
                    );
                    self.fail_in_flight(|| {
                        Error::protocol(format!(
                            "the server wrote a stdout line of {len} bytes, over the {max_line}-byte \
                             limit; the response it carried is lost"
                        ))
                    });
                }
                Ok(Line::Eof) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "reading the server's stdout failed");
                    return;
                }
            }
            // A huge line must not pin its buffer for the life of the connection.
            if buf.capacity() > 1024 * 1024 {
                buf = Vec::new();
            }
        }
    }
}

fn remove(table: &mut Table, id: &RequestId) -> Option<Pending> {
    let p = table.pending.remove(id)?;
    // The token may have moved on to a later request (each MRTR round re-sends it).
    if let Some(token) = &p.progress_token
        && table.progress.get(token) == Some(id)
    {
        table.progress.remove(token);
    }
    Some(p)
}

fn deliver(id: &RequestId, p: &Pending, n: Notification) {
    match p.notes.try_send(n) {
        Ok(()) => {}
        Err(mpsc::error::TrySendError::Full(n)) => tracing::warn!(
            %id,
            method = %n.method,
            "dropping a notification: its request's consumer is {NOTIFICATION_BUFFER} behind"
        ),
        Err(mpsc::error::TrySendError::Closed(_)) => {}
    }
}

fn meta_of(n: &Notification) -> Option<&serde_json::Map<String, Value>> {
    n.params.as_ref()?.get("_meta")?.as_object()
}

/// The start of a line, for a log message.
fn quote(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(QUOTE)]);
    if line.len() > QUOTE {
        format!("{text}…")
    } else {
        text.into_owned()
    }
}
