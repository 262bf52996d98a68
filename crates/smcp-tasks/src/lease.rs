//! The lease keeper: with a store that keeps leases ([`TaskStore::keeps_leases`]), one
//! background loop per instance that, every third of the lease period,
//!
//! 1. renews the leases of the tasks whose handler runs here (one store call for all of them),
//!    and stops the handlers whose lease is gone (another instance already ended the task, or
//!    the store lost it: their outcome could not be written any more);
//! 2. asks the store to end the tasks whose lease lapsed — their instance died — and publishes
//!    each one's final `notifications/tasks` on the change bus (the store hands each such
//!    task to exactly one instance, so it is published once).
//!
//! The loop holds the extension weakly and ends when it is dropped.
//!
//! [`TaskStore::keeps_leases`]: crate::TaskStore::keeps_leases

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use smcp_server::{ChangeBus, RequestContext};

use crate::core::{Core, notification};

/// Starts the keeper once, publishing on `bus` (once one is known); nothing for a store
/// without leases.
pub(crate) fn start(core: &Arc<Core>, bus: Option<&Arc<dyn ChangeBus>>) {
    if !core.store.keeps_leases() {
        return;
    }
    if let Some(bus) = bus {
        let _ = core.bus.set(bus.clone());
    }
    if core.keeper.swap(true, Ordering::AcqRel) {
        return;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        // Not on a runtime: the next request (which is) starts it.
        core.keeper.store(false, Ordering::Release);
        tracing::warn!("task lease keeper not started: no Tokio runtime");
        return;
    };
    let every = (core.lease / 3).max(Duration::from_millis(10));
    runtime.spawn(keep(Arc::downgrade(core), every));
}

/// Starts the keeper (publishing on the change bus of the server serving `ctx`), if it is
/// not running. A context without a server still gets its leases renewed.
pub(crate) fn start_from(core: &Arc<Core>, ctx: &RequestContext) {
    if !core.store.keeps_leases()
        || (core.keeper.load(Ordering::Acquire) && core.bus.get().is_some())
    {
        return;
    }
    let server = ctx.server();
    start(core, server.as_ref().map(smcp_server::Server::change_bus));
}

/// Lease renewals and the sweep are each bounded by this many periods of the loop (a store
/// that hangs does not stall the keeper for longer).
const CALL_BOUND: u32 = 2;

async fn keep(core: Weak<Core>, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let bound = every * CALL_BOUND;
    loop {
        tick.tick().await;
        let Some(core) = core.upgrade() else {
            return;
        };
        renew(&core, bound).await;
        sweep(&core, bound).await;
    }
}

async fn renew(core: &Core, bound: Duration) {
    let running = core.runner.ids();
    if running.is_empty() {
        return;
    }
    let count = running.len();
    match tokio::time::timeout(bound, core.store.renew_leases(running, core.lease)).await {
        Ok(Ok(lost)) => {
            for task_id in lost {
                tracing::warn!(%task_id, "task lease lost (the task was ended elsewhere or its record is gone): stopping its handler");
                core.runner.cancel(&task_id);
            }
        }
        Ok(Err(e)) => tracing::warn!(error = %e, tasks = count, "task leases not renewed"),
        Err(_) => tracing::warn!(
            tasks = count,
            "task leases not renewed: the store did not answer in time"
        ),
    }
}

async fn sweep(core: &Core, bound: Duration) {
    match tokio::time::timeout(bound, core.store.reap_lapsed()).await {
        Ok(Ok(ended)) => {
            for record in ended {
                tracing::warn!(
                    task_id = %record.task_id,
                    tool = %record.tool,
                    status = ?record.status,
                    "task's worker lost (its lease lapsed): task ended"
                );
                let Some(bus) = core.bus.get() else {
                    tracing::warn!(task_id = %record.task_id, "no change bus: the task's ending is not published");
                    continue;
                };
                if let Some(change) = notification(&record)
                    && let Err(e) = bus.publish(change)
                {
                    tracing::warn!(error = %e, "task notification not published");
                }
            }
        }
        Ok(Err(e)) => tracing::debug!(error = %e, "lapsed task leases not swept"),
        Err(_) => tracing::debug!("lapsed task leases not swept: the store did not answer in time"),
    }
}
