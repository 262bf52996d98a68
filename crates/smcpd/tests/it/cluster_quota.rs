//! Rate limits across instances (`scripts/cluster` with `--rate-limit`): a caller's burst is
//! one burst for the three instances behind nginx, kept in Redis, and each instance's metrics
//! count its own decisions. The cluster has no authorization, so the caller is the peer
//! address every request comes from: nginx's (`--rate-limit-anonymous peer`). With the default
//! slices of a fast bucket, the instances together never let more through than it holds.

#![cfg(all(
    feature = "redis",
    feature = "files",
    feature = "tasks",
    feature = "legacy",
    feature = "metrics"
))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Value, json};

use crate::cluster_support::{Cluster, request};

const ARGS: &str = "--rate-limit principal=0.1/s,burst=10 --rate-limit-anonymous peer \
                    --metrics-listen 127.0.0.1:0";

/// Instance `i`'s metrics URL, from its log line.
fn metrics_url(cluster: &Cluster, i: usize) -> String {
    let log = cluster.log(i);
    let line = log
        .lines()
        .find(|l| l.contains("metrics on http://"))
        .unwrap_or_else(|| panic!("no metrics listener in smcpd-{i}.log:\n{log}"));
    let start = line.find("http://").unwrap();
    let url = &line[start..];
    url[..url.find("/metrics").unwrap() + "/metrics".len()].to_owned()
}

/// The value of the counter line starting with `series` in `text`, 0 when absent.
fn counter(text: &str, series: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn a_callers_burst_is_shared_by_every_instance() {
    need_cluster!();
    let cluster = Cluster::up_env("local", &[("SMCP_CLUSTER_ARGS", ARGS)]);
    let http = reqwest::Client::new();
    let mut answers = Vec::new();
    for id in 1..=12u64 {
        let body = request(
            id,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
            json!({}),
        );
        let response = crate::support::post_rpc(&http, &cluster.url, &body)
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let retry = response
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned());
        let body: Value = response.json().await.unwrap();
        answers.push((status, retry, body));
    }
    // Ten in the burst, through three instances; then refused.
    for (status, _, body) in &answers[..10] {
        assert_eq!(*status, 200, "{body}");
        assert_eq!(body["result"]["content"][0]["text"], "hi", "{body}");
    }
    for (i, (status, retry, body)) in answers[10..].iter().enumerate() {
        assert_eq!(*status, 429, "{body}");
        assert_eq!(body["id"], 11 + i, "{body}");
        assert_eq!(body["error"]["code"], -31000, "{body}");
        assert_eq!(body["error"]["data"]["limit"], "principal", "{body}");
        let ms = body["error"]["data"]["retryAfterMs"].as_u64().unwrap();
        assert!((1..=10_000).contains(&ms), "one token every 10 s: {body}");
        assert_eq!(
            retry.as_deref(),
            Some(ms.div_ceil(1000).to_string().as_str())
        );
    }
    // Each instance counted its own decisions; together, the whole burst and the refusals.
    let (mut allowed, mut refused, mut serving) = (0, 0, 0);
    for i in 1..=3 {
        let text = reqwest::get(metrics_url(&cluster, i))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let a = counter(
            &text,
            r#"smcp_rate_limit_decisions_total{limit="principal",outcome="allowed"}"#,
        );
        let r = counter(
            &text,
            r#"smcp_rate_limit_decisions_total{limit="principal",outcome="refused"}"#,
        );
        assert_eq!(
            counter(
                &text,
                r#"smcp_rate_limit_decisions_total{limit="principal",outcome="error"}"#
            ),
            0,
            "{text}"
        );
        if a > 0 {
            serving += 1;
        }
        allowed += a;
        refused += r;
    }
    assert_eq!((allowed, refused), (10, 2));
    assert!(serving >= 2, "nginx spread the burst over the instances");
}

const SLICED: &[(&str, &str)] = &[(
    "SMCP_CLUSTER_ARGS",
    "--rate-limit global-tool:echo=20/s,burst=320",
)];

/// With the default slices, the instances spend what they took from Redis without asking
/// again, and together never let more through than the bucket holds: 600 calls, 16 at once,
/// on a bucket of 320 refilling 20 a second (a slice is 20 tokens).
#[tokio::test]
async fn slices_never_let_more_through_than_the_bucket_holds() {
    need_cluster!();
    let cluster = Cluster::up_env("local", SLICED);
    let http = reqwest::Client::new();
    let started = std::time::Instant::now();
    let answers: Vec<(u16, Value)> = futures_util::stream::iter(1..=600u64)
        .map(|id| {
            let (http, url) = (http.clone(), cluster.url.clone());
            async move {
                let body = request(
                    id,
                    "tools/call",
                    json!({"name": "echo", "arguments": {"text": "hi"}}),
                    json!({}),
                );
                let response = crate::support::post_rpc(&http, &url, &body)
                    .timeout(Duration::from_secs(10))
                    .send()
                    .await
                    .unwrap();
                let status = response.status().as_u16();
                (status, response.json().await.unwrap())
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let refilled = started.elapsed().as_millis() as u64 / 50 + 1;
    let mut allowed = 0;
    for (status, body) in &answers {
        match status {
            200 => allowed += 1,
            429 => assert_eq!(body["error"]["data"]["limit"], "global-tool:echo", "{body}"),
            _ => panic!("{status}: {body}"),
        }
    }
    assert!(
        allowed <= 320 + refilled,
        "never beyond the burst and what refilled: {allowed} > 320 + {refilled}"
    );
    assert!(
        allowed >= 320 - 3 * 19,
        "at most a slice per instance unspent: {allowed}"
    );
}
