//! The session relay against a real `redis-server`: two instances (two handles, two buses,
//! two relays) on one Redis, each with an inbox that records what reaches it.

#![cfg(feature = "legacy")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use smcp_redis::{Redis, RedisBus, RedisSessionRelay};
use smcp_server::legacy::{
    LoggedEvent, RelayError, RelayInbox, RelayedAnswer, SessionRelay, StreamKey, StreamKind,
};
use smcp_server::proto::jsonrpc::RequestId;
use support::RedisServer;

/// Takes answers for the ids in `waiting` (once each) and records cancellations.
#[derive(Debug, Default)]
struct Inbox {
    waiting: Mutex<Vec<String>>,
    answers: Mutex<Vec<RelayedAnswer>>,
    cancels: Mutex<Vec<(String, RequestId)>>,
}

impl RelayInbox for Inbox {
    fn answer(&self, answer: RelayedAnswer) -> bool {
        let mut waiting = self.waiting.lock().unwrap();
        let Some(i) = waiting.iter().position(|id| *id == answer.id) else {
            return false;
        };
        waiting.remove(i);
        self.answers.lock().unwrap().push(answer);
        true
    }
    fn cancel(&self, session: &str, id: &RequestId) -> bool {
        self.cancels
            .lock()
            .unwrap()
            .push((session.to_owned(), id.clone()));
        true
    }
}

struct Instance {
    bus: RedisBus,
    relay: RedisSessionRelay,
    inbox: Arc<Inbox>,
}

fn instance(server: &RedisServer, prefix: &str) -> Instance {
    let redis = Redis::builder(server.url())
        .key_prefix(prefix)
        .timeout(Duration::from_millis(500))
        .reconnect_backoff(Duration::from_millis(20), Duration::from_millis(200))
        .build()
        .unwrap();
    let bus = RedisBus::start(&redis);
    let relay = RedisSessionRelay::builder(&bus)
        .ack_timeout(Duration::from_secs(2))
        .build();
    let inbox = Arc::new(Inbox::default());
    relay.attach(inbox.clone());
    Instance { bus, relay, inbox }
}

