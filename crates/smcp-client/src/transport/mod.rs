//! The two ways a request reaches a server: Streamable HTTP ([`http`]) and stdio
//! ([`crate::stdio`]).
//!
//! The request path in `client.rs` (version renegotiation, MRTR rounds, listen) sees only
//! [`Transport::send`] and [`ResponseStream::next_message`], so it is the same for both.

pub(crate) mod gate;
pub(crate) mod http;

use std::process::ExitStatus;

use ::http::header::{HeaderName, HeaderValue};
use smcp_proto::jsonrpc::{Message, Request};

use self::http::HttpStream;
use crate::error::Result;
use crate::legacy::era::Endpoint;
use crate::legacy::sse::ChannelStream;
use crate::legacy::stream::{ListenStream, SessionStream};
use crate::stdio::{StdioStream, StdioTransport};

/// Where requests go.
#[derive(Debug)]
pub(crate) enum Transport {
    /// One POST per request (2026-07-28), or an older-era connection found by the fallback.
    Http(Endpoint),
    /// Newline-delimited JSON-RPC over a child process's stdin/stdout.
    Stdio(StdioTransport),
}

impl Transport {
    /// The endpoint URL, or `stdio:` and the command line.
    pub(crate) fn url(&self) -> &str {
        match self {
            Self::Http(t) => t.url(),
            Self::Stdio(t) => t.display(),
        }
    }

    /// Whether requests carry HTTP headers (`Mcp-*`, `MCP-Protocol-Version`).
    pub(crate) fn is_http(&self) -> bool {
        matches!(self, Self::Http(_))
    }

    /// Sends `request` and returns the stream of its response. `headers` are the MCP headers
    /// (empty over stdio, where everything is inline in `_meta`).
    pub(crate) async fn send(
        &self,
        request: &Request,
        headers: Vec<(HeaderName, HeaderValue)>,
    ) -> Result<ResponseStream> {
        match self {
            Self::Http(t) => t.send(request, headers).await,
            Self::Stdio(t) => t.send(request).await,
        }
    }

    /// Ends a stdio connection or an HTTP session (see [`crate::Client::close`]).
    pub(crate) async fn close(&self) -> Option<ExitStatus> {
        match self {
            Self::Http(t) => {
                t.close().await;
                None
            }
            Self::Stdio(t) => t.close().await,
        }
    }
}

/// The messages of one request's response.
#[derive(Debug)]
pub(crate) enum ResponseStream {
    /// A JSON body or an SSE stream.
    Http(HttpStream),
    /// A response in a stateful session (server requests answered, resumption).
    Legacy(SessionStream),
    /// `subscriptions/listen` mapped onto a session's GET stream.
    Listen(ListenStream),
    /// A response routed from a 2024-11-05 HTTP+SSE stream.
    Channel(ChannelStream),
    /// The messages the stdio demultiplexer routed to this request.
    Stdio(StdioStream),
}

impl ResponseStream {
    /// The next JSON-RPC message; `Ok(None)` when the stream ended.
    pub(crate) async fn next_message(&mut self) -> Result<Option<Message>> {
        match self {
            Self::Http(s) => s.next_message().await,
            Self::Legacy(s) => s.next_message().await,
            Self::Listen(s) => s.next_message().await,
            Self::Channel(s) => s.next_message().await,
            Self::Stdio(s) => s.next_message().await,
        }
    }

    /// The HTTP status that carried a JSON-RPC error read from this stream (`None` on stdio).
    pub(crate) fn rpc_status(&self) -> Option<u16> {
        match self {
            Self::Http(_) | Self::Legacy(_) | Self::Listen(_) | Self::Channel(_) => Some(200),
            Self::Stdio(_) => None,
        }
    }
}
