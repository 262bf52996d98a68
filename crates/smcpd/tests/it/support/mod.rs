//! What the real-binary tests share: `smcpd` on port 0 and raw HTTP/1.1 requests.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value
)]

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A running `smcpd`, stopped (SIGKILL) when dropped unless `stop` ran.
pub(crate) struct Smcpd {
    /// The process.
    pub(crate) child: Child,
    /// Where it listens.
    pub(crate) addr: SocketAddr,
}

impl Smcpd {
    pub(crate) fn start() -> Self {
        Self::start_with(&[])
    }

    pub(crate) fn start_with(extra: &[&str]) -> Self {
        Self::start_env(extra, &[], "smcpd=info,smcp_server=info")
    }

    /// Starts smcpd on a free port with `extra` flags, `env` added to its environment and
    /// the log filter `log`; panics with its stderr when it does not start.
    pub(crate) fn start_env(extra: &[&str], env: &[(&str, String)], log: &str) -> Self {
        Self::start_as(&[], extra, env, log)
    }

    /// `smcpd gateway --config CONFIG` on a free port, with `extra` flags.
    pub(crate) fn start_gateway(config: &std::path::Path, extra: &[&str], log: &str) -> Self {
        let config = config.to_str().unwrap();
        Self::start_as(&["gateway", "--config", config], extra, &[], log)
    }

    /// Starts smcpd as `smcpd SUBCOMMAND… --listen 127.0.0.1:0 --log LOG EXTRA…`.
    fn start_as(subcommand: &[&str], extra: &[&str], env: &[(&str, String)], log: &str) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_smcpd"))
            .args(subcommand)
            .args(["--listen", "127.0.0.1:0", "--log", log])
            .args(extra)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("smcpd starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let Some(url) = line
            .trim()
            .strip_prefix("listening on http://")
            .or_else(|| line.trim().strip_prefix("listening on https://"))
        else {
            let _ = child.wait();
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("smcpd did not start (first line {line:?}): {err}");
        };
        let addr = url.trim_end_matches("/mcp").parse().unwrap();
        Self { child, addr }
    }

    /// Stops the server with SIGTERM and returns its exit status and stderr.
    pub(crate) fn stop(mut self) -> (std::process::ExitStatus, String) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let status = self.child.wait().unwrap();
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        (status, err)
    }
}

pub(crate) fn request_bytes(body: &Value, extra: &[(&str, &str)]) -> Vec<u8> {
    let method = body["method"].as_str().unwrap();
    let text = body.to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\nContent-Length: {}\r\n",
        text.len()
    );
    if let Some(name) = body["params"]["name"].as_str() {
        head.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(text.as_bytes());
    bytes
}

pub(crate) fn mcp(id: Value, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Sends one request on a fresh connection and reads the whole response (Connection: close).
pub(crate) async fn roundtrip(addr: SocketAddr, raw: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut raw = raw.to_vec();
    // Ask the server to close after the response so read_to_end terminates.
    let pos = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    raw.splice(pos + 2..pos + 2, b"Connection: close\r\n".iter().copied());
    stream.write_all(&raw).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut out))
        .await
        .expect("response in time")
        .unwrap();
    String::from_utf8(out).unwrap()
}

impl Drop for Smcpd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// smcpd's stderr, read line by line by a thread as it is written: a test can wait for a log
/// line while the server runs, and a chatty server never blocks on a full pipe. After
/// [`Smcpd::follow_log`], stop the server with [`Smcpd::terminate`] (`stop` reads stderr itself).
#[derive(Clone)]
pub(crate) struct LogTail(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl LogTail {
    /// Every line so far.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// The first line containing `needle`, waiting up to `timeout` for it.
    pub(crate) fn wait_for(&self, needle: &str, timeout: Duration) -> Option<String> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(line) = self.lines().into_iter().find(|l| l.contains(needle)) {
                return Some(line);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Smcpd {
    /// Starts reading stderr in the background.
    pub(crate) fn follow_log(&mut self) -> LogTail {
        let tail = LogTail(std::sync::Arc::default());
        let stderr = self.child.stderr.take().expect("stderr not taken yet");
        let lines = tail.0.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                lines.lock().unwrap().push(line);
            }
        });
        tail
    }

    /// Stops the server with SIGTERM and returns its exit status.
    pub(crate) fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        self.child.wait().unwrap()
    }
}

