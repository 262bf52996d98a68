//! The seam for a session's live traffic that must reach the instance holding it: a client's
//! response to a server-to-client request, a `notifications/cancelled` for a request in
//! flight, and the events of a stream resumed with `Last-Event-ID` on another instance.
//!
//! The instance that mints an id embeds its tag in it (server-to-client request ids
//! `smcp-<tag>-<n>`, SSE event ids `<tag>_<stream>-<n>`), so the owner of what arrives is read
//! from the id itself: traffic for this instance is served locally with no round trip, the
//! rest goes through the [`SessionRelay`]. The default, [`LocalRelay`], relays nothing (one
//! instance, or a load balancer that is sticky on `Mcp-Session-Id`): its tag is empty and the
//! ids are those a single instance writes (`smcp-<n>`, `<stream>-<n>`).
//! `smcp_redis::RedisSessionRelay` is the shared one.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::RequestId;

use crate::core::future::BoxFuture;

/// Longest instance tag.
pub const MAX_TAG: usize = 64;

/// Whether `tag` may be an instance tag in an id: 1 to [`MAX_TAG`] ASCII lowercase letters and
/// digits.
pub fn valid_tag(tag: &str) -> bool {
    !tag.is_empty()
        && tag.len() <= MAX_TAG
        && tag
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
}

/// Why a relay could not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RelayError {
    /// The owning instance is not there (stopped, or never existed): what it held is gone.
    #[error("the instance holding it is gone")]
    Gone,
    /// The shared channel failed or did not answer in time; the owner may still be there.
    #[error("the relay is unavailable: {0}")]
    Unavailable(String),
}

/// A client's response to a server-to-client request, on its way to the instance that sent
/// the request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelayedAnswer {
    /// The session (`Mcp-Session-Id`).
    pub session: String,
    /// The server-to-client request's id (`smcp-<tag>-<n>`).
    pub id: String,
    /// The client's result, when it answered with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The client's error, when it answered with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

/// Which stream of which session, written by which instance.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StreamKey {
    /// The session (`Mcp-Session-Id`).
    pub session: String,
    /// The tag of the instance that writes the stream.
    pub owner: String,
    /// The stream's number on that instance.
    pub stream: u64,
}

/// What a stream carries, as a resuming instance needs to know it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamKind {
    /// The session's standalone (GET) stream: change notifications, which any instance can
    /// go on producing.
    Standalone,
    /// The stream of the client request with this id: its events, server-to-client requests
    /// and response, which only the owner produces.
    Request(RequestId),
}

/// One event appended to a shared stream log.
#[derive(Debug, Clone)]
pub struct LoggedEvent {
    /// The stream.
    pub key: StreamKey,
    /// The event's number in the stream (from 1).
    pub seq: u64,
    /// What the stream is: with the stream's first event only.
    pub opens: Option<StreamKind>,
    /// The event as the transport frames it (SSE: its `id:` and `data:` lines).
    pub frame: Vec<u8>,
    /// Events to keep per stream, at least (older ones may be trimmed).
    pub keep: usize,
}

/// What a shared stream log holds after a point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tail {
    /// What the stream is.
    pub kind: StreamKind,
    /// The events after the point, oldest first, each with its number.
    pub events: Vec<(u64, Vec<u8>)>,
    /// The owner closed the stream: no event follows the last.
    pub ended: bool,
}

/// Live session traffic that must reach the instance owning it (feature `legacy`).
///
/// Object safe. Set with [`ServerBuilder::session_relay`](crate::ServerBuilder::session_relay);
/// the default is [`LocalRelay`]. The server calls it only for traffic that is not its own:
/// an instance serving its own session's responses, cancellations and resumptions makes no
/// call through it, except [`record`](Self::record) of each event when
/// [`shares_log`](Self::shares_log) (so that another instance can replay it).
pub trait SessionRelay: Send + Sync + fmt::Debug + 'static {
    /// This instance's tag in the ids it mints: empty when nothing is relayed, else a
    /// [`valid_tag`] unique among the instances.
    fn instance(&self) -> &str;

    /// Called once, when the server is built: where traffic relayed to this instance goes.
    fn attach(&self, inbox: Arc<dyn RelayInbox>);

    /// Delivers `answer` to instance `owner`: `Ok(true)` once the owner took it, `Ok(false)`
    /// when the owner does not wait for it (unknown id, another session, answered already).
    /// Bounded in time: [`RelayError::Unavailable`] when the owner did not answer in time.
    fn forward(&self, owner: &str, answer: RelayedAnswer) -> BoxFuture<Result<bool, RelayError>>;

    /// Asks every other instance to cancel the client request `id` of `session`, if it runs
    /// there. Returns once the request is sent, not once it is acted upon.
    fn cancel(&self, session: &str, id: &RequestId) -> BoxFuture<Result<(), RelayError>>;

    /// Whether streams are logged where other instances read them ([`record`](Self::record),
    /// [`read`](Self::read)). Default `false`.
    fn shares_log(&self) -> bool {
        false
    }

    /// Appends an event to the shared log of its stream (before it is sent to the client).
    fn record(&self, event: LoggedEvent) -> BoxFuture<Result<(), RelayError>> {
        let _ = event;
        Box::pin(std::future::ready(Ok(())))
    }

    /// Marks a request stream ended in the shared log: its response was written.
    fn close(&self, key: StreamKey) -> BoxFuture<Result<(), RelayError>> {
        let _ = key;
        Box::pin(std::future::ready(Ok(())))
    }

    /// The logged events of `key` after `after`, at most `max`; `None` when the log does not
    /// hold the stream or no longer reaches back to `after`.
    fn read(
        &self,
        key: StreamKey,
        after: u64,
        max: usize,
    ) -> BoxFuture<Result<Option<Tail>, RelayError>> {
        let _ = (key, after, max);
        Box::pin(std::future::ready(Ok(None)))
    }

    /// Whether instance `owner` is still there.
    fn alive(&self, owner: &str) -> BoxFuture<Result<bool, RelayError>> {
        let _ = owner;
        Box::pin(std::future::ready(Ok(false)))
    }
}

