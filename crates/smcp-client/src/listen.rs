//! `subscriptions/listen` as an async stream of typed notifications (A7).
//!
//! A background task holds the SSE stream. Notifications are demultiplexed by
//! `_meta["io.modelcontextprotocol/subscriptionId"]`: only those tagged with this listen
//! request's id are delivered. A graceful close (the JSON-RPC response to the listen request)
//! ends the stream; an abrupt close re-issues the request with a new id after a backoff.
//! Dropping the [`Subscription`] closes the HTTP stream, which is how a client unsubscribes; over
//! stdio the same drop sends `notifications/cancelled` for the listen request's id. A stdio
//! server that exits ends the stream with an error (there is nothing to re-issue to).

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;
use serde_json::{Map, Value};
use smcp_proto::ext::tasks::{self, DetailedTask, TaskStatusNotificationParams};
use smcp_proto::jsonrpc::{Message, Notification, RequestId};
use smcp_proto::messages::method;
use smcp_proto::meta;
use smcp_proto::patterns::subscriptions::SubscriptionFilter;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tracing::Instrument as _;

use crate::client::Client;
use crate::error::{Error, Kind, Result};
use crate::transport::ResponseStream;

/// First re-issue delay after an abrupt close; doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// Longest re-issue delay.
const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// Consecutive failed (re)connects before the stream gives up with the last error.
const MAX_ATTEMPTS: u32 = 8;

/// One event of a [`Subscription`].
///
/// # Examples
///
/// See [`Client::listen`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SubscriptionEvent {
    /// `notifications/subscriptions/acknowledged`: what the server will actually send (it may
    /// be less than requested). Sent again after every re-issue.
    Acknowledged(SubscriptionFilter),
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated` for a subscribed URI.
    ResourceUpdated {
        /// The resource (or sub-resource) that changed.
        uri: String,
    },
    /// `notifications/tasks` (SEP-2663, for a filter with `taskIds`): a task's state, as
    /// `tasks/get` would answer it now (checked the same way).
    Task(Box<DetailedTask>),
    /// Any other notification tagged with this subscription.
    Other(Notification),
}

/// The stream returned by [`Client::listen`]. Ends after a graceful close by the server.
///
/// A [`Stream`](futures_core::Stream) of [`SubscriptionEvent`]s; read it with
/// `futures_util::StreamExt::next` (see [`Client::listen`]). Dropping it unsubscribes.
#[derive(Debug)]
pub struct Subscription {
    rx: mpsc::Receiver<Result<SubscriptionEvent>>,
    task: JoinHandle<()>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Stream for Subscription {
    type Item = Result<SubscriptionEvent>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

impl Client {
    /// Opens a `subscriptions/listen` stream for `filter`.
    ///
    /// Every change the server offers needs its flag in `filter`; the first event says what the
    /// server will actually send ([`SubscriptionEvent::Acknowledged`]).
    ///
    /// # Examples
    ///
    /// Keeps a tool list fresh and follows one resource:
    ///
    /// ```no_run
    /// use futures_util::StreamExt as _;
    /// use smcp_client::{Client, SubscriptionEvent, SubscriptionFilter};
    ///
    /// # async fn demo(client: Client) -> Result<(), smcp_client::Error> {
    /// let mut events = client.listen(SubscriptionFilter {
    ///     tools_list_changed: Some(true),
    ///     resource_subscriptions: Some(vec!["file:///var/log/app.log".into()]),
    ///     ..SubscriptionFilter::default()
    /// });
    /// while let Some(event) = events.next().await {
    ///     match event? {
    ///         SubscriptionEvent::Acknowledged(granted) => println!("listening: {granted:?}"),
    ///         SubscriptionEvent::ToolsListChanged => {
    ///             let tools = client.list_tools().await?;
    ///             println!("{} tools now", tools.len());
    ///         }
    ///         SubscriptionEvent::ResourceUpdated { uri } => {
    ///             println!("{}", client.read_resource(&uri).await?.text());
    ///         }
    ///         _ => {}
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn listen(&self, filter: SubscriptionFilter) -> Subscription {
        let (tx, rx) = mpsc::channel(64);
        let task = tokio::spawn(run(self.clone(), filter, tx));
        Subscription { rx, task }
    }
}

/// How one listen stream ended.
enum End {
    /// The server closed it gracefully, or the consumer went away: stop.
    Stop,
    /// Abrupt close: re-issue. `acked` tells whether it got as far as the acknowledgement.
    Abrupt { acked: bool, error: Option<Error> },
}

fn subscription_id(n: &Notification) -> Option<RequestId> {
    n.params
        .as_ref()?
        .get("_meta")?
        .get(meta::SUBSCRIPTION_ID)
        .and_then(RequestId::from_value)
}

