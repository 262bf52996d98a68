//! `subscriptions/listen` streams over raw TCP (HTTP/1.1) or as HTTP/2 streams: the request
//! and a cheap reader that waits for a notification by method. Shared by `bench-listen` and
//! `soak`.

use std::net::SocketAddr;
use std::time::Instant;

use anyhow::bail;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt as _;
use tokio::net::TcpStream;

use crate::wire::PROTOCOL_VERSION;

/// The `_meta` every request carries: protocol version, client info named `client`, and no
/// client capabilities.
pub fn meta(client: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// The `subscriptions/listen` request with this id and filter (e.g.
/// `{"toolsListChanged": true}`).
pub fn listen_body(client: &str, id: u64, notifications: &Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {"_meta": meta(client), "notifications": notifications}
    })
}

/// The raw HTTP/1.1 `POST /mcp` carrying `body`; `extra` is more header lines, each ending
/// in `\r\n`.
pub fn request(addr: SocketAddr, body: &Value, extra: &str) -> Vec<u8> {
    let method = body["method"].as_str().unwrap_or_default();
    let text = body.to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {PROTOCOL_VERSION}\r\n\
         Mcp-Method: {method}\r\n{extra}Content-Length: {}\r\n\r\n{text}",
        text.len()
    )
    .into_bytes()
}

/// The same `POST /mcp` as an HTTP/2 request (`:authority` from `addr`).
pub fn h2_request(addr: SocketAddr, body: &Value) -> anyhow::Result<http::Request<Full<Bytes>>> {
    let method = body["method"].as_str().unwrap_or_default();
    Ok(http::Request::post(format!("http://{addr}/mcp"))
        .version(http::Version::HTTP_2)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL_VERSION)
        .header("mcp-method", method)
        .body(Full::new(Bytes::from(body.to_string())))?)
}

/// Where in `pending` the event naming `method` ends, if it arrived.
fn find(pending: &[u8], needle: &[u8]) -> Option<usize> {
    pending
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|at| at + needle.len())
}

/// [`wait_for`] on an HTTP/2 response body: reads DATA frames until an event whose JSON has
/// this `method` arrives. The end of the stream or a reset is an error.
pub async fn wait_for_h2(
    body: &mut hyper::body::Incoming,
    pending: &mut Vec<u8>,
    method: &str,
) -> anyhow::Result<Instant> {
    let needle = format!("\"method\":\"{method}\"");
    loop {
        if let Some(end) = find(pending, needle.as_bytes()) {
            let now = Instant::now();
            pending.drain(..end);
            return Ok(now);
        }
        match body.frame().await {
            Some(frame) => {
                if let Ok(data) = frame?.into_data() {
                    pending.extend_from_slice(&data);
                }
            }
            None => bail!("stream ended before {method}"),
        }
    }
}

/// Reads until an event whose JSON has this `method` arrives; returns when it did. Bytes after
/// the match stay in `pending`, so calling it again waits for the next one. Cheap on purpose
/// (no per-line allocation): the client shares the machine with the server, and its own cost
/// would show up in the notification times. A response other than 200 is an error, and so is
/// the end of the stream.
pub async fn wait_for(
    stream: &mut TcpStream,
    pending: &mut Vec<u8>,
    method: &str,
) -> anyhow::Result<Instant> {
    let needle = format!("\"method\":\"{method}\"");
    let needle = needle.as_bytes();
    let mut buf = [0u8; 4096];
    loop {
        if pending.len() >= 12
            && pending.starts_with(b"HTTP/1.1 ")
            && !pending.starts_with(b"HTTP/1.1 200")
        {
            let line = pending.split(|&b| b == b'\r').next().unwrap_or_default();
            bail!("refused: {}", String::from_utf8_lossy(line));
        }
        if let Some(end) = find(pending, needle) {
            let now = Instant::now();
            pending.drain(..end);
            return Ok(now);
        }
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            bail!("connection closed before {method}");
        }
        pending.extend_from_slice(&buf[..n]);
    }
}
