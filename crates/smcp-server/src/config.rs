//! Server settings: limits, listen streams and caching hints. Every limit has a safe default.
//!
//! Plain data, read by both layers: the protocol core (page size, caching hints, listen caps)
//! and the HTTP layer (body and header sizes, event buffering).

use std::time::Duration;

pub use smcp_proto::basic::CacheScope;

/// Bounds on what one request may cost.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use smcp_server::{Limits, Server};
///
/// let limits = Limits {
///     max_body_bytes: 1024 * 1024,
///     cancel_grace: Duration::from_secs(1),
///     ..Limits::default()
/// };
/// let server = Server::builder("demo", "1.0.0").limits(limits).build()?;
/// # let _ = server;
/// # Ok::<(), smcp_server::BuildError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest accepted request body, in bytes (413 beyond). Default 4 MiB.
    pub max_body_bytes: usize,
    /// Largest accepted request head (request line + headers), in bytes (431 beyond).
    /// Default 64 KiB. Enforced by [`crate::serve`].
    pub max_header_bytes: usize,
    /// Notifications a handler may queue ahead of a slow reader before `progress()` waits.
    pub event_buffer: usize,
    /// After the client has gone, how long a handler may keep running before it is dropped.
    pub cancel_grace: Duration,
    /// Items per page of the list methods.
    pub page_size: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 4 * 1024 * 1024,
            max_header_bytes: 64 * 1024,
            event_buffer: 32,
            cancel_grace: Duration::from_secs(5),
            page_size: 100,
        }
    }
}

/// Bounds and timing of `subscriptions/listen` streams.
///
/// Every open stream costs one subscription on the change bus, a timer and the connection it
/// holds, so both the total and the per-client-address count are capped. The per-address cap
/// needs the peer address: [`crate::serve`] provides it, as does axum's
/// `ConnectInfo<SocketAddr>`; when neither is present (the service driven in-process) only the
/// total cap applies.
///
/// # Examples
///
/// See [`ServerBuilder::listen`](crate::ServerBuilder::listen).
#[derive(Debug, Clone)]
pub struct ListenConfig {
    /// Comment keep-alive (`:`) after this long without an event, so proxies and clients do
    /// not time out a quiet stream. Default 15 s.
    pub keep_alive: Duration,
    /// Open listen streams on this instance; past it, 503. Default 20,000.
    pub max_streams: usize,
    /// Open listen streams per client IP address; past it, 429. Default 1,000.
    pub max_streams_per_address: usize,
    /// Undelivered `resources/updated` URIs a stream may queue; one more closes the stream
    /// and drops the client's connection (it stopped reading). List-changed events coalesce
    /// and never count. Default 64.
    pub buffer: usize,
    /// URIs in one request's `resourceSubscriptions`; more is −32602. Default 1,000.
    pub max_resource_subscriptions: usize,
}

impl Default for ListenConfig {
    fn default() -> Self {
        Self {
            keep_alive: Duration::from_secs(15),
            max_streams: 20_000,
            max_streams_per_address: 1_000,
            buffer: 64,
            max_resource_subscriptions: 1_000,
        }
    }
}

/// `ttlMs` and `cacheScope` of a cacheable result.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use smcp_server::{CacheHint, CacheScope};
///
/// let hint = CacheHint::new(Duration::from_secs(90), CacheScope::Public);
/// assert_eq!(hint.ttl_ms(), 90_000);
/// assert_eq!(CacheHint::no_cache().ttl_ms(), 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    /// How long the result stays fresh.
    pub ttl: Duration,
    /// Who may cache it.
    pub scope: CacheScope,
}

impl CacheHint {
    /// A hint with this TTL and scope.
    pub const fn new(ttl: Duration, scope: CacheScope) -> Self {
        Self { ttl, scope }
    }

    /// Never fresh: `ttlMs: 0`, private.
    pub const fn no_cache() -> Self {
        Self::new(Duration::ZERO, CacheScope::Private)
    }

    /// `ttlMs`: the TTL in whole milliseconds.
    pub fn ttl_ms(&self) -> u64 {
        u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX)
    }
}

/// Caching hints per cacheable method. Lists default to one minute, private (lists may vary
/// by authorization); reads default to no caching unless the resource sets its own hint.
///
/// # Examples
///
/// See [`ServerBuilder::cache`](crate::ServerBuilder::cache), and
/// [`ResourceBuilder::cache`](crate::ResourceBuilder::cache) for one resource.
#[derive(Debug, Clone)]
pub struct CacheConfig {
    /// `server/discover`.
    pub discover: CacheHint,
    /// `tools/list`.
    pub tools_list: CacheHint,
    /// `prompts/list`.
    pub prompts_list: CacheHint,
    /// `resources/list`.
    pub resources_list: CacheHint,
    /// `resources/templates/list`.
    pub templates_list: CacheHint,
    /// `resources/read`, unless the resource has its own.
    pub resources_read: CacheHint,
}

impl Default for CacheConfig {
    fn default() -> Self {
        let minute = CacheHint::new(Duration::from_secs(60), CacheScope::Private);
        Self {
            discover: minute,
            tools_list: minute,
            prompts_list: minute,
            resources_list: minute,
            templates_list: minute,
            resources_read: CacheHint::no_cache(),
        }
    }
}
