//! `smcpd gateway`, the real binary, in front of real upstreams: smcpd itself over stdio, at
//! 2026-07-28 and pinned to 2025-11-25, driven by smcp-client at 2026-07-28: the catalog,
//! questions in the middle of a call, sampling, resource subscriptions, cancellation, an
//! upstream killed, configuration mistakes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;
use smcp_client::{CancellationToken, Client};

use crate::gateway_support::{children, config, serves};
use crate::support::{Confirm, Smcpd};

const LOG: &str = "smcpd=info,smcp_gateway=info";

const TWO_ERAS: &str = r#"
[[upstream]]
name = "now"
command = ["{smcpd}", "--stdio", "--log", "info"]

[[upstream]]
name = "old"
command = ["{smcpd}", "--stdio", "--log", "info"]
era = "2025-11-25"
tools.deny = ["toggle_extra"]
resources.deny = ["smcp://readme", "smcp://clock"]
"#;

/// How many progress notifications a call of `tool` (smcpd's `progress_echo`) passed on.
async fn progress_seen(client: &Client, tool: &str) -> u32 {
    let seen = Arc::new(Mutex::new(0u32));
    let count = Arc::clone(&seen);
    client
        .tool_call(tool)
        .arguments(json!({"text": "p"}))
        .on_progress(move |_| *count.lock().unwrap() += 1)
        .send()
        .await
        .unwrap();
    *seen.lock().unwrap()
}

fn client(gateway: &Smcpd, asked: &Confirm) -> Client {
    Client::builder(format!("http://{}/mcp", gateway.addr))
        .input_handler(asked.clone())
        .build()
        .unwrap()
}

#[tokio::test]
async fn one_catalog_of_both_eras_with_their_questions_answered_through_the_gateway() {
    let (_dir, path) = config(TWO_ERAS);
    let gateway = Smcpd::start_gateway(&path, &[], LOG);
    let asked = Confirm::default();
    let client = client(&gateway, &asked);

    let names = serves(
        &client,
        &[
            "now_echo",
            "now_confirm_action",
            "old_echo",
            "old_confirm_action",
        ],
    )
    .await;
    assert!(names.iter().any(|n| n == "now_toggle_extra"), "{names:?}");
    assert!(
        !names.iter().any(|n| n == "old_toggle_extra"),
        "tools.deny leaves it out: {names:?}"
    );

    let echoed = client
        .call_tool("old_echo", json!({"text": "through a 2025 session"}))
        .await
        .unwrap();
    assert_eq!(echoed.text_content(), "through a 2025 session");

    // A 2025 upstream asks with elicitation/create in the middle of the call; the 2026 client
    // gets an InputRequiredResult, and its retry's answer reaches the upstream.
    let done = client
        .call_tool("old_confirm_action", json!({"action": "deploy"}))
        .await
        .unwrap();
    assert_eq!(done.text_content(), "done: deploy");
    // The same through a 2026-07-28 upstream, whose InputRequiredResult the gateway holds.
    let done = client
        .call_tool("now_confirm_action", json!({"action": "rollback"}))
        .await
        .unwrap();
    assert_eq!(done.text_content(), "done: rollback");
    assert_eq!(
        *asked.0.lock().unwrap(),
        ["Really deploy?", "Really rollback?"],
        "each question was put to the client once"
    );

    // Progress passes through, from either era.
    for tool in ["now_progress_echo", "old_progress_echo"] {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let result = client
            .tool_call(tool)
            .arguments(json!({"text": "p"}))
            .on_progress(move |p| sink.lock().unwrap().push(p.progress))
            .send()
            .await
            .unwrap();
        assert_eq!(result.text_content(), "p");
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 10, "{tool}: {seen:?}");
        assert_eq!(seen.last(), Some(&10.0), "{tool}: {seen:?}");
    }

    // Log lines pass through, from either era, at the level the client asked.
    for tool in ["now_count", "old_count"] {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        client
            .tool_call(tool)
            .arguments(json!({"to": 3, "delay_ms": 0}))
            .on_log(
                smcp_client::proto::basic::LoggingLevel::Debug,
                move |line| {
                    sink.lock().unwrap().push(line.data);
                },
            )
            .send()
            .await
            .unwrap();
        let lines = lines.lock().unwrap().clone();
        assert_eq!(
            lines,
            [json!({"step": 1}), json!({"step": 2}), json!({"step": 3})],
            "{tool}"
        );
    }

    // Prompts under their upstream's prefix, resources under their own URIs, completion
    // routed to the prompt's upstream.
    let prompts: Vec<String> = client
        .list_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(prompts, ["now_greet", "old_greet"]);
    let greeting = client
        .get_prompt(
            "old_greet",
            std::collections::BTreeMap::from([("name".to_owned(), "Grace".to_owned())]),
        )
        .await
        .unwrap();
    assert!(format!("{greeting:?}").contains("Grace"), "{greeting:?}");
    let readme = client.read_resource("smcp://readme").await.unwrap();
    assert!(format!("{readme:?}").contains("smcpd is the smcp reference server"));
    let completed = client
        .complete(
            smcp_client::proto::server::utilities::completion::CompletionReference::Prompt(
                smcp_client::proto::server::utilities::completion::PromptReference {
                    name: "now_greet".to_owned(),
                    title: None,
                },
            ),
            "name",
            "A",
            std::collections::BTreeMap::new(),
        )
        .await
        .unwrap();
    assert_eq!(completed.completion.values, ["Ada", "Alan"]);
    let discovered = client.discover().await.unwrap().capabilities;
    assert!(discovered.prompts.is_some() && discovered.resources.is_some());
    assert!(discovered.completions.is_some() && discovered.logging.is_some());
    assert_eq!(
        discovered.resources.as_ref().unwrap().subscribe,
        Some(true),
        "the upstreams watch resources, so the gateway does: {discovered:?}"
    );

    // An upstream's list change reaches the gateway's listeners, with the new tool served.
    let mut changes = client.listen(smcp_client::SubscriptionFilter {
        tools_list_changed: Some(true),
        ..smcp_client::SubscriptionFilter::default()
    });
    let acknowledged = tokio::time::timeout(Duration::from_secs(10), changes.next())
        .await
        .unwrap();
    assert!(
        matches!(
            acknowledged,
            Some(Ok(smcp_client::SubscriptionEvent::Acknowledged(_)))
        ),
        "{acknowledged:?}"
    );
    client
        .call_tool("now_toggle_extra", json!({}))
        .await
        .unwrap();
    let changed = tokio::time::timeout(Duration::from_secs(10), changes.next())
        .await
        .unwrap();
    assert!(
        matches!(
            changed,
            Some(Ok(smcp_client::SubscriptionEvent::ToolsListChanged))
        ),
        "{changed:?}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let tools = client.list_tools().await.unwrap();
        if tools.iter().any(|t| t.name == "now_extra") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "now_extra never listed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(changes);

    // A stopped gateway stops its upstream programs.
    let upstreams = children(gateway.child.id());
    assert_eq!(upstreams.len(), 2, "{upstreams:?}");
    let status = gateway.terminate();
    assert!(status.success(), "{status}");
    for pid in upstreams {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(
            stat.is_empty() || stat.contains(") Z "),
            "upstream {pid} still runs: {stat}"
        );
    }
}

