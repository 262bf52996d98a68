//! Multi Round-Trip Requests (`basic/patterns/mrtr.mdx`, SEP-2322).
//!
//! A `tools/call`, `resources/read` or `prompts/get` handler that needs the user's answer, an
//! LLM completion or the client's roots asks for it with [`Input::ask`] and returns early with
//! `?`; the framework answers `InputRequiredResult` and the client retries the same request
//! with `inputResponses` and the sealed `requestState`. The handler then runs again **from the
//! top**, and this time `ask` returns the answers.
//!
//! ```no_run
//! use serde_json::json;
//! use smcp_proto::server::tools::CallToolResult;
//! use smcp_server::{mrtr, tool, HandlerError};
//!
//! let delete = tool("delete_files").handler(|call| async move {
//!     let answer = call.input.ask(mrtr::elicit_form(
//!         "confirm",
//!         "Delete the files?",
//!         json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
//!     ))?;
//!     // Only now, after the last question, do anything with side effects.
//!     let ok = answer.content.and_then(|c| c.get("ok").cloned());
//!     Ok::<_, HandlerError>(CallToolResult::text(format!("confirmed: {ok:?}")))
//! });
//! ```
//!
//! What the framework enforces: only those three methods may return `input_required`; a
//! question the client did not declare it can answer on *this* request is never sent (−32021
//! instead); answers are validated against their question (an elicitation answer against its
//! `requestedSchema`) and an invalid or missing one is asked again; unknown extra answers are
//! ignored; `requestState` is sealed with the server's [`KeyRing`] and bound to the method, the salient
//! params, the principal and an expiry; the number of rounds and the state size are capped.
//! For exactly-once effects, a tool can demand single-use state ([`ReplayGuard`]).

mod ask;
mod digest;
mod input;
mod replay;
pub(crate) mod seal;

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use smcp_proto::patterns::mrtr::InputRequest;

pub use crate::core::keys::{Clock, Key, KeyError, KeyRing};
pub use ask::{
    Ask, AskSet, Elicit, Elicited, Roots, Sample, accepts, elicit, elicit_form, elicit_url,
    list_roots, sample,
};
#[cfg(feature = "schemars")]
pub use ask::{ElicitTyped, elicit_typed};
pub(crate) use input::state_error;
pub(crate) use input::{Binding, Salient};
pub use input::{HeldInput, Input};
pub use replay::{DEFAULT_REPLAY_CAPACITY, MemoryReplayGuard, ReplayGuard};
pub use seal::StateError;

use crate::core::handler::HandlerError;

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

/// "I need input before I can finish": what a handler returns (as
/// `HandlerError::InputRequired`) to make the framework answer `InputRequiredResult`.
///
/// [`Input::ask`] builds it for you; build it by hand for full control, e.g. a state-only
/// result that asks the client to retry later (load shedding).
///
/// # Examples
///
/// A load-shedding answer: no question, only state, so the client retries later:
///
/// ```
/// # use smcp_server::prelude::*;
/// use smcp_server::mrtr::InputRequired;
///
/// let busy = tool("report").handler(|call| async move {
///     if call.input.round() == 0 {
///         return Err(HandlerError::from(InputRequired::new().state(&"queued")?));
///     }
///     Ok(CallToolResult::text("report ready"))
/// });
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputRequired {
    pub(crate) requests: Vec<(String, InputRequest)>,
    pub(crate) state: Option<Value>,
}

impl InputRequired {
    /// Nothing requested yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a request under `key`.
    #[must_use]
    pub fn request(mut self, key: impl Into<String>, request: impl Into<InputRequest>) -> Self {
        let key = key.into();
        self.requests.retain(|(k, _)| *k != key);
        self.requests.push((key, request.into()));
        self
    }

    /// The requests, by key, in the order they were added.
    pub fn requests(&self) -> &[(String, InputRequest)] {
        &self.requests
    }

    /// Carries `state` to the retry (sealed).
    pub fn state<T: Serialize>(mut self, state: &T) -> Result<Self, HandlerError> {
        self.state = Some(
            serde_json::to_value(state)
                .map_err(|e| HandlerError::internal(format!("requestState content: {e}")))?,
        );
        Ok(self)
    }
}

impl From<InputRequired> for HandlerError {
    fn from(ir: InputRequired) -> Self {
        Self::InputRequired(Box::new(ir))
    }
}
