//! One stream connection: the reader loop, the requests it runs, and the drain at the end.
//!
//! The reader never waits for a request to finish: each line is parsed, checked and
//! dispatched, a handler that does not finish on its first poll runs in a task of its own,
//! and the reader moves on, so `notifications/cancelled` is read while requests run. Every
//! message goes out through one writer ([`super::writer`]), so a request's notifications are
//! written before its response.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::FutureExt as _;
use serde_json::Value;
use smcp_proto::error::{ErrorObject, INVALID_REQUEST, PARSE_ERROR};
use smcp_proto::jsonrpc::{Incoming, IncomingRequest, Notification, RequestId};
use smcp_proto::messages::method;
use smcp_proto::x_mcp_header::HeaderParam;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::lines::{Line, LineReader};
use super::running::{Registration, Running};
use super::{Drained, NEWLINE, StdioOptions, listen, writer};
use crate::core::context::{ContextParts, EventSink, MetaSource, RequestContext};
use crate::core::dispatch::{self, Call, Dispatch, ParamMirror};
use crate::core::meta;
use crate::core::reply::{Finished, caught, error_bytes, finished_bytes};
use crate::core::server::Shared;
use crate::core::tools::BoxFuture;

/// A batch this large goes to the writer without waiting for the reader to run dry.
const BATCH_BYTES: usize = 64 * 1024;

/// A stream connection being served.
pub(super) struct Connection {
    pub(super) shared: Arc<Shared>,
    pub(super) options: StdioOptions,
    max_line: usize,
    pub(super) running: Arc<Running>,
    /// Where every message goes.
    pub(super) out: mpsc::Sender<Bytes>,
    out_rx: Option<mpsc::Receiver<Bytes>>,
    /// Messages the reader wrote since it last waited for input, sent to the writer as one
    /// frame before it waits again (a burst of requests costs one channel send).
    batch: Vec<u8>,
    /// Cancelled when serving ends: subscriptions close gracefully.
    pub(super) closing: CancellationToken,
}

/// Tool arguments have no second copy on a stream: nothing to check.
struct NoMirror;

impl ParamMirror for NoMirror {
    fn check_tool_arguments(
        &self,
        _params: &[HeaderParam],
        _arguments: &serde_json::Map<String, Value>,
    ) -> Result<(), ErrorObject> {
        Ok(())
    }
}

impl Connection {
    pub(super) fn new(shared: Arc<Shared>, options: StdioOptions, max_line: usize) -> Self {
        let (out, out_rx) = mpsc::channel(options.output_buffer.max(1));
        Self {
            shared,
            options,
            max_line,
            running: Arc::default(),
            out,
            out_rx: Some(out_rx),
            batch: Vec::new(),
            closing: CancellationToken::new(),
        }
    }

