//! The listen streams open on one server instance: the caps (in total and per client
//! address) and the instance's shutdown signal.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

use crate::config::ListenConfig;

/// The open listen streams of one server instance.
#[derive(Debug, Default)]
pub(crate) struct ListenRegistry {
    counts: Mutex<Counts>,
    pub(crate) shutdown: CancellationToken,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    per_address: HashMap<IpAddr, usize>,
}

/// Why a stream could not be opened.
pub(crate) enum Refusal {
    ShuttingDown,
    Total(usize),
    Address(usize),
}

impl ListenRegistry {
    pub(crate) fn open(&self) -> usize {
        self.counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .total
    }

    pub(crate) fn shutdown(&self) {
        self.shutdown.cancel();
    }

    pub(crate) fn acquire(
        self: &Arc<Self>,
        address: Option<IpAddr>,
        config: &ListenConfig,
    ) -> Result<Slot, Refusal> {
        if self.shutdown.is_cancelled() {
            return Err(Refusal::ShuttingDown);
        }
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        if counts.total >= config.max_streams {
            return Err(Refusal::Total(config.max_streams));
        }
        if let Some(address) = address {
            let n = counts.per_address.entry(address).or_insert(0);
            if *n >= config.max_streams_per_address {
                return Err(Refusal::Address(config.max_streams_per_address));
            }
            *n += 1;
        }
        counts.total += 1;
        Ok(Slot {
            registry: self.clone(),
            address,
        })
    }
}

/// One counted stream; dropping it gives the place back.
pub(crate) struct Slot {
    registry: Arc<ListenRegistry>,
    address: Option<IpAddr>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self
            .registry
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        counts.total = counts.total.saturating_sub(1);
        if let Some(address) = self.address
            && let Some(n) = counts.per_address.get_mut(&address)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                counts.per_address.remove(&address);
            }
        }
    }
}
