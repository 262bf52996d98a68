//! Reading the response to one request off a [`ResponseStream`]: shared by the request path
//! of `Client` and by the handshakes of the legacy and stdio transports, so it sits below
//! all of them.

use serde_json::Value;
use smcp_proto::jsonrpc::{Message, Notification, RequestId};

use crate::error::{Error, Kind, Result};
use crate::transport::ResponseStream;

/// Receives the notifications that arrive on a request's response stream.
pub(crate) type Sink<'a> = &'a mut (dyn FnMut(Notification) + Send);

/// Reads messages until the response to `id`, passing notifications to `sink`.
pub(crate) async fn read_response(
    stream: &mut ResponseStream,
    id: &RequestId,
    sink: Sink<'_>,
) -> Result<Value> {
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
