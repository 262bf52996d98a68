//! One request of a legacy session, served by the same dispatch (and so the same handlers)
//! as a 2026-07-28 request.
//!
//! The request goes to dispatch as it was read (`request.rs`), typed, with a `_meta` made
//! from the session: the client capabilities of its `initialize` (so required-capability
//! checks hold) and its `clientInfo`, after the request's own members; the request's own
//! `progressToken` and the session's log level are admitted as a 2026-07-28 request's are.
//! A handler that asks for input (`input.ask(..)`) ends its round with `input_required`
//! exactly as under 2026-07-28; here each input request becomes a JSON-RPC request to the
//! client (`elicitation/create`, `sampling/createMessage`, `roots/list`) on the request's
//! stream, with an id the server chose, and the client's responses (POSTed back,
//! `Live::answer`) become the next round's `inputResponses`, with the sealed `requestState`
//! of the round before: the retry a 2026 client would send, so the handler sees the same
//! input either way. Rounds are bounded by the MRTR round limit, each wait by the response
//! timeout and the session's bound on waiting requests. The response is written by the one
//! writer for the session's era (`core/reply.rs`).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::FutureExt as _;
use serde_json::{Map, Value};
use smcp_proto::basic::LoggingLevel;
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::{ClientRequest, IncomingRequest, InvalidParams, RequestId};
use smcp_proto::patterns::mrtr::InputRequiredResult;
use smcp_proto::x_mcp_header::HeaderParam;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::live::{Live, TooManyPending};
use super::{Legacy, SessionRequest};
use crate::core::context::{EventSink, Framing, Principal};
use crate::core::dispatch::{self, Admission, Call, Dispatch, ParamMirror, RateCheck};
use crate::core::error::SERVER_BUSY;
use crate::core::meta::Admitted;
use crate::core::reply::{Era, Finished, Reply, caught, era_finished_bytes, panicked};
use crate::core::server::Shared;
use crate::core::tools::BoxFuture;

/// Events reach the session's stream as bare JSON; the stream frames them with their ids.
const RAW: Framing = Framing {
    prefix: b"",
    suffix: b"",
};

/// No second copy of tool arguments in the earlier revisions: nothing to check.
struct NoMirror;

impl ParamMirror for NoMirror {
    fn check_tool_arguments(
        &self,
        _params: &[HeaderParam],
        _arguments: &Map<String, Value>,
    ) -> Result<(), ErrorObject> {
        Ok(())
    }
}

/// One client request of a session, being served.
pub(crate) struct Exchange {
    pub(crate) shared: Arc<Shared>,
    pub(crate) legacy: Arc<Legacy>,
    pub(crate) live: Arc<Live>,
    /// The session's log level (`logging/setLevel`), as of the request's arrival.
    pub(crate) log_level: Option<LoggingLevel>,
    /// The request, read once.
    pub(crate) request: SessionRequest,
    pub(crate) principal: Option<Principal>,
    /// What the request's credentials allow.
    pub(crate) access: Option<crate::core::access::Access>,
    pub(crate) cancel: CancellationToken,
    /// Whether the response may stream (the client accepts SSE, or the transport is one):
    /// the handler then gets a channel for its events when it may send any.
    pub(crate) may_stream: bool,
    /// The stream the request's events, server-to-client requests and response go on, once
    /// open; `None` while the response can still be one JSON document.
    pub(crate) stream: Option<u64>,
    /// Whether the rate limits apply to the request's first round (its later rounds are the
    /// same request): `Skip` when the transport asked them already.
    pub(crate) rate: RateCheck,
}

/// The answers of one round: `inputResponses` and the `requestState` to send back.
type Answers = (Map<String, Value>, Option<String>);

/// The params of one round, and whether they carry multi round-trip members.
type Params = (Result<ClientRequest, InvalidParams>, bool);

/// One round handed to dispatch.
enum Round {
    /// The handler runs; what it emits arrives on the receiver, when it may emit.
    Running(BoxFuture<Finished>, Option<mpsc::Receiver<Bytes>>),
    /// The round has its outcome; the receiver may still hold what was emitted before it.
    Ended(Finished, Option<mpsc::Receiver<Bytes>>),
}

/// A request whose first round did not end at once with nothing sent before its response:
/// it goes on, once its stream is open, with [`Exchange::finish`].
pub(crate) struct Going {
    round: Round,
    progress_token: Option<Value>,
}

impl Exchange {
    /// Serves the request to its end: the JSON-RPC response, or `None` when it was cancelled
    /// (no response is sent then). The stream, if the response may have one, is open.
    pub(crate) async fn run(mut self) -> Option<Vec<u8>> {
        match self.start() {
            Ok(bytes) => Some(bytes),
            Err(going) => self.finish(*going).await,
        }
    }

