//! A production accept loop: HTTP/1.1 and HTTP/2 on one port, `TCP_NODELAY`, bounded request
//! heads, a header read timeout, a connection cap, and graceful shutdown.
//!
//! The protocol of a connection is known before hyper sees it: over TLS, ALPN says `h2` or
//! `http/1.1`; plain connections speak HTTP/1.1 unless [`ServeOptions::h2c`] asks for HTTP/2
//! prior-knowledge detection. Each kind runs as its own task type, so an idle HTTP/1.1
//! connection (an open `subscriptions/listen` stream, say) carries neither HTTP/2 nor TLS state,
//! and its read buffer stays at hyper's initial 8 KiB (sniffing for the HTTP/2 preface hands
//! hyper a partial first read, which doubles that buffer on every connection).
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
use hyper::server::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulConnection, GracefulShutdown, Watcher};
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
    /// A client that has not sent a complete request head this long after the connection
    /// opened (or after its previous response) is disconnected.
    pub header_read_timeout: Duration,
    /// Serve HTTPS with this acceptor (see [`crate::transport::tls`]); `None` = plain HTTP.
    /// ALPN offers `h2` and `http/1.1`.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// On plain HTTP, also accept HTTP/2 with prior knowledge (h2c), detected from the
    /// connection preface. Off by default: the detection costs every connection a second
    /// 8 KiB of read buffer, and clients speak HTTP/1.1 to `http://` URLs.
    pub h2c: bool,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            max_header_bytes: 64 * 1024,
            max_connections: 25_000,
            shutdown_timeout: Duration::from_secs(10),
            header_read_timeout: Duration::from_secs(30),
            tls: None,
            h2c: false,
        }
    }
}

/// What [`serve`] knows about the connection a request arrived on, as a request extension.
/// Cloned onto every request, so a clone is one reference count (cancellation tokens take a
/// lock to clone and to drop).
#[derive(Debug, Clone)]
pub struct ConnectionInfo {
    peer: SocketAddr,
    tokens: Arc<ConnectionTokens>,
}

#[derive(Debug)]
struct ConnectionTokens {
    /// Cancelling it drops the connection at once.
    abort: CancellationToken,
    /// Cancelled when the accept loop shuts down.
    shutdown: CancellationToken,
}

impl ConnectionInfo {
    /// The client's address.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// Cancelling it drops the connection at once.
    pub(crate) fn abort(&self) -> &CancellationToken {
        &self.tokens.abort
    }

    /// Cancelled when the accept loop shuts down.
    pub(crate) fn shutdown(&self) -> &CancellationToken {
        &self.tokens.shutdown
    }
}

/// The per-protocol connection builders, shared by every connection task.
struct Builders {
    h1: http1::Builder,
    h2: http2::Builder<TokioExecutor>,
    auto: auto::Builder<TokioExecutor>,
}

impl Builders {
    fn new(options: &ServeOptions) -> Self {
        let max_head = options.max_header_bytes.max(8192);
        let max_list = u32::try_from(options.max_header_bytes).unwrap_or(u32::MAX);
        let mut h1 = http1::Builder::new();
        h1.max_buf_size(max_head)
            .max_header_size(max_head)
            .keep_alive(true)
            .timer(TokioTimer::new())
            .header_read_timeout(options.header_read_timeout);
        let mut h2 = http2::Builder::new(TokioExecutor::new());
        h2.max_header_list_size(max_list);
        let mut auto = auto::Builder::new(TokioExecutor::new());
        auto.http1()
            .max_buf_size(max_head)
            .keep_alive(true)
            .timer(TokioTimer::new())
            .header_read_timeout(options.header_read_timeout);
        auto.http2().max_header_list_size(max_list);
        Self { h1, h2, auto }
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
    let builders = Arc::new(Builders::new(&options));
    let acceptor = options.tls.clone().map(tokio_rustls::TlsAcceptor::from);
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
            tokens: Arc::new(ConnectionTokens {
                abort: CancellationToken::new(),
                shutdown: stopping.clone(),
            }),
        };
        let abort = info.abort().clone();
        let service = TowerToHyperService::new(tower::util::MapRequest::new(
            service.clone(),
            move |mut req: Request<_>| {
                req.extensions_mut().insert(info.clone());
                req
            },
        ));
        let watcher = graceful.watcher();
        let end = Ending {
            watcher,
            abort,
            peer,
        };
        match &acceptor {
            Some(acceptor) => {
                let accept = acceptor.accept(stream);
                let builders = builders.clone();
                tokio::spawn(async move {
                    match accept.await {
                        Ok(stream) => {
                            let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
                            let io = TokioIo::new(stream);
                            if h2 {
                                let conn = builders.h2.serve_connection(io, service);
                                drop(builders);
                                end.drive(conn).await;
                            } else {
                                let conn = builders.h1.serve_connection(io, service);
                                drop(builders);
                                end.drive(conn).await;
                            }
                        }
                        Err(e) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                    }
                    drop(permit);
                });
            }
            None if options.h2c => {
                let conn = builders
                    .auto
                    .serve_connection(TokioIo::new(stream), service)
                    .into_owned();
                let conn = end.drive(conn);
                tokio::spawn(async move {
                    conn.await;
                    drop(permit);
                });
            }
            None => {
                let conn = end.drive(builders.h1.serve_connection(TokioIo::new(stream), service));
                tokio::spawn(async move {
                    conn.await;
                    drop(permit);
                });
            }
        }
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

/// How a connection ends: graceful shutdown of the server, or the abort token of a listen
/// stream whose client stopped reading.
struct Ending {
    watcher: Watcher,
    abort: CancellationToken,
    peer: SocketAddr,
}

impl Ending {
    /// Serves one connection until it ends, the server shuts down, or it is aborted. No
    /// upgrades: MCP never switches protocols, and upgrade support costs a channel per request.
    ///
    /// The connection lives in its own allocation: held inline, an async state machine keeps
    /// more than one copy of it, which an idle connection would pay for as long as it is open.
    fn drive<C, E>(self, conn: C) -> impl Future<Output = ()> + Send + use<C, E>
    where
        C: GracefulConnection<Error = E> + Send + 'static,
        E: std::fmt::Display,
    {
        let Self {
            watcher,
            abort,
            peer,
        } = self;
        let conn = Box::pin(watcher.watch(conn));
        async move {
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
    }
}
