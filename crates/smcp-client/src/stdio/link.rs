//! A stdio session as the connection under a listen stream: the change notifications the
//! server writes on stdout, the capabilities of its `initialize`, and requests of the
//! session's own (`resources/subscribe`) on the same child.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::future::BoxFuture;
use serde_json::Value;
use smcp_proto::jsonrpc::{Notification, Request, RequestId};
use tokio::sync::broadcast;

use super::pipe::Pipe;
use crate::error::Result;
use crate::legacy::SessionInfo;
use crate::legacy::link::SessionLink;
use crate::transport::ResponseStream;

/// Ids of the requests listen streams send themselves, unique in the process.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// A stdio session, for one listen stream.
#[derive(Debug)]
pub(crate) struct StdioLink {
    pipe: Pipe,
    info: SessionInfo,
}

impl StdioLink {
    pub(crate) fn new(pipe: Pipe, info: SessionInfo) -> Self {
        Self { pipe, info }
    }
}

impl SessionLink for StdioLink {
    fn changes(&self) -> broadcast::Receiver<Notification> {
        self.pipe.shared.changes()
    }

    fn delivers_changes(&self) -> bool {
        // The server writes them on stdout once initialized; nothing to open.
        true
    }

    fn capabilities(&self) -> Value {
        self.info.capabilities.clone()
    }

    fn call(
        self: Arc<Self>,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value>> {
        Box::pin(async move {
            let id = RequestId::from(format!(
                "smcp-listen-{}",
                NEXT_ID.fetch_add(1, Ordering::Relaxed)
            ));
            let request = Request {
                id: id.clone(),
                method: method.to_owned(),
                params: Some(params),
            };
            let stream = self.pipe.send_routed(&request, false).await?;
            let mut stream = ResponseStream::new(stream);
            let mut ignore = |_n: Notification| {};
            let result = crate::response::read_response(&mut stream, &id, &mut ignore).await?;
            crate::response::value_of(&result)
        })
    }
}
