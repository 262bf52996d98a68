//! `RedisTaskStore` against a real `redis-server`: the `TaskStore` contract, compare-and-set
//! updates from two handles (two "instances"), and leases: a lapsed task fails once, however
//! many instances sweep at once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Map;
use smcp_redis::{Redis, RedisTaskStore};
use smcp_server::proto::ext::tasks::TaskStatus;
use smcp_server::proto::patterns::mrtr::InputRequests;
use smcp_tasks::{TaskRecord, TaskStore, TaskStoreError, WORKER_LOST, new_task_id};
use support::RedisServer;

macro_rules! need_redis {
    () => {
        if support::skipped() {
            return;
        }
    };
}

fn handle(url: &str, prefix: &str) -> Redis {
    Redis::builder(url)
        .key_prefix(prefix)
        .timeout(Duration::from_millis(500))
        .build()
        .unwrap()
}

fn now_ms() -> u64 {
    u64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

fn record(principal: Option<&str>, ttl_ms: Option<u64>, lease_ms: Option<u64>) -> TaskRecord {
    let now = now_ms();
    TaskRecord {
        task_id: new_task_id().unwrap(),
        principal: principal.map(str::to_owned),
        tool: "t".to_owned(),
        status: TaskStatus::Working,
        status_message: None,
        created_at_ms: now,
        last_updated_at_ms: now,
        ttl_ms,
        poll_interval_ms: 1000,
        input_requests: InputRequests::new(),
        responses: Map::new(),
        issued_keys: Vec::new(),
        held: None,
        result: None,
        error: None,
        cancel_requested: false,
        lease_ms,
    }
}

/// The stored text of a task, read directly.
async fn raw(redis_url: &str, key: &str) -> Option<String> {
    let client = redis::Client::open(redis_url).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    redis::cmd("GET")
        .arg(key)
        .query_async(&mut conn)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_store_contract_create_get_update_principal_and_foreign_ids() {
    need_redis!();
    let server = RedisServer::start();
    let a = RedisTaskStore::new(&handle(&server.url(), "c:"), 100);
    let b = RedisTaskStore::new(&handle(&server.url(), "c:"), 100);
    let elsewhere = RedisTaskStore::new(&handle(&server.url(), "other:"), 100);
    assert!(a.keeps_leases());
    assert_eq!(a.watch_interval(), Some(Duration::from_millis(250)));

    let task = record(Some("alice"), Some(60_000), None);
    let id = task.task_id.clone();
    a.create(task.clone()).await.unwrap();
    // Durable at once, on the other handle too; stored as JSON with a TTL.
    assert_eq!(b.get(&id, Some("alice")).await.unwrap(), task);
    let text = raw(&server.url(), &format!("c:task:{id}")).await.unwrap();
    assert_eq!(serde_json::from_str::<TaskRecord>(&text).unwrap(), task);

    // Another principal, no principal, a malformed id, an unknown id and another
    // deployment's view: all the same NotFound.
    assert_eq!(b.get(&id, Some("bob")).await, Err(TaskStoreError::NotFound));
    assert_eq!(b.get(&id, None).await, Err(TaskStoreError::NotFound));
    assert_eq!(
        elsewhere.get(&id, Some("alice")).await,
        Err(TaskStoreError::NotFound)
    );
    for bad in ["", "x", "c:task:*", &id.to_uppercase(), &format!("{id}0")] {
        assert_eq!(
            b.get(bad, Some("alice")).await,
            Err(TaskStoreError::NotFound),
            "{bad:?}"
        );
    }
    let unknown = new_task_id().unwrap();
    assert_eq!(
        b.get(&unknown, Some("alice")).await,
        Err(TaskStoreError::NotFound)
    );

    // An update by another principal changes nothing; the owner's applies and is returned.
    let refused = b
        .update(
            &id,
            Some("bob"),
            Box::new(|r| r.status = TaskStatus::Cancelled),
        )
        .await;
    assert_eq!(refused, Err(TaskStoreError::NotFound));
    let updated = b
        .update(
            &id,
            Some("alice"),
            Box::new(|r| r.status_message = Some("half-way".to_owned())),
        )
        .await
        .unwrap();
    assert_eq!(updated.status_message.as_deref(), Some("half-way"));
    assert_eq!(a.get(&id, Some("alice")).await.unwrap(), updated);
    assert_eq!(
        a.update(&unknown, Some("alice"), Box::new(|_| {})).await,
        Err(TaskStoreError::NotFound)
    );
    // The same id twice is refused (never overwritten).
    assert!(matches!(
        a.create(task).await,
        Err(TaskStoreError::Unavailable(_))
    ));
    assert_eq!(a.get(&id, Some("alice")).await.unwrap(), updated);
}

#[tokio::test]
async fn tasks_expire_at_their_ttl_and_a_full_store_never_evicts_a_live_one() {
    need_redis!();
    let server = RedisServer::start();
    let a = RedisTaskStore::new(&handle(&server.url(), "f:"), 2);
    let b = RedisTaskStore::new(&handle(&server.url(), "f:"), 2);
    let short = record(None, Some(400), None);
    let long = record(None, None, None);
    a.create(short.clone()).await.unwrap();
    b.create(long.clone()).await.unwrap();
    // The bound holds across handles: a third is refused, the live two stay.
    assert_eq!(
        a.create(record(None, None, None)).await,
        Err(TaskStoreError::Full { limit: 2 })
    );
    assert!(b.get(&short.task_id, None).await.is_ok());
    assert!(a.get(&long.task_id, None).await.is_ok());
    // Once the short one's TTL passed, it is gone and its place is free again.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(matches!(
        a.get(&short.task_id, None).await,
        Err(TaskStoreError::NotFound | TaskStoreError::Expired)
    ));
    assert_eq!(
        raw(&server.url(), &format!("f:task:{}", short.task_id)).await,
        None,
        "Redis dropped the record at its TTL"
    );
    b.create(record(None, None, None)).await.unwrap();
    assert!(a.get(&long.task_id, None).await.is_ok());
}

