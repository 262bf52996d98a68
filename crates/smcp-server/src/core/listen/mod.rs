//! `subscriptions/listen`, the protocol side (`basic/patterns/subscriptions.mdx`,
//! REQUIREMENTS A7): which part of a filter the server honours, the acknowledgement and the
//! graceful-close result, how a change becomes a notification, and (`registry.rs`) how many
//! streams are open.
//! A transport turns a [`ListenPlan`] into a stream (over HTTP: an SSE response body).
//!
//! Decisions where the spec is silent:
//! * A server that advertises no `listChanged` and no `resources.subscribe` has nothing to
//!   deliver: `subscriptions/listen` is then an unknown method (−32601).
//! * Unknown filter keys are ignored; `null` counts as omitted; `false` is honoured by
//!   omission from the acknowledgement. More `resourceSubscriptions` than
//!   [`ListenConfig::max_resource_subscriptions`] is −32602.
//! * Filter members an extension owns (SEP-2663's `taskIds`) are honoured, or the request
//!   refused, by that extension ([`crate::Extension::listen`], asked before the stream opens,
//!   only when some extension [`listens`](crate::Extension::listens)); what it grants goes
//!   into the acknowledgement, and the topics it names into the stream's bus interest.

use bytes::Bytes;
use serde_json::Map;
use smcp_bus::{Change, Interest};
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::{Notification, RequestId};
use smcp_proto::meta;
use smcp_proto::patterns::subscriptions::{
    SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams, SubscriptionsListenResult,
};

pub(crate) mod registry;

pub(crate) use registry::{Refusal, Slot};

use crate::core::context::{Framing, RequestContext};
use crate::core::extension::ListenGrant;
use crate::core::reply::{Reply, response_bytes};
use crate::core::server::Shared;

/// A listen request the core accepted: what to subscribe to and what to send.
#[derive(Debug)]
pub(crate) struct ListenPlan {
    /// What the bus should deliver.
    pub(crate) interest: Interest,
    /// `notifications/subscriptions/acknowledged`, JSON.
    pub(crate) ack: Vec<u8>,
    /// The graceful-close response, JSON.
    pub(crate) close: Vec<u8>,
    /// The listen id as JSON text, spliced into every notification.
    pub(crate) id_json: Box<str>,
}

/// Whether any extension takes part in `subscriptions/listen`.
pub(crate) fn extensions_listen(shared: &Shared) -> bool {
    !shared.extensions.is_empty() && shared.extensions.iter().any(|e| e.listens())
}

/// What the extensions that listen honour of `params` (in registration order), or the first
/// refusal.
pub(crate) async fn extension_grants(
    shared: &Shared,
    ctx: &RequestContext,
    params: &SubscriptionsListenRequestParams,
) -> Result<Vec<ListenGrant>, ErrorObject> {
    let mut grants = Vec::new();
    for extension in shared.extensions.iter().filter(|e| e.listens()) {
        grants.push(
            extension
                .listen(ctx.clone(), params.notifications.clone())
                .await?,
        );
    }
    Ok(grants)
}

/// Validates the filter and works out what the server honours: what the client asked for and
/// the server advertises, plus what extensions granted (see [`extension_grants`]).
pub(crate) fn plan(
    shared: &Shared,
    id: &RequestId,
    params: SubscriptionsListenRequestParams,
    grants: Vec<ListenGrant>,
) -> Result<ListenPlan, ErrorObject> {
    let requested = params.notifications;
    if let Some(uris) = &requested.resource_subscriptions
        && uris.len() > shared.listen.max_resource_subscriptions
    {
        return Err(ErrorObject::invalid_params(format!(
            "\"params.notifications.resourceSubscriptions\" has {} URIs; at most {} are allowed",
            uris.len(),
            shared.listen.max_resource_subscriptions
        )));
    }
    let f = &shared.features;
    let on = |asked: Option<bool>, offered: bool| asked == Some(true) && offered;
    let mut interest = Interest {
        tools_list_changed: on(requested.tools_list_changed, f.tools_list_changed),
        prompts_list_changed: on(requested.prompts_list_changed, f.prompts_list_changed),
        resources_list_changed: on(requested.resources_list_changed, f.resources_list_changed),
        resource_uris: if f.resources_subscribe {
            requested.resource_subscriptions.clone().unwrap_or_default()
        } else {
            Vec::new()
        },
        topics: Vec::new(),
    };
    let flag = |b: bool| b.then_some(true);
    let mut honoured = SubscriptionFilter {
        tools_list_changed: flag(interest.tools_list_changed),
        prompts_list_changed: flag(interest.prompts_list_changed),
        resources_list_changed: flag(interest.resources_list_changed),
        resource_subscriptions: if f.resources_subscribe {
            requested.resource_subscriptions
        } else {
            None
        },
        task_ids: None,
    };
    for grant in grants {
        if let Some(uris) = &grant.honoured.resource_subscriptions {
            // The extension that owns the resources decides which are watched.
            interest.resource_uris.clone_from(uris);
        }
        merge(&mut honoured, grant.honoured);
        interest.topics.extend(grant.topics);
    }
    let id_value = id.to_value();
    let mut subscription = Map::new();
    subscription.insert(meta::SUBSCRIPTION_ID.to_owned(), id_value.clone());
    let ack = serde_json::to_vec(&Notification::new(
        smcp_proto::messages::method::SUBSCRIPTIONS_ACKNOWLEDGED,
        Some(SubscriptionsAcknowledgedNotificationParams {
            meta: Some(subscription.clone()),
            notifications: honoured,
        }),
    ))
    .map_err(|e| ErrorObject::internal(e.to_string()))?;
    let close = response_bytes(
        &shared.server_meta,
        id,
        Reply::Listen(SubscriptionsListenResult {
            meta: Some(subscription),
            result_type: Default::default(),
        }),
    );
    Ok(ListenPlan {
        interest,
        ack,
        close,
        id_json: id_value.to_string().into_boxed_str(),
    })
}

