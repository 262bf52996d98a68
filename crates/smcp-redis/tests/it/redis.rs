//! smcp-redis against a real `redis-server`: two "instances" (two handles, two instance
//! ids) on one Redis, as two processes would be.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use smcp_bus::{Change, ChangeBus, Interest, Subscription};
use smcp_redis::{Redis, RedisBus, RedisReplayGuard, RedisSessionStore, SharedCatalog};
use smcp_server::legacy::{SessionError, SessionRecord, SessionStore};
use smcp_server::mrtr::ReplayGuard;
use support::RedisServer;

macro_rules! need_redis {
    () => {
        if support::skipped() {
            return;
        }
    };
}

fn handle(server: &RedisServer, prefix: &str) -> Redis {
    Redis::builder(server.url())
        .key_prefix(prefix)
        .timeout(Duration::from_millis(500))
        .reconnect_backoff(Duration::from_millis(20), Duration::from_millis(200))
        .build()
        .unwrap()
}

async fn next(sub: &mut Subscription) -> Option<Change> {
    tokio::time::timeout(Duration::from_secs(2), sub.next())
        .await
        .ok()
        .flatten()
}

async fn nothing_more(sub: &mut Subscription) {
    let more = tokio::time::timeout(Duration::from_millis(300), sub.next()).await;
    assert!(more.is_err(), "unexpected change: {more:?}");
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

fn tools_and(uris: &[&str]) -> Interest {
    Interest {
        tools_list_changed: true,
        resource_uris: uris.iter().map(|u| (*u).to_owned()).collect(),
        ..Interest::default()
    }
}

#[tokio::test]
async fn a_change_on_one_instance_reaches_the_listeners_of_every_instance_once() {
    need_redis!();
    let server = RedisServer::start();
    let (a, b) = (
        RedisBus::start(&handle(&server, "t1:")),
        RedisBus::start(&handle(&server, "t1:")),
    );
    let other = RedisBus::start(&handle(&server, "other-deployment:"));
    until_connected(&a).await;
    until_connected(&b).await;
    until_connected(&other).await;
    let mut on_a = a.subscribe(tools_and(&["test://r"]), 8).unwrap();
    let mut on_b = b.subscribe(tools_and(&["test://r"]), 8).unwrap();
    let mut elsewhere = other.subscribe(tools_and(&["test://r"]), 8).unwrap();
    let lags = Arc::new(Mutex::new(Vec::new()));
    let seen = lags.clone();
    b.on_lag(move |lag| seen.lock().unwrap().push(lag));

    a.publish(Change::ToolsListChanged).unwrap();
    a.publish(Change::resource_updated("test://r/x")).unwrap();
    a.publish(Change::resource_updated("test://unwatched"))
        .unwrap();
    assert_eq!(next(&mut on_b).await, Some(Change::ToolsListChanged));
    assert_eq!(
        next(&mut on_b).await,
        Some(Change::resource_updated("test://r/x"))
    );
    // Locally at once, and not a second time when the message comes back from Redis.
    assert_eq!(next(&mut on_a).await, Some(Change::ToolsListChanged));
    assert_eq!(
        next(&mut on_a).await,
        Some(Change::resource_updated("test://r/x"))
    );
    nothing_more(&mut on_a).await;
    nothing_more(&mut on_b).await;
    // Another key prefix is another deployment.
    nothing_more(&mut elsewhere).await;
    assert_eq!(b.status().received, 3);
    assert_eq!(lags.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn a_healthy_subscriber_connection_stays_up_across_its_pings() {
    need_redis!();
    let server = RedisServer::start();
    let redis = Redis::builder(server.url())
        .key_prefix("t0:")
        .timeout(Duration::from_millis(500))
        .ping_every(Duration::from_millis(50))
        .build()
        .unwrap();
    let bus = RedisBus::start(&redis);
    until_connected(&bus).await;
    let mut sub = bus.subscribe(tools_and(&["test://r"]), 8).unwrap();
    // A dozen pings: each answered, none taken for a lost connection (which would reconnect
    // and tell every listener that changes may have been missed).
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(bus.status().connected);
    assert_eq!(bus.status().connections, 1, "reconnected on a healthy link");
    nothing_more(&mut sub).await;
    // And the link still carries changes from another instance.
    let other = RedisBus::start(&handle(&server, "t0:"));
    until_connected(&other).await;
    other.publish(Change::ToolsListChanged).unwrap();
    assert_eq!(next(&mut sub).await, Some(Change::ToolsListChanged));
}

#[tokio::test]
async fn listen_streams_survive_a_redis_restart_and_are_told_changes_may_have_been_missed() {
    need_redis!();
    let mut server = RedisServer::start();
    let port = server.port;
    let a = RedisBus::start(&handle(&server, "t2:"));
    let b = RedisBus::start(&handle(&server, "t2:"));
    until_connected(&a).await;
    until_connected(&b).await;
    let mut on_b = b.subscribe(tools_and(&["test://watched"]), 8).unwrap();

    server.kill();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while b.status().connected {
        assert!(tokio::time::Instant::now() < deadline, "loss not noticed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Published while Redis is away: queued on A, B's stream stays open and quiet.
    a.publish(Change::resource_updated("test://watched"))
        .unwrap();
    nothing_more(&mut on_b).await;

    let _server = RedisServer::start_on(port);
    // Back: B tells its listener to re-read everything it watches…
    let mut got = vec![next(&mut on_b).await, next(&mut on_b).await];
    got.sort_by_key(|c| format!("{c:?}"));
    assert_eq!(
        got,
        vec![
            Some(Change::resource_updated("test://watched")),
            Some(Change::ToolsListChanged),
        ]
    );
    assert!(b.status().connections >= 2);
    // …and the bus carries changes again.
    until_connected(&a).await;
    a.publish(Change::ToolsListChanged).unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        // The queued update may arrive too (at most once, so it is not guaranteed).
        match next(&mut on_b).await {
            Some(Change::ToolsListChanged) => break,
            Some(_) => {}
            None => panic!("no change after the restart"),
        }
        assert!(tokio::time::Instant::now() < deadline);
    }
}

#[tokio::test]
async fn a_single_use_state_is_first_used_on_exactly_one_instance() {
    need_redis!();
    let server = RedisServer::start();
    let guards: Vec<_> = (0..4)
        .map(|_| RedisReplayGuard::new(&handle(&server, "t3:")))
        .collect();
    let expires = SystemTime::now() + Duration::from_secs(60);
    let results = futures_util::future::join_all(
        guards
            .iter()
            .map(|g| g.first_use("state-1", expires))
            .collect::<Vec<_>>(),
    )
    .await;
    assert_eq!(results.iter().filter(|w| **w).count(), 1, "{results:?}");
    assert!(guards[0].first_use("state-2", expires).await);
    assert!(!guards[3].first_use("state-2", expires).await);
}

#[tokio::test]
async fn the_replay_guard_fails_closed_without_redis() {
    need_redis!();
    let mut server = RedisServer::start();
    let guard = RedisReplayGuard::new(&handle(&server, "t4:"));
    server.kill();
    let expires = SystemTime::now() + Duration::from_secs(60);
    assert!(!guard.first_use("state", expires).await);
}

fn record(id: &str) -> SessionRecord {
    serde_json::from_value(json!({
        "id": id,
        "protocolVersion": "2025-11-25",
        "clientCapabilities": {},
        "initialized": false,
    }))
    .unwrap()
}

#[tokio::test]
async fn a_session_created_on_one_instance_is_served_by_another() {
    need_redis!();
    let server = RedisServer::start();
    let idle = Duration::from_secs(60);
    let a = RedisSessionStore::new(&handle(&server, "t5:"), 2, idle);
    let b = RedisSessionStore::new(&handle(&server, "t5:"), 2, idle);
    a.create(record("s1")).await.unwrap();
    let got = b.get("s1").await.unwrap().unwrap();
    assert_eq!(*got, record("s1"));
    let mut got = Arc::unwrap_or_clone(got);
    got.initialized = true;
    b.put(got.clone()).await.unwrap();
    assert_eq!(a.get("s1").await.unwrap(), Some(Arc::new(got)));
    assert!(matches!(
        a.create(record("s1")).await,
        Err(SessionError::Store(_))
    ));
    b.create(record("s2")).await.unwrap();
    assert_eq!(
        a.create(record("s3")).await,
        Err(SessionError::Full { max: 2 })
    );
    assert!(a.remove("s2").await.unwrap());
    assert!(!b.remove("s2").await.unwrap());
    assert_eq!(b.put(record("s2")).await, Err(SessionError::NotFound));
    a.create(record("s3")).await.unwrap();
    assert_eq!(b.get("nope").await.unwrap(), None);
}

#[tokio::test]
async fn an_idle_session_ends_everywhere() {
    need_redis!();
    let server = RedisServer::start();
    let store = RedisSessionStore::new(&handle(&server, "t6:"), 1, Duration::from_millis(200));
    store.create(record("s1")).await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(store.get("s1").await.unwrap(), None);
    // Its slot is free again.
    store.create(record("s2")).await.unwrap();
}

#[tokio::test]
async fn the_catalog_state_is_applied_on_every_instance_before_its_listeners_hear_of_it() {
    need_redis!();
    let server = RedisServer::start();
    let a = RedisBus::start(&handle(&server, "t7:"));
    let b = RedisBus::start(&handle(&server, "t7:"));
    until_connected(&a).await;
    until_connected(&b).await;
    // Each instance's "catalog" is a value; applying it publishes a list change, as a real
    // catalog edit does.
    let make = |bus: &RedisBus| {
        let state = Arc::new(Mutex::new(Value::Null));
        let seen = state.clone();
        let publisher = bus.clone();
        (state, move |s: &Value| {
            *seen.lock().unwrap() = s.clone();
            publisher.publish(Change::ToolsListChanged).unwrap();
        })
    };
    let (state_a, apply_a) = make(&a);
    let (state_b, apply_b) = make(&b);
    let cat_a = SharedCatalog::attach(&a, apply_a).await.unwrap();
    let cat_b = SharedCatalog::attach(&b, apply_b).await.unwrap();
    let mut on_a = a.subscribe(Interest::all_lists(), 8).unwrap();
    let mut on_b = b.subscribe(Interest::all_lists(), 8).unwrap();

    let rev = cat_a.update(json!({"extra": true})).await.unwrap();
    assert_eq!(next(&mut on_b).await, Some(Change::ToolsListChanged));
    assert_eq!(*state_b.lock().unwrap(), json!({"extra": true}));
    assert_eq!(cat_b.revision(), rev);
    assert_eq!(next(&mut on_a).await, Some(Change::ToolsListChanged));
    assert_eq!(*state_a.lock().unwrap(), json!({"extra": true}));
    // Applying is local on each instance: one notification each, not one per instance.
    nothing_more(&mut on_a).await;
    nothing_more(&mut on_b).await;

    // A later instance starts from the stored state.
    let c = RedisBus::start(&handle(&server, "t7:"));
    let (state_c, apply_c) = make(&c);
    let cat_c = SharedCatalog::attach(&c, apply_c).await.unwrap();
    assert_eq!(cat_c.revision(), rev);
    assert_eq!(*state_c.lock().unwrap(), json!({"extra": true}));
    // The newest revision wins, whoever wrote it.
    let rev2 = cat_b.update(json!({"extra": false})).await.unwrap();
    assert!(rev2 > rev);
    assert_eq!(next(&mut on_a).await, Some(Change::ToolsListChanged));
    assert_eq!(*state_a.lock().unwrap(), json!({"extra": false}));
    assert!(!cat_a.refresh().await.unwrap());
}
