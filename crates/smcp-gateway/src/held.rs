//! Calls held for the client's answer: the bridge between an upstream that asks in the middle
//! of a call (a 2025-era `elicitation/create`, `sampling/createMessage` or `roots/list`, or a
//! 2026-07-28 `InputRequiredResult` the upstream client turns into the same question) and a
//! 2026-07-28 client that can only be asked with an `InputRequiredResult` and a retry.
//!
//! The upstream call runs in a task of its own. What it produces (progress, log lines, a
//! question, the end) goes through one channel to whichever client request is driving the call
//! now: the first `tools/call`, then each retry. A question ends the driving request with an
//! `InputRequiredResult` whose sealed `requestState` names this gateway instance and the call;
//! the call is then held here, with the question's answer slot, until the retry takes it or
//! the hold expires (the upstream request is then cancelled).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smcp_proto::error::ErrorObject;
use smcp_proto::patterns::mrtr::InputRequest;
use smcp_proto::patterns::progress::ProgressNotificationParams;
use smcp_proto::server::tools::CallToolResult;
use smcp_proto::server::utilities::logging::LoggingMessageNotificationParams;
use smcp_server::mrtr::InputRequired;
use smcp_server::{HandlerError, RequestContext};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::call_error;
use crate::peers::{EventSink, ForwardedEvent, ForwardedOutcome, ForwardedRetry, PeerError, Peers};

/// The key of the one question of a round in `inputRequests` and `inputResponses`.
pub(crate) const QUESTION_KEY: &str = "upstream";

/// Room for progress and log lines produced while no client request drives the call; past
/// it they are dropped (never the question or the end).
const EVENT_ROOM: usize = 64;

/// What the upstream call produces.
#[derive(Debug)]
pub(crate) enum Event {
    /// A progress notification from the upstream.
    Progress(ProgressNotificationParams),
    /// A log line from the upstream.
    Log(LoggingMessageNotificationParams),
    /// A question for the client; the answer goes back through the sender.
    Ask(InputRequest, oneshot::Sender<Answer>),
    /// The end of the upstream call.
    Done(Result<CallToolResult, smcp_client::Error>),
}

/// The client's answer to a question (its `inputResponses` entry).
pub(crate) type Answer = Value;

/// The sending half an upstream call's task carries (see [`crate::bridge`]).
pub(crate) type Link = mpsc::Sender<Event>;

/// What the sealed `requestState` of a held call says.
#[derive(Debug, Serialize, Deserialize)]
struct HeldState {
    /// The gateway instance holding the call.
    gateway: String,
    /// The call.
    call: String,
}

/// One upstream call, from its start to its end.
#[derive(Debug)]
pub(crate) struct Call {
    /// The upstream's name, for errors.
    upstream: String,
    events: tokio::sync::Mutex<mpsc::Receiver<Event>>,
    /// Cancels the upstream request.
    cancel: CancellationToken,
}

/// A call waiting for the client's answer.
#[derive(Debug)]
struct Held {
    call: Arc<Call>,
    question: InputRequest,
    answer: oneshot::Sender<Answer>,
    expires: Instant,
}

/// The calls this instance holds.
#[derive(Debug)]
pub(crate) struct HeldCalls {
    instance: String,
    ttl: Duration,
    max: usize,
    held: Mutex<HashMap<String, Held>>,
    /// The other instances, to forward a retry that names one of them; and how long such a
    /// retry may wait for its outcome.
    peers: Option<(Arc<dyn Peers>, Duration)>,
}

/// How far a driven call got.
#[derive(Debug)]
pub(crate) enum Step {
    /// It ended with the upstream's result.
    Done(CallToolResult),
    /// The upstream asked: the call is held under `call`.
    Asked {
        /// The hold's id.
        call: String,
        /// The question.
        question: InputRequest,
    },
}

/// Whoever drives a call now: a client request here, or a retry forwarded from another
/// instance.
pub(crate) trait Driver: Sync {
    /// Passes a progress notification on.
    fn progress(&self, progress: ProgressNotificationParams) -> impl Future<Output = ()> + Send;
    /// Passes a log line on.
    fn log(&self, line: LoggingMessageNotificationParams) -> impl Future<Output = ()> + Send;
    /// Resolves when the client went away.
    fn cancelled(&self) -> impl Future<Output = ()> + Send;
    /// Whether the client declared the capability at `path`.
    fn has_capability(&self, path: &[&str]) -> bool;
}

impl Driver for RequestContext {
    async fn progress(&self, p: ProgressNotificationParams) {
        let _ = RequestContext::progress(self, p.progress, p.total, p.message.as_deref()).await;
    }

