//! Reading the response to one request off a [`ResponseStream`]: shared by the request path
//! of `Client` and by the handshakes of the legacy and stdio transports, so it sits below
//! all of them.

use serde_json::Value;
use serde_json::value::RawValue;
use smcp_proto::jsonrpc::{Message, Notification, RawResult, RequestId};

use crate::error::{Error, Kind, Result};
use crate::transport::ResponseStream;

/// Receives the notifications that arrive on a request's response stream.
pub(crate) type Sink<'a> = &'a mut (dyn FnMut(Notification) + Send);

/// A result's text as a [`Value`], for the readers that work on one (the handshakes of the
/// older revisions and their own requests).
pub(crate) fn value_of(result: &RawValue) -> Result<Value> {
    serde_json::from_str(result.get())
        .map_err(|e| Error::protocol(format!("the result is not valid JSON: {e}")))
}

/// Reads messages until the response to `id`, passing notifications to `sink`; its result as
/// sent, for the caller to decode into its type ([`crate::client::decode`]).
pub(crate) async fn read_response(
    stream: &mut ResponseStream,
    id: &RequestId,
    sink: Sink<'_>,
) -> Result<RawResult> {
    loop {
        match stream.next_message().await? {
            None => return Err(Error::new(Kind::StreamBroken)),
            Some(Message::Notification(n)) => sink(n),
            Some(Message::Request(r)) => {
                return Err(Error::protocol(format!(
                    "the server sent a JSON-RPC request ({:?}) on a response stream; servers \
                     must use InputRequiredResult instead",
                    r.method
                )));
            }
            Some(Message::Result(r)) if &r.id == id => return Ok(r.result),
            Some(Message::Result(r)) => {
                return Err(Error::protocol(format!(
                    "response id {} does not match request id {id}",
                    r.id
                )));
            }
            Some(Message::Error(e)) if e.id.is_none() || e.id.as_ref() == Some(id) => {
                return Err(Error::new(Kind::Rpc {
                    status: stream.rpc_status(),
                    error: e.error,
                }));
            }
            Some(Message::Error(e)) => {
                return Err(Error::protocol(format!(
                    "error response id {} does not match request id {id}",
                    e.id.map(|i| i.to_string()).unwrap_or_default()
                )));
            }
        }
    }
}
