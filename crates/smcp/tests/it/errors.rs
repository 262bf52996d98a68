//! The CLI's error table (`docs/cli.md`), one test per row: the cause is produced for real
//! (a TLS server with a development CA, a plain server, a closed port, a silent listener, an
//! endpoint that is not MCP, a server that refuses credentials…) and the built `smcp` binary
//! must say what happened, hint at the fix, print no stray log line, and exit with the row's
//! code. Under `--json` the same report is one JSON object on stdout.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use serde_json::{Value, json};

/// Serves `router` on 127.0.0.1:0 on its own runtime thread.
fn serve_router(router: axum::Router) -> SocketAddr {
    crate::support::on_thread(|listener| async move {
        axum::serve(listener, router).await.unwrap();
    })
}

/// smcpd's demo server on 127.0.0.1:0, over TLS when `tls` is given.
fn start_smcpd(tls: Option<&smcp_server::http::tls::DevCertificates>) -> SocketAddr {
    let tls = tls.map(|c| smcp_server::http::tls::config_from_files(&c.cert, &c.key).unwrap());
    crate::support::serve_mcp(
        || smcpd::demo_server(smcp_server::SecurityPolicy::loopback()).unwrap(),
        smcp_server::ServeOptions {
            tls,
            ..smcp_server::ServeOptions::default()
        },
    )
}

/// A throwaway CA and a certificate for 127.0.0.1 in a fresh directory.
fn dev_certs(tag: &str) -> smcp_server::http::tls::DevCertificates {
    let dir = std::env::temp_dir().join(format!("smcp-cli-errors-{tag}-{}", std::process::id()));
    smcp_server::http::tls::write_dev_certificates(&dir, &["127.0.0.1", "localhost"]).unwrap()
}

/// A TCP listener that accepts connections and never says a word.
fn silent_listener() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    addr
}

/// A cache directory of this test's own.
fn cache_dir(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("smcp-cli-cache-{tag}-{}", std::process::id()))
}

fn smcp(url: &str, args: &[&str]) -> Output {
    smcp_in(url, args, &cache_dir("default"))
}

