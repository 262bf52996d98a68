//! An HTTP response as the request path reads it, from either way of sending: reqwest
//! (`gate.rs`) or the direct `http://` path (`direct.rs`).

use bytes::Bytes;
use futures_util::future::Either;
use futures_util::{Stream, StreamExt};
use http::{Extensions, HeaderMap};
use http_body_util::BodyExt;

use super::direct_error::DirectError;
use crate::error::{Error, Kind, Result};

/// A response: its head, and its body read as chunks.
#[derive(Debug)]
pub(crate) enum HttpReply {
    /// Sent through reqwest.
    Reqwest(reqwest::Response),
    /// Sent on the direct path.
    Direct(http::Response<hyper::body::Incoming>),
}

impl From<reqwest::Response> for HttpReply {
    fn from(response: reqwest::Response) -> Self {
        Self::Reqwest(response)
    }
}

impl HttpReply {
    /// The status code.
    pub(crate) fn status(&self) -> u16 {
        match self {
            Self::Reqwest(r) => r.status().as_u16(),
            Self::Direct(r) => r.status().as_u16(),
        }
    }

    /// The headers.
    pub(crate) fn headers(&self) -> &HeaderMap {
        match self {
            Self::Reqwest(r) => r.headers(),
            Self::Direct(r) => r.headers(),
        }
    }

    /// The extensions (where a wire tap leaves its exchange: `crate::wire`).
    pub(crate) fn extensions(&self) -> &Extensions {
        match self {
            Self::Reqwest(r) => r.extensions(),
            Self::Direct(r) => r.extensions(),
        }
    }

    /// The body's chunks as they arrive; a failure to read is a transport error.
    pub(crate) fn chunks(self) -> impl Stream<Item = Result<Bytes>> + Send + 'static {
        match self {
            Self::Reqwest(r) => Either::Left(
                r.bytes_stream()
                    .map(|c| c.map_err(|e| Error::new(Kind::Transport(e)))),
            ),
            Self::Direct(r) => Either::Right(
                r.into_body()
                    .into_data_stream()
                    .map(|c| c.map_err(|e| Error::new(Kind::Direct(DirectError::Body(e))))),
            ),
        }
    }
}
