//! The seam every request goes through, below the transports that implement it: a request's
//! response is a [`ResponseStream`] of JSON-RPC messages, whatever carried it (a Streamable
//! HTTP POST ([`http`]), a stateful session of an older revision (`crate::legacy`), or a stdio
//! child (`crate::stdio`)).
//!
//! The request path in `client.rs` (version renegotiation, MRTR rounds, listen) sees only
//! `Transport::send` (`crate::connection`) and [`ResponseStream::next_message`], so it is the
//! same for every transport and era. This module names none of them: each implements
//! [`MessageStream`] for its own streams, so the arrows point from the transports down to here.

pub(crate) mod direct;
pub(crate) mod direct_error;
#[cfg(test)]
mod direct_tests;
pub(crate) mod gate;
pub(crate) mod http;
pub(crate) mod http_client;
pub(crate) mod reply;

use futures_util::future::BoxFuture;
use smcp_proto::jsonrpc::{Message, RawResult};

use crate::error::Result;

/// A message as the client reads it from the server: a result response's `result` kept as its
/// text, decoded once into the type its caller asks for ([`Message::from_slice_raw`]).
pub(crate) type Inbound = Message<RawResult>;

/// One request's response as a transport produces it.
pub(crate) trait MessageStream: std::fmt::Debug + Send {
    /// The next JSON-RPC message; `Ok(None)` when the stream ended.
    fn next_message(&mut self) -> BoxFuture<'_, Result<Option<Inbound>>>;

    /// The HTTP status that carried a JSON-RPC error read from this stream (`None` on stdio).
    fn rpc_status(&self) -> Option<u16>;
}

/// The messages of one request's response.
#[derive(Debug)]
pub(crate) struct ResponseStream(Box<dyn MessageStream>);

impl ResponseStream {
    /// The response read from `stream`.
    pub(crate) fn new(stream: impl MessageStream + 'static) -> Self {
        Self(Box::new(stream))
    }

    /// The next JSON-RPC message; `Ok(None)` when the stream ended.
    pub(crate) async fn next_message(&mut self) -> Result<Option<Inbound>> {
        self.0.next_message().await
    }

    /// The HTTP status that carried a JSON-RPC error read from this stream (`None` on stdio).
    pub(crate) fn rpc_status(&self) -> Option<u16> {
        self.0.rpc_status()
    }
}
