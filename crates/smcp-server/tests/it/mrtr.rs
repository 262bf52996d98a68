//! Multi round-trip requests: the handler API, the sealed `requestState` and every way a
//! retry can be wrong (REQUIREMENTS A6; issue #3 "Bad input"). Each bad case asserts the exact
//! error and that the handler's side effect did not happen.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value
)]

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use common::*;
use serde_json::{Value, json};
use smcp_proto::server::tools::{CallToolResult, ToolAnnotations};
use smcp_server::mrtr::{self, Key, KeyRing, MemoryReplayGuard, MrtrConfig};
use smcp_server::{HandlerError, McpService, Server, ServerBuilder, tool};

/// Counts completed side effects (the "delete" really happening).
#[derive(Clone, Default)]
struct Effects(Arc<AtomicUsize>);

impl Effects {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

fn confirm_form() -> Value {
    json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
}

fn ring(id: &str, byte: u8) -> KeyRing {
    KeyRing::new(Key::new(id, [byte; 32]).unwrap())
}

/// A controllable clock: milliseconds since the epoch.
#[derive(Clone)]
struct TestClock(Arc<AtomicU64>);

impl TestClock {
    fn new() -> Self {
        Self(Arc::new(AtomicU64::new(1_800_000_000_000)))
    }
    fn advance(&self, d: Duration) {
        self.0.fetch_add(d.as_millis() as u64, Ordering::SeqCst);
    }
    fn config(&self, keys: KeyRing) -> MrtrConfig {
        let me = self.clone();
        let mut config = MrtrConfig::new(keys);
        config.clock =
            Arc::new(move || UNIX_EPOCH + Duration::from_millis(me.0.load(Ordering::SeqCst)));
        config.max_rounds = 3;
        config.max_state_bytes = 4096;
        config
    }
}

fn tools(builder: ServerBuilder, effects: &Effects) -> ServerBuilder {
    let e1 = effects.clone();
    let e2 = effects.clone();
    builder
        .tool(
            tool("delete")
                .input_schema(json!({"type": "object", "properties": {"path": {"type": "string"}}}))
                .handler(move |call| {
                    let effects = e1.clone();
                    async move {
                        let answer = call.input.ask(mrtr::elicit_form(
                            "confirm",
                            "Delete?",
                            confirm_form(),
                        ))?;
                        let ok = answer.content.as_ref().and_then(|c| c.get("ok"))
                            == Some(&smcp_proto::client::elicitation::ElicitValue::Bool(true));
                        if ok {
                            effects.0.fetch_add(1, Ordering::SeqCst);
                        }
                        Ok::<_, HandlerError>(CallToolResult::text(format!("deleted: {ok}")))
                    }
                }),
        )
        .tool(tool("other").handler(|call| async move {
            call.input
                .ask(mrtr::elicit_form("confirm", "Delete?", confirm_form()))?;
            Ok::<_, HandlerError>(CallToolResult::text("other"))
        }))
        .tool(tool("forever").handler(|call| async move {
            // Asks a new question every round: only the round cap stops it.
            let round = call.input.round();
            call.input.ask(mrtr::elicit_form(
                format!("q{round}"),
                "Again?",
                confirm_form(),
            ))?;
            Ok::<_, HandlerError>(CallToolResult::text("never"))
        }))
        .tool(tool("bloat").handler(|call| async move {
            call.input.set_state(&"x".repeat(10_000))?;
            call.input.ask(mrtr::list_roots("roots"))?;
            Ok::<_, HandlerError>(CallToolResult::text("never"))
        }))
        .tool(tool("two_steps").single_use_state().handler({
            let effects = effects.clone();
            move |call| {
                let effects = effects.clone();
                async move {
                    call.input
                        .ask(mrtr::elicit_form("confirm", "Sure?", confirm_form()))?;
                    call.input
                        .ask(mrtr::elicit_form("really", "Really sure?", confirm_form()))?;
                    effects.0.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, HandlerError>(CallToolResult::text("done"))
                }
            }
        }))
        .tool(tool("once").single_use_state().handler(move |call| {
            let effects = e2.clone();
            async move {
                call.input
                    .ask(mrtr::elicit_form("confirm", "Pay?", confirm_form()))?;
                effects.0.fetch_add(1, Ordering::SeqCst);
                Ok::<_, HandlerError>(CallToolResult::text("paid"))
            }
        }))
}

fn server(config: MrtrConfig, effects: &Effects) -> McpService {
    tools(Server::builder("m", "1"), effects)
        .mrtr(config)
        .replay_guard(MemoryReplayGuard::new(1000))
        .build()
        .unwrap()
        .service()
}

fn elicitation_caps() -> Value {
    json!({"elicitation": {}})
}

fn tool_call(id: Value, name: &str, args: Value, extra: Value) -> Value {
    let mut params = json!({"name": name, "arguments": args});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    let mut b = body(id, "tools/call", params);
    b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = elicitation_caps();
    b
}

async fn round_one(svc: &McpService, name: &str, args: Value) -> Value {
    let reply = call(svc, &tool_call(json!(1), name, args, json!({}))).await;
    assert_eq!(reply.status, 200);
    let result = reply.json()["result"].clone();
    assert_eq!(result["resultType"], "input_required", "{result}");
    assert!(
        result.get("ttlMs").is_none(),
        "input_required is never cacheable"
    );
    result
}

fn yes() -> Value {
    json!({"confirm": {"action": "accept", "content": {"ok": true}}})
}

fn assert_state_error(reply: &Reply, id: Value, reason: &str) {
    reply.assert_error(200, -32602, Some(id));
    assert_eq!(
        reply.json()["error"]["data"]["reason"],
        reason,
        "{}",
        reply.json()
    );
}

#[tokio::test]
async fn happy_path_new_id_echoed_state() {
    let clock = TestClock::new();
    let effects = Effects::default();
    let svc = server(clock.config(ring("k1", 1)), &effects);
    let r1 = round_one(&svc, "delete", json!({"path": "/tmp/x"})).await;
    assert_eq!(
        r1["inputRequests"]["confirm"]["method"],
        "elicitation/create"
    );
    assert_eq!(effects.get(), 0, "no side effect before the answer");
    let state = r1["requestState"].clone();
    let retry = tool_call(
        json!(2),
        "delete",
        json!({"path": "/tmp/x"}),
        json!({"inputResponses": yes(), "requestState": state}),
    );
    let result = call(&svc, &retry).await.json()["result"].clone();
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["content"][0]["text"], "deleted: true");
    assert_eq!(effects.get(), 1);
}