fn smcp_in(url: &str, args: &[&str], cache: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_smcp"))
        .arg("--url")
        .arg(url)
        .args(args)
        .env_remove("SMCP_URL")
        .env_remove("SMCP_LOG")
        .env_remove("SMCP_CA_CERT")
        .env_remove("SMCP_SAMPLING_CMD")
        .env("SMCP_CACHE_DIR", cache)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Asserts the exit code and that stderr has the message parts, and no log line or colour.
fn fails(o: &Output, code: i32, parts: &[&str]) -> String {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    for p in parts {
        assert!(err.contains(p), "{p:?} in {err}");
    }
    assert!(
        err.starts_with("error: "),
        "the report is the first line: {err}"
    );
    for noise in ["ERROR", "WARN", "\u{1b}["] {
        assert!(!err.contains(noise), "stray {noise:?} in {err}");
    }
    err
}

/// The `--json` report on stdout.
fn json_error(o: &Output) -> Value {
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: stdout {}", text(&o.stdout)));
    assert!(o.stderr.is_empty(), "stderr: {}", text(&o.stderr));
    assert_eq!(
        v["error"]["exitCode"].as_i64(),
        o.status.code().map(i64::from)
    );
    v
}

#[test]
fn untrusted_certificate_suggests_ca_cert_and_ca_cert_fixes_it() {
    let certs = dev_certs("ca");
    let url = format!("https://{}/mcp", start_smcpd(Some(&certs)));
    let o = smcp(&url, &["tools"]);
    let err = fails(
        &o,
        3,
        &["not signed by a trusted CA", "--ca-cert", "UnknownIssuer"],
    );
    assert!(!err.contains("is the server running"), "{err}");
    let v = json_error(&smcp(&url, &["tools", "--json"]));
    assert_eq!(v["error"]["kind"], "untrusted-certificate");

    let ca = certs.ca_cert.to_str().unwrap();
    let o = smcp(&url, &["--ca-cert", ca, "tools"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("echo"));
}

#[test]
fn https_to_a_plain_port_says_use_http() {
    let addr = start_smcpd(None);
    let o = smcp(&format!("https://{addr}/mcp"), &["tools"]);
    let err = fails(
        &o,
        3,
        &[
            "did not answer in TLS",
            &format!("use http:// instead of https:// (http://{addr}/mcp)"),
        ],
    );
    assert!(!err.contains("is the server running"), "{err}");
}

#[test]
fn http_to_a_tls_port_says_use_https() {
    let certs = dev_certs("scheme");
    let addr = start_smcpd(Some(&certs));
    let o = smcp(&format!("http://{addr}/mcp"), &["tools"]);
    fails(
        &o,
        3,
        &[
            "without an HTTP answer",
            &format!("use https:// instead of http:// (https://{addr}/mcp)"),
        ],
    );
}

#[test]
fn a_wrong_path_is_not_an_older_revision() {
    let addr = start_smcpd(None);
    let o = smcp(&format!("http://{addr}/nope"), &["tools"]);
    let err = fails(
        &o,
        4,
        &["HTTP 404", "not an MCP endpoint", "check the URL's path"],
    );
    assert!(!err.contains("older"), "{err}");

    // An endpoint that takes only GET answers a POST with 405.
    let addr =
        serve_router(axum::Router::new().route("/mcp", axum::routing::get(|| async { "hi" })));
    let o = smcp(&format!("http://{addr}/mcp"), &["tools"]);
    let err = fails(
        &o,
        4,
        &["HTTP 405", "does not take POST", "not an MCP endpoint"],
    );
    assert!(!err.contains("older"), "{err}");
    let v = json_error(&smcp(&format!("http://{addr}/mcp"), &["tools", "--json"]));
    assert_eq!(v["error"]["kind"], "wrong-endpoint");
    assert_eq!(v["error"]["httpStatus"], 405);
}

#[test]
fn connection_refused_says_nothing_listens() {
    // Bind then drop: the port is closed.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let o = smcp(&format!("http://{addr}/mcp"), &["tools"]);
    fails(
        &o,
        3,
        &[
            "connection refused: nothing listens at",
            "Connection refused",
            "is the server running",
        ],
    );
    let v = json_error(&smcp(&format!("http://{addr}/mcp"), &["--json", "tools"]));
    assert_eq!(v["error"]["kind"], "connection-refused");
    assert_eq!(v["error"]["exitCode"], 3);
    assert!(
        v["error"]["causes"]
            .as_array()
            .is_some_and(|c| !c.is_empty()),
        "{v}"
    );
}

#[test]
fn a_silent_tls_peer_is_a_connect_timeout() {
    let addr = silent_listener();
    let o = smcp(
        &format!("https://{addr}/mcp"),
        &["--connect-timeout", "1", "tools"],
    );
    fails(
        &o,
        3,
        &[
            "no connection to",
            "within the connect timeout",
            "--connect-timeout",
        ],
    );
}

#[test]
fn no_answer_within_the_timeout_is_a_timeout() {
    let addr = silent_listener();
    let o = smcp(&format!("http://{addr}/mcp"), &["--timeout", "1", "tools"]);
    fails(&o, 7, &["timed out", "--timeout"]);
}

#[test]
fn usage_errors_exit_2_and_invalid_json_args_show_where() {
    let url = format!("http://{}/mcp", start_smcpd(None));
    let o = smcp(&url, &["call", "add", "--json-args", r#"{"a": 1 "b": 2}"#]);
    let err = fails(&o, 2, &["--json-args is not valid JSON", "line 1 column 9"]);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines[1], r#"    {"a": 1 "b": 2}"#, "{err}");
    assert_eq!(lines[2], "            ^", "{err}");

    let o = smcp(&url, &["call", "add", "--arg", "a=one", "--arg", "b=2"]);
    fails(&o, 2, &["--arg a: \"one\" is not a number"]);

    // clap's own usage errors keep code 2; under --json they are JSON too.
    let o = smcp(&url, &["tools", "--bogus"]);
    assert_eq!(o.status.code(), Some(2));
    let v = json_error(&smcp(&url, &["tools", "--bogus", "--json"]));
    assert_eq!(v["error"]["kind"], "usage");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("--bogus"),
        "{v}"
    );
}

#[test]
fn server_errors_exit_4_and_an_unknown_tool_gets_a_suggestion() {
    let url = format!("http://{}/mcp", start_smcpd(None));
    let o = smcp(&url, &["read", "smcp://missing"]);
    fails(&o, 4, &["JSON-RPC error"]);

    let o = smcp(&url, &["call", "ecko", "--arg", "text=hi"]);
    fails(&o, 4, &["-32602", "did you mean: echo?"]);
    let o = smcp(&url, &["call", "zzzzzzzzzz"]);
    fails(&o, 4, &["-32602", "`smcp tools` shows the tools"]);
    let v = json_error(&smcp(&url, &["call", "ecko", "--json"]));
    assert_eq!(v["error"]["kind"], "unknown-tool");
    assert_eq!(v["error"]["code"], -32602);
    assert_eq!(v["error"]["exitCode"], 4);

    let o = smcp(&url, &["tool", "ad"]);
    fails(&o, 2, &["no tool \"ad\"", "did you mean: add"]);
}

/// A fake MCP endpoint: `answer(request)` is the whole HTTP response (status and JSON body);
/// every request's method is recorded.
fn fake(
    answer: impl Fn(&Value) -> (u16, Value) + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let s2 = seen.clone();
    let answer = Arc::new(answer);
    let router = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |body: Bytes| {
            let seen = s2.clone();
            let answer = answer.clone();
            async move {
                let body: Value = serde_json::from_slice(&body).unwrap();
                seen.lock()
                    .unwrap()
                    .push(body["method"].as_str().unwrap_or("").to_owned());
                let (status, mut reply) = answer(&body);
                if reply.get("jsonrpc").is_none() && status == 200 {
                    reply = json!({"jsonrpc": "2.0", "id": body["id"], "result": reply});
                }
                (
                    axum::http::StatusCode::from_u16(status).unwrap(),
                    axum::Json(reply),
                )
            }
        }),
    );
    (format!("http://{}/mcp", serve_router(router)), seen)
}

#[test]
fn a_tool_error_exits_5_with_the_result_printed() {
    let (url, _) = fake(|r| match r["method"].as_str() {
        Some("tools/list") => (
            200,
            json!({"tools": [{"name": "boom", "inputSchema": {"type": "object"}}]}),
        ),
        _ => (
            200,
            json!({"content": [{"type": "text", "text": "disk full"}], "isError": true}),
        ),
    });
    let o = smcp(&url, &["call", "boom"]);
    fails(&o, 5, &["the tool reported a failure (isError: true)"]);
    assert_eq!(text(&o.stdout).trim(), "disk full");
    // Under --json the result itself is the output (it says isError); the code says the rest.
    let o = smcp(&url, &["call", "boom", "--json"]);
    assert_eq!(o.status.code(), Some(5));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["isError"], true);
}