#[tokio::test]
async fn a_sampling_request_of_either_era_is_answered_by_the_client_through_the_gateway() {
    let (_dir, path) = config(TWO_ERAS);
    let gateway = Smcpd::start_gateway(&path, &[], LOG);
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&prompts);
    let handler = smcp_client::FnInputHandler::new().on_sampling(move |params| {
        let seen = Arc::clone(&seen);
        async move {
            seen.lock()
                .unwrap()
                .push(params.system_prompt.clone().unwrap_or_default());
            let answer = serde_json::from_value(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "A short summary."},
                "model": "test-model",
                "stopReason": "endTurn"
            }))
            .map_err(|e| smcp_client::InputHandlerError::new(e.to_string()))?;
            Ok(answer)
        }
    });
    let client = Client::builder(format!("http://{}/mcp", gateway.addr))
        .input_handler(handler)
        .build()
        .unwrap();
    // The 2025 upstream asks with sampling/createMessage in the middle of the call; the
    // 2026-07-28 one answers InputRequiredResult.
    for tool in ["old_ask_llm", "now_ask_llm"] {
        let result = client
            .call_tool(tool, json!({"text": "a long text"}))
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        assert_eq!(
            result.text_content(),
            "A short summary. (model: test-model)",
            "{tool}"
        );
    }
    assert_eq!(
        *prompts.lock().unwrap(),
        [
            "You write terse, accurate summaries.",
            "You write terse, accurate summaries."
        ]
    );
}

