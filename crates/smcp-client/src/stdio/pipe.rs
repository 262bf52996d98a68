//! The running child as a request sees it: the demultiplexer that routes its stdout, and the
//! queue of lines for its stdin. A request is written as one line and gets the stream its
//! messages are routed to.

use std::sync::Arc;

use serde_json::Value;
use smcp_proto::jsonrpc::{Message, Request, RequestId};
use smcp_proto::meta;
use tokio::sync::mpsc;

use super::demux::{Ended, Shared};
use super::stream::StdioStream;
use crate::error::{Error, Kind, Result};

/// The two ends of a stdio connection that requests use. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Pipe {
    /// The requests in flight and the routing of the server's stdout.
    pub(crate) shared: Arc<Shared>,
    /// Lines for the child's stdin.
    pub(crate) writer: mpsc::Sender<Vec<u8>>,
}

impl Pipe {
    /// Writes `request` as one line and returns the stream its messages are routed to (log
    /// lines too when it asks for them in `_meta`).
    pub(crate) async fn send(&self, request: &Request) -> Result<StdioStream> {
        self.send_routed(request, wants_log(request)).await
    }

    /// [`send`](Self::send), with whether log lines go to this request.
    pub(crate) async fn send_routed(
        &self,
        request: &Request,
        wants_log: bool,
    ) -> Result<StdioStream> {
        let line = encode(request)?;
        let params_meta = request
            .params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object);
        let progress_token = params_meta
            .and_then(|m| m.get(meta::PROGRESS_TOKEN))
            .and_then(RequestId::from_value);
        let registration = self
            .shared
            .register(&request.id, progress_token, wants_log)?;
        let mut stream = StdioStream::new(
            request.id.clone(),
            Arc::clone(&self.shared),
            self.writer.clone(),
            registration,
        );
        if self.writer.send(line).await.is_err() {
            // The error for a connection whose writer is gone.
            return Err(self.shared.ended().map_or_else(
                || Error::new(Kind::ServerExited { status: None }),
                Ended::error,
            ));
        }
        stream.mark_sent();
        Ok(stream)
    }

    /// Writes a notification or a response as one line.
    pub(crate) async fn write(&self, message: &Message) -> Result<()> {
        write_message(&self.writer, message).await
    }
}

/// Writes a notification or a response as one line on `writer` (for a task that holds only
/// the writer, not the routing table).
pub(crate) async fn write_message(writer: &mpsc::Sender<Vec<u8>>, message: &Message) -> Result<()> {
    let mut line = message.to_vec();
    line.push(b'\n');
    if writer.send(line).await.is_err() {
        return Err(Error::new(Kind::ServerExited { status: None }));
    }
    Ok(())
}

/// Whether a request asks for log lines (`_meta` log level).
pub(crate) fn wants_log(request: &Request) -> bool {
    request
        .params
        .as_ref()
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|m| m.contains_key(meta::LOG_LEVEL))
}

/// Serializes a request as one line: compact JSON has no raw newline (newlines inside strings
/// are escaped), which is checked anyway since one would desynchronise the stream.
fn encode(request: &Request) -> Result<Vec<u8>> {
    let mut line = serde_json::to_vec(request)
        .map_err(|e| Error::config(format!("cannot serialize the request: {e}")))?;
    if line.contains(&b'\n') {
        return Err(Error::protocol(
            "a serialized request contains a raw newline",
        ));
    }
    line.push(b'\n');
    Ok(line)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_request_is_one_line() {
        let request = Request {
            id: RequestId::from(7),
            method: "tools/call".to_owned(),
            params: Some(serde_json::json!({"name": "echo", "arguments": {"text": "a\nb\r\nc"}})),
        };
        let line = encode(&request).unwrap();
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        assert_eq!(line.last(), Some(&b'\n'));
        let back: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(back["params"]["arguments"]["text"], "a\nb\r\nc");
    }
}