    /// Serves until the end of input, a closed output, or `shutdown`; then drains.
    pub(super) async fn run<R, W>(
        mut self,
        mut input: LineReader<R>,
        output: W,
        shutdown: impl Future<Output = ()>,
    ) -> std::io::Result<Drained>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let gone = CancellationToken::new();
        let Some(out_rx) = self.out_rx.take() else {
            return Ok(Drained::Complete);
        };
        let writer = tokio::spawn(writer::run(output, out_rx, gone.clone()));
        let mut tasks = JoinSet::new();
        tokio::pin!(shutdown);
        tracing::debug!("stdio connection open");
        let ended = loop {
            let line = match input.buffered_line() {
                Some(line) => Ok(Some(line)),
                None => {
                    self.flush_batch().await;
                    while tasks.try_join_next().is_some() {}
                    tokio::select! {
                        biased;
                        () = &mut shutdown => break Ok("shutdown"),
                        () = gone.cancelled() => break Ok("output closed"),
                        line = input.next_line() => line,
                    }
                }
            };
            match line {
                Ok(Some(Line::Message(line))) => self.on_line(line, &mut tasks).await,
                Ok(Some(Line::TooLong(len))) => {
                    tracing::debug!(len, "line over the limit");
                    let error = ErrorObject::new(
                        INVALID_REQUEST,
                        format!(
                            "Invalid request: the message exceeds {} bytes (messages are one line each)",
                            self.max_line
                        ),
                    );
                    self.send(error_bytes(None, error)).await;
                }
                Ok(None) => break Ok("end of input"),
                Err(e) => break Err(e),
            }
        };
        self.flush_batch().await;
        let why = match &ended {
            Ok(why) => *why,
            Err(_) => "input error",
        };
        let drained = self.drain(&mut tasks, why).await;
        // The writer ends once every sender is gone: this one, the tasks' (all finished or
        // aborted), the handlers' event sinks (dropped with them).
        drop(self);
        if tokio::time::timeout(std::time::Duration::from_secs(5), writer)
            .await
            .is_err()
        {
            tracing::warn!("output did not drain within 5 s; messages may be lost");
        }
        ended.map(|_| drained)
    }

    /// Ends subscriptions gracefully and waits for requests, up to the drain timeout; then
    /// cancels what is left and answers each with an error.
    async fn drain(&self, tasks: &mut JoinSet<()>, why: &str) -> Drained {
        self.closing.cancel();
        let timeout = self.options.drain_timeout;
        let waited = tokio::time::timeout(timeout, async {
            while tasks.join_next().await.is_some() {}
        })
        .await;
        if waited.is_ok() {
            tracing::debug!(reason = why, "stdio connection closed");
            return Drained::Complete;
        }
        let cut = self.running.cut();
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
        tracing::warn!(
            reason = why,
            requests = cut.len(),
            "requests still running at the end of the drain timeout were cancelled"
        );
        for id in &cut {
            let error = ErrorObject::internal(format!(
                "Server shutting down: the request did not finish within {} ms",
                timeout.as_millis()
            ));
            let _ = self
                .out
                .try_send(Bytes::from(error_bytes(Some(id.clone()), error)));
        }
        Drained::TimedOut(cut.len())
    }

    /// Sends one message (a JSON-RPC message without its newline), in the reader's batch.
    async fn send(&mut self, json: Vec<u8>) {
        if self.batch.is_empty() {
            self.batch = json;
        } else {
            self.batch.extend_from_slice(&json);
        }
        self.batch.push(b'\n');
        if self.batch.len() >= BATCH_BYTES {
            self.flush_batch().await;
        }
    }

    /// Hands the batch to the writer.
    async fn flush_batch(&mut self) {
        if !self.batch.is_empty() {
            let batch = Bytes::from(std::mem::take(&mut self.batch));
            let _ = self.out.send(batch).await;
        }
    }

    async fn on_line(&mut self, line: Bytes, tasks: &mut JoinSet<()>) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        // JSON text is UTF-8 (RFC 8259 §8.1); the parser's fast route does not check it all.
        if let Err(e) = std::str::from_utf8(&line) {
            tracing::debug!(at = e.valid_up_to(), "message is not UTF-8");
            let error = ErrorObject::new(
                PARSE_ERROR,
                format!(
                    "Parse error: the message is not valid UTF-8 (at byte {})",
                    e.valid_up_to()
                ),
            );
            return self.send(error_bytes(None, error)).await;
        }
        match Incoming::parse(&line) {
            Ok(Incoming::Request(request)) => self.on_request(request, &line, tasks).await,
            Ok(Incoming::Notification(n)) => self.on_notification(&n),
            Ok(Incoming::Response(id)) => {
                // Answered without its id: a client correlating by id must not take this
                // for the answer to a request of its own.
                tracing::debug!(?id, "a response from the client");
                let error = ErrorObject::invalid_request(
                    "Invalid request: clients must not send JSON-RPC responses",
                );
                self.send(error_bytes(None, error)).await;
            }
            Err(e) => {
                tracing::debug!(error = %e, "unreadable message");
                self.send(error_bytes(e.id().cloned(), e.to_error_object()))
                    .await;
            }
        }
    }

    fn on_notification(&self, n: &Notification) {
        if n.method != method::CANCELLED {
            tracing::debug!(method = %n.method, "notification ignored");
            return;
        }
        let id = n
            .params
            .as_ref()
            .and_then(|p| p.get("requestId"))
            .and_then(RequestId::from_value);
        match id {
            Some(id) => {
                let found = self.running.cancel(&id);
                tracing::debug!(%id, found, "cancellation");
            }
            None => tracing::debug!("notifications/cancelled without a valid requestId"),
        }
    }

    async fn on_request(
        &mut self,
        request: IncomingRequest<'_>,
        line: &Bytes,
        tasks: &mut JoinSet<()>,
    ) {
        let span = tracing::debug_span!("mcp.request", method = %request.method, id = %request.id);
        let admitted = meta::admit(&request).and_then(|a| {
            let subscription = request.method == method::SUBSCRIPTIONS_LISTEN;
            self.running
                .admit(&request.id, subscription, &self.options)
                .map(|()| a)
        });
        let admitted = match admitted {
            Ok(a) => a,
            Err(error) => {
                span.in_scope(|| tracing::debug!(code = error.code, "refused"));
                return self.send(error_bytes(Some(request.id), error)).await;
            }
        };
        let shared = &self.shared;
        let cancel = CancellationToken::new();
        let may_emit = admitted.progress_token.is_some()
            || (admitted.log_level.is_some() && shared.features.logging);
        let IncomingRequest {
            id,
            method,
            meta,
            params,
            mrtr_members,
        } = request;
        let ctx = RequestContext::new(ContextParts {
            id: id.clone(),
            method: method.clone(),
            meta: MetaSource::Raw(
                meta.as_deref()
                    .map_or_else(Bytes::new, |m| meta::meta_bytes(line, m)),
            ),
            progress_token: admitted.progress_token,
            log_level: admitted.log_level,
            logging_enabled: shared.features.logging,
            events: may_emit.then(|| EventSink {
                tx: self.out.clone(),
                framing: NEWLINE,
            }),
            cancel: cancel.clone(),
            principal: self.options.principal.clone(),
            server: Some(crate::core::server::Server {
                shared: shared.clone(),
            }),
        });
        let dispatched = dispatch::dispatch(
            shared,
            Call {
                method,
                params,
                mrtr_members,
                ctx,
                body: Some(line.clone()),
                mirror: &NoMirror,
            },
        );
        match dispatched {
            Dispatch::Ready(outcome) => self.finish(id, outcome).await,
            Dispatch::Pending(mut fut) => {
                // Most handlers finish on their first poll: no task, no registration.
                match std::panic::catch_unwind(AssertUnwindSafe(|| (&mut fut).now_or_never())) {
                    Ok(Some(outcome)) => return self.finish(id, outcome).await,
                    Ok(None) => {}
                    Err(_) => {
                        let error = ErrorObject::internal("the handler panicked");
                        return self.finish(id, Err(error)).await;
                    }
                }
                let fut: BoxFuture<Finished> = Box::pin(caught(fut));
                let registration = self.running.register(id.clone(), cancel.clone(), false);
                let task = run_request(
                    shared.clone(),
                    id,
                    fut,
                    cancel,
                    registration,
                    self.out.clone(),
                );
                tasks.spawn(task.instrument(span));
            }
            Dispatch::Listen(params) => match listen::open(self, id.clone(), params, cancel) {
                Ok(task) => {
                    tasks.spawn(task.instrument(span));
                }
                Err(error) => self.send(error_bytes(Some(id), error)).await,
            },
        }
    }

    async fn finish(&mut self, id: RequestId, outcome: Finished) {
        let json = finished_bytes(&self.shared.server_meta, id, outcome);
        self.send(json).await;
    }
}

/// A request whose handler did not finish at once: its response, unless it is cancelled
/// (then nothing more is written for it, and the handler is dropped after the grace period).
async fn run_request(
    shared: Arc<Shared>,
    id: RequestId,
    fut: BoxFuture<Finished>,
    cancel: CancellationToken,
    registration: Registration,
    out: mpsc::Sender<Bytes>,
) {
    let grace = shared.limits.cancel_grace;
    let outcome = tokio::select! {
        biased;
        outcome = fut => Some(outcome),
        () = async {
            cancel.cancelled().await;
            tokio::time::sleep(grace).await;
        } => None,
    };
    // Out of the table before the response is written: the client may reuse the id as soon
    // as it has read it.
    drop(registration);
    match outcome {
        Some(outcome) if !cancel.is_cancelled() => {
            let json = finished_bytes(&shared.server_meta, id, outcome);
            let _ = out.send(NEWLINE.frame(&json)).await;
        }
        Some(_) => tracing::debug!("cancelled request finished; no response"),
        None => tracing::debug!("cancelled request dropped after the grace period"),
    }
}