#[tokio::test]
async fn upstreams_pinned_to_the_earlier_2025_revisions_are_served_too() {
    let (_dir, path) = config(
        r#"
        [[upstream]]
        name = "june"
        command = ["{smcpd}", "--stdio", "--log", "warn"]
        era = "2025-06-18"
        resources.deny = ["smcp://readme", "smcp://clock"]

        [[upstream]]
        name = "march"
        command = ["{smcpd}", "--stdio", "--log", "warn"]
        era = "2025-03-26"
        "#,
    );
    let gateway = Smcpd::start_gateway(&path, &[], LOG);
    let asked = Confirm::default();
    let client = client(&gateway, &asked);
    serves(&client, &["june_echo", "march_echo", "june_confirm_action"]).await;
    for tool in ["june_echo", "march_echo"] {
        let echoed = client
            .call_tool(tool, json!({"text": tool}))
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        assert_eq!(echoed.text_content(), tool);
    }
    assert_eq!(progress_seen(&client, "march_progress_echo").await, 10);
    // Elicitation came with 2025-06-18: asked in the middle of the call, held, answered.
    let done = client
        .call_tool("june_confirm_action", json!({"action": "ship"}))
        .await
        .unwrap();
    assert_eq!(done.text_content(), "done: ship");
}

#[tokio::test]
async fn an_h2c_upstream_is_reached_over_http2_with_progress_passed_on() {
    let upstream = Smcpd::start_with(&["--h2c", "--clock-secs", "0"]);
    // It also takes HTTP/2 with prior knowledge from anyone (and HTTP/1.1 as before).
    let h2 = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let url = format!("http://{}/mcp", upstream.addr);
    let body = crate::support::mcp(json!(1), "server/discover", json!({}));
    let response = crate::support::post_rpc(&h2, &url, &body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_2);
    assert_eq!(response.status(), 200);
    let (_dir, path) = config(&format!(
        "[[upstream]]\nname = \"up\"\nurl = \"{url}\"\nhttp = \"2\"\n"
    ));
    let gateway = Smcpd::start_gateway(&path, &[], LOG);
    let asked = Confirm::default();
    let client = client(&gateway, &asked);
    serves(&client, &["up_echo", "up_progress_echo"]).await;
    let echoed = client
        .call_tool("up_echo", json!({"text": "over h2"}))
        .await
        .unwrap();
    assert_eq!(echoed.text_content(), "over h2");
    assert_eq!(progress_seen(&client, "up_progress_echo").await, 10);
}

#[tokio::test]
async fn without_h2c_a_plain_listener_refuses_http2_prior_knowledge() {
    let upstream = Smcpd::start_with(&["--clock-secs", "0"]);
    let h2 = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let url = format!("http://{}/mcp", upstream.addr);
    let body = crate::support::mcp(json!(1), "server/discover", json!({}));
    assert!(
        crate::support::post_rpc(&h2, &url, &body)
            .send()
            .await
            .is_err()
    );
}

