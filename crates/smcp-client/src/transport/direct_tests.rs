//! The direct `http://` path (`direct.rs`) held to reqwest's: the same request on the wire, the
//! same diagnosis of a broken peer.

use std::net::SocketAddr;

use http::header::{HeaderName, HeaderValue};
use serde_json::json;
use smcp_proto::jsonrpc::{Request, RequestId};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use http::header::HeaderMap;

use crate::ErrorKind;
use crate::transport::gate::Gate;
use crate::transport::http::{HttpStream, HttpTransport};
use crate::transport::http_client::HttpSettings;

/// A one-connection-at-a-time HTTP peer: reads each request (head and `content-length`
/// body), sends its text on the channel, then writes `reply` and closes.
async fn peer(reply: &'static [u8]) -> (SocketAddr, mpsc::UnboundedReceiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = socket.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                seen.extend_from_slice(&buf[..n]);
                if complete(&seen) {
                    break;
                }
            }
            let _ = tx.send(String::from_utf8_lossy(&seen).into_owned());
            let _ = socket.write_all(reply).await;
            let _ = socket.shutdown().await;
        }
    });
    (addr, rx)
}

/// Whether `seen` holds a whole request: its head and as many body bytes as it announced.
fn complete(seen: &[u8]) -> bool {
    let text = String::from_utf8_lossy(seen);
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return false;
    };
    let length = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap_or(0))
        })
        .unwrap_or(0);
    body.len() >= length
}

fn transport(addr: SocketAddr, direct: bool) -> HttpTransport {
    let t = HttpTransport::new(
        &format!("http://{addr}/mcp"),
        HeaderMap::new(),
        &HttpSettings::default(),
        Gate::default(),
    )
    .expect("a transport to a valid URL");
    assert!(
        t.takes_direct_path(),
        "http:// with a plain gate takes the direct path"
    );
    if direct { t } else { t.without_direct_path() }
}

async fn post(t: &HttpTransport) -> crate::Result<HttpStream> {
    let request = Request {
        id: RequestId::Number(1.into()),
        method: "tools/call".into(),
        params: Some(json!({"name": "echo", "arguments": {"text": "hi"}})),
    };
    let headers = vec![(
        HeaderName::from_static("mcp-method"),
        HeaderValue::from_static("tools/call"),
    )];
    t.post(&request, headers).await
}

/// The request line, the header lines in order of name, and the body.
fn normalized(request: &str) -> (String, Vec<String>, String) {
    let (head, body) = request.split_once("\r\n\r\n").unwrap_or((request, ""));
    let mut lines = head.lines();
    let first = lines.next().unwrap_or_default().to_owned();
    let mut headers: Vec<String> = lines.map(str::to_ascii_lowercase).collect();
    headers.sort();
    (first, headers, body.to_owned())
}

const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 48\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}";

#[tokio::test]
async fn the_direct_path_sends_what_reqwest_sends_and_reads_the_answer() {
    let (addr, mut seen) = peer(ANSWER).await;
    let mut sent = Vec::new();
    for direct in [true, false] {
        let mut stream = post(&transport(addr, direct)).await.expect("an answer");
        let message = stream.next_message().await.expect("a message");
        assert!(message.is_some(), "direct = {direct}");
        sent.push(normalized(&seen.recv().await.expect("the request")));
    }
    assert_eq!(
        sent[0], sent[1],
        "the same request line, headers and body on both paths"
    );
    assert_eq!(sent[0].0, "POST /mcp HTTP/1.1");
}

#[tokio::test]
async fn both_paths_diagnose_a_broken_peer_alike() {
    let cases: [(&str, &'static [u8], ErrorKind); 3] = [
        ("closes without an answer", b"", ErrorKind::NotHttp),
        ("answers in another protocol", b"SSH-2.0-OpenSSH_9.6\r\n", ErrorKind::NotHttp),
        (
            "cuts its body short",
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 90\r\n\r\n{\"jsonrpc\"",
            ErrorKind::Transport,
        ),
    ];
    for (what, reply, kind) in cases {
        let (addr, _seen) = peer(reply).await;
        for direct in [true, false] {
            let Err(e) = post(&transport(addr, direct)).await else {
                panic!("{what}: an answer, direct = {direct}");
            };
            assert_eq!(e.kind(), kind, "{what}, direct = {direct}: {e}");
            assert!(e.is_connect() && !e.is_connect_failure(), "{what}: {e}");
        }
    }
}

#[tokio::test]
async fn both_paths_find_a_refused_connection_never_sent() {
    let addr = TcpListener::bind("127.0.0.1:0")
        .await
        .and_then(|l| l.local_addr())
        .expect("a port");
    for direct in [true, false] {
        let Err(e) = post(&transport(addr, direct)).await else {
            panic!("a closed port answered");
        };
        assert_eq!(
            e.kind(),
            ErrorKind::ConnectionRefused,
            "direct = {direct}: {e}"
        );
        assert!(crate::retry::never_sent(&e), "direct = {direct}: {e}");
        assert!(e.to_string().contains("HTTP transport error"), "{e}");
    }
}
