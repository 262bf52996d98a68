//! The response side of a stateful session: one request's stream (server-to-client requests
//! answered inline, resumption with `Last-Event-ID`, `notifications/cancelled` when dropped
//! early) and `subscriptions/listen` mapped onto the standalone GET stream.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use smcp_proto::error::{ErrorObject, INTERNAL_ERROR, METHOD_NOT_FOUND};
use smcp_proto::jsonrpc::{ErrorResponse, Message, Notification, Request, RequestId};
use smcp_proto::messages::method;
use smcp_proto::meta;
use smcp_proto::patterns::mrtr::{InputRequest, InputRequests};
use smcp_proto::patterns::subscriptions::SubscriptionFilter;
use tokio::sync::broadcast;

use super::link::SessionLink;
use super::session::{
    Core, DEFAULT_RETRY, LegacyConfig, MAX_RETRY, MIN_RETRY, is_sse, result_message,
};
use crate::error::{Error, Kind, Result};
use crate::transport::http::{HttpStream, into_stream};

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
    pub(crate) async fn next_message(&mut self) -> Result<Option<Message>> {
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

/// Answers a server-to-client request (`ping`, `elicitation/create`, `sampling/createMessage`,
/// `roots/list`) with the client's [`InputHandler`](crate::InputHandler), by POSTing the
/// response the caller POSTs. A kind the handler does not declare is refused with −32601.
///
/// Boxed: the handler path reaches the client's own request path, which reads this stream.
pub(crate) fn answer(config: &LegacyConfig, request: Request) -> BoxFuture<'_, Message> {
    Box::pin(answer_inner(config, request))
}

async fn answer_inner(config: &LegacyConfig, request: Request) -> Message {
    let id = request.id.clone();
    let outcome = match request.method.as_str() {
        "ping" => Ok(json!({})),
        method::ELICITATION_CREATE | method::SAMPLING_CREATE_MESSAGE | method::ROOTS_LIST => {
            fulfil_one(config, request).await
        }
        other => Err(ErrorObject {
            code: METHOD_NOT_FOUND,
            message: format!("method not found: {other}"),
            data: None,
        }),
    };
    match outcome {
        Ok(result) => result_message(id, result),
        Err(error) => Message::Error(ErrorResponse {
            id: Some(id),
            error,
        }),
    }
}

async fn fulfil_one(
    config: &LegacyConfig,
    request: Request,
) -> std::result::Result<Value, ErrorObject> {
    let method_name = request.method.clone();
    let parsed: InputRequest = serde_json::from_value(json!({
        "method": request.method,
        "params": request.params.unwrap_or_else(|| json!({})),
    }))
    .map_err(|e| ErrorObject {
        code: smcp_proto::error::INVALID_PARAMS,
        message: format!("invalid {method_name} params: {e}"),
        data: None,
    })?;
    let handler = config.handler.as_ref().map(|h| &*h.0);
    let mut requests = InputRequests::new();
    requests.insert("0".to_owned(), parsed);
    match crate::mrtr::fulfil(handler, requests, None).await {
        Ok(mut responses) => Ok(responses.remove("0").unwrap_or_else(|| json!({}))),
        Err(e) if e.is_protocol_violation() => Err(ErrorObject {
            code: METHOD_NOT_FOUND,
            message: format!("this client does not support {method_name}"),
            data: None,
        }),
        Err(e) => Err(ErrorObject {
            code: INTERNAL_ERROR,
            message: e.to_string(),
            data: None,
        }),
    }
}

/// `subscriptions/listen` in a session: `resources/subscribe` for the URIs asked, then the
/// change notifications of the standalone GET stream, tagged with the listen request's id as
/// a 2026-07-28 server would. The acknowledgement grants only what can be delivered: list
/// changes when a GET stream is open, resources the server let us subscribe to.
#[derive(Debug)]
pub(crate) struct ListenStream {
    link: Arc<dyn SessionLink>,
    id: RequestId,
    rx: broadcast::Receiver<Notification>,
    granted: SubscriptionFilter,
    ack: Option<Notification>,
}

