//! The revisions served, their configuration, and a server's sessions: the store and the live
//! state of those this instance has seen. A leaf of the legacy module: the server holds it, and
//! the session and round code below read it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use smcp_proto::error::ErrorObject;

use super::live::{FrameFn, Live};
use super::relay::SessionRelay;
use super::store::{MemorySessionStore, SessionRecord, SessionStore};

pub use crate::core::versions::LEGACY_VERSIONS;

/// The revision a client asking for `requested` gets: that one when served, else the newest
/// (the lifecycle's rule: the server answers with another version it supports).
pub(crate) fn negotiate(requested: &str) -> &'static str {
    LEGACY_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LEGACY_VERSIONS[0])
}

/// Settings of the earlier revisions' sessions.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use smcp_server::legacy::LegacyConfig;
///
/// let config = LegacyConfig { max_sessions: 100, idle_timeout: Duration::from_secs(600), ..LegacyConfig::default() };
/// let server = smcp_server::Server::builder("demo", "1.0.0").legacy(config).build()?;
/// # let _ = server;
/// # Ok::<(), smcp_server::BuildError>(())
/// ```
#[derive(Debug, Clone)]
pub struct LegacyConfig {
    /// Serve `initialize` and sessions at all. Default `true`; `false` answers a legacy
    /// `initialize` with −32022 as a 2026-07-28-only server does.
    pub enabled: bool,
    /// Most sessions the default store holds (ignored with [`ServerBuilder::session_store`](crate::ServerBuilder::session_store)). Default 1000.
    pub max_sessions: usize,
    /// A session without a request for this long ends (default store). Default 30 minutes.
    pub idle_timeout: Duration,
    /// Standalone (GET) streams one session may hold open. Default 1.
    pub standalone_streams: usize,
    /// Events kept per session for resumption with `Last-Event-ID`; with a session relay
    /// that shares its log, also the least kept per stream there. Default 256.
    pub replay_events: usize,
    /// Server-to-client requests one session may have waiting for a response. Default 16.
    pub max_pending: usize,
    /// How long the server waits for the response to a server-to-client request. Default
    /// 5 minutes (a person may be answering a form). A request stream resumed on another
    /// instance ends after this long with nothing new (the client may resume it again).
    pub response_timeout: Duration,
    /// Most URIs one session may subscribe to. Default 256.
    pub max_subscriptions: usize,
}

impl Default for LegacyConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            max_sessions: 1000,
            idle_timeout: Duration::from_secs(30 * 60),
            standalone_streams: 1,
            replay_events: 256,
            max_pending: 16,
            response_timeout: Duration::from_secs(5 * 60),
            max_subscriptions: 256,
        }
    }
}

/// The legacy sessions of a server: the store, and the live state of those this instance
/// has seen.
#[derive(Debug)]
pub(crate) struct Legacy {
    pub(crate) config: LegacyConfig,
    pub(crate) store: Arc<dyn SessionStore>,
    /// Where live traffic of sessions held elsewhere goes (`relay.rs`).
    pub(crate) relay: Arc<dyn SessionRelay>,
    live: Mutex<HashMap<String, Arc<Live>>>,
}

impl Legacy {
    pub(crate) fn new(
        config: LegacyConfig,
        store: Option<Arc<dyn SessionStore>>,
        relay: Arc<dyn SessionRelay>,
    ) -> Self {
        let store = store.unwrap_or_else(|| {
            Arc::new(MemorySessionStore::new(
                config.max_sessions,
                config.idle_timeout,
            ))
        });
        Self {
            config,
            store,
            relay,
            live: Mutex::new(HashMap::new()),
        }
    }

    /// The live state of session `id` on this instance, if it has any (no use is counted).
    pub(crate) fn live_of(&self, id: &str) -> Option<Arc<Live>> {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// Sessions with live state on this instance.
    pub(crate) fn live_sessions(&self) -> usize {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The live state of session `record`, made on first use on this instance. Entries idle
    /// for longer than the idle timeout are dropped (their streams and requests stop) when the
    /// map reaches the session bound.
    pub(crate) fn live(&self, record: &SessionRecord, frame: FrameFn) -> Arc<Live> {
        let mut map = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(live) = map.get(&record.id) {
            live.touch();
            return live.clone();
        }
        if map.len() >= self.config.max_sessions {
            let idle = self.config.idle_timeout;
            map.retain(|_, live| {
                let keep = live.last_used().elapsed() < idle;
                if !keep {
                    live.ended.cancel();
                }
                keep
            });
        }
        let live = Arc::new(
            Live::new(
                record.id.clone(),
                super::request::SessionMeta::new(record),
                frame,
                self.config.replay_events,
                self.config.max_pending,
                record.subscriptions.iter().cloned().collect(),
            )
            .relayed(&self.relay),
        );
        map.insert(record.id.clone(), live.clone());
        live
    }

    /// Ends the live state of session `id`: its requests are cancelled, its streams close.
    pub(crate) fn end_live(&self, id: &str) {
        let live = self
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        if let Some(live) = live {
            live.ended.cancel();
        }
    }
}

/// `{}`-shaped errors of the session layer name what is wrong; this makes one.
pub(super) fn invalid_request(message: impl Into<String>) -> ErrorObject {
    ErrorObject::invalid_request(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_answers_a_known_version_with_itself_and_anything_else_with_the_newest() {
        assert_eq!(negotiate("2025-06-18"), "2025-06-18");
        assert_eq!(negotiate("2025-03-26"), "2025-03-26");
        assert_eq!(negotiate("2025-11-25"), "2025-11-25");
        assert_eq!(negotiate("2024-11-05"), "2025-11-25");
        assert_eq!(negotiate("2099-01-01"), "2025-11-25");
        assert!(!crate::core::versions::is_legacy("2026-07-28"));
    }
}