#[test]
fn refused_credentials_exit_6() {
    for status in [401, 403] {
        let (url, _) = fake(move |_| (status, json!({"message": "no"})));
        let o = smcp(&url, &["tools"]);
        fails(
            &o,
            6,
            &[&format!("HTTP {status}"), "--header 'Authorization: Bearer"],
        );
        let v = json_error(&smcp(&url, &["tools", "--json"]));
        assert_eq!(v["error"]["kind"], "auth");
        assert_eq!(v["error"]["httpStatus"], status);
    }
}

#[test]
fn input_hints_name_only_the_flags_that_were_given() {
    let url = format!("http://{}/mcp", start_smcpd(None));
    // Not on a terminal (the test pipes stdin): no --non-interactive to drop.
    let o = smcp(&url, &["call", "confirm_action", "--arg", "action=x"]);
    let err = fails(&o, 4, &["-32021", "run smcp on a terminal"]);
    assert!(!err.contains("--non-interactive"), "{err}");
    let o = smcp(
        &url,
        &[
            "--non-interactive",
            "call",
            "confirm_action",
            "--arg",
            "action=x",
        ],
    );
    fails(&o, 4, &["-32021", "drop --non-interactive"]);
    let o = smcp(&url, &["call", "ask_llm", "--arg", "text=x"]);
    let err = fails(&o, 4, &["-32021", "--sampling-cmd"]);
    assert!(!err.contains("--non-interactive"), "{err}");
}