#[tokio::test]
async fn every_flipped_byte_of_the_state_is_refused() {
    let clock = TestClock::new();
    let effects = Effects::default();
    let svc = server(clock.config(ring("k1", 1)), &effects);
    let r1 = round_one(&svc, "delete", json!({"path": "a"})).await;
    let state = r1["requestState"].as_str().unwrap().to_owned();
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    for i in 0..state.len() {
        let mut bytes = state.clone().into_bytes();
        let original = bytes[i];
        bytes[i] = *alphabet.iter().find(|&&c| c != original).unwrap();
        let tampered = String::from_utf8(bytes).unwrap();
        let retry = tool_call(
            json!(i),
            "delete",
            json!({"path": "a"}),
            json!({"inputResponses": yes(), "requestState": tampered}),
        );
        let reply = call(&svc, &retry).await;
        reply.assert_error(200, -32602, Some(json!(i)));
    }
    // The suite's own tampering: a suffix.
    let retry = tool_call(
        json!("t"),
        "delete",
        json!({"path": "a"}),
        json!({"inputResponses": yes(), "requestState": format!("{state}-TAMPERED")}),
    );
    assert_state_error(&call(&svc, &retry).await, json!("t"), "malformed");
    assert_eq!(effects.get(), 0);
}

#[tokio::test]
async fn state_is_bound_to_the_tool_and_its_arguments() {
    let clock = TestClock::new();
    let effects = Effects::default();
    let svc = server(clock.config(ring("k1", 1)), &effects);
    let r1 = round_one(&svc, "delete", json!({"path": "a"})).await;
    let state = r1["requestState"].clone();
    // Another tool.
    let retry = tool_call(
        json!(2),
        "other",
        json!({}),
        json!({"inputResponses": yes(), "requestState": state}),
    );
    assert_state_error(&call(&svc, &retry).await, json!(2), "wrongRequest");
    // Other arguments.
    let retry = tool_call(
        json!(3),
        "delete",
        json!({"path": "/etc"}),
        json!({"inputResponses": yes(), "requestState": state}),
    );
    assert_state_error(&call(&svc, &retry).await, json!(3), "wrongRequest");
    // Same arguments in another key order are the same request.
    let retry = tool_call(
        json!(4),
        "delete",
        json!({"path": "a"}),
        json!({"inputResponses": yes(), "requestState": state}),
    );
    assert_eq!(
        call(&svc, &retry).await.json()["result"]["resultType"],
        "complete"
    );
    assert_eq!(effects.get(), 1);
}

