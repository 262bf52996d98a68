//! 2025-era sessions on the cluster (`scripts/cluster`: Redis, three smcpd, nginx round robin
//! without stickiness): what must reach the instance holding a request or a stream does,
//! wherever it lands. smcp-client pinned to 2025-11-25 through nginx (an elicitation answered,
//! a call cancelled), then raw HTTP aimed at chosen instances: a response and a cancellation
//! posted to another instance, ids of a foreign or malformed form and of another session, a
//! stream resumed with `Last-Event-ID` on another instance (its owner alive, killed, or
//! killed in the middle of a request), and Redis restarted in the middle of a session.
//!
//! The instances log at debug for the session layer, so that the tests can tell which
//! instance did what. `SMCP_CLUSTER=skip` skips them.

#![cfg(all(
    feature = "redis",
    feature = "files",
    feature = "tasks",
    feature = "legacy"
))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use smcp_client::{CancellationToken, Client};

use crate::cluster_support::Cluster;
use crate::support::Confirm;

const VERSION: &str = "2025-11-25";

/// Debug logs of the session layer (which instance relayed, which took).
const DEBUG: &[(&str, &str)] = &[("SMCP_CLUSTER_LOG", "info,smcp_server::core::legacy=debug")];
/// The same with a Redis that persists nothing.
const DEBUG_NO_PERSISTENCE: &[(&str, &str)] = &[
    ("SMCP_CLUSTER_LOG", "info,smcp_server::core::legacy=debug"),
    ("SMCP_CLUSTER_REDIS_PERSIST", "off"),
];

/// How many instances' logs contain `needle`, and which (1-based).
fn logged(c: &Cluster, needle: &str) -> Vec<usize> {
    (1..=3).filter(|i| c.log(*i).contains(needle)).collect()
}

