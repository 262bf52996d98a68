//! Where legacy sessions live: the serializable [`SessionRecord`] behind the [`SessionStore`]
//! trait, and [`MemorySessionStore`], the in-memory default (bounded count, idle timeout).
//!
//! Only the record is stored. What cannot be serialized (open SSE streams, server-to-client
//! requests waiting for their response, requests in flight) stays on the instance that holds
//! it; the traffic that must reach it goes through the session relay (`relay.rs`), and
//! `docs/sessions.md` says what a load balancer must do about it.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smcp_proto::basic::LoggingLevel;
use tokio::time::Instant;

use crate::core::tools::BoxFuture;

/// One session of an earlier protocol revision, as stored: everything a later request of the
/// session needs, on any instance that shares the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// The `Mcp-Session-Id` the server minted.
    pub id: String,
    /// The negotiated revision, e.g. `"2025-11-25"`.
    pub protocol_version: String,
    /// `capabilities` of the client's `initialize`.
    pub client_capabilities: Map<String, Value>,
    /// `clientInfo` of the client's `initialize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<Value>,
    /// Whether the client sent `notifications/initialized`.
    pub initialized: bool,
    /// The level set with `logging/setLevel` (no log messages before one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_level: Option<LoggingLevel>,
    /// URIs subscribed with `resources/subscribe`.
    #[serde(default)]
    pub subscriptions: BTreeSet<String>,
    /// The authenticated caller that created the session, if any: later requests must act
    /// for the same one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
}

/// Why a store could not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// The store holds its maximum number of sessions.
    #[error("the server holds its maximum of {max} sessions")]
    Full {
        /// The bound.
        max: usize,
    },
    /// No such session (never minted, ended, or idle for too long).
    #[error("session not found")]
    NotFound,
    /// The store itself failed (a networked store's connection, say).
    #[error("session store failed: {0}")]
    Store(String),
}

/// Session records, shared by every instance that serves the same sessions.
///
/// Object safe; every call is asynchronous so that a networked store (Redis, a later issue)
/// fits behind it. Reading a record counts as use: a store with an idle timeout restarts it.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use smcp_server::legacy::{MemorySessionStore, SessionStore};
///
/// let store = MemorySessionStore::new(1_000, Duration::from_secs(30 * 60));
/// # let _: &dyn SessionStore = &store;
/// let server = smcp_server::Server::builder("demo", "1.0.0")
///     .session_store(store)
///     .build()?;
/// # let _ = server;
/// # Ok::<(), smcp_server::BuildError>(())
/// ```
pub trait SessionStore: Send + Sync + fmt::Debug + 'static {
    /// Stores a new record. [`SessionError::Full`] when the store is at its bound.
    fn create(&self, record: SessionRecord) -> BoxFuture<Result<(), SessionError>>;
    /// The record of session `id`, or `None`. Shared: every request of a session reads it,
    /// and a store that keeps records in memory hands out the one it holds.
    fn get(&self, id: &str) -> BoxFuture<Result<Option<Arc<SessionRecord>>, SessionError>>;
    /// Replaces the record of an existing session ([`SessionError::NotFound`] when it ended).
    fn put(&self, record: SessionRecord) -> BoxFuture<Result<(), SessionError>>;
    /// Ends session `id`; `true` when it existed.
    fn remove(&self, id: &str) -> BoxFuture<Result<bool, SessionError>>;
}

/// The in-memory [`SessionStore`]: at most `max` sessions, each ended after `idle` without a
/// request. Expired sessions are dropped when met and before a new one is counted.
#[derive(Debug)]
pub struct MemorySessionStore {
    max: usize,
    idle: Duration,
    sessions: Mutex<HashMap<String, (Arc<SessionRecord>, Instant)>>,
}