#[tokio::test]
async fn concurrent_updates_from_two_instances_lose_nothing() {
    need_redis!();
    let server = RedisServer::start();
    let a = Arc::new(RedisTaskStore::new(&handle(&server.url(), "u:"), 10));
    let b = Arc::new(RedisTaskStore::new(&handle(&server.url(), "u:"), 10));
    let task = record(Some("p"), Some(60_000), None);
    let id = task.task_id.clone();
    a.create(task).await.unwrap();
    let mut writers = Vec::new();
    for i in 0..100 {
        let store = if i % 2 == 0 { a.clone() } else { b.clone() };
        let id = id.clone();
        writers.push(tokio::spawn(async move {
            store
                .update(
                    &id,
                    Some("p"),
                    Box::new(move |r| r.issued_keys.push(format!("k{i}"))),
                )
                .await
                .unwrap()
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
    let keys: HashSet<String> = a
        .get(&id, Some("p"))
        .await
        .unwrap()
        .issued_keys
        .into_iter()
        .collect();
    assert_eq!(keys.len(), 100, "every concurrent update was kept");
}

#[tokio::test]
async fn a_lapsed_lease_fails_the_task_exactly_once_with_two_sweepers_racing() {
    need_redis!();
    let server = RedisServer::start();
    let a = Arc::new(RedisTaskStore::new(&handle(&server.url(), "l:"), 100));
    let b = Arc::new(RedisTaskStore::new(&handle(&server.url(), "l:"), 100));

    // Renewed tasks live on; one whose instance stopped renewing lapses.
    let renewed = record(Some("p"), Some(60_000), Some(300));
    let lost = record(Some("p"), Some(60_000), Some(300));
    let mut cancelled = record(Some("p"), Some(60_000), Some(300));
    cancelled.cancel_requested = true;
    for t in [&renewed, &lost, &cancelled] {
        a.create(t.clone()).await.unwrap();
    }
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let gone = a
            .renew_leases(vec![renewed.task_id.clone()], Duration::from_millis(300))
            .await
            .unwrap();
        assert!(gone.is_empty(), "{gone:?}");
    }
    // 600 ms after creation: `lost` lapsed. Every read shows it failed at once, before any
    // sweep, on both instances, and updates do not resurrect it.
    let seen = b.get(&lost.task_id, Some("p")).await.unwrap();
    assert_eq!(seen.status, TaskStatus::Failed);
    let error = seen.error.clone().unwrap();
    assert_eq!(error.code, -32603);
    assert_eq!(error.message, WORKER_LOST);
    assert_eq!(a.get(&lost.task_id, Some("p")).await.unwrap(), seen);
    let after = a
        .update(
            &lost.task_id,
            Some("p"),
            Box::new(|r| r.status = TaskStatus::Completed),
        )
        .await
        .unwrap();
    assert_eq!(after, seen, "a lapsed task takes no mutation");
    assert_eq!(
        a.get(&renewed.task_id, Some("p")).await.unwrap().status,
        TaskStatus::Working
    );

    // Two instances sweep at once, several times: each lapsed task is ended once.
    let mut ended = Vec::new();
    for _ in 0..5 {
        let (x, y) = tokio::join!(a.reap_lapsed(), b.reap_lapsed());
        ended.extend(x.unwrap());
        ended.extend(y.unwrap());
    }
    let mut ids: Vec<&str> = ended.iter().map(|r| r.task_id.as_str()).collect();
    ids.sort_unstable();
    let mut expected = vec![lost.task_id.as_str(), cancelled.task_id.as_str()];
    expected.sort_unstable();
    assert_eq!(ids, expected, "each lapsed task ended exactly once");
    let stored = raw(&server.url(), &format!("l:task:{}", lost.task_id))
        .await
        .unwrap();
    assert_eq!(serde_json::from_str::<TaskRecord>(&stored).unwrap(), seen);
    assert_eq!(
        b.get(&cancelled.task_id, Some("p")).await.unwrap().status,
        TaskStatus::Cancelled,
        "a lapsed task whose cancel was requested ends cancelled"
    );
    // The instance that lost the lease learns it on its next renewal.
    let gone = a
        .renew_leases(
            vec![lost.task_id.clone(), renewed.task_id.clone()],
            Duration::from_millis(300),
        )
        .await
        .unwrap();
    assert_eq!(gone, vec![lost.task_id.clone()]);

    // A task that ends normally ends its lease: nothing to sweep after its period.
    a.update(
        &renewed.task_id,
        Some("p"),
        Box::new(|r| r.status = TaskStatus::Completed),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(a.reap_lapsed().await.unwrap().is_empty());
    assert_eq!(
        b.get(&renewed.task_id, Some("p")).await.unwrap().status,
        TaskStatus::Completed
    );
}

#[tokio::test]
async fn an_unreachable_redis_is_unavailable_within_the_timeout() {
    need_redis!();
    let mut server = RedisServer::start();
    let store = RedisTaskStore::new(&handle(&server.url(), "d:"), 10);
    let task = record(None, None, Some(1000));
    store.create(task.clone()).await.unwrap();
    server.kill();
    let started = std::time::Instant::now();
    for result in [
        store.get(&task.task_id, None).await.map(drop),
        store.create(record(None, None, None)).await,
        store
            .update(&task.task_id, None, Box::new(|_| {}))
            .await
            .map(drop),
        store
            .renew_leases(vec![task.task_id.clone()], Duration::from_secs(1))
            .await
            .map(drop),
        store.reap_lapsed().await.map(drop),
    ] {
        assert!(
            matches!(result, Err(TaskStoreError::Unavailable(_))),
            "{result:?}"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(5));
}
