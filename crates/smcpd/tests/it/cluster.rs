//! Several smcpd instances sharing Redis behind nginx (`scripts/cluster`): what a request,
//! a listener and a load see when they land on different instances.
//!
//! Each test brings up its own cluster (Redis, three smcpd, nginx on free loopback ports; the
//! file test also SeaweedFS as the shared S3 file store) with the debug smcpd, and takes it
//! down at the end. `SMCP_CLUSTER=skip` skips them.

// scripts/cluster runs smcpd with --redis, the file flags, tasks (shared in Redis, tested in
// cluster_tasks.rs) and legacy sessions.
#![cfg(all(
    feature = "redis",
    feature = "files",
    feature = "tasks",
    feature = "legacy"
))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use smcp_client::{Client, RetryPolicy, SubscriptionEvent, SubscriptionFilter};

use crate::cluster_support::{Cluster, post, request};

fn confirm(id: u64, tool: &str, state: Option<&Value>) -> Value {
    let mut params = json!({"name": tool, "arguments": {"action": "rotate logs"}});
    if let Some(state) = state {
        params["inputResponses"] =
            json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
        params["requestState"] = state.clone();
    }
    request(id, "tools/call", params, json!({"elicitation": {}}))
}

/// A `subscriptions/listen` stream for tool-list changes on `url`, acknowledged.
async fn listen_for_tool_changes(url: &str) -> smcp_client::Subscription {
    let listener = Client::builder(url).build().unwrap();
    let mut events = listener.listen(SubscriptionFilter {
        tools_list_changed: Some(true),
        ..SubscriptionFilter::default()
    });
    let ack = tokio::time::timeout(Duration::from_secs(5), events.next()).await;
    assert!(
        matches!(ack, Ok(Some(Ok(SubscriptionEvent::Acknowledged(_))))),
        "{ack:?}"
    );
    events
}

