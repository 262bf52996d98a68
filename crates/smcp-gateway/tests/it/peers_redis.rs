//! `RedisPeers` on a real Redis (feature `redis`; `SMCP_REDIS=skip` skips it): a retry
//! forwarded from one instance to another comes back with the call's events, in order and
//! before the outcome; a cancel reaches the call there; an instance that is gone is named.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, json};
use smcp_gateway::{
    ForwardedEvent, ForwardedOutcome, ForwardedRetry, PeerError, Peers, RedisPeers,
};
use smcp_proto::patterns::progress::ProgressNotificationParams;
use smcp_proto::server::tools::CallToolResult;
use smcp_redis::{Redis, RedisBus};
use tokio_util::sync::CancellationToken;

fn peers(url: &str) -> (RedisBus, RedisPeers) {
    let redis = Redis::builder(url).key_prefix("gw-test:").build().unwrap();
    let bus = RedisBus::start(&redis);
    let peers = RedisPeers::new(&bus);
    (bus, peers)
}

fn retry(call: &str) -> ForwardedRetry {
    ForwardedRetry {
        call: call.to_owned(),
        response: Some(json!({"action": "accept"})),
        capabilities: Map::new(),
    }
}

/// Waits until both buses are subscribed.
async fn subscribed(buses: &[&RedisBus]) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !buses.iter().all(|b| b.status().connected) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "buses never subscribed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_retry_comes_back_with_its_events_then_its_outcome() {
    if smcp_test_support::redis::skipped() {
        return;
    }
    let server = smcp_test_support::redis::RedisServer::start();
    let (bus_a, a) = peers(&server.url());
    let (bus_b, b) = peers(&server.url());
    subscribed(&[&bus_a, &bus_b]).await;
    let cancelled = Arc::new(tokio::sync::Notify::new());
    let seen_cancel = Arc::clone(&cancelled);
    a.serve(Arc::new(move |retry, cancel, events| {
        let seen_cancel = Arc::clone(&seen_cancel);
        Box::pin(async move {
            if retry.call == "slow" {
                cancel.cancelled().await;
                seen_cancel.notify_one();
                return ForwardedOutcome::ToolFailed {
                    message: "cancelled".to_owned(),
                };
            }
            for step in 1..=3 {
                let token = smcp_proto::jsonrpc::RequestId::String("t".to_owned());
                let params = ProgressNotificationParams::new(token, f64::from(step), None);
                let _ = events.send(ForwardedEvent::Progress { params }).await;
            }
            ForwardedOutcome::Complete {
                result: CallToolResult::text(format!("done {}", retry.call)),
            }
        })
    }));

    let (events, mut heard) = tokio::sync::mpsc::channel(16);
    let outcome = b
        .forward(
            a.instance(),
            retry("c1"),
            Duration::from_secs(10),
            CancellationToken::new(),
            events,
        )
        .await
        .unwrap();
    assert_eq!(
        outcome,
        ForwardedOutcome::Complete {
            result: CallToolResult::text("done c1")
        }
    );
    let mut steps = Vec::new();
    while let Ok(ForwardedEvent::Progress { params }) = heard.try_recv() {
        steps.push(params.progress);
    }
    assert_eq!(
        steps,
        [1.0, 2.0, 3.0],
        "every event, in order, before the outcome"
    );

    // The forwarding client goes away: the call there is cancelled.
    let cancel = CancellationToken::new();
    let (events, _heard) = tokio::sync::mpsc::channel(16);
    let forwarded = b.forward(
        a.instance(),
        retry("slow"),
        Duration::from_secs(10),
        cancel.clone(),
        events,
    );
    let canceller = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    };
    let (ended, ()) = tokio::join!(forwarded, canceller);
    assert_eq!(ended, Err(PeerError::Cancelled));
    tokio::time::timeout(Duration::from_secs(10), cancelled.notified())
        .await
        .expect("the call there was cancelled");

    // An instance nobody listens for.
    let (events, _heard) = tokio::sync::mpsc::channel(16);
    let gone = b
        .forward(
            "no-such-instance",
            retry("c2"),
            Duration::from_secs(10),
            CancellationToken::new(),
            events,
        )
        .await;
    assert_eq!(gone, Err(PeerError::Gone));
}
