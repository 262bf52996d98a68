//! A minimal HTTP/1.1 keep-alive client for `POST /mcp`: one hyper connection per
//! [`SendRequest`], every body read to the end. Shared by `smcp-load` and `soak`.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context as _, bail};
use bytes::Bytes;
use http::{HeaderValue, Method, Request, StatusCode, header};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::target::Target;
use crate::wire;

/// One keep-alive connection: requests go out one at a time.
pub type Connection = SendRequest<Full<Bytes>>;

/// Opens a connection to `addr` (with `TCP_NODELAY`) within `timeout`; the connection's
/// driver runs on its own task, and its error, if any, surfaces on the next request.
pub async fn connect(addr: SocketAddr, timeout: Duration) -> anyhow::Result<Connection> {
    let stream = tokio::time::timeout(timeout, TcpStream::connect(addr))
        .await
        .context("connect timed out")?
        .with_context(|| format!("connecting to {addr}"))?;
    stream.set_nodelay(true)?;
    let (sender, conn) = http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// Sends one MCP request (`POST target.path` with the 2026-07-28 headers, `Mcp-Method` and,
/// when given, `Mcp-Name` and a `DPoP` proof) and reads the whole response body, all within
/// `timeout`.
pub async fn post_mcp(
    sender: &mut Connection,
    target: &Target,
    method: &'static str,
    name: Option<HeaderValue>,
    dpop: Option<HeaderValue>,
    body: Bytes,
    timeout: Duration,
) -> anyhow::Result<(StatusCode, Bytes)> {
    let mut req = Request::builder()
        .method(Method::POST)
        .uri(target.path.as_str())
        .header(header::HOST, target.authority.as_str())
        .header(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )
        .header(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        )
        .header(
            "mcp-protocol-version",
            HeaderValue::from_static(wire::PROTOCOL_VERSION),
        )
        .header("mcp-method", HeaderValue::from_static(method));
    if let Some(name) = name {
        req = req.header("mcp-name", name);
    }
    if let Some(authorization) = &target.authorization {
        req = req.header(header::AUTHORIZATION, authorization.clone());
    }
    if let Some(proof) = dpop {
        req = req.header("dpop", proof);
    }
    let req = req.body(Full::new(body))?;
    let exchange = async {
        sender.ready().await?;
        let resp = sender.send_request(req).await?;
        let status = resp.status();
        let body = resp.into_body().collect().await?.to_bytes();
        anyhow::Ok((status, body))
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .context("request timed out")?
}

/// [`post_mcp`] for a `tools/call` whose response must be status 200 with a JSON body (not a
/// stream); returns the parsed JSON-RPC response.
pub async fn call_json(
    sender: &mut Connection,
    target: &Target,
    tool: &str,
    body: &serde_json::Value,
    timeout: Duration,
) -> anyhow::Result<serde_json::Value> {
    let name = HeaderValue::from_str(tool).context("tool name is not a header value")?;
    let bytes = Bytes::from(serde_json::to_vec(body)?);
    let (status, reply) = post_mcp(
        sender,
        target,
        "tools/call",
        Some(name),
        None,
        bytes,
        timeout,
    )
    .await?;
    if status != StatusCode::OK {
        bail!(
            "{tool}: status {status}: {}",
            String::from_utf8_lossy(&reply)
        );
    }
    serde_json::from_slice(&reply)
        .with_context(|| format!("{tool}: not JSON: {}", String::from_utf8_lossy(&reply)))
}

/// Sends one request of a 2025-11-25 session (`Mcp-Session-Id` when there is one, and
/// `MCP-Protocol-Version: 2025-11-25`) and reads the whole response body within `timeout`.
pub async fn post_legacy(
    sender: &mut Connection,
    target: &Target,
    session: Option<&HeaderValue>,
    body: Bytes,
    timeout: Duration,
) -> anyhow::Result<(StatusCode, Bytes, Option<HeaderValue>)> {
    let mut req = Request::builder()
        .method(Method::POST)
        .uri(target.path.as_str())
        .header(header::HOST, target.authority.as_str())
        .header(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )
        .header(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        )
        .header(
            "mcp-protocol-version",
            HeaderValue::from_static(wire::LEGACY_VERSION),
        );
    if let Some(session) = session {
        req = req.header("mcp-session-id", session.clone());
    }
    let req = req.body(Full::new(body))?;
    let exchange = async {
        sender.ready().await?;
        let resp = sender.send_request(req).await?;
        let status = resp.status();
        let session = resp.headers().get("mcp-session-id").cloned();
        let body = resp.into_body().collect().await?.to_bytes();
        anyhow::Ok((status, body, session))
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .context("request timed out")?
}

/// Starts a 2025-11-25 session (`initialize`, then `notifications/initialized`) and returns
/// its id; `None` when the server answers without one (the baseline, which has no sessions).
pub async fn open_session(
    sender: &mut Connection,
    target: &Target,
    timeout: Duration,
) -> anyhow::Result<Option<HeaderValue>> {
    let init = Bytes::from(wire::legacy_initialize_body());
    let (_, _, session) = post_legacy(sender, target, None, init, timeout).await?;
    let Some(session) = session else {
        return Ok(None);
    };
    let note = Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let (status, body, _) = post_legacy(sender, target, Some(&session), note, timeout).await?;
    if status != StatusCode::ACCEPTED {
        anyhow::bail!(
            "notifications/initialized: status {status}: {}",
            String::from_utf8_lossy(&body)
        );
    }
    Ok(Some(session))
}
