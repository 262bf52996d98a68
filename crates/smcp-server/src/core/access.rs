//! The access seam: what a request's credentials allow, checked by dispatch before any
//! handler runs.
//!
//! An authentication layer in front of the server (over HTTP: `smcp_server::auth`, feature
//! `auth`) inserts an [`Access`] next to the [`crate::Principal`]; dispatch asks it about
//! every request (the method, and for `tools/call` the tool) before routing, about every
//! request addressing a tool, prompt or resource that declares scopes of its own, and about
//! every tool before `tools/list` shows it. A refusal is a JSON-RPC error with code
//! [`INSUFFICIENT_SCOPE`] and `data.scope` the scopes the request needs; the HTTP layer
//! answers it with `403`. Nothing here knows about HTTP or OAuth: a policy is any
//! [`AccessPolicy`].

use std::fmt;
use std::sync::Arc;

use serde_json::json;
use smcp_proto::error::ErrorObject;

/// The JSON-RPC error code of a request refused for missing scopes (HTTP `403` with
/// `WWW-Authenticate: Bearer error="insufficient_scope"`). A server-defined code (the
/// JSON-RPC range −32000 to −32099).
pub const INSUFFICIENT_SCOPE: i64 = -32003;

/// Why a request was refused: the scopes it needs (space-separated, RFC 6750 §3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("insufficient scope: this request needs {scope:?}")]
pub struct InsufficientScope {
    /// Every scope the request needs, space-separated (all of them, in one challenge).
    pub scope: String,
}

impl InsufficientScope {
    /// The JSON-RPC error: code [`INSUFFICIENT_SCOPE`], `data.scope`.
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject::new(INSUFFICIENT_SCOPE, self.to_string())
            .with_data(json!({ "scope": self.scope }))
    }

    /// The refusal an error produced by [`InsufficientScope::to_error_object`] carries.
    pub fn from_error_object(error: &ErrorObject) -> Option<Self> {
        if error.code != INSUFFICIENT_SCOPE {
            return None;
        }
        let scope = error.data.as_ref()?.get("scope")?.as_str()?;
        Some(Self {
            scope: scope.to_owned(),
        })
    }
}

/// What a request's credentials allow.
pub trait AccessPolicy: Send + Sync + 'static {
    /// `Ok` when the request may run `method` (and, for `tools/call`, `tool`).
    fn check(&self, method: &str, tool: Option<&str>) -> Result<(), InsufficientScope>;

    /// [`Self::check`] for a request addressing an item that declares scopes of its own
    /// ([`crate::ToolBuilder::scope`], [`crate::PromptBuilder::scope`],
    /// [`crate::ResourceBuilder::scope`]): `Ok` when the credentials also hold every one of
    /// `declared`, otherwise one refusal naming all the scopes the request needs.
    ///
    /// The default cannot know what a token holds, so it refuses any declared scope: a
    /// policy that does not implement this keeps such items closed.
    fn check_declared(
        &self,
        method: &str,
        tool: Option<&str>,
        declared: &[String],
    ) -> Result<(), InsufficientScope> {
        self.check(method, tool)?;
        if declared.is_empty() {
            return Ok(());
        }
        Err(InsufficientScope {
            scope: declared.join(" "),
        })
    }

    /// The access token the request came with, when the authentication layer keeps it for
    /// delegation (`smcp_server::auth::AuthLayerBuilder::keep_token`): the subject token of
    /// an RFC 8693 exchange. `None` by default.
    fn subject_token(&self) -> Option<&str> {
        None
    }

    /// Whether `tools/list` shows `tool`, which declares the scopes `declared` (by default
    /// every tool is shown).
    fn shows_tool(&self, tool: &str, declared: &[String]) -> bool {
        let _ = (tool, declared);
        true
    }
}

/// Adds `scope` to an item's declared scopes, once.
pub(crate) fn declare(scopes: &mut Vec<String>, scope: String) {
    if !scopes.contains(&scope) {
        scopes.push(scope);
    }
}

/// Dispatch's check of a request addressing an item that declares scopes: nothing to do
/// without an [`Access`] or without declared scopes; otherwise the refusal as the JSON-RPC
/// error the HTTP layer answers with `403`.
pub(crate) fn check_declared(
    access: Option<&Access>,
    method: &str,
    tool: Option<&str>,
    declared: &[String],
) -> Result<(), ErrorObject> {
    match access {
        Some(access) if !declared.is_empty() => access
            .0
            .check_declared(method, tool, declared)
            .map_err(|refusal| {
                tracing::debug!(method, tool, needed = %refusal.scope, "insufficient scope");
                refusal.to_error_object()
            }),
        _ => Ok(()),
    }
}

/// A request's [`AccessPolicy`], as a request extension (over HTTP) and on the request
/// context. Cheap to clone.
#[derive(Clone)]
pub struct Access(pub Arc<dyn AccessPolicy>);

impl fmt::Debug for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Access(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_round_trips_through_its_error_object() {
        let refusal = InsufficientScope {
            scope: "files:write tools:admin".to_owned(),
        };
        let error = refusal.to_error_object();
        assert_eq!(error.code, INSUFFICIENT_SCOPE);
        assert_eq!(InsufficientScope::from_error_object(&error), Some(refusal));
        assert_eq!(
            InsufficientScope::from_error_object(&ErrorObject::internal("x")),
            None
        );
    }
}
