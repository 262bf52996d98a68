//! The shared [`Redis`] handle: the client, the command connection, the key prefix, the
//! instance id and the time bounds.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

/// Why a Redis operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedisError {
    /// The URL could not be parsed (its text is not repeated: it may hold a password).
    #[error("invalid Redis URL: {0}")]
    Url(String),
    /// Redis did not answer within the command timeout.
    #[error("Redis did not answer within {0:?}")]
    Timeout(Duration),
    /// Redis answered with an error, or the connection failed.
    #[error("Redis: {0}")]
    Command(String),
    /// A stored value was not what this version writes.
    #[error("unexpected value in Redis key {key}: {reason}")]
    Corrupt {
        /// The key.
        key: String,
        /// What was wrong.
        reason: String,
    },
}

impl From<redis::RedisError> for RedisError {
    fn from(e: redis::RedisError) -> Self {
        // The error's text never holds the URL or its password.
        Self::Command(e.to_string())
    }
}

/// One process's link to Redis, shared by the bus, the replay guard, the session store and
/// the catalog. Cheap to clone.
#[derive(Clone)]
pub struct Redis {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) client: redis::Client,
    pub(crate) conn: ConnectionManager,
    pub(crate) prefix: String,
    pub(crate) instance: String,
    pub(crate) timeout: Duration,
    pub(crate) backoff: (Duration, Duration),
    pub(crate) ping_every: Duration,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis")
            .field("prefix", &self.inner.prefix)
            .field("instance", &self.inner.instance)
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Redis`] handle.
#[derive(Debug)]
pub struct RedisBuilder {
    url: String,
    prefix: String,
    timeout: Duration,
    backoff: (Duration, Duration),
    ping_every: Duration,
}

/// How long a command may take before it fails.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// How often the bus pings its subscriber connection and re-reads the shared catalog's
/// revision, unless [`RedisBuilder::ping_every`] says otherwise.
pub const DEFAULT_PING_EVERY: Duration = Duration::from_secs(5);

impl Redis {
    /// A builder for the server at `url` (`redis://[user:password@]host:port/[db]`, or
    /// `rediss://` for TLS where the `redis` crate supports it).
    pub fn builder(url: impl Into<String>) -> RedisBuilder {
        RedisBuilder {
            url: url.into(),
            prefix: "smcp:".to_owned(),
            timeout: DEFAULT_TIMEOUT,
            backoff: (Duration::from_millis(50), Duration::from_secs(2)),
            ping_every: DEFAULT_PING_EVERY,
        }
    }

    /// This process's instance id (random, minted at build): it tags what the bus publishes
    /// so an instance skips its own messages.
    pub fn instance(&self) -> &str {
        &self.inner.instance
    }

    /// `PING`, within the command timeout: what a readiness check asks.
    pub async fn ping(&self) -> Result<(), RedisError> {
        let mut conn = self.inner.conn.clone();
        let pong: String = self
            .bounded(redis::cmd("PING").query_async(&mut conn))
            .await?;
        if pong == "PONG" {
            Ok(())
        } else {
            Err(RedisError::Command(format!("PING answered {pong:?}")))
        }
    }

    /// `key` under this deployment's prefix.
    pub(crate) fn key(&self, key: &str) -> String {
        format!("{}{key}", self.inner.prefix)
    }

    /// The command connection (reconnects by itself after a failure).
    pub(crate) fn conn(&self) -> ConnectionManager {
        self.inner.conn.clone()
    }

    /// Runs `fut` within the command timeout.
    pub(crate) async fn bounded<T>(
        &self,
        fut: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, RedisError> {
        match tokio::time::timeout(self.inner.timeout, fut).await {
            Ok(r) => r.map_err(RedisError::from),
            Err(_) => Err(RedisError::Timeout(self.inner.timeout)),
        }
    }
}

impl RedisBuilder {
    /// Prefix of every key and of the bus channel (default `smcp:`). Instances that serve the
    /// same deployment share it; two deployments on one Redis use different ones.
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long one command may take (default 2 s); also bounds connecting.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The first and the longest delay between reconnection attempts of the bus (default
    /// 50 ms doubling up to 2 s).
    pub fn reconnect_backoff(mut self, first: Duration, max: Duration) -> Self {
        self.backoff = (first, max.max(first));
        self
    }

    /// How often the bus pings its subscriber connection (a half-open connection is noticed
    /// within this plus the command timeout) and re-reads the shared catalog's revision
    /// (default 5 s; at least 10 ms).
    pub fn ping_every(mut self, every: Duration) -> Self {
        self.ping_every = every.max(Duration::from_millis(10));
        self
    }

    /// The handle. Connects lazily: building never waits for Redis, and a Redis that is not
    /// there yet is retried by every use (so an instance may start before Redis does; its
    /// readiness check says when Redis answers).
    pub fn build(self) -> Result<Redis, RedisError> {
        let client = redis::Client::open(self.url.as_str())
            .map_err(|e| RedisError::Url(format!("{:?}", e.kind())))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_min_delay(self.backoff.0)
            .set_max_delay(self.backoff.1)
            .set_number_of_retries(1);
        let conn = client.get_connection_manager_lazy(config)?;
        Ok(Redis {
            inner: Arc::new(Inner {
                client,
                conn,
                prefix: self.prefix,
                instance: random_id()?,
                timeout: self.timeout,
                backoff: self.backoff,
                ping_every: self.ping_every,
            }),
        })
    }
}

/// 16 random bytes as hex.
pub(crate) fn random_id() -> Result<String, RedisError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| RedisError::Command(format!("randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
