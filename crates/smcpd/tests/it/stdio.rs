//! The real `smcpd --stdio`, as a host launches it: newline-delimited JSON-RPC on its stdin and
//! stdout, logs on stderr, exit when stdin closes. Also the Python SDK's stdio client
//! (`mcp` 2.3.0, installed by `scripts/python-interop-env`) against it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    clippy::print_stderr
)]

use smcp_test_support::jsonrpc::{meta, request};
use smcp_test_support::root;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const WAIT: Duration = Duration::from_secs(10);

struct Smcpd {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Smcpd {
    fn start(extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_smcpd"))
            .arg("--stdio")
            .args(["--log", "smcpd=info,smcp_server=debug"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdin,
            stdout,
        }
    }

    async fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(&line).await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// The next line of stdout, which must be one JSON-RPC message.
    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.stdout.next_line())
            .await
            .expect("a message in time")
            .unwrap()
            .expect("stdout open");
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carries only MCP messages; got {line:?}: {e}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    }

    /// Closes stdin; returns the rest of stdout, the exit status and stderr.
    async fn close(mut self) -> (Vec<Value>, std::process::ExitStatus, String) {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        while let Some(line) = tokio::time::timeout(WAIT, self.stdout.next_line())
            .await
            .expect("stdout ends")
            .unwrap()
        {
            rest.push(serde_json::from_str(&line).expect("only MCP messages"));
        }
        let status = tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("smcpd exits once stdin is closed")
            .unwrap();
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .await
            .unwrap();
        (rest, status, stderr)
    }
}

fn text(message: &Value) -> &str {
    message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
}

#[tokio::test]
async fn smcpd_serves_its_tools_on_stdio() {
    let mut smcpd = Smcpd::start(&[]);
    smcpd
        .send(&request(json!(1), "server/discover", json!({})))
        .await;
    let discover = smcpd.recv().await;
    assert_eq!(
        discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "smcpd"
    );
    smcpd
        .send(&request(json!(2), "tools/list", json!({})))
        .await;
    let tools = smcpd.recv().await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");
    // Without a data plane, file arguments are inline only.
    #[cfg(feature = "files")]
    assert!(names.contains(&"analyze_document"), "{names:?}");
    assert!(!names.contains(&"compare_documents"), "{names:?}");
    #[cfg(feature = "files")]
    inline_file(&mut smcpd).await;

    // Progress on the same channel, before the response.
    let mut m = meta();
    m["progressToken"] = json!("tok");
    smcpd
        .send(&request(
            json!(3),
            "tools/call",
            json!({"_meta": m, "name": "count", "arguments": {"to": 3, "delay_ms": 1}}),
        ))
        .await;
    for step in 1..=3 {
        let n = smcpd.recv().await;
        assert_eq!(n["method"], "notifications/progress", "{n}");
        assert_eq!(n["params"]["progress"], json!(step));
    }
    assert_eq!(text(&smcpd.recv().await), "counted to 3");

    // A listen stream, and a change on it.
    smcpd
        .send(&request(
            json!("l"),
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        ))
        .await;
    let ack = smcpd.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    smcpd
        .send(&request(
            json!(5),
            "tools/call",
            json!({"name": "toggle_extra", "arguments": {}}),
        ))
        .await;
    let mut got = [smcpd.recv().await, smcpd.recv().await];
    got.sort_by_key(|m| m.get("id").is_some());
    assert_eq!(got[0]["method"], "notifications/tools/list_changed");
    assert_eq!(
        got[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "l"
    );
    assert_eq!(got[1]["id"], 5);

    // A slow call in flight when stdin closes still gets its answer; the listen stream its
    // closing result; then smcpd exits 0. Logs went to stderr only.
    smcpd
        .send(&request(
            json!(6),
            "tools/call",
            json!({"name": "count", "arguments": {"to": 3, "delay_ms": 100}}),
        ))
        .await;
    let (rest, status, stderr) = smcpd.close().await;
    let ids: Vec<&Value> = rest.iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, [&json!("l"), &json!(6)], "{rest:?}");
    assert_eq!(text(&rest[1]), "counted to 3");
    assert!(status.success(), "{status:?}\n{stderr}");
    assert!(stderr.contains("serving MCP on stdio"), "{stderr}");
}

/// SEP-2631 over stdio: an inline `data:` file.
#[cfg(feature = "files")]
async fn inline_file(smcpd: &mut Smcpd) {
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode("hello\nworld\n");
    let mut m = meta();
    m["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/files": {}}});
    smcpd
        .send(&request(
            json!(4),
            "tools/call",
            json!({"_meta": m, "name": "analyze_document",
                "arguments": {"document": format!("data:text/plain;name=notes.txt;base64,{data}")}}),
        ))
        .await;
    let analyzed = smcpd.recv().await;
    let structured = &analyzed["result"]["structuredContent"];
    assert_eq!(structured["size"], 12, "{analyzed}");
    assert_eq!(structured["transfer"], "inline", "{analyzed}");
}

