//! The upstream client's [`InputHandler`]: an upstream's question (elicitation, sampling,
//! roots) is sent to the call it belongs to (`held.rs`), which asks the gateway's client, and
//! the answer comes back here.
//!
//! Which call a question belongs to: the upstream client asks from inside the call's own task
//! when the question came on that call's stream (a 2026-07-28 `InputRequiredResult`, a 2025
//! session's POST stream), and the task carries its link ([`CALL`]). A question that came
//! elsewhere (a 2025 stdio server writes its requests on the one output, naming no call) goes
//! to the only call in flight to that upstream; with several in flight it cannot be placed
//! and is refused, which the upstream sees as an error answer.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult};
use smcp_client::proto::client::roots::{ListRootsRequestParams, ListRootsResult};
use smcp_client::proto::client::sampling::{CreateMessageRequestParams, CreateMessageResult};
use smcp_client::{BoxFuture, InputHandler, InputHandlerError, InputKinds};
use smcp_proto::patterns::mrtr::InputRequest;
use tokio::sync::oneshot;

use crate::held::{Event, Link};

tokio::task_local! {
    /// The link of the upstream call the current task runs.
    pub(crate) static CALL: Link;
}

/// One upstream's input handler.
#[derive(Debug)]
pub(crate) struct Bridge {
    upstream: String,
    wait: Duration,
    in_flight: Mutex<Vec<(u64, Link)>>,
    next: std::sync::atomic::AtomicU64,
}

/// A call counted in flight until dropped.
#[derive(Debug)]
pub(crate) struct InFlight<'a> {
    bridge: &'a Bridge,
    id: u64,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.bridge
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(id, _)| *id != self.id);
    }
}

impl Bridge {
    /// `wait`: how long a question waits for its answer (the hold's lifetime).
    pub(crate) fn new(upstream: &str, wait: Duration) -> Self {
        Self {
            upstream: upstream.to_owned(),
            wait,
            in_flight: Mutex::new(Vec::new()),
            next: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Counts a call in flight while the guard lives.
    pub(crate) fn enter(&self, link: Link) -> InFlight<'_> {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((id, link));
        InFlight { bridge: self, id }
    }

    fn link(&self) -> Result<Link, InputHandlerError> {
        if let Ok(link) = CALL.try_with(Clone::clone) {
            return Ok(link);
        }
        let in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match &in_flight[..] {
            [(_, link)] => Ok(link.clone()),
            [] => Err(InputHandlerError::new(
                "the gateway has no call in flight to this server to ask for",
            )),
            _ => Err(InputHandlerError::new(
                "the gateway cannot tell which of several calls in flight this request \
                 belongs to (send it on the call's own stream, or limit the upstream to one \
                 call at a time)",
            )),
        }
    }

    async fn ask(&self, question: InputRequest) -> Result<Value, InputHandlerError> {
        let link = self.link()?;
        let method = question.method();
        tracing::debug!(upstream = %self.upstream, method, "upstream asks the client");
        let (tx, rx) = oneshot::channel();
        link.send(Event::Ask(question, tx))
            .await
            .map_err(|_| InputHandlerError::new("the call this request belongs to has ended"))?;
        match tokio::time::timeout(self.wait, rx).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(InputHandlerError::new(format!(
                "the client's {method} answer did not come (the call was cancelled or expired)"
            ))),
            Err(_) => Err(InputHandlerError::new(format!(
                "the client did not answer {method} within {}s",
                self.wait.as_secs()
            ))),
        }
    }
}

fn parse<T: serde::de::DeserializeOwned>(value: Value, what: &str) -> Result<T, InputHandlerError> {
    serde_json::from_value(value)
        .map_err(|e| InputHandlerError::new(format!("the client's {what} answer: {e}")))
}

/// The handler the upstream client is built with; one per upstream, shared by its restarts.
#[derive(Debug, Clone)]
pub(crate) struct BridgeHandler(pub(crate) std::sync::Arc<Bridge>);

impl InputHandler for BridgeHandler {
    fn kinds(&self) -> InputKinds {
        // Declared upstream as the gateway's own; whether the client behind it can answer is
        // checked per call, when the question is put to it.
        InputKinds::all()
    }

    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, InputHandlerError>> {
        Box::pin(async move {
            let answer = self.0.ask(InputRequest::Elicit(params)).await?;
            parse(answer, "elicitation")
        })
    }

    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, InputHandlerError>> {
        Box::pin(async move {
            let answer = self.0.ask(InputRequest::CreateMessage(params)).await?;
            parse(answer, "sampling")
        })
    }

    fn list_roots(
        &self,
        params: Option<ListRootsRequestParams>,
    ) -> BoxFuture<'_, Result<ListRootsResult, InputHandlerError>> {
        Box::pin(async move {
            let answer = self.0.ask(InputRequest::ListRoots(params)).await?;
            parse(answer, "roots")
        })
    }
}