/// Takes the members an extension set.
fn merge(into: &mut SubscriptionFilter, from: SubscriptionFilter) {
    let SubscriptionFilter {
        tools_list_changed,
        prompts_list_changed,
        resources_list_changed,
        resource_subscriptions,
        task_ids,
    } = from;
    into.tools_list_changed = tools_list_changed.or(into.tools_list_changed);
    into.prompts_list_changed = prompts_list_changed.or(into.prompts_list_changed);
    into.resources_list_changed = resources_list_changed.or(into.resources_list_changed);
    into.resource_subscriptions = resource_subscriptions.or(into.resource_subscriptions.take());
    into.task_ids = task_ids.or(into.task_ids.take());
}

/// `{"jsonrpc":"2.0","method":…,"params":{"_meta":{subscriptionId},…}}` in its frame, in one
/// buffer. Written by hand: the same few bytes go to every listener, each with its own id.
pub(crate) fn render(framing: Framing, id_json: &str, change: &Change) -> Bytes {
    let mut frame = Vec::with_capacity(176 + id_json.len());
    frame.extend_from_slice(framing.prefix);
    frame.extend_from_slice(br#"{"jsonrpc":"2.0","method":""#);
    frame.extend_from_slice(change.method().as_bytes());
    frame.extend_from_slice(br#"","params":{"_meta":{""#);
    frame.extend_from_slice(meta::SUBSCRIPTION_ID.as_bytes());
    frame.extend_from_slice(br#"":"#);
    frame.extend_from_slice(id_json.as_bytes());
    frame.push(b'}');
    match change {
        Change::ResourceUpdated { uri } => {
            frame.extend_from_slice(br#","uri":"#);
            // Serializing a string into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut frame, &**uri);
        }
        Change::Topic(n) => {
            // The params object's members after `_meta`.
            let members = n
                .params
                .trim()
                .strip_prefix('{')
                .and_then(|rest| rest.strip_suffix('}'))
                .map_or("", str::trim);
            if !members.is_empty() {
                frame.push(b',');
                frame.extend_from_slice(members.as_bytes());
            }
        }
        _ => {}
    }
    frame.extend_from_slice(b"}}");
    frame.extend_from_slice(framing.suffix);
    Bytes::from(frame)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use smcp_proto::jsonrpc::Message;

    const SSE: Framing = Framing {
        prefix: b"data: ",
        suffix: b"\n\n",
    };

    /// The hand-written frame is exactly what the generic encoder makes of the notification.
    #[test]
    fn render_matches_the_generic_encoder() {
        let changes = [
            Change::ToolsListChanged,
            Change::PromptsListChanged,
            Change::ResourcesListChanged,
            Change::ResourceUpdated {
                uri: "file:///a \"quoted\"\nline/ü".into(),
            },
            Change::topic(
                "t",
                "notifications/tasks",
                r#"{"taskId":"t","status":"working"}"#,
            ),
            Change::topic("t", "notifications/tasks", "{}"),
        ];
        for id in [json!(7), json!("listen-1"), json!("quote\"d")] {
            for change in &changes {
                let mut params = Map::new();
                params.insert(
                    "_meta".to_owned(),
                    json!({ meta::SUBSCRIPTION_ID: id.clone() }),
                );
                match change {
                    Change::ResourceUpdated { uri } => {
                        params.insert("uri".to_owned(), json!(&**uri));
                    }
                    Change::Topic(n) => {
                        let extra: Map<String, Value> = serde_json::from_str(&n.params).unwrap();
                        params.extend(extra);
                    }
                    _ => {}
                }
                let json = Message::Notification(Notification {
                    method: change.method().to_owned(),
                    params: Some(Value::Object(params)),
                })
                .to_vec();
                for framing in [
                    SSE,
                    Framing {
                        prefix: b"",
                        suffix: b"\n",
                    },
                ] {
                    assert_eq!(
                        render(framing, &id.to_string(), change),
                        framing.frame(&json),
                        "{id} {change:?}"
                    );
                }
            }
        }
    }
}
