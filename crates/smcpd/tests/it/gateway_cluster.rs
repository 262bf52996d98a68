//! Two `smcpd gateway --redis` instances sharing a real Redis, in front of a 2025-11-25
//! upstream (smcpd itself over stdio) that asks in the middle of a call: the client's retry
//! lands on the instance that does not hold the call, is forwarded to the one that does
//! through the Redis bus, and the call goes on there. A retry for an instance that stopped
//! names it gone. `SMCP_REDIS=skip` skips it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::gateway_support::{config, rpc_answer};
use crate::support::{Smcpd, mcp, post_rpc};

const HELD: &str = r#"
[[upstream]]
name = "old"
command = ["{smcpd}", "--stdio", "--log", "warn"]
era = "2025-11-25"
"#;

/// `old_confirm_action` from a client that can answer a form: with `extra` (a retry's
/// `inputResponses` and `requestState`), to `addr`.
async fn confirm(addr: std::net::SocketAddr, extra: Value) -> Value {
    let mut params = json!({"name": "old_confirm_action", "arguments": {"action": "deploy"}});
    for (key, value) in extra.as_object().unwrap() {
        params[key] = value.clone();
    }
    let mut body = mcp(json!(1), "tools/call", params);
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {"form": {}}});
    let response = post_rpc(
        &reqwest::Client::new(),
        &format!("http://{addr}/mcp"),
        &body,
    )
    .send()
    .await
    .unwrap();
    let (status, answer) = rpc_answer(response).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

fn state_of(answer: &Value) -> String {
    assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
    answer["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_on_the_other_instance_is_forwarded_through_redis() {
    if smcp_test_support::redis::skipped() {
        return;
    }
    let redis = smcp_test_support::redis::RedisServer::start();
    let url = redis.url();
    let (_dir, path) = config(HELD);
    // The instances share the key that seals requestState, as behind one balancer.
    let key = format!("k1:{}", "A".repeat(43) + "=");
    let flags = ["--redis", &url, "--state-key", &key];
    let a = Smcpd::start_gateway(&path, &flags, "smcpd=info,smcp_gateway=debug");
    let b = Smcpd::start_gateway(&path, &flags, "smcpd=info,smcp_gateway=debug");
    let accept = json!({"upstream": {"action": "accept", "content": {"confirm": true}}});

    // Asked on A; answered on B, which forwards to A.
    let state = state_of(&confirm(a.addr, json!({})).await);
    let done = confirm(
        b.addr,
        json!({"inputResponses": accept, "requestState": state}),
    )
    .await;
    assert_eq!(
        done["result"]["content"][0]["text"], "done: deploy",
        "{done}"
    );

    // Asked on B; a retry without the answer on A is asked again (still held by B), then
    // answered on A.
    let state = state_of(&confirm(b.addr, json!({})).await);
    let again = state_of(&confirm(a.addr, json!({"requestState": state})).await);
    let done = confirm(
        a.addr,
        json!({"inputResponses": accept, "requestState": again}),
    )
    .await;
    assert_eq!(
        done["result"]["content"][0]["text"], "done: deploy",
        "{done}"
    );

    // Asked on A, which then stops: the retry on B says the holder is gone.
    let state = state_of(&confirm(a.addr, json!({})).await);
    let (status, _) = a.stop();
    assert!(status.success() || status.code().is_some(), "{status:?}");
    let gone = confirm(
        b.addr,
        json!({"inputResponses": accept, "requestState": state}),
    )
    .await;
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    assert_eq!(gone["error"]["data"]["reason"], "held-call-gone", "{gone}");
    assert!(
        gone["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is gone"),
        "{gone}"
    );
}
