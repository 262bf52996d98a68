//! Which HTTP versions [`smcp_server::serve`] speaks: HTTP/1.1 on plain connections, HTTP/2
//! with prior knowledge only when [`ServeOptions::h2c`] is on, and over TLS whatever ALPN chose
//! (`h2` or `http/1.1`). Each case sends a real `server/discover` and checks the answer.

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
use smcp_server::{ServeOptions, Server};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

struct Running {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.await.unwrap().unwrap();
    }
}

async fn start(options: ServeOptions) -> Running {
    let server = Server::builder("protocols", "1").build().unwrap();
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

fn discover(addr: SocketAddr, version: Version) -> Request<Full<Bytes>> {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    });
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
        .header("mcp-method", "server/discover");
    if version != Version::HTTP_2 {
        builder = builder.header("host", addr.to_string());
    }
    builder
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

/// Sends `server/discover` over `io` with hyper's client in the given version; returns the
/// version of the response and its JSON.
async fn roundtrip<I>(io: I, addr: SocketAddr, version: Version) -> hyper::Result<(Version, Value)>
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let response = if version == Version::HTTP_2 {
        let (mut sender, conn) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(io)).await?;
        tokio::spawn(conn);
        sender.send_request(discover(addr, version)).await?
    } else {
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io)).await?;
        tokio::spawn(conn);
        sender.send_request(discover(addr, version)).await?
    };
    let got = response.version();
    assert_eq!(response.status(), 200);
    let body = response.into_body().collect().await?.to_bytes();
    Ok((got, serde_json::from_slice(&body).unwrap()))
}

fn assert_discovered(json: &Value) {
    assert_eq!(json["id"], 1, "{json}");
    assert_eq!(json["result"]["resultType"], "complete", "{json}");
}

#[tokio::test]
async fn plain_connections_speak_http1_and_refuse_h2c_by_default() {
    let running = start(ServeOptions::default()).await;
    let (version, json) = roundtrip(
        TcpStream::connect(running.addr).await.unwrap(),
        running.addr,
        Version::HTTP_11,
    )
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
        let (got, json) = roundtrip(
            TcpStream::connect(running.addr).await.unwrap(),
            running.addr,
            version,
        )
        .await
        .unwrap();
        assert_eq!(got, version);
        assert_discovered(&json);
    }
    running.stop().await;
}

#[tokio::test]
async fn tls_follows_alpn() {
    let dir = std::env::temp_dir().join(format!("smcp-serve-protocols-{}", std::process::id()));
    let certs = smcp_server::transport::tls::write_dev_certificates(&dir, &["127.0.0.1"]).unwrap();
    let tls = smcp_server::transport::tls::config_from_files(&certs.cert, &certs.key).unwrap();
    let running = start(ServeOptions {
        tls: Some(tls),
        ..ServeOptions::default()
    })
    .await;

    let mut roots = rustls::RootCertStore::empty();
    let ca = std::fs::read(&certs.ca_cert).unwrap();
    for cert in CertificateDer::pem_slice_iter(&ca) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    for (alpn, expected) in [
        (&b"h2"[..], Version::HTTP_2),
        (&b"http/1.1"[..], Version::HTTP_11),
    ] {
        let mut config = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots.clone())
            .with_no_client_auth();
        config.alpn_protocols = vec![alpn.to_vec()];
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let tcp = TcpStream::connect(running.addr).await.unwrap();
        let name = rustls_pki_types::ServerName::try_from("127.0.0.1").unwrap();
        let stream = connector.connect(name, tcp).await.unwrap();
        assert_eq!(stream.get_ref().1.alpn_protocol(), Some(alpn));
        let (got, json) = roundtrip(stream, running.addr, expected).await.unwrap();
        assert_eq!(got, expected, "ALPN {}", String::from_utf8_lossy(alpn));
        assert_discovered(&json);
    }
    running.stop().await;
    let _ = std::fs::remove_dir_all(dir);
}