#[tokio::test]
async fn expired_state_is_refused() {
    let clock = TestClock::new();
    let effects = Effects::default();
    let config = clock.config(ring("k1", 1));
    let ttl = config.state_ttl;
    let svc = server(config, &effects);
    let r1 = round_one(&svc, "delete", json!({})).await;
    clock.advance(ttl + Duration::from_secs(1));
    let retry = tool_call(
        json!(2),
        "delete",
        json!({}),
        json!({"inputResponses": yes(), "requestState": r1["requestState"]}),
    );
    assert_state_error(&call(&svc, &retry).await, json!(2), "expired");
    assert_eq!(effects.get(), 0);
}

#[tokio::test]
async fn rotation_keeps_retries_in_flight_and_retired_keys_are_refused() {
    let clock = TestClock::new();
    let effects = Effects::default();
    let old = server(clock.config(ring("old", 1)), &effects);
    let r1 = round_one(&old, "delete", json!({})).await;
    let state = r1["requestState"].clone();
    // New active key, old one kept for opening.
    let rotated_ring = KeyRing::new(Key::new("new", [2; 32]).unwrap())
        .with_previous(Key::new("old", [1; 32]).unwrap());
    let rotated = server(clock.config(rotated_ring), &effects);
    let retry = tool_call(
        json!(2),
        "delete",
        json!({}),
        json!({"inputResponses": yes(), "requestState": state}),
    );
    assert_eq!(
        call(&rotated, &retry).await.json()["result"]["resultType"],
        "complete"
    );
    // The old key retired.
    let retired = server(clock.config(ring("new", 2)), &effects);
    let retry = tool_call(
        json!(3),
        "delete",
        json!({}),
        json!({"inputResponses": yes(), "requestState": state}),
    );
    assert_state_error(&call(&retired, &retry).await, json!(3), "unknownKey");
    assert_eq!(effects.get(), 1);
}

#[tokio::test]
async fn oversized_state_is_refused_before_decryption() {
    let clock = TestClock::new();
    let effects = Effects::default();
    let svc = server(clock.config(ring("k1", 1)), &effects);
    let huge = format!("v1.k1.{}", "A".repeat(5000));
    let retry = tool_call(
        json!(1),
        "delete",
        json!({}),
        json!({"inputResponses": yes(), "requestState": huge}),
    );
    assert_state_error(&call(&svc, &retry).await, json!(1), "tooLarge");
    // A handler whose own state would not fit gets an internal error, not a truncated state.
    let mut b = tool_call(json!(2), "bloat", json!({}), json!({}));
    b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"roots": {}});
    call(&svc, &b)
        .await
        .assert_error(200, -32603, Some(json!(2)));
    assert_eq!(effects.get(), 0);
}

