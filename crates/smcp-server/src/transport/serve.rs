//! A production accept loop: HTTP/1.1 and HTTP/2 on one port, `TCP_NODELAY`, bounded request
//! heads, a connection cap, and graceful shutdown.
//!
//! Every request gets a [`ConnectionInfo`] extension: the peer address (for the per-address cap
//! on listen streams), a token that drops the connection (used when a listen stream's client
//! stops reading), and the server's shutdown signal (listen streams end gracefully on it).
//!
//! `TCP_NODELAY` matters: a response written in several pieces (SSE events) otherwise stalls
//! behind Nagle's algorithm and the peer's delayed ACK.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Settings of [`serve`].
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Largest request head (request line and headers) in bytes; larger gets 431.
    pub max_header_bytes: usize,
    /// Most connections served at once; further ones wait in the accept queue.
    pub max_connections: usize,
    /// How long shutdown waits for open connections before closing them.
    pub shutdown_timeout: Duration,
    /// Serve HTTPS with this acceptor (see [`crate::transport::tls`]); `None` = plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            max_header_bytes: 64 * 1024,
            max_connections: 25_000,
            shutdown_timeout: Duration::from_secs(10),
            tls: None,
        }
    }
}

/// What [`serve`] knows about the connection a request arrived on, as a request extension.
#[derive(Debug, Clone)]
pub struct ConnectionInfo {
    peer: SocketAddr,
    /// Cancelling it drops the connection at once.
    pub(crate) abort: CancellationToken,
    /// Cancelled when the accept loop shuts down.
    pub(crate) shutdown: CancellationToken,
}

impl ConnectionInfo {
    /// The client's address.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }
}

/// Serves `service` on `listener` until `shutdown` completes, then stops accepting and waits
/// (up to [`ServeOptions::shutdown_timeout`]) for open connections to finish. Open
/// `subscriptions/listen` streams are told first, so each sends its listen result and ends.
pub async fn serve<S, B>(
    listener: TcpListener,
    service: S,
    options: ServeOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()>
where
    S: tower::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .max_buf_size(options.max_header_bytes.max(8192))
        .keep_alive(true);
    builder
        .http2()
        .max_header_list_size(u32::try_from(options.max_header_bytes).unwrap_or(u32::MAX));
    let graceful = GracefulShutdown::new();
    let stopping = CancellationToken::new();
    let permits = Arc::new(Semaphore::new(options.max_connections.max(1)));
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            () = &mut shutdown => break,
            permit = permits.clone().acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Resource exhaustion (EMFILE, …) must not end the server: back off.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        let info = ConnectionInfo {
            peer,
            abort: CancellationToken::new(),
            shutdown: stopping.clone(),
        };
        let abort = info.abort.clone();
        let service = tower::util::MapRequest::new(service.clone(), move |mut req: Request<_>| {
            req.extensions_mut().insert(info.clone());
            req
        });
        let builder = builder.clone();
        let watcher = graceful.watcher();
        let tls = options.tls.clone().map(tokio_rustls::TlsAcceptor::from);
        tokio::spawn(async move {
            match tls {
                None => {
                    drive(
                        &builder,
                        TokioIo::new(stream),
                        service,
                        watcher,
                        abort,
                        peer,
                    )
                    .await;
                }
                Some(acceptor) => match acceptor.accept(stream).await {
                    Ok(stream) => {
                        drive(
                            &builder,
                            TokioIo::new(stream),
                            service,
                            watcher,
                            abort,
                            peer,
                        )
                        .await;
                    }
                    Err(e) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                },
            }
            drop(permit);
        });
    }
    drop(listener);
    stopping.cancel();
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(options.shutdown_timeout) => {
            tracing::warn!("shutdown timed out with connections still open");
        }
    }
    Ok(())
}

/// Serves one connection until it ends or a listen stream's client stops reading.
async fn drive<I, S, B>(
    builder: &auto::Builder<TokioExecutor>,
    io: I,
    service: S,
    watcher: hyper_util::server::graceful::Watcher,
    abort: CancellationToken,
    peer: SocketAddr,
) where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: tower::Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    // No upgrades: MCP never switches protocols, and upgrade support costs a channel per
    // request.
    let conn = builder.serve_connection(io, TowerToHyperService::new(service));
    let conn = watcher.watch(conn.into_owned());
    tokio::select! {
        result = conn => {
            if let Err(e) = result {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        }
        () = abort.cancelled() => {
            tracing::debug!(%peer, "connection dropped: a listen stream's client stopped reading");
        }
    }
}