#[test]
fn sampling_is_answered_by_the_sampling_command() {
    let url = format!("http://{}/mcp", start_smcpd(None));
    // The command sees the request on stdin: the summary quotes the system prompt's length.
    let o = smcp(
        &url,
        &[
            "call",
            "ask_llm",
            "--arg",
            "text=MCP is a protocol.",
            "--sampling-cmd",
            "grep -o 'Summarize in one sentence' | head -n1",
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout).trim(),
        "Summarize in one sentence (model: grep)"
    );
    // A full CreateMessageResult is taken as is.
    let answer =
        r#"echo '{"role":"assistant","content":{"type":"text","text":"short"},"model":"m1"}'"#;
    let o = smcp(
        &url,
        &[
            "call",
            "ask_llm",
            "--arg",
            "text=x",
            "--sampling-cmd",
            answer,
        ],
    );
    assert_eq!(
        text(&o.stdout).trim(),
        "short (model: m1)",
        "{}",
        text(&o.stderr)
    );
    // A failing command is an error that names it.
    let o = smcp(
        &url,
        &[
            "call",
            "ask_llm",
            "--arg",
            "text=x",
            "--sampling-cmd",
            "exit 3",
        ],
    );
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("--sampling-cmd failed"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn call_reuses_the_tool_list_within_its_ttl() {
    let (url, seen) = fake(|r| match r["method"].as_str() {
        Some("tools/list") => (
            200,
            json!({"tools": [{"name": "echo", "inputSchema": {"type": "object",
                "properties": {"n": {"type": "integer"}}}}], "ttlMs": 60_000}),
        ),
        _ => (
            200,
            json!({"content": [{"type": "text", "text": r["params"]["arguments"]["n"].to_string()}]}),
        ),
    });
    let cache = cache_dir("ttl");
    let _ = std::fs::remove_dir_all(&cache);
    for _ in 0..3 {
        let o = smcp_in(&url, &["call", "echo", "--arg", "n=7"], &cache);
        // The cached schema still coerces `n` to a number.
        assert_eq!(text(&o.stdout).trim(), "7", "{}", text(&o.stderr));
    }
    assert_eq!(
        *seen.lock().unwrap(),
        ["tools/list", "tools/call", "tools/call", "tools/call"]
    );
    // --no-cache fetches it again.
    let o = smcp_in(
        &url,
        &["--no-cache", "call", "echo", "--arg", "n=1"],
        &cache,
    );
    assert!(o.status.success());
    assert_eq!(seen.lock().unwrap().len(), 6);
    // The file holds no credential.
    let o = smcp_in(
        &url,
        &["-H", "Authorization: Bearer s3cret", "call", "echo"],
        &cache,
    );
    assert!(o.status.success());
    for entry in std::fs::read_dir(&cache).unwrap() {
        let body = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!body.contains("s3cret"));
    }
}

#[test]
fn without_a_ttl_the_list_is_fetched_per_call() {
    let (url, seen) = fake(|r| match r["method"].as_str() {
        Some("tools/list") => (
            200,
            json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
        ),
        _ => (200, json!({"content": []})),
    });
    let cache = cache_dir("nottl");
    for _ in 0..2 {
        assert!(smcp_in(&url, &["call", "echo"], &cache).status.success());
    }
    assert_eq!(
        *seen.lock().unwrap(),
        ["tools/list", "tools/call", "tools/list", "tools/call"]
    );
}
