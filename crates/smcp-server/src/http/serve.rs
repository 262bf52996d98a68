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
//! Every request knows its connection ([`ConnectionInfo::current`]): the peer address (for the
//! per-address cap on listen streams), a token that drops the connection (used when a listen
//! stream's client stops reading), and the server's shutdown signal (listen streams end
//! gracefully on it). It is a task-local of the connection's task (and of the tasks HTTP/2
//! spawns for its streams), not a request extension: inserting an extension costs every
//! request three allocations.
//!
//! `TCP_NODELAY` matters: a response written in several pieces (SSE events) otherwise stalls
//! behind Nagle's algorithm and the peer's delayed ACK.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use hyper::rt::Executor;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulConnection, GracefulShutdown, Watcher};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

use super::deadline::{BodyTimeouts, RequestBody};
use super::idle::{Activity, Counted, idle};
use crate::drain::Drained;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Settings of [`serve`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use smcp_server::ServeOptions;
///
/// let options = ServeOptions {
///     max_connections: 1_000,
///     shutdown_timeout: Duration::from_secs(30),
///     ..ServeOptions::default()
/// };
/// # let _ = options;
/// ```
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Largest request head (request line and headers) in bytes; larger gets 431.
    pub max_header_bytes: usize,
    /// Most connections served at once; further ones wait in the accept queue.
    pub max_connections: usize,
    /// How long shutdown waits for requests in flight to finish. Requests still running then
    /// are cancelled and answered with a JSON-RPC error, and [`serve`] returns
    /// [`Drained::TimedOut`].
    pub shutdown_timeout: Duration,
    /// A client that has not sent a complete request head this long after the connection
    /// opened (or after its previous response) is disconnected.
    pub header_read_timeout: Duration,
    /// A TLS client that has not completed its handshake this long after connecting is
    /// disconnected (it holds a connection permit meanwhile).
    pub handshake_timeout: Duration,
    /// How slowly a request body may arrive (see [`RequestBody`]).
    pub body: BodyTimeouts,
    /// Serve HTTPS with this acceptor (see [`crate::http::tls`]); `None` = plain HTTP.
    /// ALPN offers `h2` and `http/1.1`.
    #[cfg(feature = "tls")]
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
            handshake_timeout: Duration::from_secs(10),
            body: BodyTimeouts::default(),
            #[cfg(feature = "tls")]
            tls: None,
            h2c: false,
        }
    }
}

tokio::task_local! {
    /// The connection the running task serves.
    static CONNECTION: ConnectionInfo;
}

/// What [`serve`] knows about the connection a request arrived on. A clone is one reference
/// count (cancellation tokens take a lock to clone and to drop).
#[derive(Debug, Clone)]
pub struct ConnectionInfo {
    peer: SocketAddr,
    tokens: Arc<ConnectionTokens>,
}

#[derive(Debug)]
struct ConnectionTokens {
    /// Cancelling it drops the connection at once.
    abort: CancellationToken,
    /// The server's shutdown, shared by every connection.
    drain: Arc<DrainState>,
}

/// The shutdown of one [`serve`]: when it began, when it cut what was left, and how much.
#[derive(Debug, Default)]
pub(crate) struct DrainState {
    /// Cancelled when the accept loop shuts down.
    shutdown: CancellationToken,
    /// Cancelled when the drain timeout passes: requests still running are cut.
    cut: CancellationToken,
    /// Requests cut so far.
    cut_requests: AtomicUsize,
    /// The drain timeout, for the error message.
    timeout: Duration,
}

impl DrainState {
    /// Completes when the drain timeout has passed with requests still running.
    pub(crate) fn cut(&self) -> &CancellationToken {
        &self.cut
    }

    /// Counts one request cut, and returns the error it is answered with.
    pub(crate) fn cut_one(&self) -> smcp_proto::error::ErrorObject {
        self.cut_requests.fetch_add(1, Ordering::Relaxed);
        crate::drain::cut_error(self.timeout)
    }
}

impl ConnectionInfo {
    /// The connection the current request arrived on, when [`serve`] accepted it and this is
    /// called from the task serving the request; `None` elsewhere (an app serving
    /// [`crate::Server::router`] itself has axum's `ConnectInfo` instead).
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// use smcp_server::ConnectionInfo;
    ///
    /// let whoami = tool("peer").handler(|_call| async {
    ///     let peer = ConnectionInfo::current().map(|c| c.peer().to_string());
    ///     Ok(CallToolResult::text(peer.unwrap_or_else(|| "unknown".into())))
    /// });
    /// ```
    pub fn current() -> Option<Self> {
        CONNECTION.try_with(Clone::clone).ok()
    }

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
        &self.tokens.drain.shutdown
    }

    /// The server's drain: requests still running at its timeout are cut.
    pub(crate) fn drain(&self) -> &Arc<DrainState> {
        &self.tokens.drain
    }
}

