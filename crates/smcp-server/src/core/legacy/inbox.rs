//! The [`RelayInbox`] of a server: what a relay brings to this instance goes to the sessions
//! it holds live.

use std::sync::{Arc, Weak};

use smcp_proto::jsonrpc::RequestId;

use super::config::{Legacy, LegacyConfig};
use super::relay::{RelayInbox, RelayedAnswer, SessionRelay};
use super::store::SessionStore;

/// A server's sessions, their relay attached to them.
pub(crate) fn start(
    config: LegacyConfig,
    store: Option<Arc<dyn SessionStore>>,
    relay: Arc<dyn SessionRelay>,
) -> Arc<Legacy> {
    let legacy = Arc::new(Legacy::new(config, store, relay));
    legacy.relay.attach(Arc::new(SessionsInbox::new(&legacy)));
    legacy
}

/// The sessions of one server, as its relay's inbox.
#[derive(Debug)]
pub(crate) struct SessionsInbox {
    legacy: Weak<Legacy>,
}

impl SessionsInbox {
    pub(crate) fn new(legacy: &Arc<Legacy>) -> Self {
        Self {
            legacy: Arc::downgrade(legacy),
        }
    }
}

impl RelayInbox for SessionsInbox {
    fn answer(&self, answer: RelayedAnswer) -> bool {
        let Some(live) = self
            .legacy
            .upgrade()
            .and_then(|legacy| legacy.live_of(&answer.session))
        else {
            return false;
        };
        let outcome = match (answer.result, answer.error) {
            (_, Some(error)) => Err(error),
            (Some(result), None) => Ok(result),
            (None, None) => return false,
        };
        let taken = live.answer(&RequestId::from(answer.id), outcome);
        tracing::debug!(session = %live.id, taken, "relayed response delivered");
        taken
    }