async fn until_connected(bus: &RedisBus) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !bus.status().connected {
        assert!(
            tokio::time::Instant::now() < deadline,
            "bus never connected"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn answer(id: &str) -> RelayedAnswer {
    RelayedAnswer {
        session: "s1".into(),
        id: id.into(),
        result: Some(json!({"action": "accept"})),
        error: None,
    }
}

#[tokio::test]
async fn a_response_reaches_its_owner_which_says_whether_it_took_it() {
    if support::skipped() {
        return;
    }
    let server = RedisServer::start();
    let (a, b) = (instance(&server, "r1:"), instance(&server, "r1:"));
    until_connected(&a.bus).await;
    until_connected(&b.bus).await;
    let owner = b.relay.instance().to_owned();
    assert!(smcp_server::legacy::valid_tag(&owner), "{owner}");
    let id = format!("smcp-{owner}-1");
    b.inbox.waiting.lock().unwrap().push(id.clone());

    assert_eq!(a.relay.forward(&owner, answer(&id)).await, Ok(true));
    assert_eq!(*b.inbox.answers.lock().unwrap(), [answer(&id)]);
    // Answered already: the owner says no, the sender hears it.
    assert_eq!(a.relay.forward(&owner, answer(&id)).await, Ok(false));
    // An instance nobody runs: gone at once, no wait.
    let started = tokio::time::Instant::now();
    assert_eq!(
        a.relay.forward("0123abcd", answer("smcp-0123abcd-1")).await,
        Err(RelayError::Gone)
    );
    assert!(started.elapsed() < Duration::from_millis(500));
    assert_eq!(a.relay.alive(&owner).await, Ok(true));
    assert_eq!(a.relay.alive("0123abcd").await, Ok(false));

    // A cancellation reaches every other instance, not the sender's own inbox.
    a.relay.cancel("s1", &RequestId::from(4)).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while b.inbox.cancels.lock().unwrap().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "cancel not relayed");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        *b.inbox.cancels.lock().unwrap(),
        [("s1".to_owned(), RequestId::from(4))]
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(a.inbox.cancels.lock().unwrap().is_empty());

    // The owner stops: its channel has no subscriber any more.
    b.bus.close();
    drop(b);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while a.relay.alive(&owner).await != Ok(false) {
        assert!(tokio::time::Instant::now() < deadline, "still alive");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        a.relay.forward(&owner, answer(&id)).await,
        Err(RelayError::Gone)
    );
}

#[tokio::test]
async fn a_stream_log_is_read_back_on_another_instance_capped_and_ended() {
    if support::skipped() {
        return;
    }
    let server = RedisServer::start();
    let (a, b) = (instance(&server, "r2:"), instance(&server, "r2:"));
    let key = StreamKey {
        session: "s1".into(),
        owner: a.relay.instance().to_owned(),
        stream: 3,
    };
    let event = |seq: u64, opens: Option<StreamKind>| LoggedEvent {
        key: key.clone(),
        seq,
        opens,
        frame: format!("id: {seq}\ndata: {{}}\n\n").into_bytes(),
        keep: 4,
    };
    // Nothing logged: unknown.
    assert_eq!(b.relay.read(key.clone(), 0, 10).await, Ok(None));
    let request = StreamKind::Request(RequestId::from("r-1"));
    a.relay
        .record(event(1, Some(request.clone())))
        .await
        .unwrap();
    for seq in 2..=3 {
        a.relay.record(event(seq, None)).await.unwrap();
    }
    let tail = b.relay.read(key.clone(), 1, 10).await.unwrap().unwrap();
    assert_eq!(tail.kind, request);
    assert!(!tail.ended);
    let seqs: Vec<u64> = tail.events.iter().map(|(s, _)| *s).collect();
    assert_eq!(seqs, [2, 3]);
    assert_eq!(tail.events[0].1, b"id: 2\ndata: {}\n\n");
    assert_eq!(
        b.relay
            .read(key.clone(), 0, 1)
            .await
            .unwrap()
            .unwrap()
            .events
            .len(),
        1
    );
    assert!(
        b.relay
            .read(key.clone(), 3, 10)
            .await
            .unwrap()
            .unwrap()
            .events
            .is_empty()
    );

    a.relay.close(key.clone()).await.unwrap();
    assert!(
        b.relay
            .read(key.clone(), 3, 10)
            .await
            .unwrap()
            .unwrap()
            .ended
    );

    // Capped: after many more events the oldest are trimmed, and a point before what is
    // kept is unknown rather than a stream with a hole.
    for seq in 4..=400 {
        a.relay.record(event(seq, None)).await.unwrap();
    }
    assert_eq!(b.relay.read(key.clone(), 1, 10).await, Ok(None));
    let tail = b.relay.read(key.clone(), 398, 10).await.unwrap().unwrap();
    let seqs: Vec<u64> = tail.events.iter().map(|(s, _)| *s).collect();
    assert_eq!(seqs, [399, 400]);

    // A standalone stream says so.
    let standalone = StreamKey {
        stream: 4,
        ..key.clone()
    };
    let mut first = event(1, Some(StreamKind::Standalone));
    first.key = standalone.clone();
    a.relay.record(first).await.unwrap();
    let tail = b.relay.read(standalone, 0, 10).await.unwrap().unwrap();
    assert_eq!(tail.kind, StreamKind::Standalone);
    assert_eq!(tail.events.len(), 1);
}

#[tokio::test]
async fn appends_fail_fast_while_redis_is_away_and_resume_after_it() {
    if support::skipped() {
        return;
    }
    let mut server = RedisServer::start();
    let port = server.port;
    let a = instance(&server, "r3:");
    let key = StreamKey {
        session: "s1".into(),
        owner: a.relay.instance().to_owned(),
        stream: 1,
    };
    let event = |seq: u64| LoggedEvent {
        key: key.clone(),
        seq,
        opens: (seq == 1).then_some(StreamKind::Standalone),
        frame: b"x".to_vec(),
        keep: 8,
    };
    a.relay.record(event(1)).await.unwrap();
    server.kill();
    assert!(matches!(
        a.relay.record(event(2)).await,
        Err(RelayError::Unavailable(_))
    ));
    // Paused: the next append fails at once instead of waiting on Redis.
    let started = tokio::time::Instant::now();
    assert!(matches!(
        a.relay.record(event(3)).await,
        Err(RelayError::Unavailable(_))
    ));
    assert!(started.elapsed() < Duration::from_millis(50));
    let _server = RedisServer::start_on(port);
    tokio::time::sleep(smcp_redis::LOG_PAUSE).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while a.relay.record(event(4)).await.is_err() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "appends never resumed"
        );
        tokio::time::sleep(smcp_redis::LOG_PAUSE).await;
    }
}
