//! The response body: empty, one JSON document, or an SSE stream fed by a channel.
//!
//! The SSE variant owns the request's cancellation guard: when the client closes the stream,
//! hyper drops the body, the guard fires the token, and the handler (running in its own task)
//! sees `RequestContext::is_cancelled()`. Nothing more is written for that request.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;
use tokio_util::sync::DropGuard;

use super::listen_stream::ListenStream;

/// The body of every response the MCP endpoint produces.
#[derive(Debug)]
pub struct McpBody {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Empty,
    Full(Option<Bytes>),
    Stream {
        first: Option<Bytes>,
        rx: mpsc::Receiver<Bytes>,
        _guard: Option<DropGuard>,
    },
    /// A `subscriptions/listen` stream, polled in place (no task of its own).
    Listen(Box<ListenStream>),
}

impl McpBody {
    /// No body (202 Accepted).
    pub fn empty() -> Self {
        Self { kind: Kind::Empty }
    }

    /// A complete body.
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        Self {
            kind: Kind::Full(Some(bytes.into())),
        }
    }

    /// An SSE stream: `first` (if any), then every frame from `rx` until all senders are
    /// gone. Dropping the body drops `guard`, which cancels the request.
    pub(crate) fn stream(
        first: Option<Bytes>,
        rx: mpsc::Receiver<Bytes>,
        guard: Option<DropGuard>,
    ) -> Self {
        Self {
            kind: Kind::Stream {
                first,
                rx,
                _guard: guard,
            },
        }
    }
}

impl McpBody {
    pub(crate) fn listen(stream: Box<ListenStream>) -> Self {
        Self {
            kind: Kind::Listen(stream),
        }
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match &mut self.get_mut().kind {
            Kind::Empty => Poll::Ready(None),
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Stream { first, rx, .. } => {
                if let Some(b) = first.take() {
                    return Poll::Ready(Some(Ok(Frame::data(b))));
                }
                rx.poll_recv(cx)
                    .map(|frame| frame.map(|b| Ok(Frame::data(b))))
            }
            Kind::Listen(stream) => stream
                .poll_frame(cx)
                .map(|frame| frame.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Empty => true,
            Kind::Full(bytes) => bytes.is_none(),
            Kind::Stream { .. } | Kind::Listen(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Empty => SizeHint::with_exact(0),
            Kind::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Kind::Full(None) => SizeHint::with_exact(0),
            Kind::Stream { .. } | Kind::Listen(_) => SizeHint::default(),
        }
    }
}
