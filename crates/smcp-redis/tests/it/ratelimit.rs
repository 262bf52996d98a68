//! `RedisRateLimiter` against a real `redis-server`: two handles (two "instances") share one
//! bucket exactly, also when they race; all or nothing across a request's buckets, also
//! batched; slices of fast buckets spent locally, never beyond the burst, given back when
//! stale; keys namespaced by the prefix and expiring when full again; an unreachable Redis an
//! error (the server then fails open).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, SystemTime};

use smcp_redis::{Redis, RedisRateLimiter};
use smcp_server::ratelimit::{Bucket, BucketKey, Decision, LimitError, Rate, RateLimiter, Verdict};

use crate::support::{self, RedisServer};

fn handle(server: &RedisServer, prefix: &str) -> Redis {
    Redis::builder(server.url())
        .key_prefix(prefix)
        .timeout(Duration::from_millis(500))
        .build()
        .unwrap()
}

async fn decide(
    limiter: &RedisRateLimiter,
    buckets: &[Bucket<'_>],
) -> Result<Decision, LimitError> {
    match limiter.decide(buckets, SystemTime::now()) {
        Verdict::Pending(fut) => fut.await,
        Verdict::Ready(decided) => decided,
    }
}

fn alice(rule: &'static str, rate: Rate) -> Bucket<'static> {
    Bucket {
        key: BucketKey {
            rule,
            subject: Some("p:alice"),
        },
        rate,
    }
}

async fn command<T: redis::FromRedisValue>(server: &RedisServer, cmd: &mut redis::Cmd) -> T {
    let client = redis::Client::open(server.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    cmd.query_async(&mut conn).await.unwrap()
}

#[tokio::test]
async fn two_instances_share_one_burst_exactly() {
    if support::skipped() {
        return;
    }
    let server = RedisServer::start();
    let (a, b) = (
        RedisRateLimiter::new(&handle(&server, "t:")),
        RedisRateLimiter::new(&handle(&server, "t:")),
    );
    // Burst 10, then one token every 6 s.
    let bucket = alice("principal", Rate::per_minute(10));
    let mut allowed = 0;
    for i in 0..10 {
        let limiter = if i % 2 == 0 { &a } else { &b };
        assert_eq!(decide(limiter, &[bucket]).await.unwrap(), Decision::Allowed);
        allowed += 1;
    }
    assert_eq!(allowed, 10);
    for limiter in [&a, &b] {
        match decide(limiter, &[bucket]).await.unwrap() {
            Decision::Refused {
                bucket: 0,
                retry_after,
            } => assert!(
                retry_after > Duration::from_millis(5_000) && retry_after <= Duration::from_secs(6),
                "{retry_after:?}"
            ),
            other => panic!("{other:?}"),
        }
    }
    // Another deployment (another prefix) on the same Redis has its own buckets.
    let other = RedisRateLimiter::new(&handle(&server, "other:"));
    assert_eq!(decide(&other, &[bucket]).await.unwrap(), Decision::Allowed);
}

#[tokio::test]
async fn racing_instances_never_exceed_the_burst() {
    if support::skipped() {
        return;
    }
    let server = RedisServer::start();
    let (a, b) = (
        RedisRateLimiter::new(&handle(&server, "race:")),
        RedisRateLimiter::new(&handle(&server, "race:")),
    );
    let bucket = alice("tool:echo", Rate::per_hour(1).and_burst(25));
    assert_eq!(race(&a, &b, bucket, 60).await, 25);
}

/// `n` decisions on `bucket` at once, alternating between two instances: how many were
/// allowed (every refusal names the bucket).
async fn race(
    a: &RedisRateLimiter,
    b: &RedisRateLimiter,
    bucket: Bucket<'static>,
    n: usize,
) -> u64 {
    let mut racing = Vec::new();
    for i in 0..n {
        let limiter = if i % 2 == 0 { a.clone() } else { b.clone() };
        racing.push(tokio::spawn(
            async move { decide(&limiter, &[bucket]).await },
        ));
    }
    let mut allowed = 0;
    for task in racing {
        match task.await.unwrap().unwrap() {
            Decision::Allowed => allowed += 1,
            Decision::Refused { bucket: 0, .. } => {}
            other @ Decision::Refused { .. } => panic!("{other:?}"),
        }
    }
    allowed
}

/// `cmdstat_evalsha`'s `calls=` in `INFO commandstats`: script calls Redis ran.
async fn script_calls(server: &RedisServer) -> u64 {
    let info: String = command(server, redis::cmd("INFO").arg("commandstats")).await;
    info.lines()
        .find_map(|l| l.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_decisions_share_script_calls_and_stay_exact() {
    if support::skipped() {
        return;
    }
    let server = RedisServer::start();
    let limiter = RedisRateLimiter::new(&handle(&server, "batch:"));
    // Warm up: the script is loaded, the connection made.
    let warm = alice("warm-up", Rate::per_hour(1_000));
    assert_eq!(decide(&limiter, &[warm]).await.unwrap(), Decision::Allowed);
    let before = script_calls(&server).await;
    // 300 requests at once: alice's own bucket (burst 1000, never the limit) and a tool
    // bucket of burst 40 that every third of them also draws from. Each decision is all or
    // nothing even inside a batch: exactly 40 of those 100 get through, and the 60 refused
    // take nothing from alice's bucket.
    let principal = alice("principal", Rate::per_hour(1).and_burst(1_000));
    let tool = alice("tool:scarce", Rate::per_hour(1).and_burst(40));
    let mut racing = Vec::new();
    for i in 0..300 {
        let limiter = limiter.clone();
        racing.push(tokio::spawn(async move {
            let both = i % 3 == 0;
            let buckets: &[Bucket<'static>] = if both {
                &[principal, tool]
            } else {
                &[principal]
            };
            (both, decide(&limiter, buckets).await.unwrap())
        }));
    }
    let (mut both_allowed, mut alone_allowed) = (0, 0);
    for task in racing {
        match task.await.unwrap() {
            (true, Decision::Allowed) => both_allowed += 1,
            (false, Decision::Allowed) => alone_allowed += 1,
            (true, Decision::Refused { bucket: 1, .. }) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((both_allowed, alone_allowed), (40, 200));
    let calls = script_calls(&server).await - before;
    assert!(
        (1..300).contains(&calls),
        "300 decisions asked at once take fewer script calls: {calls}"
    );
    // Alice's bucket lost exactly the 240 tokens given: 760 are left.
    for _ in 0..760 {
        assert_eq!(
            decide(&limiter, &[principal]).await.unwrap(),
            Decision::Allowed
        );
    }
    assert!(matches!(
        decide(&limiter, &[principal]).await.unwrap(),
        Decision::Refused { bucket: 0, .. }
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slices_are_spent_locally_and_never_exceed_the_burst() {
    if support::skipped() {
        return;
    }
    let server = RedisServer::start();
    let (a, b) = (
        RedisRateLimiter::new(&handle(&server, "slice:")),
        RedisRateLimiter::new(&handle(&server, "slice:")),
    );
    // 100 a second, burst 160: a slice is 10 tokens (a sixteenth of the burst).
    let bucket = alice("principal", Rate::per_second(100).and_burst(160));
    let before = script_calls(&server).await;
    let started = std::time::Instant::now();
    let allowed = race(&a, &b, bucket, 400).await;
    let refilled = started.elapsed().as_millis() as u64 / 10 + 1;
    assert!(
        allowed <= 160 + refilled,
        "never beyond the burst and what refilled: {allowed} > 160 + {refilled}"
    );
    assert!(
        allowed >= 160 - 2 * 9,
        "at most a slice per instance left unspent: {allowed}"
    );
    let calls = script_calls(&server).await - before;
    assert!(calls < 100, "slices spare script calls: {calls} for 400");
}

#[tokio::test]
async fn a_stale_slice_goes_back_to_the_bucket() {
    if support::skipped() {
        return;
    }
    let server = RedisServer::start();
    let a = RedisRateLimiter::new(&handle(&server, "stale:"));
    let b = RedisRateLimiter::new(&handle(&server, "stale:")).max_prefetch(1);
    // 2 a second, burst 32: a slice is 2 tokens; A spends one and holds the other.
    let bucket = alice("principal", Rate::per_second(2).and_burst(32));
    assert_eq!(decide(&a, &[bucket]).await.unwrap(), Decision::Allowed);
    tokio::time::sleep(Duration::from_millis(1_050)).await;
    // B (exact) takes everything there is, until the next token is far enough away that none
    // can refill before A asks.
    loop {
        match decide(&b, &[bucket]).await.unwrap() {
            Decision::Allowed => {}
            Decision::Refused { retry_after, .. } if retry_after > Duration::from_millis(100) => {
                break;
            }
            Decision::Refused { retry_after, .. } => tokio::time::sleep(retry_after).await,
        }
    }
    // A's token is stale: it goes back with A's next request, which it lets through.
    assert_eq!(decide(&a, &[bucket]).await.unwrap(), Decision::Allowed);
    assert!(
        matches!(
            decide(&b, &[bucket]).await.unwrap(),
            Decision::Refused { .. }
        ),
        "the token given back was A's, and is spent"
    );
}

#[tokio::test]
async fn all_or_nothing_and_keys_expire_when_full_again() {
    if support::skipped() {
        return;
    }
    let server = RedisServer::start();
    let limiter = RedisRateLimiter::new(&handle(&server, "n:"));
    let principal = alice("principal", Rate::per_second(10).and_burst(5));
    let tool = alice("tool:x", Rate::per_hour(1));
    let global = Bucket {
        key: BucketKey {
            rule: "global-tool:x",
            subject: None,
        },
        rate: Rate::per_hour(100),
    };
    let all = [principal, tool, global];
    assert_eq!(decide(&limiter, &all).await.unwrap(), Decision::Allowed);
    // The tool's bucket for alice is empty; the refusal names it and takes nothing.
    match decide(&limiter, &all).await.unwrap() {
        Decision::Refused {
            bucket: 1,
            retry_after,
        } => assert!(retry_after > Duration::from_secs(3590), "{retry_after:?}"),
        other => panic!("{other:?}"),
    }
    // Four more tokens for alice's own bucket: the refusal took none.
    for _ in 0..4 {
        assert_eq!(
            decide(&limiter, &[principal]).await.unwrap(),
            Decision::Allowed
        );
    }
    assert!(matches!(
        decide(&limiter, &[principal]).await.unwrap(),
        Decision::Refused { bucket: 0, .. }
    ));
    // Keys under the prefix, each expiring when its bucket is full again.
    let mut keys: Vec<String> = command(&server, redis::cmd("KEYS").arg("*")).await;
    keys.sort();
    assert_eq!(
        keys,
        [
            "n:rl:global-tool:x",
            "n:rl:principal|p:alice",
            "n:rl:tool:x|p:alice"
        ]
    );
    let ttl: i64 = command(&server, redis::cmd("PTTL").arg("n:rl:principal|p:alice")).await;
    assert!((1..=500).contains(&ttl), "5 tokens of 100 ms: {ttl}");
    let ttl: i64 = command(&server, redis::cmd("PTTL").arg("n:rl:tool:x|p:alice")).await;
    assert!(ttl > 3_590_000 && ttl <= 3_600_000, "{ttl}");
    // Full again: the key is gone and the burst is back.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let exists: i64 = command(&server, redis::cmd("EXISTS").arg("n:rl:principal|p:alice")).await;
    assert_eq!(exists, 0);
    for _ in 0..5 {
        assert_eq!(
            decide(&limiter, &[principal]).await.unwrap(),
            Decision::Allowed
        );
    }
}

#[tokio::test]
async fn an_unreachable_redis_is_an_error_not_a_decision() {
    if support::skipped() {
        return;
    }
    let mut server = RedisServer::start();
    let limiter = RedisRateLimiter::new(&handle(&server, "down:"));
    let bucket = alice("principal", Rate::per_second(1));
    assert_eq!(
        decide(&limiter, &[bucket]).await.unwrap(),
        Decision::Allowed
    );
    server.kill();
    let started = std::time::Instant::now();
    let err = decide(&limiter, &[bucket]).await.unwrap_err();
    assert!(
        matches!(err, LimitError::Store(_) | LimitError::Timeout(_)),
        "{err:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "bounded by the timeout"
    );
}