/// Spawns HTTP/2 stream tasks inside their connection's [`ConnectionInfo`] scope.
#[derive(Clone)]
struct ConnectionExecutor(ConnectionInfo);

impl<F> Executor<F> for ConnectionExecutor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        tokio::spawn(CONNECTION.scope(self.0.clone(), fut));
    }
}

/// The connection settings, shared by every connection task. HTTP/1.1 connections share one
/// builder; HTTP/2 builders hold their connection's executor, so each such connection makes
/// its own (they are rare, and a builder is a few words of settings).
struct Builders {
    h1: http1::Builder,
    max_head: usize,
    max_list: u32,
    header_read_timeout: Duration,
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
        Self {
            h1,
            max_head,
            max_list,
            header_read_timeout: options.header_read_timeout,
        }
    }

    #[cfg(feature = "tls")]
    fn h2(&self, info: &ConnectionInfo) -> hyper::server::conn::http2::Builder<ConnectionExecutor> {
        let mut h2 = hyper::server::conn::http2::Builder::new(ConnectionExecutor(info.clone()));
        h2.max_header_list_size(self.max_list);
        h2
    }

    fn auto(&self, info: &ConnectionInfo) -> auto::Builder<ConnectionExecutor> {
        let mut auto = auto::Builder::new(ConnectionExecutor(info.clone()));
        auto.http1()
            .max_buf_size(self.max_head)
            .keep_alive(true)
            .timer(TokioTimer::new())
            .header_read_timeout(self.header_read_timeout);
        auto.http2().max_header_list_size(self.max_list);
        auto
    }
}

