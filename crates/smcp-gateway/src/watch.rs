//! Resource subscriptions through the gateway. A listener's `resourceSubscriptions` are
//! watched at the upstream that owns each URI (its resource, or a template matching it),
//! when that upstream can (`resources.subscribe`): one listen stream per URI, which
//! smcp-client maps onto a 2025 session's `resources/subscribe`. Each
//! `notifications/resources/updated` the upstream sends is published to this instance's
//! listeners: with a shared bus, each instance follows the upstream for its own.
//!
//! A URI newly asked for is granted once the upstream acknowledged it (within the upstream's
//! timeout), so no update between the upstream's acknowledgement and the gateway's is lost.
//! A URI, once watched, stays watched until the gateway stops (the server says nothing when
//! a listen stream closes), at most [`MAX_WATCHED`] per upstream; the acknowledgement grants
//! only the URIs watched.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::StreamExt as _;
use smcp_client::{SubscriptionEvent, SubscriptionFilter};
use smcp_proto::error::ErrorObject;
use smcp_server::tools::BoxFuture;
use smcp_server::{Extension, ListenGrant, RequestContext, Server};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::upstream::Upstream;

/// Most URIs watched at one upstream.
pub(crate) const MAX_WATCHED: usize = 256;

/// A URI to follow at an upstream, and where to say whether the upstream granted it.
pub(crate) type Added = (Arc<Upstream>, String, oneshot::Sender<bool>);

/// The URIs watched at each upstream, and the way to the task that watches them.
#[derive(Debug)]
pub(crate) struct Watches {
    /// By upstream name.
    watched: Mutex<HashMap<String, BTreeSet<String>>>,
    /// A URI newly watched, for [`run`].
    added: mpsc::UnboundedSender<Added>,
    /// Taken by [`run`] when the gateway is attached to its server.
    receiver: Mutex<Option<mpsc::UnboundedReceiver<Added>>>,
}

/// Whether a URI is watched.
enum Watch {
    /// Already.
    Watched,
    /// From now on, once the upstream says so.
    Asked(oneshot::Receiver<bool>),
    /// Not: the upstream watches [`MAX_WATCHED`] already, or the gateway is stopping.
    Refused,
}

impl Watches {
    pub(crate) fn new() -> Self {
        let (added, receiver) = mpsc::unbounded_channel();
        Self {
            watched: Mutex::new(HashMap::new()),
            added,
            receiver: Mutex::new(Some(receiver)),
        }
    }

    /// Watches `uri` at `upstream`, unless it is already or the upstream watches
    /// [`MAX_WATCHED`].
    fn watch(&self, upstream: &Arc<Upstream>, uri: &str) -> Watch {
        let mut watched = self.watched.lock().unwrap_or_else(PoisonError::into_inner);
        let set = watched.entry(upstream.name().to_owned()).or_default();
        if set.contains(uri) {
            return Watch::Watched;
        }
        if set.len() >= MAX_WATCHED {
            tracing::warn!(
                upstream = %upstream.name(),
                "upstream watches {MAX_WATCHED} resources already; a subscription is not granted"
            );
            return Watch::Refused;
        }
        let (said, granted) = oneshot::channel();
        if self
            .added
            .send((Arc::clone(upstream), uri.to_owned(), said))
            .is_err()
        {
            return Watch::Refused;
        }
        set.insert(uri.to_owned());
        Watch::Asked(granted)
    }

    /// Whether `uri` itself is watched at `upstream`.
    fn watches(&self, upstream: &str, uri: &str) -> bool {
        let watched = self.watched.lock().unwrap_or_else(PoisonError::into_inner);
        watched.get(upstream).is_some_and(|set| set.contains(uri))
    }

    /// Stops counting `uri` as watched at `upstream` (it refused it).
    fn forget(&self, upstream: &str, uri: &str) {
        let mut watched = self.watched.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(set) = watched.get_mut(upstream) {
            set.remove(uri);
        }
    }

    /// The receiving end, once.
    pub(crate) fn take_receiver(&self) -> Option<mpsc::UnboundedReceiver<Added>> {
        self.receiver
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// The upstream serving a URI, when it can watch it.
pub(crate) type Owner = Arc<dyn Fn(&str) -> Option<Arc<Upstream>> + Send + Sync>;

/// The extension that sees each `subscriptions/listen` before its stream opens.
pub(crate) struct ResourceWatch {
    pub(crate) owner: Owner,
    pub(crate) watches: Arc<Watches>,
}

impl std::fmt::Debug for ResourceWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceWatch")
            .field("watches", &self.watches)
            .finish_non_exhaustive()
    }
}

