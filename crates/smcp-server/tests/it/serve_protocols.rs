//! Which HTTP versions [`smcp_server::serve`] speaks: HTTP/1.1 on plain connections, HTTP/2
//! with prior knowledge only when [`ServeOptions::h2c`] is on, and over TLS whatever ALPN chose
//! (`h2` or `http/1.1`). Each case sends a real `server/discover` and checks the answer, then
//! calls a tool that reports [`ConnectionInfo::current`]: every protocol, HTTP/2 streams
//! included (they run in tasks of their own), knows the connection it arrived on.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Version};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use serde_json::{Value, json};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{ConnectionInfo, HandlerError, ServeOptions, Server};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

struct Running {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<smcp_server::Drained>>,
}

impl Running {
    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        assert!(self.task.await.unwrap().unwrap().is_complete());
    }
}

async fn start(options: ServeOptions) -> Running {
    let peer = smcp_server::tool("peer").handler(|_call| async {
        let peer = ConnectionInfo::current().map(|c| c.peer().to_string());
        Ok::<_, HandlerError>(CallToolResult::text(peer.unwrap_or_default()))
    });
    let server = Server::builder("protocols", "1")
        .tool(peer)
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(smcp_server::serve(
        listener,
        server.service(),
        ServeOptions {
            shutdown_timeout: Duration::from_secs(2),
            ..options
        },
        async move {
            let _ = stopped.await;
        },
    ));
    Running {
        addr,
        stop: Some(stop),
        task,
    }
}

/// A `server/discover` request, or with `tool`, a call of that tool.
fn request(addr: SocketAddr, version: Version, tool: Option<&str>) -> Request<Full<Bytes>> {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let (method, body) = match tool {
        None => (
            "server/discover",
            json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                   "params": {"_meta": meta}}),
        ),
        Some(name) => (
            "tools/call",
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"_meta": meta, "name": name}}),
        ),
    };
    let uri = if version == Version::HTTP_2 {
        format!("http://{addr}/mcp")
    } else {
        "/mcp".to_owned()
    };
    let mut builder = Request::post(uri)
        .version(version)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = tool {
        builder = builder.header("mcp-name", name);
    }
    if version != Version::HTTP_2 {
        builder = builder.header("host", addr.to_string());
    }
    builder
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

enum Sender {
    H1(hyper::client::conn::http1::SendRequest<Full<Bytes>>),
    H2(hyper::client::conn::http2::SendRequest<Full<Bytes>>),
}

impl Sender {
    async fn send(&mut self, request: Request<Full<Bytes>>) -> hyper::Result<(Version, Value)> {
        let response = match self {
            Self::H1(s) => s.send_request(request).await?,
            Self::H2(s) => s.send_request(request).await?,
        };
        let got = response.version();
        assert_eq!(response.status(), 200);
        let body = response.into_body().collect().await?.to_bytes();
        Ok((got, serde_json::from_slice(&body).unwrap()))
    }
}

/// Sends `server/discover` over `io` with hyper's client in the given version, then calls the
/// `peer` tool on the same connection and checks it names `local` (the client's end).
/// Returns the version of the discover response and its JSON.
async fn roundtrip<I>(
    io: I,
    addr: SocketAddr,
    local: SocketAddr,
    version: Version,
) -> hyper::Result<(Version, Value)>
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut sender = if version == Version::HTTP_2 {
        let (sender, conn) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(io)).await?;
        tokio::spawn(conn);
        Sender::H2(sender)
    } else {
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io)).await?;
        tokio::spawn(conn);
        Sender::H1(sender)
    };
    let discovered = sender.send(request(addr, version, None)).await?;
    let (got, peer) = sender.send(request(addr, version, Some("peer"))).await?;
    assert_eq!(got, version);
    assert_eq!(
        peer["result"]["content"][0]["text"],
        local.to_string(),
        "{version:?}: the handler sees its connection: {peer}"
    );
    Ok(discovered)
}

fn assert_discovered(json: &Value) {
    assert_eq!(json["id"], 1, "{json}");
    assert_eq!(json["result"]["resultType"], "complete", "{json}");
}

