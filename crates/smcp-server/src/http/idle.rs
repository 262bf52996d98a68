//! An HTTP/2 connection with no request in flight for too long is closed.
//!
//! HTTP/1.1 connections have hyper's header read timeout: a client must send its next request
//! head within [`super::ServeOptions::header_read_timeout`] of the previous response. HTTP/2
//! has no such timer, so a client that completes the TLS handshake and then sends nothing (or
//! nothing more) would hold its connection permit for as long as it likes. [`Activity`]
//! counts the requests in flight on one HTTP/2 connection, from the call until the response
//! body is dropped (a `subscriptions/listen` stream stays in flight while it is open), and
//! [`idle`] completes once none has been for the timeout.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};
use tokio::time::Instant;

/// The requests in flight on one connection, and since when there have been none.
#[derive(Debug)]
pub(crate) struct Activity {
    opened: Instant,
    active: AtomicUsize,
    /// Milliseconds after `opened` when the last request ended.
    quiet_since_ms: AtomicU64,
}

impl Activity {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            opened: Instant::now(),
            active: AtomicUsize::new(0),
            quiet_since_ms: AtomicU64::new(0),
        })
    }

    fn begin(self: &Arc<Self>) -> InFlight {
        self.active.fetch_add(1, Ordering::AcqRel);
        InFlight(self.clone())
    }

    /// When the connection became quiet, or `None` while a request is in flight.
    fn quiet_since(&self) -> Option<Instant> {
        if self.active.load(Ordering::Acquire) > 0 {
            return None;
        }
        let ms = self.quiet_since_ms.load(Ordering::Acquire);
        Some(self.opened + Duration::from_millis(ms))
    }
}

/// One request in flight; dropped when its response body is.
#[derive(Debug)]
pub(crate) struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let ms = u64::try_from(self.0.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.0.quiet_since_ms.store(ms, Ordering::Release);
        self.0.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Completes once the connection has had no request in flight for `timeout`.
pub(crate) async fn idle(activity: Arc<Activity>, timeout: Duration) {
    loop {
        let wake = match activity.quiet_since() {
            Some(since) if since.elapsed() >= timeout => return,
            Some(since) => since + timeout,
            None => Instant::now() + timeout,
        };
        tokio::time::sleep_until(wake).await;
    }
}

/// A hyper service whose requests count as [`Activity`] until their response bodies end.
#[derive(Debug, Clone)]
pub(crate) struct Counted<S> {
    pub(crate) inner: S,
    pub(crate) activity: Arc<Activity>,
}

impl<S, Req, B> hyper::service::Service<Request<Req>> for Counted<S>
where
    S: hyper::service::Service<Request<Req>, Response = Response<B>>,
    S::Future: Send + 'static,
{
    type Response = Response<CountedBody<B>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn call(&self, request: Request<Req>) -> Self::Future {
        let in_flight = self.activity.begin();
        let fut = self.inner.call(request);
        Box::pin(async move {
            let response = fut.await?;
            Ok(response.map(|body| CountedBody {
                inner: body,
                _in_flight: in_flight,
            }))
        })
    }
}

pin_project_lite::pin_project! {
    /// A response body that keeps its request in flight.
    #[derive(Debug)]
    pub(crate) struct CountedBody<B> {
        #[pin]
        inner: B,
        _in_flight: InFlight,
    }
}

impl<B: Body> Body for CountedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        self.project().inner.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn idle_waits_for_the_last_request_to_end() {
        let activity = Activity::new();
        let request = activity.begin();
        let watch = tokio::spawn(idle(activity.clone(), Duration::from_secs(5)));
        tokio::time::sleep(Duration::from_secs(12)).await;
        assert!(!watch.is_finished(), "closed with a request in flight");
        drop(request);
        tokio::time::sleep(Duration::from_secs(4)).await;
        assert!(!watch.is_finished(), "closed before the timeout");
        tokio::time::sleep(Duration::from_secs(7)).await;
        assert!(watch.is_finished(), "never closed");
    }
}
