//! Rate limits across instances (`scripts/cluster` with `--rate-limit`): a caller's burst is
//! one burst for the three instances behind nginx, kept in Redis, and each instance's metrics
//! count its own decisions. The cluster has no authorization, so the caller is the peer
//! address every request comes from: nginx's (`--rate-limit-anonymous peer`).

#![cfg(all(
    feature = "redis",
    feature = "files",
    feature = "tasks",
    feature = "legacy",
    feature = "metrics"
))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

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