// Two workers: the log is waited for on one (a blocking wait) while the client's connection
// closes on the other.
#[tokio::test]
async fn a_resource_subscription_is_watched_upstream_in_either_era() {
    for era in ["2026-07-28", "2025-11-25"] {
        // The upstream's clock resource ticks every second.
        let (_dir, path) = config(&format!(
            "[[upstream]]\nname = \"up\"\ncommand = [\"{{smcpd}}\", \"--stdio\", \"--clock-secs\", \"1\"]\nera = \"{era}\"\n"
        ));
        let gateway = Smcpd::start_gateway(&path, &[], LOG);
        let client = client(&gateway, &Confirm::default());
        let mut clock = client.listen(smcp_client::SubscriptionFilter {
            resource_subscriptions: Some(vec!["smcp://clock".to_owned()]),
            ..Default::default()
        });
        let mut granted = None;
        let mut ticked = false;
        while !ticked {
            let event = tokio::time::timeout(Duration::from_secs(10), clock.next())
                .await
                .unwrap_or_else(|_| panic!("{era}: an event in time"))
                .unwrap()
                .unwrap();
            match event {
                smcp_client::SubscriptionEvent::Acknowledged(filter) => {
                    granted = filter.resource_subscriptions;
                }
                smcp_client::SubscriptionEvent::ResourceUpdated { uri } => {
                    assert_eq!(uri, "smcp://clock");
                    ticked = true;
                }
                _ => {}
            }
        }
        assert_eq!(
            granted.as_deref(),
            Some(&["smcp://clock".to_owned()][..]),
            "{era}: granted before the first tick"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_cancels_the_upstream_call() {
    let (_dir, path) = config(TWO_ERAS);
    let mut gateway = Smcpd::start_gateway(&path, &[], LOG);
    let log = gateway.follow_log();
    let asked = Confirm::default();
    let client = client(&gateway, &asked);
    for (tool, upstream) in [("now_count", "upstream=now"), ("old_count", "upstream=old")] {
        let cancel = CancellationToken::new();
        let stop = cancel.clone();
        let steps = Arc::new(Mutex::new(0u32));
        let seen = Arc::clone(&steps);
        let call = client
            .tool_call(tool)
            .arguments(json!({"to": 200, "delay_ms": 50}))
            .on_progress(move |_| {
                let mut n = seen.lock().unwrap();
                *n += 1;
                if *n == 3 {
                    stop.cancel();
                }
            })
            .cancellation(cancel)
            .send();
        let error = tokio::time::timeout(Duration::from_secs(20), call)
            .await
            .expect("the cancelled call ends")
            .unwrap_err();
        assert!(error.is_cancelled(), "{tool}: {error}");
        // The upstream smcpd logs its side of the cancellation on its stderr, which the
        // gateway logs under the upstream's name.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !log
            .lines()
            .iter()
            .any(|l| l.contains("count cancelled by the client") && l.contains(upstream))
        {
            assert!(
                std::time::Instant::now() < deadline,
                "{tool}: the upstream did not see the cancellation: {:#?}",
                log.lines()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test]
async fn an_upstream_killed_mid_call_fails_that_call_clearly_and_serves_the_next() {
    let (_dir, path) = config(
        r#"
        [[upstream]]
        name = "up"
        command = ["{smcpd}", "--stdio", "--log", "warn"]
        restart = { initial_backoff = "50ms", max_backoff = "1s" }
        "#,
    );
    let gateway = Smcpd::start_gateway(&path, &[], LOG);
    let asked = Confirm::default();
    let client = client(&gateway, &asked);
    assert_eq!(
        client
            .call_tool("up_echo", json!({"text": "before"}))
            .await
            .unwrap()
            .text_content(),
        "before"
    );
    let upstream = children(gateway.child.id());
    assert_eq!(upstream.len(), 1, "one upstream process: {upstream:?}");

    let started = Arc::new(tokio::sync::Notify::new());
    let first = Arc::clone(&started);
    let call = client
        .tool_call("up_count")
        .arguments(json!({"to": 100, "delay_ms": 100}))
        .on_progress(move |_| first.notify_one())
        .send();
    let killer = async {
        started.notified().await;
        let status = std::process::Command::new("kill")
            .args(["-KILL", &upstream[0].to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    };
    let (result, ()) = tokio::join!(call, killer);
    let error = result.unwrap_err();
    assert_eq!(error.jsonrpc_code(), Some(-32603), "{error}");
    let message = error.to_string();
    assert!(
        message.contains("upstream \"up\"") && message.contains("exited during the call"),
        "{message}"
    );

    // The next call waits for the restart and is served by a new process.
    let after = client
        .call_tool("up_echo", json!({"text": "after"}))
        .await
        .unwrap();
    assert_eq!(after.text_content(), "after");
    let now = children(gateway.child.id());
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now, upstream, "a new process");
}

#[test]
fn two_upstreams_offering_one_name_stop_the_start_naming_both() {
    let (_dir, path) = config(
        r#"
        [[upstream]]
        name = "a"
        prefix = ""
        command = ["{smcpd}", "--stdio", "--log", "warn"]

        [[upstream]]
        name = "b"
        prefix = ""
        command = ["{smcpd}", "--stdio", "--log", "warn"]
        tools.allow = ["add", "echo"]
        "#,
    );
    let (status, stderr) = run_to_end(&path);
    assert!(!status.success());
    assert!(
        stderr.contains(r#"the tool "echo" is offered by upstream "a" and by upstream "b""#),
        "{stderr}"
    );
}

#[test]
fn a_configuration_mistake_is_named_before_anything_starts() {
    let (_dir, path) = config(
        r#"
        [[upstream]]
        name = "a"
        command = ["{smcpd}", "--stdio"]
        env_from = ["SMCP_GATEWAY_TEST_UNSET_VARIABLE"]
        "#,
    );
    let (status, stderr) = run_to_end(&path);
    assert!(!status.success());
    assert!(
        stderr.contains(
            r#"upstream "a": the environment variable SMCP_GATEWAY_TEST_UNSET_VARIABLE is not set"#
        ),
        "{stderr}"
    );
    let (_dir, path) = config("[[upstream]]\nname = \"a\"\nurl = \"ftp://x\"\n");
    let (status, stderr) = run_to_end(&path);
    assert!(!status.success());
    assert!(
        stderr.contains(r#"upstream "a", url: must be an http:// or https:// URL"#),
        "{stderr}"
    );
}

/// Runs `smcpd gateway` expecting it to stop on its own (a start that fails).
pub(crate) fn run_to_end(config: &Path) -> (std::process::ExitStatus, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_smcpd"))
        .args(["gateway", "--config", config.to_str().unwrap()])
        .args(["--listen", "127.0.0.1:0", "--log", "warn"])
        .output()
        .unwrap();
    (
        output.status,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