async fn tool_names(url: &str) -> Vec<String> {
    let r = post(url, &request(9, "tools/list", json!({}), json!({}))).await;
    r["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_first_round_on_one_instance_and_the_retry_on_another() {
    need_cluster!();
    let c = Cluster::up();
    let r1 = post(&c.instance(1), &confirm(1, "confirm_action", None)).await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    let state = &r1["result"]["requestState"];
    let r2 = post(&c.instance(2), &confirm(2, "confirm_action", Some(state))).await;
    assert_eq!(
        r2["result"]["content"][0]["text"], "done: rotate logs",
        "{r2}"
    );
    // Through the load balancer, wherever each round lands.
    let r1 = post(&c.url, &confirm(3, "confirm_action", None)).await;
    let state = &r1["result"]["requestState"];
    let r2 = post(&c.url, &confirm(4, "confirm_action", Some(state))).await;
    assert_eq!(
        r2["result"]["content"][0]["text"], "done: rotate logs",
        "{r2}"
    );
}

#[tokio::test]
async fn a_single_use_state_redeemed_on_two_instances_at_once_is_honoured_once() {
    need_cluster!();
    let c = Cluster::up();
    for round in 0..5u64 {
        let r1 = post(&c.instance(1), &confirm(round * 10, "confirm_once", None)).await;
        let state = r1["result"]["requestState"].clone();
        assert!(state.is_string(), "{r1}");
        let (u2, u3) = (c.instance(2), c.instance(3));
        let (retry2, retry3) = (
            confirm(round * 10 + 1, "confirm_once", Some(&state)),
            confirm(round * 10 + 2, "confirm_once", Some(&state)),
        );
        let (a, b) = tokio::join!(post(&u2, &retry2), post(&u3, &retry3));
        let done = [&a, &b]
            .iter()
            .filter(|r| r["result"]["content"][0]["text"] == "done: rotate logs")
            .count();
        let refused = [&a, &b]
            .iter()
            .filter(|r| r["error"]["code"] == -32602 && r["error"]["data"]["reason"] == "replayed")
            .count();
        assert_eq!((done, refused), (1, 1), "{a}\n{b}");
    }
}

#[tokio::test]
async fn a_change_through_one_instance_reaches_a_listener_on_another_and_every_catalog() {
    need_cluster!();
    let c = Cluster::up();
    let mut events = listen_for_tool_changes(&c.instance(1)).await;
    for (via, expect_extra) in [(2, true), (3, false), (0, true)] {
        let url = if via == 0 {
            c.url.clone()
        } else {
            c.instance(via)
        };
        let started = Instant::now();
        let r = post(
            &url,
            &request(1, "tools/call", json!({"name": "toggle_extra"}), json!({})),
        )
        .await;
        assert!(r["result"]["content"][0]["text"].is_string(), "{r}");
        let event = tokio::time::timeout(Duration::from_secs(1), events.next())
            .await
            .expect("the listener on instance 1 heard of the change within 1 s");
        assert!(
            matches!(event, Some(Ok(SubscriptionEvent::ToolsListChanged))),
            "{event:?}"
        );
        let latency = started.elapsed();
        // Once the client has seen list_changed, every instance lists the new catalog.
        for i in 1..=3 {
            let names = tool_names(&c.instance(i)).await;
            assert_eq!(
                names.iter().any(|n| n == "extra"),
                expect_extra,
                "instance {i} after a change through {via}: {names:?}"
            );
        }
        // Once: the instances applying the revision do not publish it again.
        let again = tokio::time::timeout(Duration::from_millis(500), events.next()).await;
        assert!(again.is_err(), "a second event for one change: {again:?}");
        eprintln!("change through {via}: notified on instance 1 after {latency:?}");
    }
}

#[tokio::test]
async fn each_instance_ticks_its_clock_to_its_own_listeners_only() {
    need_cluster!();
    let c = Cluster::up_env("local", &[("SMCP_CLUSTER_CLOCK", "1")]);
    let listener = Client::builder(c.instance(1)).build().unwrap();
    let mut events = listener.listen(SubscriptionFilter {
        tools_list_changed: Some(true),
        resource_subscriptions: Some(vec!["smcp://clock".to_owned()]),
        ..SubscriptionFilter::default()
    });
    let ack = tokio::time::timeout(Duration::from_secs(5), events.next()).await;
    assert!(
        matches!(ack, Ok(Some(Ok(SubscriptionEvent::Acknowledged(_))))),
        "{ack:?}"
    );
    // The bus is shared: a catalog change through instance 2 reaches this listener.
    let r = post(
        &c.instance(2),
        &request(1, "tools/call", json!({"name": "toggle_extra"}), json!({})),
    )
    .await;
    assert!(r["result"]["content"][0]["text"].is_string(), "{r}");
    // Yet the clock ticks heard are instance 1's alone: one a second, where all three
    // instances' would be three a second.
    let window = Duration::from_millis(4500);
    let until = tokio::time::Instant::now() + window;
    let (mut ticks, mut list_changed) = (0, 0);
    while let Ok(event) = tokio::time::timeout_at(until, events.next()).await {
        match event {
            Some(Ok(SubscriptionEvent::ResourceUpdated { uri })) if uri == "smcp://clock" => {
                ticks += 1;
            }
            Some(Ok(SubscriptionEvent::ToolsListChanged)) => list_changed += 1,
            other => panic!("unexpected on the listen stream: {other:?}"),
        }
    }
    assert_eq!(list_changed, 1, "the change through instance 2");
    assert!(
        (3..=6).contains(&ticks),
        "{ticks} clock ticks in {window:?} on one listener"
    );
}

#[tokio::test]
async fn a_legacy_session_started_on_one_instance_continues_on_another() {
    need_cluster!();
    let c = Cluster::up();
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy-test", "version": "1"}}});
    let response = http
        .post(c.instance(1))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(init.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let legacy_post = |url: String, body: Value| {
        http.post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &session)
            .body(body.to_string())
            .send()
    };
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = legacy_post(c.instance(2), initialized).await.unwrap();
    assert_eq!(r.status(), 202);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let r = legacy_post(c.instance(3), list).await.unwrap();
    assert_eq!(r.status(), 200);
    let text = r.text().await.unwrap();
    assert!(text.contains("\"echo\""), "{text}");
    // Ended through one instance, it is gone on all.
    let r = http
        .delete(c.instance(1))
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let r = legacy_post(c.instance(2), list).await.unwrap();
    assert_eq!(r.status(), 404);
}

#[tokio::test]
async fn listeners_stay_open_through_a_redis_restart_and_hear_changes_after_it() {
    need_cluster!();
    let c = Cluster::up();
    let mut events = listen_for_tool_changes(&c.instance(1)).await;
    // Redis away for 3 s: readiness says so, naming the check, then recovers.
    let restart = {
        let dir = c.dir.clone();
        std::thread::spawn(move || {
            Command::new(smcp_test_support::root().join("scripts/cluster"))
                .args(["redis-restart", "3"])
                .env("SMCP_CLUSTER_DIR", dir)
                .env("SMCP_CLUSTER_FILES", "local")
                .status()
                .unwrap()
        })
    };
    let ready = c.instance(1).replace("/mcp", "/readyz");
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let r = http.get(&ready).send().await.unwrap();
        if r.status() == 503 {
            let body: Value = r.json().await.unwrap();
            assert_eq!(body["failing"][0]["check"], "redis", "{body}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "readiness never reported Redis down"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(restart.join().unwrap().success());
    // Back from the gap, instance 1 tells its listener changes may have been missed…
    let event = tokio::time::timeout(Duration::from_secs(10), events.next()).await;
    assert!(
        matches!(event, Ok(Some(Ok(SubscriptionEvent::ToolsListChanged)))),
        "{event:?}"
    );
    // …and changes through another instance reach it again, on the same stream.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = post(
            &c.instance(2),
            &request(1, "tools/call", json!({"name": "toggle_extra"}), json!({})),
        )
        .await;
        if r["result"]["isError"] != json!(true) && r["error"].is_null() {
            break;
        }
        // Instance 2's command connection may still be reconnecting.
        assert!(Instant::now() < deadline, "toggle kept failing: {r}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let event = tokio::time::timeout(Duration::from_secs(2), events.next()).await;
    assert!(
        matches!(event, Ok(Some(Ok(SubscriptionEvent::ToolsListChanged)))),
        "{event:?}"
    );
    assert!(
        c.log(1)
            .contains("listeners told changes may have been missed"),
        "{}",
        c.log(1)
    );
    let r = http.get(&ready).send().await.unwrap();
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap());
}

#[tokio::test]
async fn an_instance_killed_mid_load_costs_no_acknowledged_request() {
    need_cluster!();
    let c = Cluster::up();
    let client = Client::builder(c.url.clone())
        .retry(RetryPolicy::retries(4))
        .build()
        .unwrap();
    // The tool list tells the client that echo is read-only, so a lost call may be resent.
    client.list_tools().await.unwrap();
    let done = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for w in 0..8 {
        let client = client.clone();
        let done = done.clone();
        workers.push(tokio::spawn(async move {
            let mut failures = Vec::new();
            for i in 0..150 {
                let text = format!("w{w}-{i}");
                match client.call_tool("echo", json!({"text": text})).await {
                    Ok(r) => {
                        let got = serde_json::to_value(&r).unwrap();
                        assert_eq!(got["content"][0]["text"], text.as_str());
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => failures.push(format!("{text}: {e}")),
                }
            }
            failures
        }));
    }
    // Kill one instance with SIGKILL while the load runs.
    let deadline = Instant::now() + Duration::from_secs(30);
    while done.load(Ordering::Relaxed) < 200 {
        assert!(Instant::now() < deadline, "the load did not start");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    c.script(&["kill", "2"]);
    let mut failures = Vec::new();
    for w in workers {
        failures.extend(w.await.unwrap());
    }
    assert!(
        failures.is_empty(),
        "{} failed: {failures:?}",
        failures.len()
    );
    assert_eq!(done.load(Ordering::Relaxed), 8 * 150);
    // The survivors still serve.
    for i in [1, 3] {
        assert!(
            tool_names(&c.instance(i))
                .await
                .contains(&"echo".to_owned())
        );
    }
}

#[tokio::test]
async fn a_file_uploaded_through_one_instance_is_used_through_a_second_and_downloaded_through_a_third()
 {
    need_cluster!();
    // The S3 store (SeaweedFS) shared by the instances, unless S3 is skipped.
    let s3_skipped = !smcp_test_support::require_service("S3 (SeaweedFS)", "SMCP_S3");
    let c = Cluster::up_with(if s3_skipped { "local" } else { "s3" });
    let client = |url: String| {
        Client::builder(url)
            .files(smcp_client::FileTransfer {
                allow_insecure_loopback: true,
                ..smcp_client::FileTransfer::default()
            })
            .build()
            .unwrap()
    };
    // Every instance's descriptors point at the load balancer (--files-base-url); a client
    // per instance makes each step land where the test says.
    let (a, b, cc) = (
        client(c.instance(1)),
        client(c.instance(2)),
        client(c.instance(3)),
    );
    let bytes: Vec<u8> = (0..3u32 << 20)
        .map(|i| {
            if i % 80 == 79 {
                b'\n'
            } else {
                b'a' + (i % 26) as u8
            }
        })
        .collect();
    let file = a
        .upload_bytes(
            bytes.clone().into(),
            smcp_client::files::UploadMeta::new(0).name("cluster.txt"),
            None,
        )
        .await
        .unwrap();
    let call = b
        .call_tool("analyze_document", json!({"document": file.uri}))
        .await
        .unwrap();
    let out = serde_json::to_value(&call).unwrap();
    assert_ne!(out["isError"], json!(true), "{out}");
    assert_eq!(
        out["structuredContent"]["digest"]["value"],
        serde_json::to_value(&file.digest).unwrap()["value"],
        "{out}"
    );
    let mut downloaded = Vec::new();
    let meta = cc
        .download_into(&file.uri, &mut downloaded, None)
        .await
        .unwrap();
    assert_eq!(downloaded, bytes);
    assert_eq!(meta.size, file.size);
    // And entirely through nginx, wherever each step lands.
    let lb = client(c.url.clone());
    let again = lb
        .upload_bytes(
            bytes.clone().into(),
            smcp_client::files::UploadMeta::new(0).name("again.txt"),
            None,
        )
        .await
        .unwrap();
    let mut through = Vec::new();
    lb.download_into(&again.uri, &mut through, None)
        .await
        .unwrap();
    assert_eq!(through, bytes);
}
