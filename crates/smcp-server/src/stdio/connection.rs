//! One stream connection: the reader loop, the requests it runs, and the drain at the end.
//!
//! The reader never waits for a request to finish: each line is parsed, checked and
//! dispatched, a handler that does not finish on its first poll runs in a task of its own,
//! and the reader moves on, so `notifications/cancelled` is read while requests run. The
//! loop is also the only writer ([`super::writer`]): tasks queue their messages on a channel
//! (a request's notifications before its response), the reader answers into a batch, and
//! before it waits for input again it writes the queue, then the batch, and flushes once.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

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
use super::link::Link;
use super::listen;
use super::options::{NEWLINE, StdioOptions};
use super::running::Registration;
use super::writer::Output;
use crate::core::context::EventSink;
use crate::core::dispatch::{self, Admission, Call, Dispatch, ParamMirror, RateCheck};
use crate::core::meta;
use crate::core::metrics::RequestRecord;
use crate::core::reply::{Finished, caught, error_bytes, finished_bytes};
use crate::core::server::Shared;
use crate::core::tools::BoxFuture;
use crate::drain::{Drained, cut_error};

/// A batch this large is written without waiting for the reader to run dry.
const BATCH_BYTES: usize = 64 * 1024;

/// A stream connection being served.
pub(super) struct Connection {
    /// What the code answering a message needs (the era and listen code get this, not the
    /// connection).
    link: Link,
    max_line: usize,
    out_rx: Option<mpsc::Receiver<Bytes>>,
    /// Which era the connection speaks, decided by its first request.
    #[cfg(feature = "legacy")]
    era: super::legacy::Era,
}

/// A request being measured (only with metrics on): reported once, when it is answered.
/// Over a stream there is no HTTP status: every record carries 200, as a JSON-RPC error
/// inside a `200` would over HTTP.
#[derive(Debug, Clone, Copy)]
pub(super) struct Meter {
    method: &'static str,
    start: Instant,
}

impl Meter {
    /// A meter for `method` when `shared` has metrics on.
    pub(super) fn start(shared: &Shared, method: &str) -> Option<Self> {
        shared.metrics.is_on().then(|| Self {
            method: shared.method_label(method),
            start: Instant::now(),
        })
    }

    /// A meter for a message whose method was never read (measured as method `none`).
    fn unread(shared: &Shared) -> Option<Self> {
        shared.metrics.is_on().then(|| Self {
            method: "none",
            start: Instant::now(),
        })
    }