impl Drop for ListenStream {
    fn drop(&mut self) {
        let uris = self
            .granted
            .resource_subscriptions
            .take()
            .unwrap_or_default();
        if uris.is_empty() {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let link = Arc::clone(&self.link);
        rt.spawn(async move {
            for uri in uris {
                if let Err(e) = Arc::clone(&link)
                    .call("resources/unsubscribe", json!({"uri": uri}))
                    .await
                {
                    tracing::debug!(error = %e, "resources/unsubscribe failed");
                }
            }
        });
    }
}

impl ListenStream {
    pub(crate) async fn open(link: Arc<dyn SessionLink>, request: &Request) -> Result<Self> {
        let asked: SubscriptionFilter = request
            .params
            .as_ref()
            .and_then(|p| p.get("notifications"))
            .map(|f| serde_json::from_value(f.clone()))
            .transpose()
            .map_err(|e| Error::config(format!("bad subscription filter: {e}")))?
            .unwrap_or_default();
        let rx = link.changes();
        let get_open = link.delivers_changes();
        let yes = |asked: Option<bool>| (asked == Some(true) && get_open).then_some(true);
        let mut granted = SubscriptionFilter {
            tools_list_changed: yes(asked.tools_list_changed),
            prompts_list_changed: yes(asked.prompts_list_changed),
            resources_list_changed: yes(asked.resources_list_changed),
            ..SubscriptionFilter::default()
        };
        let can_subscribe = link
            .capabilities()
            .pointer("/resources/subscribe")
            .and_then(Value::as_bool)
            == Some(true);
        if let Some(uris) = &asked.resource_subscriptions
            && get_open
            && can_subscribe
        {
            let mut ok = Vec::new();
            for uri in uris {
                match Arc::clone(&link)
                    .call("resources/subscribe", json!({"uri": uri}))
                    .await
                {
                    Ok(_) => ok.push(uri.clone()),
                    Err(e) => tracing::info!(error = %e, %uri, "resources/subscribe refused"),
                }
            }
            granted.resource_subscriptions = Some(ok);
        }
        let mut params = Map::new();
        params.insert(
            "notifications".to_owned(),
            serde_json::to_value(&granted).unwrap_or_else(|_| json!({})),
        );
        let mut ack = Notification {
            method: method::SUBSCRIPTIONS_ACKNOWLEDGED.to_owned(),
            params: Some(Value::Object(params)),
        };
        tag(&mut ack, &request.id);
        Ok(Self {
            link,
            id: request.id.clone(),
            rx,
            granted,
            ack: Some(ack),
        })
    }

    fn wanted(&self, n: &Notification) -> bool {
        let g = &self.granted;
        match n.method.as_str() {
            method::TOOLS_LIST_CHANGED => g.tools_list_changed == Some(true),
            method::PROMPTS_LIST_CHANGED => g.prompts_list_changed == Some(true),
            method::RESOURCES_LIST_CHANGED => g.resources_list_changed == Some(true),
            method::RESOURCES_UPDATED => {
                let uri = n
                    .params
                    .as_ref()
                    .and_then(|p| p.get("uri"))
                    .and_then(Value::as_str);
                g.resource_subscriptions
                    .as_ref()
                    .is_some_and(|s| uri.is_some_and(|u| s.iter().any(|x| x == u)))
            }
            _ => false,
        }
    }

    pub(crate) async fn next_message(&mut self) -> Result<Option<Message>> {
        if let Some(ack) = self.ack.take() {
            return Ok(Some(Message::Notification(ack)));
        }
        loop {
            match self.rx.recv().await {
                Ok(mut n) if self.wanted(&n) => {
                    tag(&mut n, &self.id);
                    return Ok(Some(Message::Notification(n)));
                }
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "listener too slow; change notifications dropped");
                }
                Err(broadcast::error::RecvError::Closed) => {
                    return Err(Error::new(Kind::StreamBroken));
                }
            }
        }
    }
}

/// Puts `_meta["io.modelcontextprotocol/subscriptionId"] = id` on a notification.
fn tag(n: &mut Notification, id: &RequestId) {
    let params = n.params.get_or_insert_with(|| json!({}));
    if let Value::Object(p) = params {
        let m = p.entry("_meta").or_insert_with(|| json!({}));
        if let Value::Object(m) = m {
            m.insert(meta::SUBSCRIPTION_ID.to_owned(), id.to_value());
        }
    }
}
