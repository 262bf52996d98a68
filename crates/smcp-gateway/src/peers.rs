//! [`Peers`]: the seam by which a retry that lands on another gateway instance reaches the
//! one holding its call. A held call (an earlier revision's question in the middle of a
//! call) lives on one instance; its sealed `requestState` names that instance. With peers,
//! an instance that receives the retry forwards it there and answers the client with what
//! comes back: the result, the next question, or the error. Without peers, it is refused
//! (−32602, `held-elsewhere`).
//!
//! `RedisPeers` (feature `redis`) carries it over the Redis bus the instances share.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smcp_proto::error::ErrorObject;
use smcp_proto::patterns::mrtr::InputRequest;
use smcp_proto::patterns::progress::ProgressNotificationParams;
use smcp_proto::server::tools::CallToolResult;
use smcp_proto::server::utilities::logging::LoggingMessageNotificationParams;
use smcp_server::tools::BoxFuture;
use tokio_util::sync::CancellationToken;

/// A retry forwarded to the instance holding its call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForwardedRetry {
    /// The held call, as the retry's sealed `requestState` names it.
    pub call: String,
    /// The client's answer (its `inputResponses` entry); `None` when the retry carried none
    /// (the question is asked again).
    pub response: Option<Value>,
    /// The capabilities the retry's client declared (a later question needs them).
    pub capabilities: Map<String, Value>,
}

/// What the instance holding the call answers a forwarded retry with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub enum ForwardedOutcome {
    /// The call ended with this result.
    Complete {
        /// The upstream's result.
        result: CallToolResult,
    },
    /// The upstream asked again: the call is held there anew, under `call`.
    Asked {
        /// The new hold.
        call: String,
        /// The question.
        question: InputRequest,
    },
    /// The call failed as a tool does: the client gets a result with `isError`.
    ToolFailed {
        /// What went wrong.
        message: String,
    },
    /// The call failed, or the retry was refused (the JSON-RPC error the client gets).
    Failed {
        /// The JSON-RPC error.
        error: ErrorObject,
    },
}

/// What a forwarded call produces on its way to the outcome, sent back to the forwarding
/// instance for its client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "camelCase")]
pub enum ForwardedEvent {
    /// A progress notification of the upstream's.
    Progress {
        /// Its params (the forwarding instance puts its client's token).
        params: ProgressNotificationParams,
    },
    /// A log line of the upstream's.
    Log {
        /// Its params.
        params: LoggingMessageNotificationParams,
    },
}

/// Where a forwarded call's events go: bounded; an event that finds it full is dropped
/// (never the outcome).
pub type EventSink = tokio::sync::mpsc::Sender<ForwardedEvent>;

/// Why a forwarded retry got no outcome.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PeerError {
    /// The instance named is not reachable (it stopped, or restarted under a new id).
    #[error("the gateway instance holding the call is gone")]
    Gone,
    /// It did not answer in time.
    #[error("the gateway instance holding the call did not answer within {0:?}")]
    Timeout(Duration),
    /// The client went away first (the call there was cancelled).
    #[error("the retry was cancelled")]
    Cancelled,
    /// The transport between the instances failed.
    #[error("the link to the other gateway instances failed: {0}")]
    Link(String),
}

/// Serves the retries other instances forward here: the retry, a token cancelled when the
/// forwarding client goes away, and where the call's events go back.
pub type PeerHandler = Arc<
    dyn Fn(ForwardedRetry, CancellationToken, EventSink) -> BoxFuture<ForwardedOutcome>
        + Send
        + Sync,
>;

/// How gateway instances reach each other.
pub trait Peers: Send + Sync + 'static {
    /// This instance's id, named in the `requestState` of the calls it holds; stable for
    /// the life of the process and unique among the instances.
    fn instance(&self) -> &str;

    /// Sets the handler of retries forwarded here (the gateway sets it once, at start).
    fn serve(&self, handler: PeerHandler);

    /// Forwards `retry` to `instance` and waits, at most `within`, for its outcome; the
    /// call's events meanwhile go to `events`, all before the outcome. When `cancel` fires
    /// first, the call there is cancelled and [`PeerError::Cancelled`] returned.
    fn forward(
        &self,
        instance: &str,
        retry: ForwardedRetry,
        within: Duration,
        cancel: CancellationToken,
        events: EventSink,
    ) -> BoxFuture<Result<ForwardedOutcome, PeerError>>;
}

impl std::fmt::Debug for dyn Peers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peers")
            .field("instance", &self.instance())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn outcomes_travel_as_tagged_json() {
        let asked = ForwardedOutcome::Asked {
            call: "c2".to_owned(),
            question: serde_json::from_value(json!({
                "method": "elicitation/create",
                "params": {"mode": "form", "message": "Sure?",
                           "requestedSchema": {"type": "object", "properties": {}}}
            }))
            .unwrap(),
        };
        let text = serde_json::to_value(&asked).unwrap();
        assert_eq!(text["outcome"], "asked");
        assert_eq!(text["question"]["method"], "elicitation/create");
        assert_eq!(
            serde_json::from_value::<ForwardedOutcome>(text).unwrap(),
            asked
        );
        let failed = ForwardedOutcome::Failed {
            error: ErrorObject::invalid_params("nope"),
        };
        let back: ForwardedOutcome =
            serde_json::from_str(&serde_json::to_string(&failed).unwrap()).unwrap();
        assert_eq!(back, failed);
    }
}