/// Serves `service` on `listener` until `shutdown` completes, then stops accepting and waits
/// (up to [`ServeOptions::shutdown_timeout`]) for open connections to finish. Open
/// `subscriptions/listen` streams are told first, so each sends its listen result and ends.
/// Requests still running at the timeout are cancelled and answered with a JSON-RPC error
/// (−32603), and the result says how many there were.
///
/// Request bodies arrive as [`RequestBody`]: reading one fails when the client stalls (see
/// [`ServeOptions::body`]).
///
/// # Examples
///
/// A server that is only an MCP server, stopped with Ctrl-C:
///
/// ```no_run
/// use smcp_server::prelude::*;
/// use smcp_server::{ServeOptions, serve};
///
/// # async fn run() -> anyhow::Result<()> {
/// let server = Server::builder("demo", "1.0.0")
///     .tool(tool("ping").handler(|_call| async { Ok(CallToolResult::text("pong")) }))
///     .build()?;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8931").await?;
/// let shutdown = async {
///     let _ = tokio::signal::ctrl_c().await;
/// };
/// let drained = serve(listener, server.endpoint("/mcp"), ServeOptions::default(), shutdown).await?;
/// if !drained.is_complete() {
///     eprintln!("some requests were cut at shutdown: {drained:?}");
/// }
/// # Ok(()) }
/// ```
///
/// Any tower service with the same request and response types works, e.g. an axum
/// [`Router`](axum::Router) from [`Server::router`](crate::Server::router) with layers.
/// HTTPS: set [`ServeOptions::tls`] (see [`crate::http::tls`]).
pub async fn serve<S, B>(
    listener: TcpListener,
    service: S,
    options: ServeOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<Drained>
where
    S: tower::Service<Request<RequestBody>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let builders = Arc::new(Builders::new(&options));
    #[cfg(feature = "tls")]
    let acceptor = options.tls.clone().map(tokio_rustls::TlsAcceptor::from);
    let graceful = GracefulShutdown::new();
    let drain = Arc::new(DrainState {
        timeout: options.shutdown_timeout,
        ..DrainState::default()
    });
    let body_timeouts = options.body;
    let service = service.map_request(move |request: Request<Incoming>| {
        request.map(|body| RequestBody::new(body, body_timeouts))
    });
    let permits = Arc::new(Semaphore::new(options.max_connections.max(1)));
    let mut accept_failures = AcceptFailures::default();
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
                    // Resource exhaustion (EMFILE, …) must not end the server: back off, and
                    // say so once in a while rather than on every retry.
                    accept_failures.record(&e);
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
                drain: drain.clone(),
            }),
        };
        let abort = info.abort().clone();
        let service = TowerToHyperService::new(service.clone());
        let watcher = graceful.watcher();
        let end = Ending {
            watcher,
            abort,
            peer,
        };
        #[cfg(feature = "tls")]
        if let Some(acceptor) = &acceptor {
            let accept = tokio::time::timeout(options.handshake_timeout, acceptor.accept(stream));
            let builders = builders.clone();
            let conn_info = info.clone();
            let task = async move {
                match accept.await {
                    Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    Ok(Ok(stream)) => {
                        let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
                        let io = TokioIo::new(stream);
                        if h2 {
                            // HTTP/2 has no header read timeout: a connection with no request
                            // in flight for that long is closed instead.
                            let activity = Activity::new();
                            let idle_timeout = builders.header_read_timeout;
                            let service = Counted {
                                inner: service,
                                activity: activity.clone(),
                            };
                            let conn = builders.h2(&conn_info).serve_connection(io, service);
                            drop(builders);
                            end.drive_until(conn, idle(activity, idle_timeout)).await;
                        } else {
                            let conn = builders.h1.serve_connection(io, service);
                            drop(builders);
                            end.drive(conn).await;
                        }
                    }
                    Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                }
                drop(permit);
            };
            tokio::spawn(CONNECTION.scope(info, task));
            continue;
        }
        if options.h2c {
            let activity = Activity::new();
            let service = Counted {
                inner: service,
                activity: activity.clone(),
            };
            let conn = builders
                .auto(&info)
                .serve_connection(TokioIo::new(stream), service)
                .into_owned();
            let conn = end.drive_until(conn, idle(activity, options.header_read_timeout));
            tokio::spawn(CONNECTION.scope(info, async move {
                conn.await;
                drop(permit);
            }));
        } else {
            let conn = end.drive(builders.h1.serve_connection(TokioIo::new(stream), service));
            tokio::spawn(CONNECTION.scope(info, async move {
                conn.await;
                drop(permit);
            }));
        }
    }
    drop(listener);
    drain.shutdown.cancel();
    let closed = graceful.shutdown();
    tokio::pin!(closed);
    tokio::select! {
        () = &mut closed => return Ok(Drained::Complete),
        () = tokio::time::sleep(options.shutdown_timeout) => {}
    }
    // Cut what is still running: each request is cancelled and answered with an error. The
    // answers get a moment to reach their clients before the connections close.
    drain.cut.cancel();
    let flushed = tokio::time::timeout(CUT_FLUSH, &mut closed).await.is_ok();
    let cut = drain.cut_requests.load(Ordering::Relaxed);
    if cut == 0 {
        // Connections with no request running (idle, or a client slow to read its last
        // answer) are closed; every request finished.
        tracing::info!(
            connections_closed = flushed,
            "connections still open at the end of the drain timeout were closed"
        );
        return Ok(Drained::Complete);
    }
    tracing::warn!(
        requests = cut,
        connections_closed = flushed,
        "requests still running at the end of the drain timeout were cancelled"
    );
    Ok(Drained::TimedOut(cut))
}

/// Failed accepts, logged at most once per [`ACCEPT_FAILURE_LOG_EVERY`] with how many there
/// were.
#[derive(Debug, Default)]
struct AcceptFailures {
    logged: Option<tokio::time::Instant>,
    since: u64,
}

/// How often failing accepts are logged.
const ACCEPT_FAILURE_LOG_EVERY: Duration = Duration::from_secs(5);

impl AcceptFailures {
    fn record(&mut self, error: &std::io::Error) {
        self.since += 1;
        let now = tokio::time::Instant::now();
        if self
            .logged
            .is_some_and(|at| now.duration_since(at) < ACCEPT_FAILURE_LOG_EVERY)
        {
            return;
        }
        tracing::warn!(%error, failures = self.since, "accept failed");
        self.logged = Some(now);
        self.since = 0;
    }
}

/// How long the answers to cut requests get to reach their clients.
const CUT_FLUSH: Duration = Duration::from_secs(2);

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
        self.drive_until(conn, std::future::pending())
    }

    /// [`Ending::drive`], also ending the connection when `idle` completes.
    fn drive_until<C, E, I>(
        self,
        conn: C,
        idle: I,
    ) -> impl Future<Output = ()> + Send + use<C, E, I>
    where
        C: GracefulConnection<Error = E> + Send + 'static,
        E: std::fmt::Display,
        I: Future<Output = ()> + Send + 'static,
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
                () = idle => {
                    tracing::debug!(%peer, "connection closed: no request in flight for the header read timeout");
                }
            }
        }
    }
}