/// Waits up to `within` for `needle` in some instance's log.
async fn until_logged(c: &Cluster, needle: &str, within: Duration) -> Vec<usize> {
    let deadline = Instant::now() + within;
    loop {
        let found = logged(c, needle);
        if !found.is_empty() || Instant::now() > deadline {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the instance at `url` refuses connections (its process is gone).
async fn until_dead(url: &str) {
    let authority = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(5);
    while tokio::net::TcpStream::connect(&authority).await.is_ok() {
        assert!(Instant::now() < deadline, "{url} still accepts connections");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The text of the first content block of a tool result.
fn text(result: &smcp_client::proto::server::tools::CallToolResult) -> String {
    match result.content.first() {
        Some(smcp_client::proto::content::ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn smcp_client_pinned_to_2025_11_25_answers_elicitations_and_cancels_through_round_robin() {
    need_cluster!();
    let c = Cluster::up_env("local", DEBUG);
    let asked = Confirm::default();
    let client = Client::builder(&c.url)
        .protocol_version(VERSION)
        .input_handler(asked.clone())
        .timeout(Some(Duration::from_secs(30)))
        .build()
        .unwrap();
    // Each call's elicitation comes on the call's stream from the instance running it; the
    // answer is POSTed through nginx, which sends it to the next instance.
    for i in 0..3 {
        let action = format!("deploy {i}");
        let r = client
            .call_tool("confirm_action", json!({"action": action}))
            .await
            .unwrap();
        assert_eq!(text(&r), format!("done: {action}"));
    }
    assert_eq!(asked.0.lock().unwrap().len(), 3);
    let relayed = logged(&c, "response relayed to its request's instance");
    let delivered = logged(&c, "relayed response delivered");
    assert!(!relayed.is_empty(), "no answer crossed instances");
    assert!(!delivered.is_empty(), "no owner took a relayed answer");

    // A long call, cancelled once it reports progress: the client POSTs
    // notifications/cancelled, nginx sends it to another instance, and the handler on the
    // instance running the call sees the cancellation.
    let token = CancellationToken::new();
    let progressed = Arc::new(tokio::sync::Notify::new());
    let seen = progressed.clone();
    let call = client
        .tool_call("count")
        .arguments(json!({"to": 100, "delay_ms": 100}))
        .on_progress(move |_| seen.notify_one())
        .cancellation(token.clone())
        .send();
    let cancel = async {
        tokio::time::timeout(Duration::from_secs(10), progressed.notified())
            .await
            .expect("the call reports progress");
        token.cancel();
    };
    let (outcome, ()) = tokio::time::timeout(Duration::from_secs(20), async {
        tokio::join!(call, cancel)
    })
    .await
    .expect("the cancelled call ends");
    assert!(
        outcome
            .as_ref()
            .is_err_and(smcp_client::Error::is_cancelled),
        "{outcome:?}"
    );
    let ran = until_logged(&c, "count cancelled by the client", Duration::from_secs(5)).await;
    assert_eq!(ran.len(), 1, "the handler saw no cancellation");
    let passed_on = until_logged(
        &c,
        "legacy cancellation relayed to the other instances",
        Duration::from_secs(1),
    )
    .await;
    assert!(
        passed_on.iter().any(|i| !ran.contains(i)),
        "the cancellation landed on the instance running the call (relayed by {passed_on:?}, ran on {ran:?})"
    );
    assert!(logged(&c, "count dropped after").is_empty());
    client.close().await;
    for i in 1..=3 {
        assert!(!c.log(i).contains("panicked"), "{}", c.log(i));
    }
}

/// One SSE response, read event by event.
struct Sse {
    response: reqwest::Response,
    buffer: String,
}

/// One event: its id (if any) and its data (empty for a priming event).
#[derive(Debug, Clone)]
struct Event {
    id: Option<String>,
    data: String,
}

impl Event {
    fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or(Value::Null)
    }
}

impl Sse {
    fn new(response: reqwest::Response) -> Self {
        let kind = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(kind.starts_with("text/event-stream"), "{kind}");
        Self {
            response,
            buffer: String::new(),
        }
    }

    /// The next event, or `None` when the stream ends; fails after 15 s without one.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = Event {
                    id: None,
                    data: String::new(),
                };
                for line in block.lines() {
                    if let Some(id) = line.strip_prefix("id: ") {
                        event.id = Some(id.to_owned());
                    } else if let Some(data) = line.strip_prefix("data: ") {
                        event.data.push_str(data);
                    }
                }
                if event.id.is_none() && event.data.is_empty() {
                    continue; // a comment (keep-alive)
                }
                return Some(event);
            }
            let chunk = tokio::time::timeout(Duration::from_secs(15), self.response.chunk())
                .await
                .expect("an SSE event within 15 s");
            match chunk {
                Ok(Some(bytes)) => self.buffer.push_str(&String::from_utf8_lossy(&bytes)),
                Ok(None) | Err(_) => return None,
            }
        }
    }

    /// Events until one whose data satisfies `pred`.
    async fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Event {
        loop {
            let event = self.next().await.expect("the stream ended first");
            if pred(&event.json()) {
                return event;
            }
        }
    }
}

/// The tag of the instance that wrote event `id` (`<tag>_<stream>-<n>`).
fn tag_of(id: &str) -> &str {
    let (tag, rest) = id
        .split_once('_')
        .unwrap_or_else(|| panic!("an event id with an instance tag: {id}"));
    assert_eq!(tag.len(), 32, "{id}");
    assert!(tag.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    let (stream, seq) = rest.split_once('-').unwrap();
    assert!(
        stream.parse::<u64>().is_ok() && seq.parse::<u64>().is_ok(),
        "{id}"
    );
    tag
}

struct Session {
    http: reqwest::Client,
    id: String,
}

impl Session {
    /// `initialize` and `notifications/initialized` on `url`.
    async fn start(url: &str) -> Self {
        let http = reqwest::Client::new();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "cluster-legacy", "version": "1"}}});
        let response = http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let id = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let session = Self { http, id };
        let r = session
            .post(
                url,
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .await;
        assert_eq!(r.status(), 202);
        session
    }

    async fn post(&self, url: &str, body: &Value) -> reqwest::Response {
        self.http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", VERSION)
            .header("mcp-session-id", &self.id)
            .body(body.to_string())
            .timeout(Duration::from_secs(60))
            .send()
            .await
            .unwrap()
    }

    async fn get(&self, url: &str, last_event_id: Option<&str>) -> reqwest::Response {
        let mut request = self
            .http
            .get(url)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", VERSION)
            .header("mcp-session-id", &self.id);
        if let Some(last) = last_event_id {
            request = request.header("last-event-id", last);
        }
        request.send().await.unwrap()
    }

    /// A tool call whose response streams (SSE).
    async fn call(&self, url: &str, id: u64, name: &str, arguments: Value) -> Sse {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": {"progressToken": id}}});
        let response = self.post(url, &body).await;
        assert_eq!(response.status(), 200);
        Sse::new(response)
    }

    /// POSTs a response to server-to-client request `id`: the status and the body.
    async fn answer(&self, url: &str, id: &Value) -> (u16, Value) {
        let body = json!({"jsonrpc": "2.0", "id": id,
            "result": {"action": "accept", "content": {"confirm": true}}});
        let response = self.post(url, &body).await;
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}

fn is_elicitation(v: &Value) -> bool {
    v["method"] == "elicitation/create"
}

/// A refusal: 400, −32600, no id, a message containing `says`.
fn assert_refused(outcome: &(u16, Value), says: &str) {
    let (status, body) = outcome;
    assert_eq!(*status, 400, "{body}");
    assert_eq!(body["error"]["code"], -32600, "{body}");
    assert_eq!(body["id"], Value::Null, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains(says), "{message}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_response_and_a_cancellation_posted_to_another_instance_reach_the_request() {
    need_cluster!();
    let c = Cluster::up_env("local", DEBUG);
    let (one, two, three) = (c.instance(1), c.instance(2), c.instance(3));
    let s = Session::start(&one).await;
    let mut call = s
        .call(&one, 1, "confirm_action", json!({"action": "deploy"}))
        .await;
    let ask = call.until(is_elicitation).await;
    let tag = tag_of(ask.id.as_deref().unwrap()).to_owned();
    let ask_id = ask.json()["id"].clone();
    let ask_text = ask_id.as_str().unwrap().to_owned();
    assert!(
        ask_text.starts_with(&format!("smcp-{tag}-")),
        "the request id names the instance that sent it: {ask_text}"
    );

    // Ids no instance sent, in a foreign or malformed form: unknown, 400/−32600, no id.
    let gone = format!("smcp-{}-1", "0".repeat(32));
    assert_refused(&s.answer(&two, &json!(gone)).await, "has stopped");
    for bad in [
        json!("smcp-NOT-A-TAG-1"),
        json!(format!("smcp-{tag}-x")),
        json!(7),
    ] {
        assert_refused(&s.answer(&two, &bad).await, "sent no request with id");
    }
    // A Last-Event-ID of a malformed form, or of an instance that never wrote it: unknown, so
    // a new standalone stream of the instance that took the GET.
    let unknown = format!("{}_1-1", "0".repeat(32));
    for (url, last) in [(&two, "NOT_A-TAG"), (&three, unknown.as_str())] {
        let mut fresh = Sse::new(s.get(url, Some(last)).await);
        let priming = fresh.next().await.unwrap();
        assert!(priming.data.is_empty(), "{priming:?}");
        assert_ne!(tag_of(priming.id.as_deref().unwrap()), tag, "{last}");
    }

    // The request's id, answered on another session: not that session's request.
    let other = Session::start(&three).await;
    assert_refused(
        &other.answer(&two, &ask_id).await,
        "sent no request with id",
    );

    // Answered on another instance: taken by the one waiting for it (202), and the call
    // goes on there.
    let (status, body) = s.answer(&two, &ask_id).await;
    assert_eq!(status, 202, "{body}");
    let done = call.until(|v| v["id"] == 1).await.json();
    assert_eq!(
        done["result"]["content"][0]["text"], "done: deploy",
        "{done}"
    );
    // Answered already: unknown, wherever it lands.
    assert_refused(&s.answer(&three, &ask_id).await, "sent no request with id");

    // A call on instance 1, its notifications/cancelled on instance 2.
    let mut count = s
        .call(&one, 7, "count", json!({"to": 100, "delay_ms": 100}))
        .await;
    count
        .until(|v| v["method"] == "notifications/progress")
        .await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "test"}});
    assert_eq!(s.post(&two, &cancel).await.status(), 202);
    // The stream ends with no response, and the handler on instance 1 saw the cancellation.
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Some(event) = count.next().await {
        assert_ne!(
            event.json()["id"],
            7,
            "a cancelled request got a response: {event:?}"
        );
        assert!(Instant::now() < deadline, "the cancelled call went on");
    }
    assert_eq!(
        until_logged(&c, "count cancelled by the client", Duration::from_secs(2)).await,
        [1]
    );
    assert!(
        c.log(2)
            .contains("legacy cancellation relayed to the other instances")
    );

    // The instance waiting for a response is killed: the response, posted to another
    // instance, is refused at once, naming the request.
    let mut call = s
        .call(&three, 9, "confirm_action", json!({"action": "restart"}))
        .await;
    let ask = call.until(is_elicitation).await.json();
    c.script(&["kill", "3"]);
    until_dead(&three).await;
    let started = Instant::now();
    assert_refused(&s.answer(&one, &ask["id"]).await, "has stopped");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

/// Toggles `extra` through `url` (a tools list change on every instance).
async fn toggle(s: &Session, url: &str, id: u64) {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "toggle_extra", "arguments": {}}});
    let response = s.post(url, &body).await;
    assert_eq!(response.status(), 200);
}

