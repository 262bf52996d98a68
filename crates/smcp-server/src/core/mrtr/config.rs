//! How the server runs multi-round tool requests: keys, state lifetime and size, the round cap.

use std::time::Duration;

use crate::core::keys::{Clock, KeyRing};

/// Settings of multi round-trip requests.
///
/// # Examples
///
/// See [`ServerBuilder::mrtr`](crate::ServerBuilder::mrtr).
#[derive(Clone)]
pub struct MrtrConfig {
    /// Keys that seal and open `requestState`. Share them between instances.
    pub keys: KeyRing,
    /// How long a `requestState` stays valid. Default 10 minutes: long enough for a person to
    /// answer a form, short enough to bound replay.
    pub state_ttl: Duration,
    /// Largest `requestState` accepted or produced, in bytes. Default 64 KiB.
    pub max_state_bytes: usize,
    /// Most `InputRequiredResult`s one logical request may produce. Default 16.
    pub max_rounds: u32,
    /// The clock.
    pub clock: Clock,
}

impl std::fmt::Debug for MrtrConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MrtrConfig")
            .field("keys", &self.keys)
            .field("state_ttl", &self.state_ttl)
            .field("max_state_bytes", &self.max_state_bytes)
            .field("max_rounds", &self.max_rounds)
            .finish_non_exhaustive()
    }
}

impl MrtrConfig {
    /// Defaults with this key ring.
    pub fn new(keys: KeyRing) -> Self {
        Self {
            keys,
            state_ttl: Duration::from_secs(600),
            max_state_bytes: 64 * 1024,
            max_rounds: 16,
            clock: crate::core::keys::system_clock(),
        }
    }
}