impl Extension for ResourceWatch {
    fn name(&self) -> &'static str {
        "smcp-gateway/resource-subscriptions"
    }

    fn listens(&self) -> bool {
        true
    }

    fn listen(
        &self,
        _ctx: RequestContext,
        requested: SubscriptionFilter,
    ) -> BoxFuture<Result<ListenGrant, ErrorObject>> {
        let Some(uris) = requested.resource_subscriptions else {
            return Box::pin(async { Ok(ListenGrant::default()) });
        };
        // Each URI: watched already, asked of its upstream now, or not granted.
        let answers: Vec<_> = uris
            .into_iter()
            .filter_map(|uri| {
                let upstream = (self.owner)(&uri)?;
                let watch = self.watches.watch(&upstream, &uri);
                Some((uri, upstream.config.timeout, watch))
            })
            .collect();
        Box::pin(async move {
            let granted = futures_util::future::join_all(answers.into_iter().map(
                |(uri, timeout, watch)| async move {
                    let yes = match watch {
                        Watch::Watched => true,
                        Watch::Refused => false,
                        Watch::Asked(said) => {
                            matches!(tokio::time::timeout(timeout, said).await, Ok(Ok(true)))
                        }
                    };
                    yes.then_some(uri)
                },
            ))
            .await;
            Ok(ListenGrant {
                honoured: SubscriptionFilter {
                    resource_subscriptions: Some(granted.into_iter().flatten().collect()),
                    ..SubscriptionFilter::default()
                },
                topics: Vec::new(),
            })
        })
    }
}

/// Until the gateway stops: each URI newly watched gets a task following it upstream.
pub(crate) async fn run(
    watches: Arc<Watches>,
    server: Server,
    stop: CancellationToken,
    mut added: mpsc::UnboundedReceiver<Added>,
) {
    loop {
        let next = tokio::select! {
            next = added.recv() => next,
            () = stop.cancelled() => return,
        };
        let Some((upstream, uri, said)) = next else {
            return;
        };
        let watches = Arc::clone(&watches);
        let follow = follow(
            upstream,
            uri,
            said,
            (server.clone(), Arc::clone(&watches)),
            stop.clone(),
        );
        tokio::spawn(async move {
            if let Some((upstream, uri)) = follow.await {
                watches.forget(&upstream, &uri);
            }
        });
    }
}

/// Follows `uri` at `upstream`: whether the upstream granted it goes to `said`; every update
/// it sends is published to `server`'s listeners (a sub-resource's only when no other
/// stream follows that one, which publishes it itself); a stream that ends (the upstream
/// restarted, or went away) is opened again after a pause that grows while it keeps failing.
/// Ends with the upstream's name and the URI when the upstream refused it.
async fn follow(
    upstream: Arc<Upstream>,
    uri: String,
    said: oneshot::Sender<bool>,
    (server, watches): (Server, Arc<Watches>),
    stop: CancellationToken,
) -> Option<(String, String)> {
    let mut said = Some(said);
    let restart = &upstream.config.restart;
    let mut pause = restart.initial_backoff;
    while !stop.is_cancelled() {
        let mut updates = upstream.client().listen(SubscriptionFilter {
            resource_subscriptions: Some(vec![uri.clone()]),
            ..SubscriptionFilter::default()
        });
        loop {
            let event = tokio::select! {
                event = updates.next() => event,
                () = stop.cancelled() => return None,
            };
            match event {
                Some(Ok(SubscriptionEvent::ResourceUpdated { uri: updated })) => {
                    pause = restart.initial_backoff;
                    if updated == uri || !watches.watches(upstream.name(), &updated) {
                        // Every instance follows the upstream for its own listeners.
                        smcp_bus::local_only(|| server.notify_resource_updated(&updated));
                    }
                }
                Some(Ok(SubscriptionEvent::Acknowledged(granted))) => {
                    let watched = granted
                        .resource_subscriptions
                        .is_some_and(|uris| uris.contains(&uri));
                    if let Some(said) = said.take() {
                        let _ = said.send(watched);
                    }
                    if !watched {
                        tracing::warn!(upstream = %upstream.name(), %uri, "upstream did not grant the resource subscription");
                        return Some((upstream.name().to_owned(), uri));
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::debug!(upstream = %upstream.name(), %uri, error = %e, "resource subscription ended");
                    break;
                }
                None => break,
            }
        }
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = stop.cancelled() => return None,
        }
        pause = (pause * 2).min(restart.max_backoff);
    }
    None
}