impl MemorySessionStore {
    /// A store of at most `max` sessions that ends a session after `idle` without use.
    pub fn new(max: usize, idle: Duration) -> Self {
        Self {
            max,
            idle,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// Sessions held now (expired ones included until they are met).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the store holds no session.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Arc<SessionRecord>, Instant)>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn create_now(&self, record: SessionRecord) -> Result<(), SessionError> {
        let now = Instant::now();
        let mut sessions = self.lock();
        if sessions.len() >= self.max {
            let idle = self.idle;
            sessions.retain(|_, (_, used)| now.duration_since(*used) < idle);
        }
        if sessions.len() >= self.max {
            return Err(SessionError::Full { max: self.max });
        }
        sessions.insert(record.id.clone(), (Arc::new(record), now));
        Ok(())
    }

    fn get_now(&self, id: &str) -> Option<Arc<SessionRecord>> {
        let now = Instant::now();
        let mut sessions = self.lock();
        let (record, used) = sessions.get_mut(id)?;
        if now.duration_since(*used) >= self.idle {
            sessions.remove(id);
            return None;
        }
        *used = now;
        Some(Arc::clone(record))
    }

    fn put_now(&self, record: SessionRecord) -> Result<(), SessionError> {
        let now = Instant::now();
        let mut sessions = self.lock();
        match sessions.get_mut(&record.id) {
            Some(entry) if now.duration_since(entry.1) < self.idle => {
                *entry = (Arc::new(record), now);
                Ok(())
            }
            Some(_) => {
                sessions.remove(&record.id);
                Err(SessionError::NotFound)
            }
            None => Err(SessionError::NotFound),
        }
    }
}

impl SessionStore for MemorySessionStore {
    fn create(&self, record: SessionRecord) -> BoxFuture<Result<(), SessionError>> {
        Box::pin(std::future::ready(self.create_now(record)))
    }

    fn get(&self, id: &str) -> BoxFuture<Result<Option<Arc<SessionRecord>>, SessionError>> {
        Box::pin(std::future::ready(Ok(self.get_now(id))))
    }

    fn put(&self, record: SessionRecord) -> BoxFuture<Result<(), SessionError>> {
        Box::pin(std::future::ready(self.put_now(record)))
    }

    fn remove(&self, id: &str) -> BoxFuture<Result<bool, SessionError>> {
        Box::pin(std::future::ready(Ok(self.lock().remove(id).is_some())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str) -> SessionRecord {
        SessionRecord {
            id: id.to_owned(),
            protocol_version: "2025-11-25".to_owned(),
            client_capabilities: Map::new(),
            client_info: None,
            initialized: false,
            log_level: None,
            subscriptions: BTreeSet::new(),
            principal: None,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn bounded_count_and_idle_timeout() {
        let store = MemorySessionStore::new(2, Duration::from_secs(10));
        store.create(record("a")).await.unwrap();
        store.create(record("b")).await.unwrap();
        assert_eq!(
            store.create(record("c")).await,
            Err(SessionError::Full { max: 2 })
        );
        tokio::time::advance(Duration::from_secs(6)).await;
        // Use keeps "a" alive; "b" idles out.
        assert!(store.get("a").await.unwrap().is_some());
        tokio::time::advance(Duration::from_secs(6)).await;
        store.create(record("c")).await.unwrap();
        assert!(store.get("b").await.unwrap().is_none());
        assert!(store.get("a").await.unwrap().is_some());
        let mut a = record("a");
        a.initialized = true;
        store.put(a.clone()).await.unwrap();
        assert_eq!(store.get("a").await.unwrap(), Some(Arc::new(a)));
        assert!(store.remove("a").await.unwrap());
        assert!(!store.remove("a").await.unwrap());
        assert_eq!(store.put(record("a")).await, Err(SessionError::NotFound));
    }

    #[test]
    fn a_record_round_trips_through_json() {
        let mut r = record("x");
        r.log_level = Some(LoggingLevel::Info);
        r.subscriptions.insert("test://a".to_owned());
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<SessionRecord>(&json).unwrap(), r);
    }
}
