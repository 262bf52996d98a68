//! `smcp` and SEP-2663 tasks: the real binary against a scripted server that answers as the
//! SEP's examples do (`smcp call` following a task, `smcp task get|cancel`, Ctrl-C, `--no-tasks`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::HeaderMap;
use serde_json::{Value, json};

const ID: &str = "786512e2-9e0d-44bd-8f29-789f320fe840";
const EXT: &str = "io.modelcontextprotocol/tasks";

type Script = Arc<dyn Fn(&Value) -> Value + Send + Sync>;

/// A scripted MCP endpoint: `script(request)` gives the JSON-RPC `result` (or
/// `{"error": …}` for an error answer); every POST is recorded.
struct Fake {
    url: String,
    seen: Arc<Mutex<Vec<(HeaderMap, Value)>>>,
}

impl Fake {
    fn start(script: impl Fn(&Value) -> Value + Send + Sync + 'static) -> Self {
        let script: Script = Arc::new(script);
        let seen: Arc<Mutex<Vec<(HeaderMap, Value)>>> = Arc::default();
        let s2 = seen.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().unwrap();
            rt.block_on(async move {
                let app = axum::Router::new().route(
                    "/mcp",
                    axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                        let seen = s2.clone();
                        let script = script.clone();
                        async move {
                            let body: Value = serde_json::from_slice(&body).unwrap();
                            seen.lock().unwrap().push((headers, body.clone()));
                            let answer = script(&body);
                            let mut msg = json!({"jsonrpc": "2.0", "id": body["id"]});
                            // A failed task carries `error` too, beside its `taskId`.
                            if answer.get("error").is_some() && answer.get("taskId").is_none() {
                                msg["error"] = answer["error"].clone();
                            } else {
                                msg["result"] = answer;
                            }
                            axum::Json(msg)
                        }
                    }),
                );
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
        });
        Self {
            url: format!("http://{}/mcp", rx.recv().unwrap()),
            seen,
        }
    }

    fn methods(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|(_, b)| b["method"].as_str().unwrap_or("").to_owned())
            .collect()
    }

    fn first(&self, method: &str) -> Option<(HeaderMap, Value)> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .find(|(_, b)| b["method"] == method)
            .cloned()
    }
}

fn task(status: &str, extra: Value) -> Value {
    let mut t = json!({
        "resultType": "complete",
        "taskId": ID,
        "status": status,
        "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:40:00Z",
        "ttlMs": 60000,
        "pollIntervalMs": 20
    });
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            t[k] = v;
        }
    }
    t
}

fn hello() -> Value {
    json!({"content": [{"type": "text", "text": "Hello, Luca!"}], "isError": false})
}

/// A server whose `hello_world` runs as a task: two `working` polls, then `completed`.
fn three_step_server() -> Fake {
    let gets = AtomicUsize::new(0);
    Fake::start(move |r| match r["method"].as_str().unwrap() {
        "tools/list" => {
            json!({"tools": [{"name": "hello_world", "inputSchema": {"type": "object"}}]})
        }
        "tools/call" => {
            let mut t = task(
                "working",
                json!({"statusMessage": "The operation is now in progress."}),
            );
            t["resultType"] = json!("task");
            t
        }
        "tasks/get" => match gets.fetch_add(1, Ordering::SeqCst) {
            0 => task("working", json!({"statusMessage": "step 1 of 2"})),
            1 => task("working", json!({"statusMessage": "step 2 of 2"})),
            _ => task("completed", json!({"result": hello()})),
        },
        _ => json!({"resultType": "complete"}),
    })
}

fn smcp(url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_smcp"))
        .arg("--url")
        .arg(url)
        .args(args)
        .env_remove("SMCP_URL")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status,
        text(&o.stdout),
        text(&o.stderr)
    );
    text(&o.stdout)
}

#[test]
fn call_follows_a_task_to_its_result_and_shows_its_status() {
    let fake = three_step_server();
    let o = smcp(&fake.url, &["call", "hello_world"]);
    assert_eq!(ok(&o).trim(), "Hello, Luca!");
    // stderr is piped: one plain line per status change.
    let err = text(&o.stderr);
    for line in [
        format!("task {ID}: working: The operation is now in progress."),
        format!("task {ID}: working: step 1 of 2"),
        format!("task {ID}: working: step 2 of 2"),
        format!("task {ID}: completed"),
    ] {
        assert!(err.contains(&line), "{line:?} in {err}");
    }
    assert_eq!(
        fake.methods(),
        [
            "tools/list",
            "tools/call",
            "tasks/get",
            "tasks/get",
            "tasks/get"
        ]
    );
    let (headers, body) = fake.first("tasks/get").unwrap();
    assert_eq!(headers["mcp-method"], "tasks/get");
    assert_eq!(headers["mcp-name"], ID);
    assert_eq!(
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"],
        json!({EXT: {}})
    );

    // --json: the final result only.
    let fake = three_step_server();
    let o = smcp(&fake.url, &["call", "hello_world", "--json"]);
    let v: Value = serde_json::from_str(&ok(&o)).unwrap();
    assert_eq!(v["content"][0]["text"], "Hello, Luca!");
    assert!(!text(&o.stderr).contains("task "), "{}", text(&o.stderr));
}

