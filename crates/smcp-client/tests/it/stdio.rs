//! The stdio transport against a scripted server (`tests/fixtures/stdio_fake_server.py`, run by
//! the system `python3`): correlation, routing, cancellation, bad server behaviour, shutdown.
//! The server records every line it reads, so the tests check what went over the wire.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use smcp_client::proto::basic::LoggingLevel;
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult, ElicitValue};
use smcp_client::proto::content::ContentBlock;
use smcp_client::proto::patterns::subscriptions::SubscriptionFilter;
use smcp_client::{
    BoxFuture, CancellationToken, Client, FileTransfer, InputHandler, InputHandlerError,
    InputKinds, ServerStderr, StdioCommand, Subscription, SubscriptionEvent,
};

/// A fake server in `mode`, recording what it reads to a fresh file.
fn fake(mode: &str) -> (StdioCommand, PathBuf) {
    static N: AtomicU32 = AtomicU32::new(0);
    let record = std::env::temp_dir().join(format!(
        "smcp-stdio-test-{}-{}.jsonl",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_file(&record);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stdio_fake_server.py");
    let command = StdioCommand::new("python3")
        .arg(script)
        .arg(mode)
        .arg(&record)
        .stderr(ServerStderr::Null);
    (command, record)
}

fn start(command: StdioCommand) -> Client {
    Client::stdio(command)
        .timeout(Some(Duration::from_secs(20)))
        .build()
        .unwrap()
}

/// The JSON lines the server read so far.
fn recorded(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| *l != "EOF")
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Waits until the record satisfies `pred`.
async fn wait_for_record(path: &Path, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    for _ in 0..100 {
        let lines = recorded(path);
        if pred(&lines) {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "the server never recorded what was expected: {:?}",
        recorded(path)
    );
}

/// The id of the recorded `tools/call` of `tool`.
fn call_id(lines: &[Value], tool: &str) -> Value {
    lines
        .iter()
        .find(|l| l["method"] == "tools/call" && l["params"]["name"] == tool)
        .map(|l| l["id"].clone())
        .unwrap_or_else(|| panic!("no tools/call {tool} in {lines:?}"))
}

fn cancelled_ids(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|l| l["method"] == "notifications/cancelled")
        .map(|l| l["params"]["requestId"].clone())
        .collect()
}

fn text(blocks: &[ContentBlock]) -> String {
    match blocks.first() {
        Some(ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

async fn call_text(client: &Client, tool: &str, args: Value) -> String {
    text(&client.call_tool(tool, args).await.unwrap().content)
}

#[tokio::test]
async fn out_of_order_responses_reach_their_callers() {
    let (cmd, record) = fake("serve");
    let client = start(cmd);
    let order = Arc::new(Mutex::new(Vec::new()));
    let run = |tool: &'static str, args: Value, label: &'static str| {
        let client = client.clone();
        let order = order.clone();
        async move {
            let t = call_text(&client, tool, args).await;
            order.lock().unwrap().push(label);
            t
        }
    };
    let (a, b, c) = tokio::join!(
        run("slow", json!({"text": "A", "delay": 0.8}), "A"),
        run("slow", json!({"text": "B", "delay": 0.4}), "B"),
        run("echo", json!({"text": "C"}), "C"),
    );
    assert_eq!((a.as_str(), b.as_str(), c.as_str()), ("A", "B", "C"));
    // The server answered in the reverse order of the requests.
    assert_eq!(*order.lock().unwrap(), ["C", "B", "A"]);

    // The era probe first, then every request as one line of JSON with the metadata inline
    // in _meta.
    let lines = recorded(&record);
    assert_eq!(lines[0]["method"], "server/discover", "{lines:?}");
    let lines = &lines[1..];
    assert_eq!(lines.len(), 3, "{lines:?}");
    for l in lines {
        assert_eq!(l["jsonrpc"], "2.0");
        assert_eq!(
            l["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert!(l["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"].is_object());
    }
    assert_eq!(client.close().await.and_then(|s| s.code()), Some(0));
}

#[tokio::test]
async fn progress_goes_to_the_call_with_that_token() {
    let (cmd, _record) = fake("serve");
    let client = start(cmd);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let result = client
        .tool_call("progress")
        .on_progress(move |p| s.lock().unwrap().push(p.progress))
        .send()
        .await
        .unwrap();
    assert_eq!(text(&result.content), "done");
    // The notification for the foreign token (99) reached nobody.
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);
}

#[tokio::test]
async fn log_lines_reach_the_connection_sink_and_the_calls_that_asked() {
    let (cmd, _record) = fake("serve");
    let connection_log = Arc::new(Mutex::new(Vec::new()));
    let c = connection_log.clone();
    let cmd = cmd.on_log(move |p| c.lock().unwrap().push(p.data));
    let client = start(cmd);
    let call_log = Arc::new(Mutex::new(Vec::new()));
    let l = call_log.clone();
    let r = client
        .tool_call("log")
        .on_log(LoggingLevel::Info, move |p| l.lock().unwrap().push(p.data))
        .send()
        .await
        .unwrap();
    assert_eq!(text(&r.content), "logged");
    assert_eq!(*call_log.lock().unwrap(), [json!("hello log")]);
    assert_eq!(*connection_log.lock().unwrap(), [json!("hello log")]);
}

/// The next event of a subscription, within a bound.
async fn next_event(sub: &mut Subscription) -> Option<SubscriptionEvent> {
    tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .expect("a subscription event in time")
        .map(Result::unwrap)
}

#[tokio::test]
async fn two_subscriptions_get_only_their_own_notifications() {
    let (cmd, record) = fake("serve");
    let client = start(cmd);
    let filter = SubscriptionFilter {
        resource_subscriptions: Some(vec!["test://sub".to_owned()]),
        ..SubscriptionFilter::default()
    };
    let mut one = client.listen(filter.clone());
    let mut two = client.listen(filter);
    for sub in [&mut one, &mut two] {
        assert!(
            matches!(
                next_event(sub).await,
                Some(SubscriptionEvent::Acknowledged(_))
            ),
            "first event is the acknowledgement"
        );
    }
    assert_eq!(call_text(&client, "fire", json!({})).await, "fired 2");
    let uri = |e: Option<SubscriptionEvent>| match e {
        Some(SubscriptionEvent::ResourceUpdated { uri }) => uri,
        other => panic!("expected resources/updated, got {other:?}"),
    };
    let uri_one = uri(next_event(&mut one).await);
    let uri_two = uri(next_event(&mut two).await);
    let listen_ids: Vec<Value> = recorded(&record)
        .into_iter()
        .filter(|l| l["method"] == "subscriptions/listen")
        .map(|l| l["id"].clone())
        .collect();
    assert_eq!(listen_ids.len(), 2);
    let id_of = |uri: &str| -> Value { serde_json::from_str(&uri["test://sub/".len()..]).unwrap() };
    let (id_one, id_two) = (id_of(&uri_one), id_of(&uri_two));
    assert_ne!(id_one, id_two);
    assert!(listen_ids.contains(&id_one) && listen_ids.contains(&id_two));

    // A graceful end (the response to the listen request) ends that stream only.
    call_text(&client, "end_listen", json!({"id": id_one})).await;
    assert_eq!(next_event(&mut one).await, None);
    assert_eq!(call_text(&client, "fire", json!({})).await, "fired 1");
    assert_eq!(uri(next_event(&mut two).await), uri_two);

    // Dropping a subscription cancels its listen request by id; the ended one is not cancelled.
    drop(two);
    let lines = wait_for_record(&record, |l| !cancelled_ids(l).is_empty()).await;
    assert_eq!(cancelled_ids(&lines), [id_two]);
}

#[tokio::test]
async fn dropping_a_call_sends_cancelled_for_its_id() {
    let (cmd, record) = fake("serve");
    let client = start(cmd);
    // The process is started and its era probed before the timed call, so the 300 ms below are
    // the call's own, however long a loaded machine takes to start Python.
    assert_eq!(
        call_text(&client, "echo", json!({"text": "up"})).await,
        "up"
    );
    let err = client
        .tool_call("hang")
        .timeout(Some(Duration::from_millis(300)))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let lines = wait_for_record(&record, |l| !cancelled_ids(l).is_empty()).await;
    assert_eq!(cancelled_ids(&lines), [call_id(&lines, "hang")]);

    let token = CancellationToken::new();
    let call = client.tool_call("hang").cancellation(token.clone()).send();
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        token.cancel();
    };
    let (err, ()) = tokio::join!(call, cancel);
    assert!(err.unwrap_err().is_cancelled());
    let lines = wait_for_record(&record, |l| cancelled_ids(l).len() == 2).await;
    let hang_ids: Vec<Value> = lines
        .iter()
        .filter(|l| l["params"]["name"] == "hang")
        .map(|l| l["id"].clone())
        .collect();
    assert_eq!(cancelled_ids(&lines), hang_ids);

    // A completed call is never cancelled, and the connection still works.
    assert_eq!(
        call_text(&client, "echo", json!({"text": "still here"})).await,
        "still here"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(cancelled_ids(&recorded(&record)).len(), 2);
}

#[tokio::test]
async fn the_server_exiting_fails_pending_requests_with_its_status() {
    let (cmd, _record) = fake("serve");
    let client = start(cmd);
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("hang", json!({})).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let err = client
        .call_tool("die", json!({"code": 3}))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), smcp_client::ErrorKind::ServerExited, "{err}");
    assert_eq!(err.exit_status().and_then(|s| s.code()), Some(3), "{err}");
    let err = pending.await.unwrap().unwrap_err();
    assert_eq!(err.kind(), smcp_client::ErrorKind::ServerExited, "{err}");
    assert_eq!(err.exit_status().and_then(|s| s.code()), Some(3));
    assert!(started.elapsed() < Duration::from_secs(5));
    // Later requests fail the same way at once.
    let err = client.list_tools().await.unwrap_err();
    assert!(
        err.kind() == smcp_client::ErrorKind::ServerExited && err.to_string().contains('3'),
        "{err}"
    );
}

#[tokio::test]
async fn garbage_lines_are_skipped_and_never_taken_as_responses() {
    let (cmd, _record) = fake("serve");
    let client = start(cmd);
    // Garbage, a response for an unknown id, an id-less error and a server request come first;
    // the call still gets its own answer.
    assert_eq!(
        call_text(&client, "garbage", json!({})).await,
        "after garbage"
    );
    assert_eq!(
        call_text(&client, "echo", json!({"text": "ok"})).await,
        "ok"
    );
}

#[tokio::test]
async fn an_oversized_line_fails_the_requests_in_flight_not_the_connection() {
    let (cmd, record) = fake("serve");
    let client = start(cmd.max_line_bytes(4096));
    let err = client
        .call_tool("huge", json!({"size": 1_000_000}))
        .await
        .unwrap_err();
    assert!(err.is_protocol_violation(), "{err}");
    assert!(err.to_string().contains("4096"), "{err}");
    assert_eq!(
        call_text(&client, "echo", json!({"text": "after"})).await,
        "after"
    );
    // The failed request is cancelled server-side too.
    let lines = wait_for_record(&record, |l| !cancelled_ids(l).is_empty()).await;
    assert_eq!(cancelled_ids(&lines), [call_id(&lines, "huge")]);
}

#[tokio::test]
async fn inline_file_arguments_work_as_over_http() {
    let (cmd, _) = fake("serve");
    let client = Client::stdio(cmd)
        .files(FileTransfer::default())
        .build()
        .unwrap();
    let path = std::env::temp_dir().join(format!("smcp-stdio-{}.txt", std::process::id()));
    std::fs::write(&path, "hi there").unwrap();
    let files = [("document".to_owned(), path.clone())];
    let r = client
        .call_tool_with_files("describe_file", json!({}), &files, None)
        .await
        .unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(
        text(&r.content),
        "data:text/plain;base64,aGkgdGhlcmU= files=True"
    );
}

struct Proceed;

impl InputHandler for Proceed {
    fn kinds(&self) -> InputKinds {
        InputKinds {
            elicitation_form: true,
            ..InputKinds::default()
        }
    }
    fn elicit(
        &self,
        p: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, InputHandlerError>> {
        Box::pin(async move {
            assert!(matches!(p, ElicitRequestParams::Form(ref f) if f.message == "Proceed?"));
            let mut content = BTreeMap::new();
            content.insert("proceed".to_owned(), ElicitValue::Bool(true));
            Ok(ElicitResult::accept(content))
        })
    }
}

#[tokio::test]
async fn an_mrtr_round_over_stdio() {
    let (cmd, record) = fake("serve");
    let client = Client::stdio(cmd).input_handler(Proceed).build().unwrap();
    let t = call_text(&client, "confirm", json!({})).await;
    assert_eq!(
        t,
        r#"state=state-1 action=accept content={"proceed": true}"#
    );
    let lines = recorded(&record);
    assert_eq!(lines[0]["method"], "server/discover", "{lines:?}");
    let lines = &lines[1..];
    assert_eq!(lines.len(), 2);
    assert_ne!(
        lines[0]["id"], lines[1]["id"],
        "each round is a new request"
    );
    assert_eq!(lines[1]["params"]["requestState"], "state-1");
    assert!(
        lines[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["elicitation"]
            .is_object()
    );
}

#[tokio::test]
async fn close_escalates_to_sigterm_then_sigkill_within_the_bound() {
    // Exits on stdin EOF: no signal needed.
    let (cmd, _) = fake("serve");
    let client = start(cmd.shutdown_timeout(Duration::from_millis(300)));
    call_text(&client, "echo", json!({"text": "x"})).await;
    // An exit code, not a signal: it exited on stdin EOF, before any escalation.
    let status = client.close().await.unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(client.list_tools().await.unwrap_err().kind() == smcp_client::ErrorKind::Closed);

    // Ignores stdin EOF: SIGTERM after the bound.
    let (cmd, record) = fake("ignore-eof");
    let client = start(cmd.shutdown_timeout(Duration::from_millis(300)));
    call_text(&client, "echo", json!({"text": "x"})).await;
    let started = Instant::now();
    let status = client.close().await.unwrap();
    assert_eq!(status.signal(), Some(15), "{status}");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(5),
        "{took:?}"
    );
    assert!(
        std::fs::read_to_string(&record).unwrap().ends_with("EOF\n"),
        "stdin was closed first"
    );

    // Ignores SIGTERM too: SIGKILL after the second bound.
    let (cmd, _) = fake("ignore-term");
    let client = start(cmd.shutdown_timeout(Duration::from_millis(300)));
    call_text(&client, "echo", json!({"text": "x"})).await;
    let started = Instant::now();
    let status = client.close().await.unwrap();
    assert_eq!(status.signal(), Some(9), "{status}");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(600) && took < Duration::from_secs(5),
        "{took:?}"
    );
}

#[tokio::test]
async fn close_fails_requests_in_flight() {
    let (cmd, _) = fake("serve");
    let client = start(cmd);
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("hang", json!({})).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    client.close().await;
    assert!(pending.await.unwrap().unwrap_err().kind() == smcp_client::ErrorKind::Closed);
}

#[tokio::test]
async fn dropping_the_client_stops_the_server() {
    let (cmd, _) = fake("ignore-eof");
    let client = start(cmd.shutdown_timeout(Duration::from_millis(200)));
    let pid = call_text(&client, "pid", json!({})).await;
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    assert!(proc_dir.exists());
    drop(client);
    for _ in 0..100 {
        if !proc_dir.exists() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the server (pid {pid}) still runs after the client was dropped");
}

#[tokio::test]
async fn stderr_is_captured_and_never_an_error() {
    let (cmd, _) = fake("serve");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let l = lines.clone();
    let client = start(cmd.stderr(ServerStderr::lines(move |line| {
        l.lock().unwrap().push(line.to_owned());
    })));
    assert_eq!(call_text(&client, "echo", json!({"text": "x"})).await, "x");
    client.close().await;
    assert_eq!(
        *lines.lock().unwrap(),
        ["fake server: started in mode serve"]
    );
}

#[tokio::test]
async fn launch_and_configuration_errors_are_typed() {
    let err = Client::stdio(StdioCommand::new("/nonexistent/mcp-server"))
        .build()
        .unwrap_err();
    assert!(err.is_connect(), "{err}");
    assert!(err.to_string().contains("/nonexistent/mcp-server"), "{err}");

    let (cmd, _) = fake("serve");
    let err = Client::stdio(cmd)
        .header("Authorization", "Bearer x")
        .build()
        .unwrap_err();
    assert!(err.is_config(), "{err}");

    // Environment and working directory reach the child.
    let dir = std::env::temp_dir();
    let cmd = StdioCommand::new("sh")
        .arg("-c")
        .arg(r#"read line; printf '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"%s %s %s"}]}}\n' "$SMCP_TEST_VAR" "${HOME:-nohome}" "$(pwd)"; sleep 5"#)
        .env_clear()
        .env("SMCP_TEST_VAR", "v1")
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(&dir)
        .shutdown_timeout(Duration::from_millis(100));
    // This one-line server answers only the call: no era probe.
    let client = Client::stdio(cmd).probe_era(false).build().unwrap();
    let t = call_text(&client, "x", json!({})).await;
    let expected = format!("v1 nohome {}", dir.canonicalize().unwrap().display());
    assert_eq!(t, expected);
    client.close().await;
}

#[tokio::test]
async fn a_task_over_stdio_is_followed_and_cancelled_like_over_http() {
    let (cmd, record) = fake("serve");
    let client = Client::stdio(cmd)
        .timeout(Some(Duration::from_secs(20)))
        .task_polling(smcp_client::TaskPolling {
            min_interval: Duration::from_millis(5),
            ..smcp_client::TaskPolling::default()
        })
        .build()
        .unwrap();
    assert_eq!(call_text(&client, "task", json!({})).await, "task done");
    let lines = recorded(&record);
    let gets: Vec<&Value> = lines
        .iter()
        .filter(|l| l["method"] == "tasks/get")
        .collect();
    assert_eq!(gets.len(), 2);
    assert_eq!(gets[0]["params"]["taskId"], "task-1");
    assert_eq!(
        gets[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"],
        json!({"io.modelcontextprotocol/tasks": {}})
    );

    // Dropping the follower sends tasks/cancel for the task.
    let call = client.call_tool("endless_task", json!({}));
    let polled = wait_for_record(&record, |l| {
        l.iter()
            .any(|m| m["method"] == "tasks/get" && m["params"]["taskId"] == "task-2")
    });
    tokio::select! {
        r = call => panic!("the task never ends: {r:?}"),
        _ = polled => {}
    }
    wait_for_record(&record, |l| {
        l.iter()
            .any(|m| m["method"] == "tasks/cancel" && m["params"]["taskId"] == "task-2")
    })
    .await;

    // Without the extension, the same tool answers inline.
    let (cmd, _) = fake("serve");
    let inline = Client::stdio(cmd).tasks(false).build().unwrap();
    assert_eq!(call_text(&inline, "task", json!({})).await, "inline");
    inline.close().await;
    client.close().await;
}
