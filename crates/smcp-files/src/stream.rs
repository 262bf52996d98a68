//! [`ByteStream`]: how file bytes travel between a store and a handler.

use std::pin::Pin;

use bytes::Bytes;
use futures_util::Stream;

/// A stream of file bytes.
pub type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, std::io::Error>> + Send>>;
