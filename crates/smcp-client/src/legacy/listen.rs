//! `subscriptions/listen` mapped onto an older-era session, over what [`SessionLink`] asks of
//! the connection under it (a stateful HTTP session or a stdio session).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use smcp_proto::jsonrpc::{Message, Notification, Request, RequestId};
use smcp_proto::messages::method;
use smcp_proto::meta;
use smcp_proto::patterns::subscriptions::SubscriptionFilter;
use tokio::sync::broadcast;

use super::adapter;
use super::link::SessionLink;
use crate::error::{Error, Kind, Result};
use crate::transport::{Inbound, MessageStream};

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
                    .call(adapter::method::RESOURCES_UNSUBSCRIBE, json!({"uri": uri}))
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
                    .call(adapter::method::RESOURCES_SUBSCRIBE, json!({"uri": uri}))
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

    pub(crate) async fn next_message(&mut self) -> Result<Option<Inbound>> {
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

impl MessageStream for ListenStream {
    fn next_message(&mut self) -> BoxFuture<'_, Result<Option<Inbound>>> {
        Box::pin(ListenStream::next_message(self))
    }

    fn rpc_status(&self) -> Option<u16> {
        Some(200)
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
