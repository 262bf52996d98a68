//! The end-to-end proof of SEP-2663 tasks (issue #19): a 30-second `long_job` run through the
//! real `smcpd` binary and the `smcp-client` library, with a question half-way answered by
//! the client's `InputHandler`, while a second `long_job` is cancelled through its
//! `TaskHandle`; then the `smcp` command line following a task (`smcp call`) and working on a
//! running one by id (`smcp task get`, `smcp task cancel`).
//!
//! The `smcp` binary is not a target of this package: it is found next to the test executable
//! (`target/<profile>/smcp`, built by `cargo build -p smcp`; `cargo test --workspace` builds
//! it before any test runs), or at `$SMCP_BIN`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult, ElicitValue};
use smcp_client::proto::content::ContentBlock;
use smcp_client::proto::ext::tasks::TaskStatus;
use smcp_client::{
    BoxFuture, Client, InputHandler, InputHandlerError, InputKinds, TaskPolling, ToolCallOutcome,
};
use support::Smcpd;

/// Answers `long_job`'s question ("Continue?") with yes, and counts the questions.
struct Continue {
    asked: Arc<AtomicUsize>,
    messages: Arc<Mutex<Vec<String>>>,
}

impl InputHandler for Continue {
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
        self.asked.fetch_add(1, Ordering::SeqCst);
        let message = match &p {
            ElicitRequestParams::Form(f) => f.message.clone(),
            other @ ElicitRequestParams::Url(_) => format!("not a form: {other:?}"),
        };
        self.messages.lock().unwrap().push(message);
        Box::pin(async move {
            let mut content = std::collections::BTreeMap::new();
            content.insert("continue".to_owned(), ElicitValue::Bool(true));
            Ok(ElicitResult::accept(content))
        })
    }
}

