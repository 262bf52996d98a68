//! The settings of a stream connection, and its framing: the leaf every file of the transport
//! reads.

use std::time::Duration;

use crate::core::context::{Framing, Principal};

/// Newline-delimited JSON: nothing before a message, a newline after it.
pub const NEWLINE: Framing = Framing {
    prefix: b"",
    suffix: b"\n",
};

/// Limits and settings of a stream connection.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use smcp_server::{Principal, StdioOptions};
///
/// let options = StdioOptions::default()
///     .max_in_flight(32)
///     .drain_timeout(Duration::from_secs(2))
///     .principal(Principal("local-user".into()));
/// # let _ = options;
/// ```
#[derive(Debug, Clone)]
pub struct StdioOptions {
    /// Longest line read, in bytes; a longer one is answered with −32600 and skipped.
    /// Default: the server's [`crate::Limits::max_body_bytes`].
    pub max_line_bytes: Option<usize>,
    /// Requests running at once; one more is answered with [`crate::SERVER_BUSY`] at once (the reader
    /// never stops, so that `notifications/cancelled` always gets through). Default 256.
    pub max_in_flight: usize,
    /// Open `subscriptions/listen` streams on this connection. Default 16.
    pub max_subscriptions: usize,
    /// Messages tasks may queue for writing; a full queue makes handlers wait. Default 1024.
    pub output_buffer: usize,
    /// How long requests in flight may take to finish once serving ends. Default 10 s.
    pub drain_timeout: Duration,
    /// The caller every request of this connection acts for (over stdio, typically the local
    /// user who launched the server); `None` by default.
    pub principal: Option<Principal>,
    /// [`crate::serve_stdio`] only: read and write standard input and output on tokio's
    /// blocking pool even when they are pipes or a Unix socket the reactor could serve (see
    /// [`crate::StdioInput`]). For a descriptor another process shares and expects blocking.
    /// Default `false`.
    pub blocking_io: bool,
}

impl Default for StdioOptions {
    fn default() -> Self {
        Self {
            max_line_bytes: None,
            max_in_flight: 256,
            max_subscriptions: 16,
            output_buffer: 1024,
            drain_timeout: Duration::from_secs(10),
            principal: None,
            blocking_io: false,
        }
    }
}

impl StdioOptions {
    /// The longest line read.
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = Some(bytes);
        self
    }

    /// Requests running at once.
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.max_in_flight = requests;
        self
    }

    /// Open `subscriptions/listen` streams.
    pub fn max_subscriptions(mut self, subscriptions: usize) -> Self {
        self.max_subscriptions = subscriptions;
        self
    }

    /// How long requests in flight may take to finish once serving ends.
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// The caller every request acts for.
    pub fn principal(mut self, principal: Principal) -> Self {
        self.principal = Some(principal);
        self
    }

    /// Standard input and output on tokio's blocking pool, never through the reactor
    /// ([`crate::serve_stdio`] only).
    pub fn blocking_io(mut self, blocking: bool) -> Self {
        self.blocking_io = blocking;
        self
    }
}