#[tokio::test]
async fn wrong_shapes_of_input_responses_and_state() {
    let clock = TestClock::new();
    let effects = Effects::default();
    let svc = server(clock.config(ring("k1", 1)), &effects);
    for (i, extra) in [
        json!({"inputResponses": [1, 2]}),
        json!({"inputResponses": "yes"}),
        json!({"requestState": 42}),
        json!({"requestState": {"a": 1}}),
    ]
    .into_iter()
    .enumerate()
    {
        let reply = call(&svc, &tool_call(json!(i), "delete", json!({}), extra)).await;
        reply.assert_error(200, -32602, Some(json!(i)));
    }
    // Answers of the wrong shape are not answers: the question is asked again.
    for bad in [
        json!({"confirm": 12345}),
        json!({"confirm": {"action": "accept", "content": {"ok": "yes"}}}),
        json!({"confirm": {"action": "accept"}}),
        json!({"confirm": {"action": "maybe"}}),
        json!(null),
    ] {
        let reply = call(
            &svc,
            &tool_call(
                json!(9),
                "delete",
                json!({}),
                json!({"inputResponses": bad}),
            ),
        )
        .await;
        assert_eq!(
            reply.json()["result"]["resultType"],
            "input_required",
            "{bad}"
        );
    }
    // Unknown extra answers are ignored (beside the ones the state shows were asked for).
    let asked = call(&svc, &tool_call(json!(10), "delete", json!({}), json!({}))).await;
    let state = asked.json()["result"]["requestState"].clone();
    let mut answers = yes();
    answers["unknown"] = json!({"action": "accept", "content": {"x": 1}});
    let reply = call(
        &svc,
        &tool_call(
            json!(11),
            "delete",
            json!({}),
            json!({"inputResponses": answers, "requestState": state}),
        ),
    )
    .await;
    assert_eq!(
        reply.json()["result"]["content"][0]["text"],
        "deleted: true"
    );
    assert_eq!(effects.get(), 1);
}

#[tokio::test]
async fn input_responses_on_a_method_without_mrtr() {
    let clock = TestClock::new();
    let effects = Effects::default();
    let svc = server(clock.config(ring("k1", 1)), &effects);
    for extra in [
        json!({"inputResponses": yes()}),
        json!({"requestState": "v1.k1.AAAA"}),
    ] {
        let mut b = body(json!(5), "tools/list", extra);
        b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = elicitation_caps();
        call(&svc, &b)
            .await
            .assert_error(200, -32602, Some(json!(5)));
    }
}

#[tokio::test]
async fn never_asks_what_the_client_cannot_answer() {
    let clock = TestClock::new();
    let effects = Effects::default();
    let svc = server(clock.config(ring("k1", 1)), &effects);
    let mut b = tool_call(json!(1), "delete", json!({}), json!({}));
    b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"sampling": {}});
    let reply = call(&svc, &b).await;
    reply.assert_error(400, -32021, Some(json!(1)));
    assert_eq!(
        reply.json()["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}})
    );
    // URL-mode support alone is not form support.
    b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {"url": {}}});
    call(&svc, &b)
        .await
        .assert_error(400, -32021, Some(json!(1)));
    assert_eq!(effects.get(), 0);
}

#[tokio::test]
async fn the_round_cap_stops_an_endless_handler() {
    let clock = TestClock::new();
    let effects = Effects::default();
    let svc = server(clock.config(ring("k1", 1)), &effects); // max_rounds = 3
    let mut state = Value::Null;
    for round in 0..3 {
        // Round 0 carries nothing; round r answers the question of round r-1.
        let mut extra = json!({});
        if round > 0 {
            extra = json!({
                "inputResponses": {format!("q{}", round - 1): {"action": "accept", "content": {"ok": true}}},
                "requestState": state.clone()
            });
        }
        let reply = call(&svc, &tool_call(json!(round), "forever", json!({}), extra)).await;
        let result = reply.json()["result"].clone();
        assert_eq!(
            result["resultType"], "input_required",
            "round {round}: {result}"
        );
        state = result["requestState"].clone();
    }
    // Answers round 2; the handler then wants a fourth round, past the cap of three.
    let extra = json!({"inputResponses": {"q2": {"action": "accept", "content": {"ok": true}}}, "requestState": state});
    let reply = call(&svc, &tool_call(json!(99), "forever", json!({}), extra)).await;
    reply.assert_error(200, -32602, Some(json!(99)));
    assert_eq!(reply.json()["error"]["data"]["reason"], "roundLimit");
}