fn is_list_changed(v: &Value) -> bool {
    v["method"] == "notifications/tools/list_changed"
}

#[tokio::test(flavor = "multi_thread")]
async fn streams_resume_on_another_instance_from_the_shared_log() {
    need_cluster!();
    let c = Cluster::up_env("local", DEBUG);
    let (one, two, three) = (c.instance(1), c.instance(2), c.instance(3));
    let s = Session::start(&two).await;

    // A request stream resumed on another instance while its owner runs it: the events the
    // client missed, then the rest as the owner writes them, then the response.
    let mut count = s
        .call(&two, 1, "count", json!({"to": 6, "delay_ms": 300}))
        .await;
    let priming = count.next().await.unwrap();
    assert!(priming.data.is_empty(), "{priming:?}");
    let owner = tag_of(priming.id.as_deref().unwrap()).to_owned();
    let first = count
        .until(|v| v["method"] == "notifications/progress")
        .await;
    drop(count);
    let mut resumed = Sse::new(s.get(&three, first.id.as_deref()).await);
    let mut progress = Vec::new();
    let done = loop {
        let event = resumed.next().await.expect("the response");
        assert_eq!(tag_of(event.id.as_deref().unwrap()), owner, "{event:?}");
        let v = event.json();
        if v["id"] == 1 {
            break v;
        }
        progress.push(v["params"]["progress"].as_f64().unwrap());
    };
    assert_eq!(progress, [2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(
        done["result"]["content"][0]["text"], "counted to 6",
        "{done}"
    );
    assert!(
        resumed.next().await.is_none(),
        "the stream ends after the response"
    );

    // The standalone stream on instance 1, three changes on it.
    let mut standalone = Sse::new(s.get(&one, None).await);
    let priming = standalone.next().await.unwrap();
    let first_owner = tag_of(priming.id.as_deref().unwrap()).to_owned();
    assert_ne!(first_owner, owner);
    let mut ids = Vec::new();
    for n in 0..3 {
        toggle(&s, &two, 10 + n).await;
        let event = standalone.until(is_list_changed).await;
        ids.push(event.id.unwrap());
    }
    // Instance 1 is killed; the client, which saw only the first of them, resumes through
    // nginx and lands on another instance: the two it missed, then the stream goes on.
    c.script(&["kill", "1"]);
    until_dead(&one).await;
    drop(standalone);
    let mut resumed = Sse::new(s.get(&c.url, Some(&ids[0])).await);
    let replayed: Vec<String> = [resumed.next().await.unwrap(), resumed.next().await.unwrap()]
        .into_iter()
        .map(|e| {
            assert!(is_list_changed(&e.json()), "{e:?}");
            e.id.unwrap()
        })
        .collect();
    assert_eq!(replayed, ids[1..]);
    let priming = resumed.next().await.unwrap();
    assert!(priming.data.is_empty(), "{priming:?}");
    let new_owner = tag_of(priming.id.as_deref().unwrap()).to_owned();
    assert_ne!(new_owner, first_owner);
    toggle(&s, &c.url, 20).await;
    let next = resumed.until(is_list_changed).await;
    assert_eq!(tag_of(next.id.as_deref().unwrap()), new_owner);

    // A request whose owner is killed before it answers: the resumed stream replays what it
    // wrote, then ends with an error response for the request.
    let mut count = s
        .call(&two, 30, "count", json!({"to": 50, "delay_ms": 200}))
        .await;
    let first = count
        .until(|v| v["method"] == "notifications/progress")
        .await;
    count.until(|v| v["params"]["progress"] == 3).await;
    drop(count);
    c.script(&["kill", "2"]);
    until_dead(&two).await;
    let started = Instant::now();
    let mut resumed = Sse::new(s.get(&three, first.id.as_deref()).await);
    let mut progress = Vec::new();
    let failed = loop {
        let event = resumed.next().await.expect("an error response");
        let v = event.json();
        if v["id"] == 30 {
            break v;
        }
        progress.push(v["params"]["progress"].as_f64().unwrap());
    };
    assert!(progress.starts_with(&[2.0, 3.0]), "{progress:?}");
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(message.contains("stopped before it answered"), "{message}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(resumed.next().await.is_none());
}

/// Until every instance's `/readyz` answers 200 (its Redis link and bus are back).
async fn until_ready(c: &Cluster, within: Duration) {
    let deadline = Instant::now() + within;
    for i in 1..=3 {
        let url = c.instance(i).replace("/mcp", "/readyz");
        loop {
            let ready = reqwest::get(&url).await.is_ok_and(|r| r.status() == 200);
            if ready {
                break;
            }
            assert!(Instant::now() < deadline, "instance {i} not ready");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_durable_redis_restarted_mid_session_keeps_the_session_and_its_waiting_request() {
    need_cluster!();
    let c = Cluster::up_env("local", DEBUG);
    let (one, two) = (c.instance(1), c.instance(2));
    let s = Session::start(&one).await;
    let mut call = s
        .call(&one, 2, "confirm_action", json!({"action": "deploy"}))
        .await;
    let ask = call.until(is_elicitation).await.json();

    // Redis away for 1 s.
    let restart = c.restart_redis_in_background("1");
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The answer sent while Redis is away: a clear error, and nothing taken.
    let (status, body) = s.answer(&two, &ask["id"]).await;
    assert!(status == 500 || status == 503, "{status}: {body}");
    assert_eq!(body["error"]["code"], -32603, "{body}");
    assert!(restart.join().unwrap().success());

    // Redis is back with everything it acknowledged: once the instances are ready again, the
    // session goes on, and the answer sent again reaches the request still waiting on
    // instance 1, which then completes.
    until_ready(&c, Duration::from_secs(15)).await;
    let (status, body) = s.answer(&two, &ask["id"]).await;
    assert_eq!(status, 202, "{body}");
    let done = call.until(|v| v["id"] == 2).await.json();
    assert_eq!(
        done["result"]["content"][0]["text"], "done: deploy",
        "{done}"
    );
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    assert_eq!(s.post(&c.instance(3), &list).await.status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redis_without_persistence_restarted_mid_session_keeps_what_was_acknowledged_and_fails_what_was_in_flight()
 {
    need_cluster!();
    let c = Cluster::up_env("local", DEBUG_NO_PERSISTENCE);
    let (one, two) = (c.instance(1), c.instance(2));
    let s = Session::start(&one).await;
    let echo = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "before"}}});
    let r = s.post(&two, &echo).await;
    assert_eq!(r.status(), 200);
    let before: Value = r.json().await.unwrap();
    assert_eq!(before["result"]["content"][0]["text"], "before");
    let mut call = s
        .call(&one, 2, "confirm_action", json!({"action": "deploy"}))
        .await;
    let ask = call.until(is_elicitation).await.json();

    // Redis away for 3 s.
    let restart = c.restart_redis_in_background("3");
    tokio::time::sleep(Duration::from_millis(700)).await;
    // The response to the elicitation, while Redis is away: a clear error, within the
    // command timeout, and nothing taken.
    let started = Instant::now();
    let (status, body) = s.answer(&two, &ask["id"]).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(status == 500 || status == 503, "{status}: {body}");
    assert_eq!(body["error"]["code"], -32603, "{body}");
    assert!(restart.join().unwrap().success());

    // Redis is back, empty (it persists nothing): the session's record is gone, so the
    // session is over on every instance (404, the client starts a new one) ...
    // An instance's first command after the restart may fail on its old connection (5xx,
    // the connection is made again): a client retries those.
    let deadline = Instant::now() + Duration::from_secs(10);
    let until_answered = |url, body| {
        let s = &s;
        async move {
            loop {
                let r = s.post(url, &body).await;
                if r.status().is_server_error() && Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
                break r;
            }
        }
    };
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let r = until_answered(&two, list).await;
    assert_eq!(r.status(), 404);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32600, "{body}");
    // ... and the instance running its request ends it once it learns so: the call's
    // stream closes with no result.
    let ping = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
    assert_eq!(until_answered(&one, ping.clone()).await.status(), 404);
    // The third instance took no part so far: its first command may meet its old connection
    // too. Once it has answered, every instance has made its connection again.
    assert_eq!(until_answered(&c.instance(3), ping).await.status(), 404);
    while let Some(event) = call.next().await {
        assert_ne!(
            event.json()["id"],
            2,
            "a result after the session was lost: {event:?}"
        );
    }
    // A new session works at once, through any instance.
    let fresh = Session::start(&c.url).await;
    let r = fresh.post(&c.url, &echo).await;
    assert_eq!(r.status(), 200);
    let after: Value = r.json().await.unwrap();
    assert_eq!(after["result"]["content"][0]["text"], "before");
}
