//! The connection a client holds: an HTTP endpoint of any era ([`Endpoint`]: 2026-07-28, or the
//! older-era connection its fallback found) or a stdio child ([`StdioTransport`]).
//!
//! It sits above both transports, which sit above the seam they implement
//! (`crate::transport`): a request's response is a [`ResponseStream`] whichever carried it.

use std::process::ExitStatus;

use http::header::{HeaderName, HeaderValue};
use smcp_proto::jsonrpc::Request;

use crate::error::Result;
use crate::legacy::era::Endpoint;
use crate::stdio::StdioTransport;
use crate::transport::ResponseStream;

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