/// SEP-2631 out of band on stdio: with TLS, smcpd serves the data plane over HTTPS beside
/// stdio; a file authorized on stdio is uploaded there and then named by its `mcp-file://` URI.
#[cfg(feature = "files")]
#[tokio::test]
async fn files_out_of_band_through_a_tls_data_plane() {
    use sha2::Digest as _;
    let dir = std::env::temp_dir().join(format!("smcpd-stdio-tls-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let files_dir = dir.join("files");
    let mut smcpd = Smcpd::start(&[
        "--listen",
        "127.0.0.1:0",
        "--tls-self-signed",
        dir.to_str().unwrap(),
        "--files-dir",
        files_dir.to_str().unwrap(),
    ]);
    let caps = json!({"files": {"upload": true, "download": true, "transports": ["https"]}});
    let mut m = meta();
    m["io.modelcontextprotocol/clientCapabilities"] = caps;
    let bytes = b"uploaded over https\n".to_vec();
    let digest = base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        sha2::Sha256::digest(&bytes),
    );
    smcpd
        .send(&request(
            json!(1),
            "files/authorizeUpload",
            json!({"_meta": m.clone(), "name": "up.txt", "mimeType": "text/plain",
                "size": bytes.len(), "digest": {"algorithm": "sha-256", "value": digest}}),
        ))
        .await;
    let authorized = smcpd.recv().await;
    let url = authorized["result"]["upload"]["url"]
        .as_str()
        .unwrap_or_else(|| panic!("{authorized}"))
        .to_owned();
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let uri = authorized["result"]["file"]["uri"]
        .as_str()
        .unwrap()
        .to_owned();
    let ca = reqwest::Certificate::from_pem(&std::fs::read(dir.join("ca.pem")).unwrap()).unwrap();
    let http = reqwest::Client::builder()
        .add_root_certificate(ca)
        .build()
        .unwrap();
    let put = http
        .put(&url)
        .header("content-type", "text/plain")
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    assert!(put.status().is_success(), "{}", put.status());
    smcpd
        .send(&request(
            json!(2),
            "tools/call",
            json!({"_meta": m, "name": "analyze_document", "arguments": {"document": uri}}),
        ))
        .await;
    let analyzed = smcpd.recv().await;
    let structured = &analyzed["result"]["structuredContent"];
    assert_eq!(structured["transfer"], "upload", "{analyzed}");
    assert_eq!(structured["size"], bytes.len(), "{analyzed}");
    let (_, status, stderr) = smcpd.close().await;
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("SEP-2631 data plane over HTTP"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn metrics_listen_counts_the_requests_read_from_stdin() {
    let ops = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut smcpd = Smcpd::start(&["--metrics-listen", &ops.to_string()]);
    for id in 1..=2 {
        let echo = json!({"name": "echo", "arguments": {"text": "hi"}});
        smcpd.send(&request(json!(id), "tools/call", echo)).await;
        assert_eq!(text(&smcpd.recv().await), "hi");
    }
    smcpd.send(&request(json!(3), "made/up", json!({}))).await;
    assert_eq!(smcpd.recv().await["error"]["code"], -32601);
    // The operations listener is up before stdin is read.
    let mut conn = tokio::net::TcpStream::connect(ops).await.unwrap();
    conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut metrics = String::new();
    tokio::time::timeout(WAIT, conn.read_to_string(&mut metrics))
        .await
        .expect("the metrics in time")
        .unwrap();
    assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
    assert!(
        metrics.contains(r#"smcp_requests_total{method="tools/call",status="2xx",code="none"} 2"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"smcp_requests_total{method="other",status="2xx",code="-32601"} 1"#),
        "{metrics}"
    );
    let (rest, status, stderr) = smcpd.close().await;
    assert!(rest.is_empty(), "{rest:?}");
    assert!(status.success(), "{status}: {stderr}");
}

#[tokio::test]
async fn cancellation_over_stdio_stops_the_call() {
    let mut smcpd = Smcpd::start(&[]);
    smcpd
        .send(&request(
            json!(1),
            "tools/call",
            json!({"name": "count", "arguments": {"to": 1000, "delay_ms": 10}}),
        ))
        .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    smcpd
        .send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1}}),
        )
        .await;
    smcpd
        .send(&request(
            json!(2),
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "next"}}),
        ))
        .await;
    assert_eq!(text(&smcpd.recv().await), "next");
    let (rest, status, stderr) = smcpd.close().await;
    assert!(
        rest.is_empty(),
        "no response for a cancelled call: {rest:?}"
    );
    assert!(status.success());
    assert!(stderr.contains("count cancelled by the client"), "{stderr}");
}

/// The interop venv's python (mcp 2.3.0), or `None` when `SMCP_PYTHON_INTEROP=skip`.
fn python() -> Option<PathBuf> {
    smcp_test_support::python(None)
}

#[tokio::test]
async fn python_sdk_stdio_client_against_smcpd() {
    let Some(py) = python() else { return };
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        Command::new(&py)
            .arg(root().join("tests/interop/client.py"))
            .args(["--stdio", env!("CARGO_BIN_EXE_smcpd"), "--stdio"])
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the Python client finished")
    .unwrap();
    crate::support::check_python_client_report(&out);
}