fn text(blocks: &[ContentBlock]) -> String {
    match blocks.first() {
        Some(ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_30_second_task_with_a_question_and_a_cancelled_one_through_the_client() {
    let mut server = Smcpd::start();
    let log = server.follow_log();
    let url = format!("http://{}/mcp", server.addr);
    let asked = Arc::new(AtomicUsize::new(0));
    let messages = Arc::new(Mutex::new(Vec::new()));
    let client = Client::builder(&url)
        .input_handler(Continue {
            asked: asked.clone(),
            messages: messages.clone(),
        })
        .timeout(Some(Duration::from_secs(20)))
        .task_polling(TaskPolling {
            min_interval: Duration::from_millis(200),
            ..TaskPolling::default()
        })
        .build()
        .unwrap();

    // The long one: 30 s of work, asked to go on after 5 s, followed behind one call.
    let statuses = Arc::new(Mutex::new(Vec::<TaskStatus>::new()));
    let seen = statuses.clone();
    let long = async {
        let started = Instant::now();
        let result = client
            .tool_call("long_job")
            .arguments(json!({"seconds": 30, "confirm_at": 5}))
            .on_task_status(move |t| {
                let mut seen = seen.lock().unwrap();
                if seen.last() != Some(&t.task.status) {
                    seen.push(t.task.status);
                }
            })
            .send()
            .await;
        (result, started.elapsed())
    };

    // The other one: started as a task, cancelled after a few seconds through its handle.
    let cancelled = async {
        let outcome = client
            .call_tool_task("long_job", json!({"seconds": 30}))
            .await
            .unwrap();
        let ToolCallOutcome::Task(mut task) = outcome else {
            panic!("a 30 s job answered inline")
        };
        assert_eq!(task.task().status, TaskStatus::Working);
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert_eq!(task.get().await.unwrap().task.status, TaskStatus::Working);
        task.cancel().await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let end = loop {
            let state = task.get().await.unwrap();
            if state.task.status.is_terminal() {
                break state;
            }
            assert!(Instant::now() < deadline, "not cancelled: {state:?}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        (task.id().to_owned(), end)
    };

    let ((result, elapsed), (cancelled_id, end)) = tokio::join!(long, cancelled);

    // The cancelled task settled to `cancelled`, and its handler stopped early.
    assert_eq!(end.task.status, TaskStatus::Cancelled, "{end:?}");
    assert!(end.result.is_none() && end.error.is_none(), "{end:?}");
    let line = log
        .wait_for("long_job cancelled after", Duration::from_secs(5))
        .expect("the cancelled handler logs that it stopped");
    let done: u64 = line
        .split("long_job cancelled after ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        (1..30).contains(&done) && line.contains(" of 30 s"),
        "{cancelled_id}: {line}"
    );

    // The long one was a task, asked once, and completed after its 30 s of work.
    let result = result.unwrap();
    assert!(!result.is_error(), "{result:?}");
    let body = text(&result.content);
    assert!(
        body.starts_with("long_job finished: worked 30 s in ")
            && body.ends_with(", continued after the question at 5 s"),
        "{body}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1, "asked exactly once");
    assert_eq!(*messages.lock().unwrap(), ["Continue?"]);
    assert!(elapsed >= Duration::from_secs(30), "{elapsed:?}");
    assert_eq!(
        *statuses.lock().unwrap(),
        [
            TaskStatus::Working,
            TaskStatus::InputRequired,
            TaskStatus::Working,
            TaskStatus::Completed
        ]
    );
    let structured = result.structured_content.unwrap_or(Value::Null);
    assert_eq!(structured["worked"], 30, "{structured}");
    assert_eq!(structured["confirmedAt"], 5, "{structured}");
    // One job finished, the other was cancelled: exactly one "finished" in the log.
    let finished = log
        .lines()
        .iter()
        .filter(|l| l.contains("long_job finished"))
        .count();
    assert_eq!(finished, 1, "{:?}", log.lines());
    assert!(server.terminate().success());
}

/// The `smcp` binary, next to this test's executable (or `$SMCP_BIN`).
fn smcp_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("SMCP_BIN") {
        return path.into();
    }
    // target/<profile>/deps/tasks_e2e-HASH → target/<profile>/smcp
    let exe = std::env::current_exe().unwrap();
    let dir = exe
        .parent()
        .and_then(std::path::Path::parent)
        .expect("the test executable is in target/<profile>/deps");
    let bin = dir.join(format!("smcp{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "the smcp binary is not at {}: build it with `cargo build -p smcp` (cargo test \
         --workspace builds it), or set SMCP_BIN",
        bin.display()
    );
    bin
}

fn smcp(url: &str, args: &[&str]) -> std::process::Output {
    Command::new(smcp_bin())
        .arg("--url")
        .arg(url)
        .args(args)
        .env_remove("SMCP_URL")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn out(o: &std::process::Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_smcp_cli_follows_gets_and_cancels_smcpd_tasks() {
    let mut server = Smcpd::start_with(&["--tasks-poll-interval", "200ms"]);
    let log = server.follow_log();
    let url = format!("http://{}/mcp", server.addr);

    // `smcp call --json`: the final result of the task, nothing else.
    let o = smcp(&url, &["call", "long_job", "--arg", "seconds=2", "--json"]);
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    let body = v["content"][0]["text"].as_str().unwrap();
    assert!(body.starts_with("long_job finished: worked 2 s in "), "{v}");
    assert_eq!(v["structuredContent"]["worked"], 2, "{v}");
    // Piped, `smcp call` shows each status of the task it follows on stderr.
    let o = smcp(&url, &["call", "long_job", "--arg", "seconds=2"]);
    assert!(
        out(&o).contains("long_job finished: worked 2 s in "),
        "{o:?}"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(": working: The operation is now in progress.") && err.contains(": completed"),
        "{err}"
    );

    // A running task, started by one `smcp call`, seen and cancelled by two others.
    let mut call = Command::new(smcp_bin())
        .arg("--url")
        .arg(&url)
        .args(["call", "long_job", "--arg", "seconds=30"])
        .env_remove("SMCP_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let call_err = Arc::new(Mutex::new(Vec::<String>::new()));
    let lines = call_err.clone();
    let stderr = call.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            lines.lock().unwrap().push(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    let id = loop {
        let found = call_err.lock().unwrap().iter().find_map(|l| {
            l.strip_prefix("task ")
                .and_then(|rest| rest.split(':').next())
                .map(str::to_owned)
        });
        if let Some(id) = found {
            break id;
        }
        assert!(
            Instant::now() < deadline,
            "no task line: {:?}",
            call_err.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(id.len(), 32, "{id}");

    let shown = out(&smcp(&url, &["task", "get", &id]));
    assert!(shown.contains(&format!("task:     {id}")), "{shown}");
    assert!(shown.contains("status:   working"), "{shown}");
    assert!(shown.contains("ttl:      3600000 ms"), "{shown}");
    assert!(shown.contains("poll:     every 200 ms"), "{shown}");

    out(&smcp(&url, &["task", "cancel", &id]));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let v: Value =
            serde_json::from_str(&out(&smcp(&url, &["task", "get", &id, "--json"]))).unwrap();
        if v["status"] == "cancelled" {
            break;
        }
        assert_eq!(v["status"], "working", "{v}");
        assert!(Instant::now() < deadline, "not cancelled: {v}");
        std::thread::sleep(Duration::from_millis(200));
    }
    // The handler stopped, and the `smcp call` following the task ended with it.
    let line = log
        .wait_for("long_job cancelled after", Duration::from_secs(5))
        .expect("the handler logs its cancellation");
    assert!(line.contains(" of 30 s"), "{line}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = call.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "smcp call still running");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!status.success());
    let err = call_err.lock().unwrap().join("\n");
    assert!(
        err.contains("the task was cancelled") && err.contains(&id),
        "{err}"
    );
    assert!(server.terminate().success());
}