    async fn log(&self, line: LoggingMessageNotificationParams) {
        let _ = RequestContext::log(self, line.level, line.logger.as_deref(), line.data).await;
    }

    async fn cancelled(&self) {
        RequestContext::cancelled(self).await;
    }

    fn has_capability(&self, path: &[&str]) -> bool {
        RequestContext::has_capability(self, path)
    }
}

/// A retry forwarded from another instance, driving a call here: its client's capabilities,
/// the token cancelled when that client goes away, and where its progress and log lines go
/// back.
struct Remote {
    capabilities: Map<String, Value>,
    cancel: CancellationToken,
    events: EventSink,
}

impl Driver for Remote {
    async fn progress(&self, params: ProgressNotificationParams) {
        let _ = self.events.try_send(ForwardedEvent::Progress { params });
    }

    async fn log(&self, params: LoggingMessageNotificationParams) {
        let _ = self.events.try_send(ForwardedEvent::Log { params });
    }

    async fn cancelled(&self) {
        self.cancel.cancelled().await;
    }

    fn has_capability(&self, path: &[&str]) -> bool {
        let mut at = &self.capabilities;
        for name in path {
            match at.get(*name) {
                Some(Value::Object(inner)) => at = inner,
                _ => return false,
            }
        }
        true
    }
}

impl HeldCalls {
    /// `peers`: the other instances (with how long a forwarded retry may wait), whose id
    /// for this one names the calls it holds; without them a random id does.
    pub(crate) fn new(
        ttl: Duration,
        max: usize,
        peers: Option<(Arc<dyn Peers>, Duration)>,
    ) -> Self {
        let instance = peers
            .as_ref()
            .map_or_else(random_id, |(p, _)| p.instance().to_owned());
        Self {
            instance,
            ttl,
            max,
            held: Mutex::new(HashMap::new()),
            peers,
        }
    }

    /// The other instances, if any.
    pub(crate) fn peers(&self) -> Option<&Arc<dyn Peers>> {
        self.peers.as_ref().map(|(p, _)| p)
    }

    /// A new call's channel: the link its task sends on, and the call a client request drives.
    pub(crate) fn open(upstream: &str, cancel: CancellationToken) -> (Link, Arc<Call>) {
        let (tx, rx) = mpsc::channel(EVENT_ROOM);
        let call = Call {
            upstream: upstream.to_owned(),
            events: tokio::sync::Mutex::new(rx),
            cancel,
        };
        (tx, Arc::new(call))
    }

    /// The number of calls held now (expired ones swept first).
    pub(crate) fn len(&self) -> usize {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        sweep(&mut held);
        held.len()
    }

    /// Drives `call` for one client request here: its result, or the
    /// `InputRequiredResult` of the question that holds it.
    pub(crate) async fn drive_here(
        &self,
        call: Arc<Call>,
        ctx: &RequestContext,
    ) -> Result<CallToolResult, HandlerError> {
        let step = self.drive(call, ctx).await?;
        self.answer(&self.instance, step)
    }

    /// A step as the client gets it: the result, or the `InputRequiredResult` whose sealed
    /// state names `instance` and the hold.
    fn answer(&self, instance: &str, step: Step) -> Result<CallToolResult, HandlerError> {
        match step {
            Step::Done(result) => Ok(result),
            Step::Asked { call, question } => {
                let state = HeldState {
                    gateway: instance.to_owned(),
                    call,
                };
                let asked = InputRequired::new()
                    .request(QUESTION_KEY, question)
                    .state(&state)?;
                Err(HandlerError::from(asked))
            }
        }
    }

