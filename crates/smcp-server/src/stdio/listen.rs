//! `subscriptions/listen` on a stream connection. Every subscription shares the one output:
//! its acknowledgement first, then its notifications, each carrying the subscription id
//! (`basic/patterns/subscriptions.mdx`). `notifications/cancelled` for the listen request ends
//! it with no response; the end of serving, or [`crate::Server::shutdown`], ends it with the
//! listen result (a graceful close); a subscriber too slow for its buffer gets an error.

use std::future::Future;

use serde_json::json;
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::RequestId;
use smcp_proto::patterns::subscriptions::SubscriptionsListenRequestParams;
use tokio_util::sync::CancellationToken;

use super::link::Link;
use super::options::NEWLINE;
use crate::core::context::RequestContext;
use crate::core::error::SERVER_BUSY;
use crate::core::listen::{self as protocol, ListenPlan, Refusal};
use crate::core::reply::error_bytes;
use crate::core::server::Shared;

/// Opens a subscription: the task that serves it, or the error to answer at once. When an
/// extension takes part in listen ([`crate::Extension::listen`]), the task asks it first and
/// answers its refusal itself.
pub(super) fn open(
    link: &Link,
    id: RequestId,
    params: Result<SubscriptionsListenRequestParams, ErrorObject>,
    ctx: RequestContext,
    cancel: CancellationToken,
) -> Result<impl Future<Output = ()> + Send + 'static, ErrorObject> {
    let shared = link.shared.clone();
    let params = params?;
    let subscribe = |shared: &Shared, plan: ListenPlan| {
        shared
            .bus
            .subscribe(plan.interest.clone(), shared.listen.buffer)
            .map(|s| (plan, s))
            .map_err(|e| {
                tracing::warn!(error = %e, "change bus refused a subscription");
                busy(&Refusal::ShuttingDown)
            })
    };
    // Without extensions taking part, everything is decided here, as the request is read.
    let ready = if protocol::extensions_listen(&shared) {
        Err(params)
    } else {
        let plan = protocol::plan(&shared, &id, params, Vec::new())?;
        Ok(plan)
    };
    let slot = shared
        .listeners
        .acquire(None, &shared.listen)
        .map_err(|refusal| busy(&refusal))?;
    let ready = match ready {
        Ok(plan) => Ok(subscribe(&shared, plan)?),
        Err(params) => Err(params),
    };
    let registration = link.running.register(id.clone(), cancel.clone(), true);
    let out = link.out.clone();
    let closing = link.closing.clone();
    let server_down = shared.listeners.shutdown.clone();
    let buffer = shared.listen.buffer;
    Ok(async move {
        let _slot = slot;
        let opened = match ready {
            Ok(opened) => Ok(opened),
            Err(params) => match protocol::extension_grants(&shared, &ctx, &params).await {
                Ok(grants) => protocol::plan(&shared, &id, params, grants)
                    .and_then(|plan| subscribe(&shared, plan)),
                Err(e) => Err(e),
            },
        };
        let (plan, mut subscription) = match opened {
            Ok(opened) => opened,
            Err(error) => {
                drop(registration);
                let _ = out.send(NEWLINE.frame(&error_bytes(Some(id), error))).await;
                return;
            }
        };
        tracing::debug!("subscription open");
        if out.send(NEWLINE.frame(&plan.ack)).await.is_err() {
            return;
        }
        let why = loop {
            let change = tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    tracing::debug!("subscription cancelled by the client");
                    return;
                }
                () = closing.cancelled() => break "connection closing",
                () = server_down.cancelled() => break "server shutdown",
                change = subscription.recv() => change,
            };
            match change {
                Some(change) => {
                    let frame = protocol::render(NEWLINE, &plan.id_json, &change);
                    if out.send(frame).await.is_err() {
                        return;
                    }
                }
                None if subscription.is_overflowed() => {
                    drop(registration);
                    tracing::debug!("subscription overflowed: the client is not reading");
                    let error = ErrorObject::internal(
                        "Subscription ended: notifications were not read in time; listen again",
                    )
                    .with_data(json!({ "buffer": buffer }));
                    let _ = out.send(NEWLINE.frame(&error_bytes(Some(id), error))).await;
                    return;
                }
                None => break "change bus closed",
            }
        };
        drop(registration);
        tracing::debug!(reason = why, "subscription closed gracefully");
        let _ = out.send(NEWLINE.frame(&plan.close)).await;
    })
}

fn busy(refusal: &Refusal) -> ErrorObject {
    match refusal {
        Refusal::ShuttingDown => ErrorObject::new(
            SERVER_BUSY,
            "Server busy: the server is shutting down".to_owned(),
        ),
        Refusal::Total(limit) | Refusal::Address(limit) => ErrorObject::new(
            SERVER_BUSY,
            format!("Server busy: {limit} listen streams are open, the most this server allows"),
        )
        .with_data(json!({ "limit": limit })),
    }
}