#[tokio::test]
async fn single_use_state_runs_the_effect_once() {
    let clock = TestClock::new();
    let effects = Effects::default();
    let svc = server(clock.config(ring("k1", 1)), &effects);
    let r1 = round_one(&svc, "once", json!({})).await;
    let retry = tool_call(
        json!(2),
        "once",
        json!({}),
        json!({"inputResponses": yes(), "requestState": r1["requestState"]}),
    );
    assert_eq!(
        call(&svc, &retry).await.json()["result"]["content"][0]["text"],
        "paid"
    );
    let again = tool_call(
        json!(3),
        "once",
        json!({}),
        json!({"inputResponses": yes(), "requestState": r1["requestState"]}),
    );
    assert_state_error(&call(&svc, &again).await, json!(3), "replayed");
    assert_eq!(effects.get(), 1);
}

/// For a tool with single-use state (destructive by default), answers count only when the
/// sealed state shows the server asked for them: sent in a first request, or for a question of
/// a later round, they cannot skip the user's confirmation. Other tools take a well-formed
/// answer when it comes, as the official suite's `input-required-result-ignore-extra-params`
/// expects.
#[tokio::test]
async fn unsolicited_answers_never_skip_a_confirmation() {
    let clock = TestClock::new();
    let effects = Effects::default();
    let svc = server(clock.config(ring("k1", 1)), &effects);
    let first = |tool: &str| tool_call(json!(1), tool, json!({}), json!({"inputResponses": yes()}));
    let reply = call(&svc, &first("once")).await.json();
    assert_eq!(reply["result"]["resultType"], "input_required", "{reply}");
    assert_eq!(
        effects.get(),
        0,
        "an answer nobody asked for ran the effect"
    );
    let reply = call(&svc, &first("delete")).await.json();
    assert_eq!(
        reply["result"]["content"][0]["text"], "deleted: true",
        "{reply}"
    );
    assert_eq!(effects.get(), 1);

    // Two questions in two rounds; the second answer sent early, with the first round's
    // state, is not taken: the state shows only the first question was asked.
    let r1 = round_one(&svc, "two_steps", json!({})).await;
    let mut both = yes();
    both["really"] = json!({"action": "accept", "content": {"ok": true}});
    let early = tool_call(
        json!(2),
        "two_steps",
        json!({}),
        json!({"inputResponses": both, "requestState": r1["requestState"]}),
    );
    let reply = call(&svc, &early).await.json();
    let result = &reply["result"];
    assert_eq!(result["resultType"], "input_required", "{reply}");
    assert!(result["inputRequests"]["really"].is_object(), "{reply}");
    assert_eq!(effects.get(), 1);
    // Answered when asked: done.
    let last = tool_call(
        json!(3),
        "two_steps",
        json!({}),
        json!({"inputResponses": {"really": {"action": "accept", "content": {"ok": true}}},
            "requestState": result["requestState"]}),
    );
    let reply = call(&svc, &last).await.json();
    assert_eq!(reply["result"]["content"][0]["text"], "done", "{reply}");
    assert_eq!(effects.get(), 2);
}

