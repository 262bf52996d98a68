//! The change notifications of a session (the earlier revisions' wire forms of what
//! `subscriptions/listen` carries): tools, prompts and resources `list_changed` as
//! advertised, and `notifications/resources/updated` for the URIs the session subscribed to,
//! from the same `ChangeBus`. Over HTTP they go on the standalone GET stream; over stdio on
//! the connection once it is initialized.

use std::future::Future;

use futures_util::StreamExt as _;
use serde_json::{Map, Value};
use smcp_bus::{Change, Interest, Subscription};
use tokio::sync::watch;

use super::Live;
use crate::core::server::Shared;

/// What a session's change notifications are: the list changes advertised, and updates of the URIs it subscribed to.
fn interest(shared: &Shared, uris: &[String]) -> Interest {
    let f = &shared.features;
    Interest {
        tools_list_changed: f.tools_list_changed,
        prompts_list_changed: f.prompts_list_changed,
        resources_list_changed: f.resources_list_changed,
        resource_uris: if f.resources_subscribe {
            uris.to_vec()
        } else {
            Vec::new()
        },
        topics: Vec::new(),
    }
}

/// The notification a change becomes on the stream (`None` for what the earlier revisions
/// do not define).
fn change_notification(change: &Change) -> Option<Vec<u8>> {
    let mut message = Map::new();
    message.insert("jsonrpc".to_owned(), Value::from("2.0"));
    message.insert("method".to_owned(), Value::from(change.method()));
    match change {
        Change::ResourceUpdated { uri } => {
            let mut params = Map::new();
            params.insert("uri".to_owned(), Value::from(&**uri));
            message.insert("params".to_owned(), Value::Object(params));
        }
        Change::Topic(_) => return None,
        _ => {}
    }
    serde_json::to_vec(&message).ok()
}

/// A change bus subscription for a session's change notifications (`None` when it wants
/// nothing, or the bus refused).
pub(crate) fn subscribe(shared: &Shared, uris: &[String]) -> Option<Subscription> {
    let wanted = interest(shared, uris);
    if wanted.is_empty() {
        return None;
    }
    match shared.bus.subscribe(wanted, shared.listen.buffer.max(1)) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(error = %e, "legacy session: change bus subscription failed");
            None
        }
    }
}

/// Follows a session's change notifications: each change, in its wire form, goes to `emit`
/// until `stop` completes, the session ends, `emit` answers `false` (the receiver is gone) or
/// the bus ends the subscription. `first` is the subscription taken for the session's current
/// URIs (taken before the caller answers, so no change in between is missed); a new one is
/// taken whenever the session's subscribed URIs change.
pub(crate) async fn follow<F: Future<Output = bool>>(
    shared: &Shared,
    live: &Live,
    mut uris: watch::Receiver<Vec<String>>,
    first: Option<Subscription>,
    stop: impl Future<Output = ()>,
    mut emit: impl FnMut(Vec<u8>) -> F,
) {
    tokio::pin!(stop);
    let mut first = Some(first);
    'subscribe: loop {
        let mut changes = match first.take() {
            Some(changes) => changes,
            None => subscribe(shared, &uris.borrow_and_update()),
        };
        loop {
            let next = async {
                match changes.as_mut() {
                    Some(s) => s.next().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = &mut stop => break 'subscribe,
                () = live.ended.cancelled() => break 'subscribe,
                changed = uris.changed() => {
                    if changed.is_err() {
                        break 'subscribe;
                    }
                    continue 'subscribe;
                }
                change = next => match change {
                    Some(change) => {
                        if let Some(json) = change_notification(&change)
                            && !emit(json).await
                        {
                            break 'subscribe;
                        }
                    }
                    None => break 'subscribe,
                },
            }
        }
    }
}
