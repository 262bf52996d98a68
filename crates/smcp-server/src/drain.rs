//! How serving ends, for every transport: requests in flight get the drain timeout to finish;
//! those still running then are cancelled and answered with [`cut_error`]. [`shutdown_signal`]
//! is the usual trigger.

use std::future::Future;
use std::time::Duration;

use smcp_proto::error::ErrorObject;

/// How serving ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drained {
    /// Every request in flight finished within the drain timeout.
    Complete,
    /// The drain timeout passed first: this many requests were still running, and each was
    /// cancelled and got an error response. (Over HTTP, connections still open then, with no
    /// request running, are closed without making the drain incomplete.)
    TimedOut(usize),
}

impl Drained {
    /// Whether every request in flight finished.
    pub fn is_complete(self) -> bool {
        self == Self::Complete
    }
}

/// Completes on Ctrl-C, and on SIGTERM on Unix: the `shutdown` future to give
/// [`crate::serve`] or [`crate::serve_stdio`] so that a process stopped by its supervisor
/// drains gracefully.
///
/// # Examples
///
/// ```no_run
/// # async fn run(server: smcp_server::Server) -> std::io::Result<()> {
/// server.serve_stdio(smcp_server::shutdown_signal()).await?;
/// # Ok(())
/// # }
/// ```
///
/// Called inside a Tokio runtime, SIGTERM is caught from the call on, not only from the first
/// poll: a process that announces it is ready after the call cannot be killed by a SIGTERM
/// that comes before it starts serving.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let term = tokio::runtime::Handle::try_current().ok().and_then(|_| {
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok()
    });
    async move {
        let ctrl_c = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        #[cfg(unix)]
        let term = async move {
            let registered = match term {
                Some(signal) => Ok(signal),
                None => tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()),
            };
            match registered {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let term = std::future::pending::<()>();
        tokio::select! {
            () = ctrl_c => {}
            () = term => {}
        }
    }
}

/// The error a request gets when the drain timeout cuts it (−32603, the same on every
/// transport).
pub(crate) fn cut_error(timeout: Duration) -> ErrorObject {
    ErrorObject::internal(format!(
        "Server shutting down: the request did not finish within {} ms",
        timeout.as_millis()
    ))
}