/// A tool annotated destructive gets single-use state without asking for it (and without a
/// replay guard configured); `reusable_state()` opts out.
#[tokio::test]
async fn destructive_tools_have_single_use_state_by_default() {
    let effects = Effects::default();
    let build = |reusable: bool| {
        let e = effects.clone();
        let mut t = tool("wipe")
            .annotations(ToolAnnotations::new().destructive(true))
            .handler(move |call| {
                let effects = e.clone();
                async move {
                    call.input
                        .ask(mrtr::elicit_form("confirm", "Wipe?", confirm_form()))?;
                    effects.0.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, HandlerError>(CallToolResult::text("wiped"))
                }
            });
        if reusable {
            t = t.reusable_state();
        }
        Server::builder("m", "1").tool(t).build().unwrap().service()
    };
    for (reusable, runs) in [(false, 1), (true, 2)] {
        let svc = build(reusable);
        let before = effects.get();
        let r1 = round_one(&svc, "wipe", json!({})).await;
        let retry = tool_call(
            json!(2),
            "wipe",
            json!({}),
            json!({"inputResponses": yes(), "requestState": r1["requestState"]}),
        );
        assert_eq!(
            call(&svc, &retry).await.json()["result"]["content"][0]["text"],
            "wiped"
        );
        let again = call(&svc, &retry).await;
        if reusable {
            assert_eq!(again.json()["result"]["content"][0]["text"], "wiped");
        } else {
            assert_state_error(&again, json!(2), "replayed");
        }
        assert_eq!(effects.get() - before, runs, "reusable: {reusable}");
    }
}

#[tokio::test]
async fn principals_are_bound() {
    let clock = TestClock::new();
    let effects = Effects::default();
    let svc = server(clock.config(ring("k1", 1)), &effects);
    let send_as = |who: &'static str, b: Value| {
        let svc = svc.clone();
        async move {
            let mut req = request(&b).body(full(&b)).unwrap();
            req.extensions_mut()
                .insert(smcp_server::Principal(who.to_owned()));
            send(&svc, req).await
        }
    };
    let r1 = send_as("alice", tool_call(json!(1), "delete", json!({}), json!({})))
        .await
        .json()["result"]
        .clone();
    let retry = tool_call(
        json!(2),
        "delete",
        json!({}),
        json!({"inputResponses": yes(), "requestState": r1["requestState"]}),
    );
    assert_state_error(
        &send_as("mallory", retry.clone()).await,
        json!(2),
        "wrongPrincipal",
    );
    assert_state_error(&call(&svc, &retry).await, json!(2), "wrongPrincipal");
    assert_eq!(
        send_as("alice", retry).await.json()["result"]["resultType"],
        "complete"
    );
    assert_eq!(effects.get(), 1);
}

#[tokio::test]
async fn answers_carry_across_rounds_so_handlers_rerun_from_the_top() {
    let svc = Server::builder("m", "1")
        .tool(tool("two").handler(|call| async move {
            let a = call
                .input
                .ask(mrtr::elicit_form("a", "A?", confirm_form()))?;
            let b = call
                .input
                .ask(mrtr::elicit_form("b", "B?", confirm_form()))?;
            Ok::<_, HandlerError>(CallToolResult::text(format!(
                "{:?}/{:?}",
                a.action, b.action
            )))
        }))
        .build()
        .unwrap()
        .service();
    let r1 = round_one(&svc, "two", json!({})).await;
    assert!(r1["inputRequests"].get("a").is_some());
    let r2 = call(
        &svc,
        &tool_call(
            json!(2),
            "two",
            json!({}),
            json!({
        "inputResponses": {"a": {"action": "accept", "content": {"ok": true}}},
        "requestState": r1["requestState"]}),
        ),
    )
    .await
    .json()["result"]
        .clone();
    assert_eq!(r2["resultType"], "input_required");
    assert!(r2["inputRequests"].get("b").is_some() && r2["inputRequests"].get("a").is_none());
    assert_ne!(r2["requestState"], r1["requestState"]);
    let r3 = call(
        &svc,
        &tool_call(
            json!(3),
            "two",
            json!({}),
            json!({
        "inputResponses": {"b": {"action": "decline"}},
        "requestState": r2["requestState"]}),
        ),
    )
    .await
    .json()["result"]
        .clone();
    assert_eq!(r3["content"][0]["text"], "Accept/Decline");
}