#[test]
fn call_reports_a_failed_task_with_its_code_and_id() {
    let fake = Fake::start(|r| match r["method"].as_str().unwrap() {
        "tools/list" => json!({"tools": []}),
        "tools/call" => {
            let mut t = task("working", json!({}));
            t["resultType"] = json!("task");
            t
        }
        _ => task(
            "failed",
            json!({"error": {"code": -32603, "message": "API rate limit exceeded"}}),
        ),
    });
    let o = smcp(&fake.url, &["call", "hello_world"]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.contains("-32603") && err.contains("API rate limit exceeded") && err.contains(ID),
        "{err}"
    );
}

#[test]
fn task_get_shows_the_task_and_its_payload() {
    let fake = Fake::start(|_| {
        task(
            "completed",
            json!({"statusMessage": "all done", "result": hello()}),
        )
    });
    let out = ok(&smcp(&fake.url, &["task", "get", ID]));
    for want in [ID, "completed", "all done", "60000 ms", "Hello, Luca!"] {
        assert!(out.contains(want), "{want:?} in {out}");
    }
    let (headers, body) = fake.first("tasks/get").unwrap();
    assert_eq!(headers["mcp-name"], ID);
    assert_eq!(body["params"]["taskId"], ID);

    let out = ok(&smcp(&fake.url, &["task", "get", ID, "--json"]));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["status"], "completed");
    assert_eq!(v["result"], hello());

    let fake = Fake::start(|_| {
        task(
            "input_required",
            json!({"inputRequests": {"name": {"method": "elicitation/create", "params": {
                "mode": "form", "message": "Please enter your name.",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}}}),
        )
    });
    let out = ok(&smcp(&fake.url, &["task", "get", ID]));
    assert!(
        out.contains("input_required")
            && out.contains("name: elicitation/create Please enter your name."),
        "{out}"
    );

    let fake = Fake::start(|_| {
        task(
            "failed",
            json!({"error": {"code": -32603, "message": "API rate limit exceeded"}}),
        )
    });
    let out = ok(&smcp(&fake.url, &["task", "get", ID]));
    assert!(
        out.contains("JSON-RPC error -32603: API rate limit exceeded"),
        "{out}"
    );

    // An unknown task: the server's error, non-zero.
    let fake = Fake::start(
        |_| json!({"error": {"code": -32602, "message": "Failed to retrieve task: Task not found"}}),
    );
    let o = smcp(&fake.url, &["task", "get", "nope"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("-32602"), "{}", text(&o.stderr));

    // A malformed answer is named.
    let fake = Fake::start(|_| task("completed", json!({})));
    let o = smcp(&fake.url, &["task", "get", ID]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("`result`"), "{}", text(&o.stderr));
}

#[test]
fn task_cancel_sends_tasks_cancel() {
    let fake = Fake::start(|_| json!({"resultType": "complete"}));
    let out = ok(&smcp(&fake.url, &["task", "cancel", ID]));
    assert!(out.contains(ID) && out.contains("requested"), "{out}");
    let (headers, body) = fake.first("tasks/cancel").unwrap();
    assert_eq!(headers["mcp-method"], "tasks/cancel");
    assert_eq!(headers["mcp-name"], ID);
    assert_eq!(body["params"]["taskId"], ID);

    let out = ok(&smcp(&fake.url, &["task", "cancel", ID, "--json"]));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v, json!({"taskId": ID, "cancelRequested": true}));
}

#[test]
fn ctrl_c_cancels_the_task_before_exiting() {
    let fake = Fake::start(|r| match r["method"].as_str().unwrap() {
        "tools/list" => json!({"tools": []}),
        "tools/call" => {
            let mut t = task("working", json!({}));
            t["resultType"] = json!("task");
            t
        }
        "tasks/get" => task("working", json!({"statusMessage": "still going"})),
        _ => json!({"resultType": "complete"}),
    });
    let child = Command::new(env!("CARGO_BIN_EXE_smcp"))
        .args(["--url", &fake.url, "call", "long_job"])
        .env_remove("SMCP_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !fake.methods().iter().any(|m| m == "tasks/get") {
        assert!(Instant::now() < deadline, "smcp never polled");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("cancelled") && err.contains(&format!("task {ID}")),
        "{err}"
    );
    let (headers, body) = fake.first("tasks/cancel").expect("tasks/cancel was sent");
    assert_eq!(headers["mcp-name"], ID);
    assert_eq!(body["params"]["taskId"], ID);
}

#[test]
fn no_tasks_declares_nothing_and_explains_a_refusal() {
    let fake = Fake::start(|r| match r["method"].as_str().unwrap() {
        "tools/list" => json!({"tools": []}),
        _ => json!({"error": {"code": -32021, "message": "Missing required client capability",
            "data": {"requiredCapabilities": {"extensions": {EXT: {}}}}}}),
    });
    let o = smcp(&fake.url, &["--no-tasks", "call", "long_job"]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.contains("-32021") && err.contains("drop --no-tasks"),
        "{err}"
    );
    let (_, body) = fake.first("tools/call").unwrap();
    assert!(
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
            .get("extensions")
            .is_none(),
        "{body}"
    );
}