/// An HTTPS client builder trusting the development CA that `smcpd --tls-self-signed DIR`
/// wrote into `dir`.
pub(crate) fn https_client(dir: &std::path::Path) -> reqwest::ClientBuilder {
    let ca = reqwest::Certificate::from_pem(&std::fs::read(dir.join("ca.pem")).unwrap()).unwrap();
    reqwest::Client::builder().add_root_certificate(ca)
}

/// A POST of the JSON-RPC request `body` to `https://addr/mcp`, with the headers 2026-07-28
/// requires (`Mcp-Method` from the body).
pub(crate) fn post_mcp(
    http: &reqwest::Client,
    addr: SocketAddr,
    body: &Value,
) -> reqwest::RequestBuilder {
    post_rpc(http, &format!("https://{addr}/mcp"), body)
}

/// A POST of the JSON-RPC request `body` to `url`, with the headers 2026-07-28 requires
/// (`Mcp-Method`, and `Mcp-Name` when the params name a tool or prompt, or a resource's
/// URI).
pub(crate) fn post_rpc(http: &reqwest::Client, url: &str, body: &Value) -> reqwest::RequestBuilder {
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", body["method"].as_str().unwrap());
    let params = &body["params"];
    if let Some(name) = params["name"].as_str().or_else(|| params["uri"].as_str()) {
        request = request.header("mcp-name", name);
    }
    request.body(body.to_string())
}

/// The client capabilities of a SEP-2631 client: file upload and download.
pub(crate) const FILES_CAPS: &str =
    r#"{"files": {"upload": true, "download": true, "transports": ["https"]}}"#;

/// A JSON-RPC request declaring the `files` capability ([`FILES_CAPS`]).
pub(crate) fn files_request(id: i64, method: &str, params: Value) -> Value {
    let mut body = mcp(json!(id), method, params);
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        serde_json::from_str(FILES_CAPS).unwrap();
    body
}

/// The JSON-RPC message of a raw HTTP/1.1 response (JSON, or the last response in SSE).
pub(crate) fn rpc_body(raw: &str) -> Value {
    let body = raw.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        return v;
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .rfind(|v| v.get("result").is_some() || v.get("error").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC message in {raw:?}"))
}

/// An input handler that accepts every form confirmation (`{"confirm": true}`) and records
/// the messages it was asked.
#[derive(Clone, Default)]
pub(crate) struct Confirm(pub(crate) std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl smcp_client::InputHandler for Confirm {
    fn kinds(&self) -> smcp_client::InputKinds {
        smcp_client::InputKinds {
            elicitation_form: true,
            ..smcp_client::InputKinds::default()
        }
    }

    fn elicit(
        &self,
        p: smcp_client::proto::client::elicitation::ElicitRequestParams,
    ) -> smcp_client::BoxFuture<
        '_,
        Result<
            smcp_client::proto::client::elicitation::ElicitResult,
            smcp_client::InputHandlerError,
        >,
    > {
        use smcp_client::proto::client::elicitation::{
            ElicitRequestParams, ElicitResult, ElicitValue,
        };
        Box::pin(async move {
            let ElicitRequestParams::Form(form) = p else {
                panic!("expected a form elicitation, got {p:?}")
            };
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(form.message);
            let mut content = std::collections::BTreeMap::new();
            content.insert("confirm".to_owned(), ElicitValue::Bool(true));
            Ok(ElicitResult::accept(content))
        })
    }
}

/// Checks the report `tests/interop/client.py` (the Python SDK 2.3 client) printed after
/// talking to smcpd, directly or through the gateway: every step it took against the demo
/// tools answered as smcpd answers.
pub(crate) fn check_python_client_report(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "python client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools = report["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("echo")), "{report}");
    assert_eq!(report["echo"], "hi from python");
    assert_eq!(report["add"], json!({"sum": 5.0}));
    assert_eq!(report["progress"].as_array().map(Vec::len), Some(10));
    assert!(
        report["readme"]
            .as_str()
            .unwrap()
            .contains("reference server")
    );
    assert!(report["prompt"].as_str().unwrap().contains("Ada"));
    assert_eq!(report["missing_code"], -32602);
}