    fn cancel(&self, session: &str, id: &RequestId) -> bool {
        let cancelled = self
            .legacy
            .upgrade()
            .and_then(|legacy| legacy.live_of(session))
            .is_some_and(|live| live.cancel(id));
        if cancelled {
            tracing::debug!(session, ?id, "relayed cancellation: request cancelled");
        }
        cancelled
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Mutex;

    use bytes::Bytes;
    use serde_json::{Map, Value, json};
    use tokio::sync::mpsc;

    use super::*;
    use crate::core::future::BoxFuture;
    use crate::core::legacy::relay::{LocalRelay, LoggedEvent, RelayError, StreamKind};
    use crate::core::legacy::session::RefusalKind;
    use crate::core::legacy::{SessionRecord, parse_event_id};

    fn record(id: &str) -> SessionRecord {
        SessionRecord {
            id: id.to_owned(),
            protocol_version: "2025-11-25".to_owned(),
            client_capabilities: Map::new(),
            client_info: None,
            initialized: true,
            log_level: None,
            subscriptions: BTreeSet::new(),
            principal: None,
        }
    }

    fn frame(id: &str, json: &[u8]) -> Bytes {
        let mut v = format!("{id}:").into_bytes();
        v.extend_from_slice(json);
        Bytes::from(v)
    }

    /// A relay tagged `me` that logs what it is asked; `peer` takes every answer, `gone` is
    /// not there, `slow` does not answer in time.
    #[derive(Debug, Default)]
    struct Recorder {
        logged: Mutex<Vec<LoggedEvent>>,
        forwarded: Mutex<Vec<(String, RelayedAnswer)>>,
        cancelled: Mutex<Vec<(String, RequestId)>>,
        inbox: Mutex<Option<Arc<dyn RelayInbox>>>,
    }

    impl SessionRelay for Arc<Recorder> {
        fn instance(&self) -> &str {
            "me"
        }
        fn attach(&self, inbox: Arc<dyn RelayInbox>) {
            *self.inbox.lock().unwrap() = Some(inbox);
        }
        fn forward(
            &self,
            owner: &str,
            answer: RelayedAnswer,
        ) -> BoxFuture<Result<bool, RelayError>> {
            let outcome = match owner {
                "peer" => Ok(true),
                "gone" => Err(RelayError::Gone),
                "slow" => Err(RelayError::Unavailable("timeout".into())),
                _ => Ok(false),
            };
            self.forwarded
                .lock()
                .unwrap()
                .push((owner.to_owned(), answer));
            Box::pin(std::future::ready(outcome))
        }
        fn cancel(&self, session: &str, id: &RequestId) -> BoxFuture<Result<(), RelayError>> {
            self.cancelled
                .lock()
                .unwrap()
                .push((session.to_owned(), id.clone()));
            Box::pin(std::future::ready(Ok(())))
        }
        fn shares_log(&self) -> bool {
            true
        }
        fn record(&self, event: LoggedEvent) -> BoxFuture<Result<(), RelayError>> {
            self.logged.lock().unwrap().push(event);
            Box::pin(std::future::ready(Ok(())))
        }
    }

    #[tokio::test]
    async fn with_the_local_relay_ids_are_a_single_instances_and_nothing_leaves() {
        let legacy = start(LegacyConfig::default(), None, Arc::new(LocalRelay));
        let live = legacy.live(&record("s"), frame);
        let (id, _rx) = live.request().unwrap();
        assert_eq!(id, RequestId::from("smcp-1"));
        let (tx, mut rx) = mpsc::channel(4);
        let stream = live.open_stream(tx, StreamKind::Request(RequestId::from(1)));
        assert!(live.emit(stream, b"{}").await);
        assert_eq!(rx.recv().await.unwrap(), Bytes::from_static(b"1-1:{}"));
        // Its own response is taken; one in another instance's form is unknown (400).
        assert_eq!(legacy.deliver(&live, &id, Ok(json!({}))).await, Ok(()));
        let foreign = RequestId::from("smcp-ab12-1");
        let refused = legacy
            .deliver(&live, &foreign, Ok(json!({})))
            .await
            .unwrap_err();
        assert_eq!(refused.kind, RefusalKind::BadRequest);
        assert_eq!(refused.error.code, -32600);
        assert!(
            refused.error.message.contains("sent no request with id"),
            "{}",
            refused.error.message
        );
        // A cancellation of a request not running here is a no-op.
        legacy
            .notification(
                Arc::new(record("s")),
                &live,
                "notifications/cancelled",
                Some(&json!({"requestId": 3})),
            )
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_relay_tags_the_ids_logs_every_event_first_and_routes_by_the_id() {
        let relay = Arc::new(Recorder::default());
        let legacy = start(LegacyConfig::default(), None, Arc::new(Arc::clone(&relay)));
        let live = legacy.live(&record("s"), frame);
        let (id, answer) = live.request().unwrap();
        assert_eq!(id, RequestId::from("smcp-me-1"));

        let (tx, mut rx) = mpsc::channel(4);
        let stream = live.open_stream(tx, StreamKind::Request(RequestId::from(9)));
        assert!(live.emit(stream, b"a").await);
        assert!(live.emit(stream, b"b").await);
        assert_eq!(rx.recv().await.unwrap(), Bytes::from_static(b"me_1-1:a"));
        let at = live.event_id(stream, 2);
        assert_eq!(at, "me_1-2");
        assert_eq!(parse_event_id(&at).unwrap().owner, "me");
        {
            let logged = relay.logged.lock().unwrap();
            assert_eq!(logged.len(), 2);
            assert_eq!(logged[0].key.owner, "me");
            assert_eq!(logged[0].key.session, "s");
            assert_eq!(logged[0].seq, 1);
            assert_eq!(logged[0].frame, b"me_1-1:a");
            assert_eq!(
                logged[0].opens,
                Some(StreamKind::Request(RequestId::from(9)))
            );
            assert_eq!(logged[1].opens, None);
        }

        // This instance's own response: no relay call.
        legacy
            .deliver(&live, &id, Ok(json!({"x": 1})))
            .await
            .unwrap();
        assert_eq!(answer.await.unwrap(), Ok(json!({"x": 1})));
        assert!(relay.forwarded.lock().unwrap().is_empty());
        // Another instance's: relayed to it, by the tag in the id.
        let theirs = RequestId::from("smcp-peer-4");
        legacy
            .deliver(&live, &theirs, Ok(json!(true)))
            .await
            .unwrap();
        let (owner, relayed) = relay.forwarded.lock().unwrap()[0].clone();
        assert_eq!(owner, "peer");
        assert_eq!(relayed.session, "s");
        assert_eq!(relayed.id, "smcp-peer-4");
        assert_eq!(relayed.result, Some(json!(true)));
        // Unknown at the owner: 400; owner gone: 400 naming it; not reached: 503.
        let status = |id: &str| {
            let legacy = Arc::clone(&legacy);
            let live = Arc::clone(&live);
            let id = RequestId::from(id);
            async move {
                legacy
                    .deliver(&live, &id, Ok(Value::Null))
                    .await
                    .unwrap_err()
            }
        };
        let unknown = status("smcp-other-1").await;
        assert_eq!(
            (unknown.kind, unknown.error.code),
            (RefusalKind::BadRequest, -32600)
        );
        let gone = status("smcp-gone-1").await;
        assert_eq!(
            (gone.kind, gone.error.code),
            (RefusalKind::BadRequest, -32600)
        );
        assert!(
            gone.error.message.contains("has stopped"),
            "{}",
            gone.error.message
        );
        for refused in [&unknown, &gone] {
            assert!(
                !refused.error.message.contains("  "),
                "{}",
                refused.error.message
            );
        }
        let slow = status("smcp-slow-1").await;
        assert_eq!(
            (slow.kind, slow.error.code),
            (RefusalKind::Unavailable, -32603)
        );
        assert!(!slow.error.message.contains("  "), "{}", slow.error.message);
        // Malformed: unknown, nothing relayed.
        let before = relay.forwarded.lock().unwrap().len();
        for bad in ["smcp-Peer-1", "smcp-peer-x", "peer-1"] {
            let refused = status(bad).await;
            assert_eq!(refused.kind, RefusalKind::BadRequest, "{bad}");
        }
        assert_eq!(relay.forwarded.lock().unwrap().len(), before);
    }

    #[tokio::test]
    async fn what_a_relay_brings_reaches_the_session_held_here() {
        let relay = Arc::new(Recorder::default());
        let legacy = start(LegacyConfig::default(), None, Arc::new(Arc::clone(&relay)));
        let inbox = relay
            .inbox
            .lock()
            .unwrap()
            .clone()
            .expect("attached at start");
        let live = legacy.live(&record("s"), frame);
        let (id, answer) = live.request().unwrap();
        let RequestId::String(text) = id.clone() else {
            panic!()
        };
        let relayed = |session: &str, id: &str| RelayedAnswer {
            session: session.to_owned(),
            id: id.to_owned(),
            result: Some(json!({"ok": true})),
            error: None,
        };
        // Another session's id, or an unknown one, is not taken.
        assert!(!inbox.answer(relayed("other", &text)));
        assert!(!inbox.answer(relayed("s", "smcp-me-99")));
        assert!(inbox.answer(relayed("s", &text)));
        assert!(!inbox.answer(relayed("s", &text)), "answered once");
        assert_eq!(answer.await.unwrap(), Ok(json!({"ok": true})));

        let request = RequestId::from(5);
        let token = live.begin(&request).unwrap();
        assert!(!inbox.cancel("other", &request));
        assert!(inbox.cancel("s", &request));
        assert!(token.is_cancelled());
        // A cancellation for a request not running here goes to the other instances.
        legacy
            .notification(
                Arc::new(record("s")),
                &live,
                "notifications/cancelled",
                Some(&json!({"requestId": 6})),
            )
            .await
            .unwrap();
        assert_eq!(
            *relay.cancelled.lock().unwrap(),
            [("s".to_owned(), RequestId::from(6))]
        );
    }
}