    /// Drives `call` for `driver`: passes its progress and log lines on, until it ends (its
    /// result) or asks (and the call is held). When the client goes away first, the
    /// upstream request is cancelled.
    async fn drive(&self, call: Arc<Call>, driver: &impl Driver) -> Result<Step, HandlerError> {
        let Ok(mut events) = call.events.try_lock() else {
            return Err(HandlerError::invalid_params(
                "requestState: this call is already being resumed by another request",
            ));
        };
        // A request whose client went away may be dropped rather than told: the upstream
        // request is cancelled then too, unless this request ended by holding the call.
        let mut guard = CancelOnDrop(Some(call.cancel.clone()));
        loop {
            let event = tokio::select! {
                event = events.recv() => event,
                () = driver.cancelled() => {
                    tracing::debug!(upstream = %call.upstream, "the client went away; cancelling the upstream call");
                    call.cancel.cancel();
                    return Err(HandlerError::failed("the request was cancelled"));
                }
            };
            match event {
                Some(Event::Progress(p)) => driver.progress(p).await,
                Some(Event::Log(line)) => driver.log(line).await,
                Some(Event::Ask(question, answer)) => {
                    let capability = capability_of(&question);
                    if !driver.has_capability(capability) {
                        // As a server asking directly would: −32021, naming the capability;
                        // the upstream request is cancelled (the guard).
                        return Err(missing(capability));
                    }
                    drop(events);
                    let id = self.hold(call, question.clone(), answer)?;
                    guard.0 = None;
                    return Ok(Step::Asked { call: id, question });
                }
                Some(Event::Done(result)) => {
                    return result
                        .map(Step::Done)
                        .map_err(|e| call_error(&call.upstream, &e));
                }
                None => {
                    return Err(HandlerError::internal(format!(
                        "upstream {:?}: the call ended without an answer",
                        call.upstream
                    )));
                }
            }
        }
    }

    /// Holds `call` until the client's answer comes; the hold's id.
    fn hold(
        &self,
        call: Arc<Call>,
        question: InputRequest,
        answer: oneshot::Sender<Answer>,
    ) -> Result<String, HandlerError> {
        let id = random_id();
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        sweep(&mut held);
        if held.len() >= self.max {
            call.cancel.cancel();
            return Err(HandlerError::Rpc(ErrorObject::internal(format!(
                "upstream {:?} asked for input, but this gateway already holds {} calls for \
                 an answer; try again later",
                call.upstream, self.max
            ))));
        }
        held.insert(
            id.clone(),
            Held {
                call,
                question,
                answer,
                expires: Instant::now() + self.ttl,
            },
        );
        Ok(id)
    }

    /// A retry: the held call its `requestState` names, answered with the retry's response
    /// and driven on, here or, through the peers, on the instance holding it. A retry
    /// without the response is asked again.
    pub(crate) async fn resume(
        &self,
        ctx: &RequestContext,
        input: &smcp_server::mrtr::Input,
    ) -> Result<CallToolResult, HandlerError> {
        let state: HeldState = input.state()?.ok_or_else(|| {
            HandlerError::invalid_params("requestState: missing on a retry of a gateway call")
        })?;
        let response = input.raw_response(QUESTION_KEY);
        if state.gateway == self.instance {
            let step = self.resume_held(&state.call, response, ctx).await?;
            return self.answer(&self.instance, step);
        }
        let Some((peers, within)) = &self.peers else {
            return Err(held_elsewhere(
                "the upstream request this retry answers is held by another gateway instance \
                 (or one that restarted); send retries to the instance that asked, or start \
                 the call again",
            ));
        };
        let retry = ForwardedRetry {
            call: state.call,
            response: response.cloned(),
            capabilities: ctx.client_capabilities().clone(),
        };
        let cancel = ctx.cancellation_token();
        let (events, mut heard) = mpsc::channel(EVENT_ROOM);
        let forwarded = peers.forward(&state.gateway, retry, *within, cancel, events);
        tokio::pin!(forwarded);
        let outcome = loop {
            tokio::select! {
                biased;
                Some(event) = heard.recv() => pass_on(ctx, event).await,
                outcome = &mut forwarded => break outcome,
            }
        };
        while let Ok(event) = heard.try_recv() {
            pass_on(ctx, event).await;
        }
        match outcome {
            Ok(ForwardedOutcome::Complete { result }) => Ok(result),
            Ok(ForwardedOutcome::Asked { call, question }) => {
                self.answer(&state.gateway, Step::Asked { call, question })
            }
            Ok(ForwardedOutcome::Failed { error }) => Err(HandlerError::Rpc(error)),
            Ok(ForwardedOutcome::ToolFailed { message }) => Err(HandlerError::Failed(message)),
            Err(PeerError::Gone) => Err(gone(
                "the gateway instance holding the upstream request is gone; \
                 start the call again",
            )),
            Err(e) => Err(HandlerError::failed(format!("requestState: {e}"))),
        }
    }

    /// A retry forwarded here by another instance.
    pub(crate) async fn serve_forwarded(
        &self,
        retry: ForwardedRetry,
        cancel: CancellationToken,
        events: EventSink,
    ) -> ForwardedOutcome {
        let driver = Remote {
            capabilities: retry.capabilities,
            cancel,
            events,
        };
        match self
            .resume_held(&retry.call, retry.response.as_ref(), &driver)
            .await
        {
            Ok(Step::Done(result)) => ForwardedOutcome::Complete { result },
            Ok(Step::Asked { call, question }) => ForwardedOutcome::Asked { call, question },
            Err(HandlerError::Failed(message)) => ForwardedOutcome::ToolFailed { message },
            Err(HandlerError::Rpc(error)) => ForwardedOutcome::Failed { error },
            Err(other) => ForwardedOutcome::Failed {
                error: ErrorObject::internal(format!("the held call could not go on: {other}")),
            },
        }
    }