/// The default relay: nothing leaves the instance. Responses, cancellations and resumptions
/// that are not this instance's are treated as unknown.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalRelay;

impl SessionRelay for LocalRelay {
    fn instance(&self) -> &str {
        ""
    }

    fn attach(&self, _inbox: Arc<dyn RelayInbox>) {}

    fn forward(&self, _owner: &str, _answer: RelayedAnswer) -> BoxFuture<Result<bool, RelayError>> {
        Box::pin(std::future::ready(Err(RelayError::Gone)))
    }

    fn cancel(&self, _session: &str, _id: &RequestId) -> BoxFuture<Result<(), RelayError>> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Where a relay hands what reaches this instance: the sessions it holds. The server gives
/// its relay one with [`SessionRelay::attach`].
pub trait RelayInbox: Send + Sync + fmt::Debug + 'static {
    /// Delivers a client's response to the server-to-client request waiting for it here;
    /// `false` when none is (unknown id or session, answered already, timed out).
    fn answer(&self, answer: RelayedAnswer) -> bool;

    /// Cancels the client request `id` of `session` if it runs here; `true` when it did.
    fn cancel(&self, session: &str, id: &RequestId) -> bool;
}

/// Where an id minted by [`Live`](super::Live) says its owner is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Owner<'a> {
    /// This instance.
    Here,
    /// Another instance, by tag.
    Other(&'a str),
    /// Not an id any instance mints.
    Malformed,
}

/// The owner of server-to-client request id `id`, as an instance tagged `mine` reads it. An
/// instance without a tag (no relay) owns the untagged ids and knows no other instance.
pub(crate) fn request_owner<'a>(id: &'a RequestId, mine: &str) -> Owner<'a> {
    let RequestId::String(id) = id else {
        return Owner::Malformed;
    };
    let Some(rest) = id.strip_prefix("smcp-") else {
        return Owner::Malformed;
    };
    let (tag, n) = match rest.rsplit_once('-') {
        Some((tag, n)) => (tag, n),
        None => ("", rest),
    };
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || n.len() > 20 {
        return Owner::Malformed;
    }
    if tag == mine {
        Owner::Here
    } else if valid_tag(tag) && !mine.is_empty() {
        Owner::Other(tag)
    } else {
        Owner::Malformed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_short_lowercase_alphanumerics() {
        assert!(valid_tag("a1"));
        assert!(valid_tag(&"f".repeat(64)));
        assert!(!valid_tag(""));
        assert!(!valid_tag(&"f".repeat(65)));
        assert!(!valid_tag("A1"));
        assert!(!valid_tag("a-1"));
        assert!(!valid_tag("a_1"));
    }

    #[test]
    fn the_owner_of_a_request_id_is_read_strictly() {
        let id = |s: &str| RequestId::from(s);
        assert_eq!(request_owner(&id("smcp-7"), ""), Owner::Here);
        assert_eq!(request_owner(&id("smcp-ab12-7"), ""), Owner::Malformed);
        assert_eq!(request_owner(&id("smcp-ab12-7"), "ab12"), Owner::Here);
        assert_eq!(
            request_owner(&id("smcp-cd34-7"), "ab12"),
            Owner::Other("cd34")
        );
        // A single instance's form is not another instance's.
        assert_eq!(request_owner(&id("smcp-7"), "ab12"), Owner::Malformed);
        for bad in [
            "smcp-",
            "smcp-ab12-",
            "smcp-AB-1",
            "smcp-a_b-1",
            "x-ab-1",
            "smcp-ab-1x",
        ] {
            assert_eq!(request_owner(&id(bad), "ab12"), Owner::Malformed, "{bad}");
        }
        assert_eq!(request_owner(&RequestId::from(7), ""), Owner::Malformed);
        let long = format!("smcp-{}-1", "a".repeat(65));
        assert_eq!(request_owner(&id(&long), "ab12"), Owner::Malformed);
    }

    #[tokio::test]
    async fn the_local_relay_forwards_nothing() {
        let relay = LocalRelay;
        assert_eq!(relay.instance(), "");
        assert!(!relay.shares_log());
        let answer = RelayedAnswer {
            session: "s".into(),
            id: "smcp-ab-1".into(),
            result: Some(Value::Null),
            error: None,
        };
        assert_eq!(relay.forward("ab", answer).await, Err(RelayError::Gone));
        assert_eq!(relay.cancel("s", &RequestId::from(1)).await, Ok(()));
        let key = StreamKey {
            session: "s".into(),
            owner: "ab".into(),
            stream: 1,
        };
        assert_eq!(relay.read(key, 0, 10).await, Ok(None));
        assert_eq!(relay.alive("ab").await, Ok(false));
    }
}
