//! The requests and subscriptions in flight on a stream connection, by id: their
//! cancellation tokens, so `notifications/cancelled` can reach them, an id in use is refused,
//! and the in-flight limits hold.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::json;
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::RequestId;
use tokio_util::sync::CancellationToken;

use super::options::StdioOptions;
use crate::core::error::SERVER_BUSY;

/// The requests and subscriptions in flight, by id: their cancellation tokens.
#[derive(Debug, Default)]
pub(super) struct Running {
    entries: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    by_id: HashMap<RequestId, Entry>,
    requests: usize,
    subscriptions: usize,
}

#[derive(Debug)]
struct Entry {
    cancel: CancellationToken,
    subscription: bool,
}

/// An entry in [`Running`], removed when dropped.
pub(super) struct Registration {
    running: Arc<Running>,
    id: RequestId,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut entries = self.running.lock();
        if let Some(entry) = entries.by_id.remove(&self.id) {
            if entry.subscription {
                entries.subscriptions -= 1;
            } else {
                entries.requests -= 1;
            }
        }
    }
}

impl Running {
    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a request with this id may start: its id is not in use, and there is room.
    pub(super) fn admit(
        &self,
        id: &RequestId,
        subscription: bool,
        options: &StdioOptions,
    ) -> Result<(), ErrorObject> {
        let entries = self.lock();
        if entries.by_id.contains_key(id) {
            return Err(ErrorObject::invalid_request(format!(
                "Invalid request: id {id} is already used by a request in flight"
            )));
        }
        let (open, limit, what) = if subscription {
            (
                entries.subscriptions,
                options.max_subscriptions,
                "subscriptions",
            )
        } else {
            (entries.requests, options.max_in_flight, "requests")
        };
        if open >= limit {
            return Err(ErrorObject::new(
                SERVER_BUSY,
                format!(
                    "Server busy: {limit} {what} are in flight on this connection, the most allowed"
                ),
            )
            .with_data(json!({ "limit": limit })));
        }
        Ok(())
    }

    /// Records a request that keeps running after dispatch.
    pub(super) fn register(
        self: &Arc<Self>,
        id: RequestId,
        cancel: CancellationToken,
        subscription: bool,
    ) -> Registration {
        let mut entries = self.lock();
        if subscription {
            entries.subscriptions += 1;
        } else {
            entries.requests += 1;
        }
        entries.by_id.insert(
            id.clone(),
            Entry {
                cancel,
                subscription,
            },
        );
        Registration {
            running: self.clone(),
            id,
        }
    }

    pub(super) fn cancel(&self, id: &RequestId) -> bool {
        match self.lock().by_id.get(id) {
            Some(entry) => {
                entry.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancels every request still running (not subscriptions) and returns their ids.
    pub(super) fn cut(&self) -> Vec<RequestId> {
        let entries = self.lock();
        entries
            .by_id
            .iter()
            .filter(|(_, e)| !e.subscription)
            .map(|(id, e)| {
                e.cancel.cancel();
                id.clone()
            })
            .collect()
    }
}