    /// The held call `id` answered with `response` and driven on for `driver`; asked again
    /// without a response.
    async fn resume_held(
        &self,
        id: &str,
        response: Option<&Value>,
        driver: &impl Driver,
    ) -> Result<Step, HandlerError> {
        let held = {
            let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
            sweep(&mut held);
            held.remove(id)
        };
        let Some(held) = held else {
            return Err(gone(
                "the held upstream request has expired, ended or was already \
                 answered; start the call again",
            ));
        };
        let Some(response) = response else {
            // Asked again, under a new hold.
            let Held {
                call,
                question,
                answer,
                ..
            } = held;
            let id = self.hold(call, question.clone(), answer)?;
            return Ok(Step::Asked { call: id, question });
        };
        if !smcp_server::mrtr::accepts(&held.question, response) {
            // Nothing is half-answered: the upstream request is cancelled with the call.
            held.call.cancel.cancel();
            return Err(HandlerError::invalid_params(format!(
                "inputResponses.{QUESTION_KEY}: not a valid answer to {} (the call was \
                 cancelled; start it again)",
                held.question.method()
            )));
        }
        // The upstream may have given up meanwhile; then the end is on the channel.
        let _ = held.answer.send(response.clone());
        self.drive(held.call, driver).await
    }
}

/// An event of a call forwarded to another instance, passed on to the client here.
async fn pass_on(ctx: &RequestContext, event: ForwardedEvent) {
    match event {
        ForwardedEvent::Progress { params: p } => {
            let _ = ctx
                .progress(p.progress, p.total, p.message.as_deref())
                .await;
        }
        ForwardedEvent::Log { params: line } => {
            let _ = ctx.log(line.level, line.logger.as_deref(), line.data).await;
        }
    }
}

/// −32602 with `data.reason` `held-elsewhere`.
fn held_elsewhere(message: &str) -> HandlerError {
    refused(message, "held-elsewhere")
}

/// −32602 with `data.reason` `held-call-gone`.
fn gone(message: &str) -> HandlerError {
    refused(message, "held-call-gone")
}

fn refused(message: &str, reason: &str) -> HandlerError {
    HandlerError::Rpc(ErrorObject {
        code: smcp_proto::error::INVALID_PARAMS,
        message: format!("requestState: {message}"),
        data: Some(serde_json::json!({ "reason": reason })),
    })
}

/// −32021 for the capability at `path` (`["elicitation", "url"]`).
fn missing(path: &[&str]) -> HandlerError {
    let mut required = serde_json::Map::new();
    for name in path.iter().rev() {
        let mut outer = serde_json::Map::new();
        outer.insert((*name).to_owned(), Value::Object(required));
        required = outer;
    }
    HandlerError::Rpc(ErrorObject::missing_required_client_capability(
        format!(
            "the upstream asks for input this client did not declare ({})",
            path.join(".")
        ),
        required,
    ))
}

/// Cancels the upstream request when dropped while armed.
struct CancelOnDrop(Option<CancellationToken>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(cancel) = self.0.take()
            && !cancel.is_cancelled()
        {
            tracing::debug!("the client request ended first; cancelling the upstream call");
            cancel.cancel();
        }
    }
}

/// The client capability a question needs, as a path into the declared capabilities.
fn capability_of(question: &InputRequest) -> &'static [&'static str] {
    use smcp_client::proto::client::elicitation::ElicitRequestParams;
    match question {
        InputRequest::Elicit(ElicitRequestParams::Url(_)) => &["elicitation", "url"],
        InputRequest::Elicit(_) => &["elicitation"],
        InputRequest::CreateMessage(_) => &["sampling"],
        InputRequest::ListRoots(_) => &["roots"],
    }
}

/// Removes expired holds, cancelling their upstream requests.
fn sweep(held: &mut HashMap<String, Held>) {
    let now = Instant::now();
    held.retain(|_, h| {
        let keep = h.expires > now;
        if !keep {
            h.call.cancel.cancel();
        }
        keep
    });
}

pub(crate) fn random_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // Unique within the process is enough to name a call; the seal protects it.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        bytes[..8].copy_from_slice(&n.to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