    /// The first round, polled once: `Ok` with the response when it ended with nothing sent
    /// before it (most handlers do), so that no stream needs to be opened; else what goes on
    /// in [`Exchange::finish`], once the stream (if any) is open.
    pub(crate) fn start(&mut self) -> Result<Vec<u8>, Box<Going>> {
        let progress_token = match self.request.progress_token() {
            Ok(token) => token,
            Err(error) => return Ok(self.bytes(Err(error))),
        };
        let Some(params) = self.request.take_params() else {
            return Ok(self.bytes(Err(ErrorObject::internal("the request was served already"))));
        };
        let round = match self.dispatch(params, progress_token.clone()) {
            Round::Running(mut fut, rx) => {
                match AssertUnwindSafe(&mut fut).catch_unwind().now_or_never() {
                    Some(outcome) => Round::Ended(outcome.unwrap_or_else(|_| panicked()), rx),
                    None => Round::Running(fut, rx),
                }
            }
            ended @ Round::Ended(..) => ended,
        };
        match round {
            Round::Ended(outcome, rx)
                if !matches!(outcome, Ok(Reply::InputRequired(_)))
                    && rx.as_ref().is_none_or(mpsc::Receiver::is_empty) =>
            {
                Ok(self.bytes(outcome))
            }
            round => Err(Box::new(Going {
                round,
                progress_token,
            })),
        }
    }

    /// Serves the request from where [`Exchange::start`] left it to its end: the response, or
    /// `None` when it was cancelled.
    pub(crate) async fn finish(mut self, going: Going) -> Option<Vec<u8>> {
        let outcome = self.rounds(going).await?;
        Some(self.bytes(outcome))
    }

    /// The response for `outcome`, written by the session era's writer.
    fn bytes(&self, outcome: Finished) -> Vec<u8> {
        era_finished_bytes(
            Era::Session,
            &self.shared.server_meta,
            self.request.id.clone(),
            outcome,
        )
    }

    /// Waits for each round, asks the client for the input a round requires and retries.
    async fn rounds(&mut self, going: Going) -> Option<Finished> {
        let Going {
            mut round,
            progress_token,
        } = going;
        let mut asked = 0u32;
        loop {
            let ir = match self.until_done(round).await? {
                Ok(Reply::InputRequired(ir)) => ir,
                other => return Some(other),
            };
            asked += 1;
            if asked > self.shared.mrtr.max_rounds {
                return Some(Err(ErrorObject::internal(format!(
                    "the request asked for input more than {} times",
                    self.shared.mrtr.max_rounds
                ))));
            }
            let (responses, state) = match self.ask(ir).await {
                Ok(Some(answers)) => answers,
                Ok(None) => return None,
                Err(error) => return Some(Err(error)),
            };
            let params = match self.request.retry(responses, state) {
                Ok(retry) => (retry, true),
                Err(error) => return Some(Err(error)),
            };
            self.rate = RateCheck::Skip;
            round = self.dispatch(params, progress_token.clone());
        }
    }

