//! [`RequestBody`]: a request body that cannot stall a connection forever.
//!
//! A client that sends a request head and then stops sending its body (or trickles it a byte
//! at a time) would otherwise hold its connection, its connection permit and whatever the
//! handler staged for as long as it likes. [`serve`](super::serve) hands every service a
//! `RequestBody` instead of hyper's body: reading it fails with [`BodyTimedOut`] when no byte
//! arrives for [`BodyTimeouts::idle`], or when, after [`BodyTimeouts::grace`], the body has
//! arrived slower than [`BodyTimeouts::min_rate`] bytes per second on average. The clock
//! starts when a read of the body first has to wait (bytes read before count towards the
//! rate), so a request waiting for a permit or a handler is not charged for it.
//!
//! A body that is already buffered (the usual small JSON-RPC request, which arrives with its
//! head) is read without a timer: one is armed only when a read would wait.

use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use tokio::time::{Instant, Sleep};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How long a request body may take (see [`RequestBody`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyTimeouts {
    /// Longest wait for the next byte of a body.
    pub idle: Duration,
    /// Lowest average rate, in bytes per second, once `grace` has passed (0 = no minimum).
    pub min_rate: u64,
    /// How long a body may take before its average rate counts.
    pub grace: Duration,
}

impl Default for BodyTimeouts {
    fn default() -> Self {
        Self {
            idle: Duration::from_secs(30),
            min_rate: 1024,
            grace: Duration::from_secs(10),
        }
    }
}

/// Why reading a [`RequestBody`] failed: it stalled or arrived too slowly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyTimedOut {
    /// No byte arrived for this long.
    #[error("the request body stalled: no data for {} ms", .0.as_millis())]
    Idle(Duration),
    /// Fewer bytes arrived than the minimum rate asks for.
    #[error("the request body arrived too slowly: {received} bytes in {} ms, below {min_rate} bytes/s", .elapsed.as_millis())]
    TooSlow {
        /// Bytes received so far.
        received: u64,
        /// Time since the body was first read.
        elapsed: Duration,
        /// The minimum rate.
        min_rate: u64,
    },
}

/// The body of a request accepted by [`serve`](super::serve): hyper's body under
/// [`BodyTimeouts`].
#[derive(Debug)]
pub struct RequestBody {
    inner: Incoming,
    limits: BodyTimeouts,
    /// Bytes read so far, also before the clock started.
    received: u64,
    clock: Option<Clock>,
}

/// The timing state, made on the first read that has to wait.
#[derive(Debug)]
struct Clock {
    started: Instant,
    last_data: Instant,
    timer: Pin<Box<Sleep>>,
}

impl RequestBody {
    pub(crate) fn new(inner: Incoming, limits: BodyTimeouts) -> Self {
        Self {
            inner,
            limits,
            received: 0,
            clock: None,
        }
    }

    /// When the body breaks a limit if nothing more arrives, or the error now.
    fn check(
        limits: &BodyTimeouts,
        clock: &Clock,
        received: u64,
        now: Instant,
    ) -> Result<Instant, BodyTimedOut> {
        let idle_at = clock.last_data + limits.idle;
        if now >= idle_at {
            return Err(BodyTimedOut::Idle(limits.idle));
        }
        if limits.min_rate == 0 {
            return Ok(idle_at);
        }
        let elapsed = now - clock.started;
        // The moment the bytes received so far stop covering the minimum rate.
        let covered = Duration::from_secs_f64(received as f64 / limits.min_rate as f64);
        let rate_at = clock.started + covered.max(limits.grace);
        if now >= rate_at && elapsed >= limits.grace {
            return Err(BodyTimedOut::TooSlow {
                received,
                elapsed,
                min_rate: limits.min_rate,
            });
        }
        Ok(idle_at.min(rate_at))
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        loop {
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Ready(frame) => {
                    if let Some(Ok(frame)) = &frame
                        && let Some(data) = frame.data_ref()
                    {
                        this.received += data.len() as u64;
                        if let Some(clock) = &mut this.clock {
                            clock.last_data = Instant::now();
                        }
                    }
                    return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
                }
                Poll::Pending => {}
            }
            let now = Instant::now();
            let limits = this.limits;
            let clock = this.clock.get_or_insert_with(|| Clock {
                started: now,
                last_data: now,
                timer: Box::pin(tokio::time::sleep_until(now + limits.idle)),
            });
            match Self::check(&limits, clock, this.received, now) {
                Err(e) => return Poll::Ready(Some(Err(Box::new(e)))),
                Ok(at) => {
                    if clock.timer.deadline() != at {
                        clock.timer.as_mut().reset(at);
                    }
                }
            }
            ready!(clock.timer.as_mut().poll(cx));
            // The timer fired: read once more (data may have raced it), then check again.
        }
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

    fn clock(started: Instant, last_data: Instant) -> Clock {
        Clock {
            started,
            last_data,
            timer: Box::pin(tokio::time::sleep_until(started)),
        }
    }

    const LIMITS: BodyTimeouts = BodyTimeouts {
        idle: Duration::from_secs(30),
        min_rate: 1000,
        grace: Duration::from_secs(10),
    };

    #[tokio::test]
    async fn a_stalled_body_times_out_after_the_idle_limit() {
        let t0 = Instant::now();
        let c = clock(t0, t0);
        let n = 1_000_000;
        assert_eq!(RequestBody::check(&LIMITS, &c, n, t0), Ok(t0 + LIMITS.idle));
        let late = t0 + Duration::from_secs(30);
        assert!(matches!(
            RequestBody::check(&LIMITS, &c, n, late),
            Err(BodyTimedOut::Idle(_))
        ));
    }

    #[tokio::test]
    async fn a_trickle_is_cut_once_the_grace_period_is_over() {
        let t0 = Instant::now();
        // 5 bytes, the last one just now: never idle, but far below 1000 B/s.
        let now = t0 + Duration::from_secs(11);
        let c = clock(t0, now);
        assert!(matches!(
            RequestBody::check(&LIMITS, &c, 5, now),
            Err(BodyTimedOut::TooSlow { received: 5, .. })
        ));
        // Within the grace period the rate does not count yet; the check is due at its end.
        let early = t0 + Duration::from_secs(3);
        let c = clock(t0, early);
        assert_eq!(
            RequestBody::check(&LIMITS, &c, 5, early),
            Ok(t0 + LIMITS.grace)
        );
    }

    #[tokio::test]
    async fn a_fast_body_is_checked_again_when_its_bytes_stop_covering_the_rate() {
        let t0 = Instant::now();
        let now = t0 + Duration::from_secs(12);
        // 20 KB at 1000 B/s covers 20 s; the idle limit (30 s after now) comes later.
        let c = clock(t0, now);
        assert_eq!(
            RequestBody::check(&LIMITS, &c, 20_000, now),
            Ok(t0 + Duration::from_secs(20))
        );
        let no_rate = BodyTimeouts {
            min_rate: 0,
            ..LIMITS
        };
        assert_eq!(
            RequestBody::check(&no_rate, &c, 20_000, now),
            Ok(now + LIMITS.idle)
        );
    }
}
