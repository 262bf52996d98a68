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
mod config;
mod digest;
mod input;
mod replay;
pub(crate) mod seal;

pub use crate::core::handler::InputRequired;
pub use crate::core::keys::{Clock, Key, KeyError, KeyRing};
pub use ask::{
    Ask, AskSet, Elicit, Elicited, Roots, Sample, accepts, elicit, elicit_form, elicit_url,
    list_roots, sample,
};
#[cfg(feature = "schemars")]
pub use ask::{ElicitTyped, elicit_typed};
pub use config::MrtrConfig;
pub(crate) use input::state_error;
pub(crate) use input::{Binding, Salient};
pub use input::{HeldInput, Input};
pub use replay::{DEFAULT_REPLAY_CAPACITY, MemoryReplayGuard, Redeem, ReplayGuard};
pub use seal::StateError;