    /// One round handed to dispatch, with the session's `_meta` and log level.
    fn dispatch(&self, (params, mrtr_members): Params, progress_token: Option<Value>) -> Round {
        let admitted = Admitted {
            log_level: self.log_level,
            progress_token,
            // The session's `_meta` is given whole (the capabilities are the session's).
            client_capabilities: None,
        };
        // A channel for the handler's events only when it may send any (as over 2026-07-28):
        // its server-to-client requests go on the stream without one.
        let (tx, rx) = if self.may_stream && admitted.may_emit(self.shared.features.logging) {
            let (tx, rx) = mpsc::channel(self.shared.limits.event_buffer.max(1));
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let admission = Admission {
            admitted,
            events: tx.map(|tx| EventSink { tx, framing: RAW }),
            cancel: self.cancel.clone(),
            principal: self.principal.clone(),
            access: self.access.clone(),
            rate: self.rate,
        };
        let request = IncomingRequest {
            id: self.request.id.clone(),
            method: self.request.method.clone(),
            meta: None,
            params,
            mrtr_members,
        };
        let call = Call::with_meta(
            &self.shared,
            request,
            &self.request.body,
            admission,
            &NoMirror,
            self.request.meta(&self.live.meta),
        );
        match dispatch::dispatch(&self.shared, call).ungated() {
            // A handler that finished at once emitted nothing through its channel.
            Dispatch::Ready(outcome) => Round::Ended(outcome, None),
            Dispatch::Listen(..) => Round::Ended(
                Err(ErrorObject::method_not_found(&self.request.method)),
                None,
            ),
            Dispatch::Pending(fut) => Round::Running(fut, rx),
            Dispatch::Gated(..) => Round::Ended(Err(ErrorObject::internal("gated")), None),
        }
    }

    /// Waits for a round's outcome, forwarding what the handler emits to the stream; `None`
    /// when cancelled.
    async fn until_done(&self, round: Round) -> Option<Finished> {
        let (fut, rx) = match round {
            Round::Running(fut, rx) => (fut, rx),
            Round::Ended(outcome, rx) => {
                if let (Some(mut rx), Some(stream)) = (rx, self.stream) {
                    while let Ok(event) = rx.try_recv() {
                        self.live.emit(stream, &event).await;
                    }
                }
                return Some(outcome);
            }
        };
        let mut fut = std::pin::pin!(caught(fut));
        let (Some(mut rx), Some(stream)) = (rx, self.stream) else {
            return tokio::select! {
                biased;
                () = self.cancel.cancelled() => self.grace(fut).await,
                outcome = &mut fut => Some(outcome),
            };
        };
        loop {
            tokio::select! {
                biased;
                () = self.cancel.cancelled() => return self.grace(fut).await,
                Some(event) = rx.recv() => {
                    self.live.emit(stream, &event).await;
                }
                outcome = &mut fut => {
                    while let Ok(event) = rx.try_recv() {
                        self.live.emit(stream, &event).await;
                    }
                    return Some(outcome);
                }
            }
        }
    }

    /// A cancelled handler gets the cancellation grace to end on its own; it is then dropped.
    /// Either way no response is sent.
    async fn grace<F: Future<Output = Finished>>(
        &self,
        fut: std::pin::Pin<&mut F>,
    ) -> Option<Finished> {
        let _ = tokio::time::timeout(self.shared.limits.cancel_grace, fut).await;
        None
    }

    /// Sends the round's input requests to the client and waits for every answer; `Ok(None)`
    /// when the request was cancelled meanwhile.
    async fn ask(&self, ir: InputRequiredResult) -> Result<Option<Answers>, ErrorObject> {
        let requests = ir.input_requests.unwrap_or_default();
        if requests.is_empty() {
            return Ok(Some((Map::new(), ir.request_state)));
        }
        let Some(stream) = self.stream else {
            return Err(ErrorObject::internal(
                "the request needs input from the client, and its response cannot stream \
                 (the request's Accept does not allow text/event-stream)",
            ));
        };
        let mut waiting = Vec::with_capacity(requests.len());
        let forget_all = |waiting: &[(String, &'static str, RequestId, _)]| {
            for (_, _, id, _) in waiting {
                self.live.forget(id);
            }
        };
        for (key, request) in requests {
            let (id, rx) = match self.live.request() {
                Ok(pending) => pending,
                Err(TooManyPending(max)) => {
                    forget_all(&waiting);
                    return Err(ErrorObject::new(
                        SERVER_BUSY,
                        format!("the session already waits for {max} responses from the client"),
                    ));
                }
            };
            let mut message = match serde_json::to_value(&request) {
                Ok(Value::Object(m)) => m,
                _ => Map::new(),
            };
            message.insert("jsonrpc".to_owned(), Value::from("2.0"));
            message.insert("id".to_owned(), id_value(&id));
            let bytes = serde_json::to_vec(&message).unwrap_or_default();
            self.live.emit(stream, &bytes).await;
            waiting.push((key, request.method(), id, rx));
        }
        let timeout = self.legacy.config.response_timeout;
        let mut responses = Map::new();
        let mut pending = waiting.into_iter();
        while let Some((key, method, id, rx)) = pending.next() {
            let answer = tokio::select! {
                biased;
                () = self.cancel.cancelled() => None,
                answer = tokio::time::timeout(timeout, rx) => Some(answer),
            };
            let rest: Vec<_> = match &answer {
                Some(Ok(Ok(Ok(_)))) => Vec::new(),
                _ => {
                    self.live.forget(&id);
                    pending.by_ref().collect()
                }
            };
            forget_all(&rest);
            match answer {
                None => return Ok(None),
                Some(Ok(Ok(Ok(result)))) => {
                    responses.insert(key, result);
                }
                Some(Ok(Ok(Err(error)))) => {
                    return Err(ErrorObject::internal(format!(
                        "the client answered {method} with error {}: {}",
                        error.code, error.message
                    )));
                }
                Some(Ok(Err(_))) => {
                    return Err(ErrorObject::internal(format!(
                        "the session ended before the client answered {method}"
                    )));
                }
                Some(Err(_)) => {
                    return Err(ErrorObject::internal(format!(
                        "the client did not answer {method} within {} s",
                        timeout.as_secs()
                    )));
                }
            }
        }
        Ok(Some((responses, ir.request_state)))
    }
}

pub(crate) fn id_value(id: &RequestId) -> Value {
    match id {
        RequestId::Number(n) => Value::Number(n.clone()),
        RequestId::String(s) => Value::String(s.clone()),
    }
}
