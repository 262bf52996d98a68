//! What the older-era connections share and the client sees of them: the [`Era`], the
//! [`SessionInfo`] of `initialize`, and the [`LegacyConfig`] every connection is made with.
//! A leaf: the HTTP session, HTTP+SSE, the stdio session and the era detection all name these.

use serde_json::{Value, json};
use smcp_proto::basic::Implementation;

use crate::mrtr::{HandlerBox, InputKinds};

/// The era of protocol a client speaks with its server.
///
/// # Examples
///
/// ```
/// use smcp_client::{Client, Era};
///
/// let client = Client::builder("http://127.0.0.1:8931/mcp").build()?;
/// assert_eq!(client.era(), None); // nothing sent yet
/// # Ok::<(), smcp_client::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// MCP 2026-07-28: stateless, every request self-describing (stdio, or Streamable HTTP).
    Stateless,
    /// MCP 2025-03-26 to 2025-11-25: `initialize`, then a session (`Mcp-Session-Id`).
    Session,
    /// MCP 2024-11-05 HTTP+SSE: a GET event stream and a POST endpoint it names.
    HttpSse,
}

/// What an older-era connection needs from the client configuration.
#[derive(Debug, Clone)]
pub(crate) struct LegacyConfig {
    pub(crate) client_info: Option<Implementation>,
    pub(crate) handler: Option<HandlerBox>,
}

impl LegacyConfig {
    pub(crate) fn kinds(&self) -> InputKinds {
        self.handler
            .as_ref()
            .map(|h| h.0.kinds())
            .unwrap_or_default()
    }
}

/// What the server said in `initialize`, with the era.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
/// client.list_tools().await?;
/// if let Some(info) = client.session_info().await {
///     println!("MCP {} ({:?}): {:?}", info.protocol_version, info.era, info.server_info);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionInfo {
    /// The negotiated version (e.g. `2025-11-25`).
    pub protocol_version: String,
    /// [`Era::Session`] or [`Era::HttpSse`].
    pub era: Era,
    /// `serverInfo`, as sent.
    pub server_info: Value,
    /// `capabilities`, as sent.
    pub capabilities: Value,
    /// `instructions`, if any.
    pub instructions: Option<String>,
    /// The `Mcp-Session-Id` the server assigned (none over HTTP+SSE, or when it sent none).
    pub session_id: Option<String>,
}

impl SessionInfo {
    pub(crate) fn from_result(era: Era, version: &str, result: &Value) -> Self {
        Self {
            protocol_version: version.to_owned(),
            era,
            server_info: result.get("serverInfo").cloned().unwrap_or(Value::Null),
            capabilities: result.get("capabilities").cloned().unwrap_or(json!({})),
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
            session_id: None,
        }
    }
}