    /// Reports the request, answered with an error of `code` (or a result: `None`).
    pub(super) fn done(self, shared: &Shared, code: Option<i64>) {
        shared.metrics.request(RequestRecord {
            method: self.method,
            status: 200,
            code,
            elapsed: self.start.elapsed(),
        });
    }
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
            link: Link {
                shared,
                options,
                running: Arc::default(),
                out,
                closing: CancellationToken::new(),
                batch: Vec::new(),
            },
            max_line,
            out_rx: Some(out_rx),
            #[cfg(feature = "legacy")]
            era: super::legacy::Era::Undecided,
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
        let Some(mut queued) = self.out_rx.take() else {
            return Ok(Drained::Complete);
        };
        let mut output = Output::new(output);
        let mut tasks = JoinSet::new();
        tokio::pin!(shutdown);
        tracing::debug!("stdio connection open");
        let ended = 'serve: loop {
            // Every line already buffered, answered into the batch; then everything out, in
            // one flush, before waiting.
            while let Some(line) = input.buffered_line() {
                self.on_input(line, &mut tasks);
                if self.link.batch.len() >= BATCH_BYTES
                    && self.write_out(&mut output, &mut queued).await.is_err()
                {
                    break 'serve Ok("output closed");
                }
            }
            if self.write_out(&mut output, &mut queued).await.is_err()
                || output.flush().await.is_err()
            {
                break Ok("output closed");
            }
            while tasks.try_join_next().is_some() {}
            tokio::select! {
                biased;
                () = &mut shutdown => break Ok("shutdown"),
                // `self.link.out` keeps the channel open: this is never `None`.
                Some(frame) = queued.recv() => {
                    if output.put(&frame).await.is_err() {
                        break Ok("output closed");
                    }
                }
                line = input.next_line() => match line {
                    Ok(Some(line)) => self.on_input(line, &mut tasks),
                    Ok(None) => break Ok("end of input"),
                    Err(e) => break Err(e),
                },
            }
        };
        let why = match &ended {
            Ok(why) => *why,
            Err(_) => "input error",
        };
        let drained = self.drain(&mut tasks, &mut output, &mut queued, why).await;
        if output.close().await.is_err() {
            tracing::debug!("output closed before the end");
        }
        ended.map(|_| drained)
    }

    /// One line of input, answered.
    fn on_input(&mut self, line: Line, tasks: &mut JoinSet<()>) {
        match line {
            Line::Message(line) => self.on_line(&line, tasks),
            Line::TooLong(len) => {
                tracing::debug!(len, "line over the limit");
                let error = ErrorObject::new(
                    INVALID_REQUEST,
                    format!(
                        "Invalid request: the message exceeds {} bytes (messages are one line each)",
                        self.max_line
                    ),
                );
                self.answer_unread(None, error);
            }
        }
    }

    /// Writes what tasks queued, then the reader's batch: a request's notifications reach the
    /// channel before its response reaches the batch, so this order keeps them in order.
    async fn write_out<W: AsyncWrite + Unpin>(
        &mut self,
        output: &mut Output<W>,
        queued: &mut mpsc::Receiver<Bytes>,
    ) -> std::io::Result<()> {
        while let Ok(frame) = queued.try_recv() {
            output.put(&frame).await?;
        }
        let batch = std::mem::take(&mut self.link.batch);
        output.put(&batch).await?;
        // The allocation is kept for the next batch.
        self.link.batch = batch;
        self.link.batch.clear();
        Ok(())
    }

    /// Ends subscriptions gracefully and waits for requests, up to the drain timeout, writing
    /// what they send; then cancels what is left and answers each with an error.
    async fn drain<W: AsyncWrite + Unpin>(
        &mut self,
        tasks: &mut JoinSet<()>,
        output: &mut Output<W>,
        queued: &mut mpsc::Receiver<Bytes>,
        why: &str,
    ) -> Drained {
        self.link.closing.cancel();
        let mut writable = self.write_out(output, queued).await.is_ok();
        let deadline = tokio::time::sleep(self.link.options.drain_timeout);
        tokio::pin!(deadline);
        let finished = loop {
            if writable {
                writable = output.flush().await.is_ok();
            }
            tokio::select! {
                biased;
                Some(frame) = queued.recv() => {
                    if writable {
                        writable = output.put(&frame).await.is_ok();
                    }
                }
                joined = tasks.join_next() => {
                    if joined.is_none() {
                        break true;
                    }
                }
                () = &mut deadline => break false,
            }
        };
        // What the last tasks sent on their way out.
        while let Ok(frame) = queued.try_recv() {
            if writable {
                writable = output.put(&frame).await.is_ok();
            }
        }
        if finished {
            tracing::debug!(reason = why, "stdio connection closed");
            return Drained::Complete;
        }
        let cut = self.link.running.cut();
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
        tracing::warn!(
            reason = why,
            requests = cut.len(),
            "requests still running at the end of the drain timeout were cancelled"
        );
        let timeout = self.link.options.drain_timeout;
        for id in &cut {
            self.link
                .send(error_bytes(Some(id.clone()), cut_error(timeout)));
        }
        if writable {
            let _ = self.write_out(output, queued).await;
        }
        Drained::TimedOut(cut.len())
    }

    /// Answers a message whose method was never read (measured as method `none`).
    fn answer_unread(&mut self, id: Option<RequestId>, error: ErrorObject) {
        if let Some(meter) = Meter::unread(&self.link.shared) {
            meter.done(&self.link.shared, Some(error.code));
        }
        self.link.send(error_bytes(id, error));
    }

    fn on_line(&mut self, line: &Bytes, tasks: &mut JoinSet<()>) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        // JSON text is UTF-8 (RFC 8259 §8.1); the parser's fast route does not check it all.
        if let Err(e) = std::str::from_utf8(line) {
            tracing::debug!(at = e.valid_up_to(), "message is not UTF-8");
            let error = ErrorObject::new(
                PARSE_ERROR,
                format!(
                    "Parse error: the message is not valid UTF-8 (at byte {})",
                    e.valid_up_to()
                ),
            );
            return self.answer_unread(None, error);
        }
        let parsed = Incoming::parse(line);
        #[cfg(feature = "legacy")]
        let Some(parsed) = super::legacy::route(&mut self.link, &mut self.era, parsed, line, tasks)
        else {
            return;
        };
        match parsed {
            Ok(Incoming::Request(request)) => self.on_request(request, line, tasks),
            Ok(Incoming::Notification(n)) => self.on_notification(&n),
            Ok(Incoming::Response(id)) => {
                // Answered without its id: a client correlating by id must not take this
                // for the answer to a request of its own.
                tracing::debug!(?id, "a response from the client");
                let error = ErrorObject::invalid_request(
                    "Invalid request: clients must not send JSON-RPC responses",
                );
                self.answer_unread(None, error);
            }
            Err(e) => {
                tracing::debug!(error = %e, "unreadable message");
                self.answer_unread(e.id().cloned(), e.to_error_object());
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
                let found = self.link.running.cancel(&id);
                tracing::debug!(%id, found, "cancellation");
            }
            None => tracing::debug!("notifications/cancelled without a valid requestId"),
        }
    }

    fn on_request(&mut self, request: IncomingRequest<'_>, line: &Bytes, tasks: &mut JoinSet<()>) {
        let span = tracing::debug_span!("mcp.request", method = %request.method, id = %request.id);
        let meter = Meter::start(&self.link.shared, &request.method);
        let admitted = meta::admit(&request).and_then(|a| {
            let subscription = request.method == method::SUBSCRIPTIONS_LISTEN;
            self.link
                .running
                .admit(&request.id, subscription, &self.link.options)
                .map(|()| a)
        });
        let admitted = match admitted {
            Ok(a) => a,
            Err(error) => {
                span.in_scope(|| tracing::debug!(code = error.code, "refused"));
                if let Some(meter) = meter {
                    meter.done(&self.link.shared, Some(error.code));
                }
                return self.link.send(error_bytes(Some(request.id), error));
            }
        };
        let shared = &self.link.shared;
        let cancel = CancellationToken::new();
        let events = admitted
            .may_emit(shared.features.logging)
            .then(|| EventSink {
                tx: self.link.out.clone(),
                framing: NEWLINE,
            });
        let id = request.id.clone();
        let admission = Admission {
            admitted,
            events,
            cancel: cancel.clone(),
            principal: self.link.options.principal.clone(),
            access: None,
            rate: RateCheck::Apply { peer: None },
        };
        let dispatched = dispatch::dispatch(
            shared,
            Call::new(shared, request, line, admission, &NoMirror),
        );
        // A rate limit refusal is a JSON-RPC error like any other here.
        match dispatched.ungated() {
            Dispatch::Ready(outcome) => self.finish(id, outcome, meter),
            Dispatch::Pending(mut fut) => {
                // Most handlers finish on their first poll: no task, no registration.
                match std::panic::catch_unwind(AssertUnwindSafe(|| (&mut fut).now_or_never())) {
                    Ok(Some(outcome)) => return self.finish(id, outcome, meter),
                    Ok(None) => {}
                    Err(_) => {
                        let error = ErrorObject::internal("the handler panicked");
                        return self.finish(id, Err(error), meter);
                    }
                }
                let fut: BoxFuture<Finished> = Box::pin(caught(fut));
                let registration = self
                    .link
                    .running
                    .register(id.clone(), cancel.clone(), false);
                let task = run_request(
                    shared.clone(),
                    id,
                    fut,
                    cancel,
                    registration,
                    self.link.out.clone(),
                    meter,
                );
                tasks.spawn(task.instrument(span));
            }
            Dispatch::Gated(..) => {
                let error = ErrorObject::internal("the request was not ungated");
                self.finish(id, Err(error), meter);
            }
            Dispatch::Listen(params, ctx) => {
                // Measured when it opens (or is refused), as over HTTP when its stream starts.
                match listen::open(&self.link, id.clone(), params, ctx, cancel) {
                    Ok(task) => {
                        if let Some(meter) = meter {
                            meter.done(&self.link.shared, None);
                        }
                        tasks.spawn(task.instrument(span));
                    }
                    Err(error) => {
                        if let Some(meter) = meter {
                            meter.done(&self.link.shared, Some(error.code));
                        }
                        self.link.send(error_bytes(Some(id), error));
                    }
                }
            }
        }
    }

    fn finish(&mut self, id: RequestId, outcome: Finished, meter: Option<Meter>) {
        if let Some(meter) = meter {
            meter.done(&self.link.shared, outcome.as_ref().err().map(|e| e.code));
        }
        let json = finished_bytes(&self.link.shared.server_meta, id, outcome);
        self.link.send(json);
    }
}

/// A request whose handler did not finish at once: its response, unless it is cancelled
/// (then nothing more is written for it, nor measured, and the handler is dropped after the
/// grace period).
async fn run_request(
    shared: Arc<Shared>,
    id: RequestId,
    fut: BoxFuture<Finished>,
    cancel: CancellationToken,
    registration: Registration,
    out: mpsc::Sender<Bytes>,
    meter: Option<Meter>,
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
            if let Some(meter) = meter {
                meter.done(&shared, outcome.as_ref().err().map(|e| e.code));
            }
            let json = finished_bytes(&shared.server_meta, id, outcome);
            let _ = out.send(NEWLINE.frame(&json)).await;
        }
        Some(_) => tracing::debug!("cancelled request finished; no response"),
        None => tracing::debug!("cancelled request dropped after the grace period"),
    }
}