fn to_event(n: Notification) -> Result<SubscriptionEvent> {
    let params = n.params.clone().unwrap_or(Value::Null);
    Ok(match n.method.as_str() {
        method::SUBSCRIPTIONS_ACKNOWLEDGED => {
            let filter = params.get("notifications").cloned().unwrap_or(Value::Null);
            SubscriptionEvent::Acknowledged(serde_json::from_value(filter).map_err(|e| {
                Error::protocol(format!("malformed subscription acknowledgement: {e}"))
            })?)
        }
        method::TOOLS_LIST_CHANGED => SubscriptionEvent::ToolsListChanged,
        method::PROMPTS_LIST_CHANGED => SubscriptionEvent::PromptsListChanged,
        method::RESOURCES_LIST_CHANGED => SubscriptionEvent::ResourcesListChanged,
        method::RESOURCES_UPDATED => match params.get("uri").and_then(Value::as_str) {
            Some(uri) => SubscriptionEvent::ResourceUpdated {
                uri: uri.to_owned(),
            },
            None => return Err(Error::protocol("resources/updated without a uri")),
        },
        tasks::NOTIFICATION_TASKS => {
            let p: TaskStatusNotificationParams = serde_json::from_value(params)
                .map_err(|e| Error::protocol(format!("malformed notifications/tasks: {e}")))?;
            p.task
                .validate()
                .map_err(|e| Error::protocol(format!("invalid notifications/tasks: {e}")))?;
            SubscriptionEvent::Task(Box::new(p.task))
        }
        _ => SubscriptionEvent::Other(n),
    })
}

async fn run(
    client: Client,
    filter: SubscriptionFilter,
    tx: mpsc::Sender<Result<SubscriptionEvent>>,
) {
    let mut failures = 0u32;
    loop {
        match once(&client, &filter, &tx).await {
            End::Stop => return,
            End::Abrupt { acked, error } => {
                if acked {
                    failures = 0;
                }
                failures += 1;
                if failures > MAX_ATTEMPTS {
                    let e = error.unwrap_or_else(|| Error::new(Kind::StreamBroken));
                    let _ = tx.send(Err(e)).await;
                    return;
                }
                let backoff = FIRST_BACKOFF
                    .saturating_mul(1 << (failures - 1).min(10))
                    .min(MAX_BACKOFF);
                tracing::info!(
                    ?backoff,
                    attempt = failures,
                    "listen stream closed abruptly; re-issuing"
                );
                tokio::time::sleep(backoff).await;
            }
        }
    }
}

/// Whether an error is worth a re-issue (the network or the stream), not a refusal.
fn transient(e: &Error) -> bool {
    e.is_connect() || e.is_stream_broken() || e.status().is_some_and(|s| s >= 500)
}

async fn once(
    client: &Client,
    filter: &SubscriptionFilter,
    tx: &mpsc::Sender<Result<SubscriptionEvent>>,
) -> End {
    let mut params = Map::new();
    match serde_json::to_value(filter) {
        Ok(f) => params.insert("notifications".to_owned(), f),
        Err(e) => {
            let _ = tx
                .send(Err(Error::config(format!("bad filter: {e}"))))
                .await;
            return End::Stop;
        }
    };
    let (id, stream) = match client
        .open(method::SUBSCRIPTIONS_LISTEN, &mut params, &[], &[])
        .await
    {
        Ok(x) => x,
        Err(e) if transient(&e) => {
            return End::Abrupt {
                acked: false,
                error: Some(e),
            };
        }
        Err(e) => {
            let _ = tx.send(Err(e)).await;
            return End::Stop;
        }
    };
    let span = tracing::debug_span!("mcp_listen", id = %id);
    pump(client, filter, id, stream, tx).instrument(span).await
}

/// Reads one listen stream until it ends, forwarding this subscription's events.
async fn pump(
    client: &Client,
    filter: &SubscriptionFilter,
    id: RequestId,
    mut stream: ResponseStream,
    tx: &mpsc::Sender<Result<SubscriptionEvent>>,
) -> End {
    let mut acked = false;
    loop {
        let message = match stream.next_message().await {
            Ok(Some(m)) => m,
            Ok(None) => return End::Abrupt { acked, error: None },
            Err(e) if e.is_stream_broken() => {
                return End::Abrupt {
                    acked,
                    error: Some(e),
                };
            }
            Err(e) => {
                let _ = tx.send(Err(e)).await;
                return End::Stop;
            }
        };
        let event = match message {
            Message::Notification(n) => {
                if subscription_id(&n).as_ref() != Some(&id) {
                    tracing::warn!(method = %n.method, "notification without this subscription's id ignored");
                    continue;
                }
                if let Some(cache) = &client.inner.cache {
                    cache.on_notification(&n.method, n.params.as_ref());
                }
                if n.method == method::SUBSCRIPTIONS_ACKNOWLEDGED {
                    acked = true;
                }
                let event = to_event(n);
                // The server may honour less than was asked (A7 item 66): say so.
                if let Ok(SubscriptionEvent::Acknowledged(granted)) = &event
                    && granted != filter
                {
                    tracing::info!(?granted, requested = ?filter, "the server honours only part of the subscription");
                }
                event
            }
            Message::Result(r) if r.id == id => return End::Stop,
            Message::Error(e) if e.id.is_none() || e.id.as_ref() == Some(&id) => {
                Err(Error::new(Kind::Rpc {
                    status: stream.rpc_status(),
                    error: e.error,
                }))
            }
            Message::Request(r) => Err(Error::protocol(format!(
                "the server sent a JSON-RPC request ({:?}) on a listen stream",
                r.method
            ))),
            Message::Result(_) | Message::Error(_) => Err(Error::protocol(
                "a response with another id arrived on a listen stream",
            )),
        };
        let fatal = event.is_err();
        if tx.send(event).await.is_err() || fatal {
            return End::Stop;
        }
    }
}