#[tokio::test]
async fn plain_connections_speak_http1_and_refuse_h2c_by_default() {
    let running = start(ServeOptions::default()).await;
    let tcp = TcpStream::connect(running.addr).await.unwrap();
    let local = tcp.local_addr().unwrap();
    let (version, json) = roundtrip(tcp, running.addr, local, Version::HTTP_11)
        .await
        .unwrap();
    assert_eq!(version, Version::HTTP_11);
    assert_discovered(&json);

    // The HTTP/2 preface is not an HTTP/1.1 request: the server answers 400 or closes.
    let mut raw = TcpStream::connect(running.addr).await.unwrap();
    raw.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), raw.read_to_end(&mut answer)).await;
    let text = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || text.starts_with("HTTP/1.1 4"),
        "an h2c preface must not be served by default: {text}"
    );
    running.stop().await;
}

#[tokio::test]
async fn h2c_prior_knowledge_when_enabled() {
    let running = start(ServeOptions {
        h2c: true,
        ..ServeOptions::default()
    })
    .await;
    for version in [Version::HTTP_2, Version::HTTP_11] {
        let tcp = TcpStream::connect(running.addr).await.unwrap();
        let local = tcp.local_addr().unwrap();
        let (got, json) = roundtrip(tcp, running.addr, local, version).await.unwrap();
        assert_eq!(got, version);
        assert_discovered(&json);
    }
    running.stop().await;
}

/// A TLS client trusting the CA at `ca` and offering only `alpn`.
fn tls_connector(ca: &std::path::Path, alpn: &[u8]) -> tokio_rustls::TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    let ca = std::fs::read(ca).unwrap();
    for cert in CertificateDer::pem_slice_iter(&ca) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

#[tokio::test]
async fn tls_follows_alpn() {
    let dir = std::env::temp_dir().join(format!("smcp-serve-protocols-{}", std::process::id()));
    let certs = smcp_server::http::tls::write_dev_certificates(&dir, &["127.0.0.1"]).unwrap();
    let tls = smcp_server::http::tls::config_from_files(&certs.cert, &certs.key).unwrap();
    let running = start(ServeOptions {
        tls: Some(tls),
        ..ServeOptions::default()
    })
    .await;

    for (alpn, expected) in [
        (&b"h2"[..], Version::HTTP_2),
        (&b"http/1.1"[..], Version::HTTP_11),
    ] {
        let connector = tls_connector(&certs.ca_cert, alpn);
        let tcp = TcpStream::connect(running.addr).await.unwrap();
        let local = tcp.local_addr().unwrap();
        let name = rustls_pki_types::ServerName::try_from("127.0.0.1").unwrap();
        let stream = connector.connect(name, tcp).await.unwrap();
        assert_eq!(stream.get_ref().1.alpn_protocol(), Some(alpn));
        let (got, json) = roundtrip(stream, running.addr, local, expected)
            .await
            .unwrap();
        assert_eq!(got, expected, "ALPN {}", String::from_utf8_lossy(alpn));
        assert_discovered(&json);
    }
    running.stop().await;
    let _ = std::fs::remove_dir_all(dir);
}

/// HTTP/2 has no header read timeout of its own: a client that completes the TLS handshake
/// and then sends nothing is closed once the connection has had no request in flight for the
/// header read timeout (it would otherwise hold a connection permit forever).
#[tokio::test]
async fn idle_h2_connections_are_closed_at_the_header_read_timeout() {
    let dir = std::env::temp_dir().join(format!("smcp-serve-idle-h2-{}", std::process::id()));
    let certs = smcp_server::http::tls::write_dev_certificates(&dir, &["127.0.0.1"]).unwrap();
    let tls = smcp_server::http::tls::config_from_files(&certs.cert, &certs.key).unwrap();
    let running = start(ServeOptions {
        tls: Some(tls),
        header_read_timeout: Duration::from_millis(500),
        ..ServeOptions::default()
    })
    .await;
    let connector = tls_connector(&certs.ca_cert, b"h2");
    let tcp = TcpStream::connect(running.addr).await.unwrap();
    let name = rustls_pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let mut stream = connector.connect(name, tcp).await.unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let started = std::time::Instant::now();
    let mut buf = [0u8; 1024];
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {} // the server's SETTINGS frame
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "an idle HTTP/2 connection was left open");
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "closed before the timeout: {:?}",
        started.elapsed()
    );
    running.stop().await;
    let _ = std::fs::remove_dir_all(dir);
}
