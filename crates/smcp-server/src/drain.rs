//! How serving ends, for every transport: requests in flight get the drain timeout to finish;
//! those still running then are cancelled and answered with [`cut_error`].

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

/// The error a request gets when the drain timeout cuts it (−32603, the same on every
/// transport).
pub(crate) fn cut_error(timeout: Duration) -> ErrorObject {
    ErrorObject::internal(format!(
        "Server shutting down: the request did not finish within {} ms",
        timeout.as_millis()
    ))
}
