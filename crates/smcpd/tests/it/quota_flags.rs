//! smcpd's rate limit flags: a bad rule is refused at start with the part at fault named, and
//! a rule on one instance (buckets in the process) refuses with 429, `Retry-After` and the
//! JSON-RPC error; per-caller rules key unauthenticated requests as `--rate-limit-anonymous`
//! says.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::support::{Smcpd, mcp, post_rpc};

/// smcpd's exit status and stderr for `args` (it must refuse them before listening).
fn refused(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_smcpd"))
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{args:?} accepted");
    assert!(out.stdout.is_empty(), "{args:?} listened");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn bad_rules_are_refused_naming_the_part() {
    for (arg, part) in [
        ("principal=10/d", "\"d\": the unit of a rate is s, m or h"),
        (
            "user=10/s",
            "\"user\": expected principal, tool:NAME or global-tool:NAME",
        ),
        ("tool:a b=1/s", "\"a b\": a tool name is"),
        ("principal=0/s", "\"0\": expected a rate"),
        ("principal=1/s,burst=0", "\"0\": a burst is a whole number"),
        ("principal=1/s,brust=2", "\"brust=2\": the only option"),
        ("principal", "expected SCOPE=RATE"),
    ] {
        let err = refused(&["--rate-limit", arg]);
        assert!(err.contains("--rate-limit"), "{arg}: {err}");
        assert!(err.contains(part), "{arg}: {err}");
    }
    let err = refused(&[
        "--rate-limit",
        "principal=1/s",
        "--rate-limit-anonymous",
        "ip",
    ]);
    assert!(
        err.contains("\"ip\": expected none, peer or shared"),
        "{err}"
    );
    // The anonymous key means nothing without a rule.
    let err = refused(&["--rate-limit-anonymous", "peer"]);
    assert!(err.contains("--rate-limit"), "{err}");
    let err = refused(&["--rate-limit", "principal=1/s", "--rate-limit-buckets", "0"]);
    assert!(err.contains("--rate-limit-buckets"), "{err}");
    for slice in ["0", "100001", "1.5", "many"] {
        let err = refused(&[
            "--rate-limit",
            "principal=1/s",
            "--rate-limit-prefetch",
            slice,
        ]);
        assert!(err.contains("--rate-limit-prefetch"), "{slice}: {err}");
    }
}

async fn echo(http: &reqwest::Client, url: &str, id: u64) -> (u16, Option<String>, Value) {
    let body = mcp(
        json!(id),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let response = post_rpc(http, url, &body).send().await.unwrap();
    let status = response.status().as_u16();
    let retry = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, retry, response.json().await.unwrap())
}

#[tokio::test]
async fn one_instance_refuses_past_the_burst() {
    let server = Smcpd::start_with(&[
        "--rate-limit",
        "tool:echo=1/m,burst=2",
        "--rate-limit-anonymous",
        "peer",
    ]);
    let url = format!("http://{}/mcp", server.addr);
    let http = reqwest::Client::new();
    for id in 1..=2 {
        let (status, _, body) = echo(&http, &url, id).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["result"]["content"][0]["text"], "hi");
    }
    let (status, retry, body) = echo(&http, &url, 3).await;
    assert_eq!(status, 429, "{body}");
    let ms = body["error"]["data"]["retryAfterMs"].as_u64().unwrap();
    assert!((59_000..=60_000).contains(&ms), "{body}");
    assert_eq!(retry.as_deref(), Some("60"));
    assert_eq!(body["id"], 3);
    assert_eq!(body["error"]["code"], -31000);
    assert_eq!(body["error"]["data"]["limit"], "tool:echo");
    // Other tools are not limited.
    let list = mcp(json!(4), "tools/list", json!({}));
    let response = post_rpc(&http, &url, &list).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let (status, err) = server.stop();
    assert!(status.success(), "{err}");
    assert!(err.contains("rate limits on"), "{err}");
}
