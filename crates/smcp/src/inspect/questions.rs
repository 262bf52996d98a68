//! The server's questions (MRTR elicitation and sampling) answered on the page: each one is
//! published on the feed, tagged with the call it came from, and waits for the page's answer
//! (or the user's silence, bounded by [`ANSWER_TIMEOUT`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult};
use smcp_client::proto::client::sampling::{CreateMessageRequestParams, CreateMessageResult};
use smcp_client::{BoxFuture, InputHandler, InputHandlerError, InputKinds};
use tokio::sync::oneshot;

use super::feed::Feed;
use super::scope;

/// How long a question waits for the person at the page.
pub(crate) const ANSWER_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// The questions waiting for an answer. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Questions {
    feed: Feed,
    pending: Arc<Mutex<HashMap<String, oneshot::Sender<Value>>>>,
    next: Arc<AtomicU64>,
}

/// Why an answer was not taken.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum AnswerError {
    /// No question waits under that id (answered, timed out, or never asked).
    Unknown,
}

impl Questions {
    pub(crate) fn new(feed: Feed) -> Self {
        Self {
            feed,
            pending: Arc::default(),
            next: Arc::new(AtomicU64::new(1)),
        }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Value>>> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Gives the page's `answer` to question `id`.
    pub(crate) fn answer(&self, id: &str, answer: Value) -> Result<(), AnswerError> {
        let sender = self.pending().remove(id).ok_or(AnswerError::Unknown)?;
        self.feed
            .publish(&json!({"type": "question-closed", "id": id}));
        sender.send(answer).map_err(|_| AnswerError::Unknown)
    }

    /// Publishes a question and waits for its answer.
    async fn ask(&self, kind: &str, params: Value) -> Result<Value, InputHandlerError> {
        let id = format!("q{}", self.next.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        self.pending().insert(id.clone(), tx);
        self.feed.publish(&json!({
            "type": "question", "id": id, "call": scope::current(), "kind": kind, "params": params,
        }));
        let answer = tokio::time::timeout(ANSWER_TIMEOUT, rx).await;
        if self.pending().remove(&id).is_some() {
            // Not answered (timed out, or the call went away): the page drops it.
            self.feed
                .publish(&json!({"type": "question-closed", "id": id}));
        }
        match answer {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(InputHandlerError::new("the inspector stopped")),
            Err(_) => Err(InputHandlerError::new(format!(
                "nobody answered on the inspector page within {} minutes",
                ANSWER_TIMEOUT.as_secs() / 60
            ))),
        }
    }
}

/// The input handler of the inspector's client.
pub(crate) struct PageHandler(pub(crate) Questions);

impl InputHandler for PageHandler {
    fn kinds(&self) -> InputKinds {
        InputKinds {
            elicitation_form: true,
            elicitation_url: true,
            sampling: true,
            ..InputKinds::default()
        }
    }

    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, InputHandlerError>> {
        Box::pin(async move {
            let params =
                serde_json::to_value(&params).map_err(|e| InputHandlerError::new(e.to_string()))?;
            let answer = self.0.ask("elicitation", params).await?;
            serde_json::from_value(answer).map_err(|e| {
                InputHandlerError::new(format!(
                    "the page's answer is not an elicitation result: {e}"
                ))
            })
        })
    }

    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, InputHandlerError>> {
        Box::pin(async move {
            let params =
                serde_json::to_value(&params).map_err(|e| InputHandlerError::new(e.to_string()))?;
            let answer = self.0.ask("sampling", params).await?;
            if answer.get("action").and_then(Value::as_str) != Some("accept") {
                return Err(InputHandlerError::new(
                    "the user declined the sampling request",
                ));
            }
            let result = answer.get("result").cloned().unwrap_or(Value::Null);
            serde_json::from_value(result).map_err(|e| {
                InputHandlerError::new(format!("the page's answer is not a sampling result: {e}"))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn a_question_waits_for_the_pages_answer_tagged_with_its_call() {
        let feed = Feed::new();
        let (_, mut events) = feed.subscribe();
        let questions = Questions::new(feed);
        let asking = questions.clone();
        let task = tokio::spawn(scope::CALL.scope("c7".to_owned(), async move {
            asking.ask("elicitation", json!({"message": "name?"})).await
        }));
        let event: Value = serde_json::from_str(&events.recv().await.unwrap()).unwrap();
        assert_eq!(event["type"], "question");
        assert_eq!(event["call"], "c7");
        let id = event["id"].as_str().unwrap().to_owned();
        questions.answer(&id, json!({"action": "decline"})).unwrap();
        assert_eq!(task.await.unwrap().unwrap(), json!({"action": "decline"}));
        assert_eq!(questions.answer(&id, json!({})), Err(AnswerError::Unknown));
        let closed: Value = serde_json::from_str(&events.recv().await.unwrap()).unwrap();
        assert_eq!(closed, json!({"type": "question-closed", "id": id}));
    }
}
