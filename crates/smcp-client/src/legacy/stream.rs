//! One request's response in a stateful session: server-to-client requests answered inline,
//! resumption with `Last-Event-ID`, `notifications/cancelled` when dropped early.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use smcp_proto::jsonrpc::{Message, RequestId};

use super::answer::answer;
use super::shared::{Core, DEFAULT_RETRY, MAX_RETRY, MIN_RETRY};
use crate::error::Result;
use crate::transport::http::{HttpStream, into_stream, is_sse};
use crate::transport::{Inbound, MessageStream};

/// Resumptions of one response stream before it counts as broken.
const MAX_RESUMES: u32 = 5;

/// One request's response in a session.
#[derive(Debug)]
pub(crate) struct SessionStream {
    core: Arc<Core>,
    id: RequestId,
    body: HttpStream,
    resumes: u32,
    done: bool,
}

impl Drop for SessionStream {
    fn drop(&mut self) {
        if !self.done {
            self.core.cancel_in_background(self.id.clone());
        }
    }
}

impl SessionStream {
    pub(crate) fn new(core: Arc<Core>, id: RequestId, body: HttpStream) -> Self {
        Self {
            core,
            id,
            body,
            resumes: 0,
            done: false,
        }
    }

    /// The next message for the caller. Server requests are answered here; an SSE stream that
    /// ends before the response is resumed with `Last-Event-ID` (after its `retry:` delay).
    pub(crate) async fn next_message(&mut self) -> Result<Option<Inbound>> {
        loop {
            let message = match self.body.next_message().await {
                Ok(Some(m)) => m,
                Ok(None) | Err(_) if !self.done && self.resume().await? => continue,
                Ok(None) => return Ok(None),
                Err(e) => return Err(e),
            };
            match message {
                Message::Request(r) => {
                    let reply = answer(&self.core.config, r).await;
                    self.core.post_answer(&reply).await;
                }
                Message::Result(ref r) if r.id == self.id => {
                    self.done = true;
                    return Ok(Some(message));
                }
                Message::Error(ref e) if e.id.is_none() || e.id.as_ref() == Some(&self.id) => {
                    self.done = true;
                    return Ok(Some(message));
                }
                other => return Ok(Some(other)),
            }
        }
    }

    /// Reopens the stream from its last event id; false when it cannot be resumed.
    async fn resume(&mut self) -> Result<bool> {
        let (Some(last), retry) = self.body.resume_point() else {
            return Ok(false);
        };
        if self.resumes >= MAX_RESUMES {
            return Ok(false);
        }
        self.resumes += 1;
        let delay = retry.unwrap_or(DEFAULT_RETRY).clamp(MIN_RETRY, MAX_RETRY);
        tracing::debug!(?delay, last_event_id = %last, "resuming the response stream");
        tokio::time::sleep(delay).await;
        let response = self.core.get(Some(&last)).await?;
        if !response.status().is_success() || !is_sse(&response) {
            tracing::debug!(status = response.status().as_u16(), "resumption refused");
            return Ok(false);
        }
        self.body = into_stream(response).await?;
        Ok(true)
    }
}

impl MessageStream for SessionStream {
    fn next_message(&mut self) -> BoxFuture<'_, Result<Option<Inbound>>> {
        Box::pin(SessionStream::next_message(self))
    }

    fn rpc_status(&self) -> Option<u16> {
        Some(200)
    }
}
