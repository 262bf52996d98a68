//! The gateway's errors: [`GatewayError`] when it cannot start, and how an upstream call's
//! failure reaches the client ([`call_error`]).

use smcp_client::ErrorKind;
use smcp_proto::error::ErrorObject;
use smcp_server::HandlerError;

use crate::config::ConfigError;

/// Why the gateway did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// The configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A variable the configuration names is not set (its value is never shown).
    #[error("upstream {upstream:?}: the environment variable {variable} is not set")]
    MissingEnv {
        /// The upstream.
        upstream: String,
        /// The variable.
        variable: String,
    },
    /// The upstream client could not be built from its configuration.
    #[error("upstream {upstream:?}: {source}")]
    Client {
        /// The upstream.
        upstream: String,
        /// Why.
        source: smcp_client::Error,
    },
    /// The token exchange of an upstream could not be set up.
    #[error("upstream {upstream:?}: token exchange: {message}")]
    TokenExchange {
        /// The upstream.
        upstream: String,
        /// Why.
        message: String,
    },
    /// Two upstreams offer the same name after their prefixes.
    #[error(
        "the {kind} {name:?} is offered by upstream {first:?} and by upstream {second:?}; {}",
        way_out(kind)
    )]
    Collision {
        /// `tool`, `prompt`, `resource` or `resource template`.
        kind: &'static str,
        /// The name as the gateway would serve it, or the URI.
        name: String,
        /// The upstream listed first.
        first: String,
        /// The other.
        second: String,
    },
}

/// How a collision of `kind` is resolved in the configuration.
fn way_out(kind: &str) -> &'static str {
    match kind {
        "tool" => "give one of them another prefix, or leave it out of one (tools.deny)",
        "prompt" => "give one of them another prefix, or leave it out of one (prompts.deny)",
        _ => "URIs are not renamed: leave it out of one (resources.deny)",
    }
}

/// Whether a failed call means the upstream itself is gone (its process exited, its endpoint
/// refuses), so that it is marked unhealthy and, for stdio, started again.
pub(crate) fn upstream_is_down(error: &smcp_client::Error) -> bool {
    matches!(
        error.kind(),
        ErrorKind::ServerExited
            | ErrorKind::Closed
            | ErrorKind::Spawn
            | ErrorKind::ConnectionRefused
            | ErrorKind::ConnectTimeout
            | ErrorKind::StreamBroken
            | ErrorKind::ProtocolViolation
    )
}

/// The client's view of an upstream call that failed: the upstream's own JSON-RPC error as it
/// sent it; a cancellation as a failed call; anything else a −32603 naming the upstream and
/// what went wrong.
pub(crate) fn call_error(upstream: &str, error: &smcp_client::Error) -> HandlerError {
    if let Some(object) = error.jsonrpc_error() {
        return HandlerError::Rpc(object.clone());
    }
    if error.is_cancelled() {
        return HandlerError::failed("the request was cancelled");
    }
    let what = match error.kind() {
        ErrorKind::Timeout => "did not answer in time".to_owned(),
        ErrorKind::ServerExited => match error.exit_status() {
            Some(status) => {
                format!("exited during the call ({status}); it is being started again")
            }
            None => "exited during the call; it is being started again".to_owned(),
        },
        ErrorKind::ProtocolViolation => format!("broke the protocol: {error}"),
        _ => error.to_string(),
    };
    HandlerError::Rpc(ErrorObject::internal(format!(
        "upstream {upstream:?} {what}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collision_names_both_upstreams_and_the_way_out() {
        let e = GatewayError::Collision {
            kind: "tool",
            name: "a_b".to_owned(),
            first: "a".to_owned(),
            second: "a_".to_owned(),
        };
        let text = e.to_string();
        assert!(text.contains("\"a_b\"") && text.contains("\"a\"") && text.contains("\"a_\""));
        assert!(text.contains("tools.deny"), "{text}");
        let e = GatewayError::Collision {
            kind: "resource",
            name: "file:///x".to_owned(),
            first: "a".to_owned(),
            second: "b".to_owned(),
        };
        assert!(e.to_string().contains("resources.deny"), "{e}");
    }
}
