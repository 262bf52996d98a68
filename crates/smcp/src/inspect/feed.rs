//! The page's event feed: every event the inspector publishes goes to each open page as one
//! SSE `data:` line, and the wire entries are also kept (the last [`WIRE_KEPT`]) so that a
//! page opened or reloaded later sees what happened before it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde_json::Value;
use tokio::sync::broadcast;

/// Wire entries kept for pages that connect later.
pub(crate) const WIRE_KEPT: usize = 20_000;
/// Events queued for a page that reads slowly; a page further behind is disconnected and
/// reconnects (its `EventSource` does so on its own) to a fresh replay.
const QUEUED: usize = 8_192;

/// The event feed. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Feed {
    inner: Arc<Inner>,
}

struct Inner {
    tx: broadcast::Sender<Arc<str>>,
    wire: Mutex<VecDeque<Arc<str>>>,
    started: Instant,
}

impl Feed {
    pub(crate) fn new() -> Self {
        Self {
            inner: Arc::new(Inner {
                tx: broadcast::channel(QUEUED).0,
                wire: Mutex::new(VecDeque::new()),
                started: Instant::now(),
            }),
        }
    }

    /// Milliseconds since the inspector started, for the entries' `at`.
    pub(crate) fn millis_since_start(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.inner.started)
            .as_secs_f64()
            * 1000.0
    }

    fn wire(&self) -> MutexGuard<'_, VecDeque<Arc<str>>> {
        self.inner
            .wire
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sends `event` (an object with a `type`) to every open page.
    pub(crate) fn publish(&self, event: &Value) {
        let text: Arc<str> = Arc::from(event.to_string());
        if event.get("type").and_then(Value::as_str) == Some("wire") {
            // Kept and sent under one lock: a page subscribing meanwhile gets it once.
            let mut wire = self.wire();
            if wire.len() == WIRE_KEPT {
                wire.pop_front();
            }
            wire.push_back(Arc::clone(&text));
            let _ = self.inner.tx.send(text);
        } else {
            let _ = self.inner.tx.send(text);
        }
    }

    /// The wire entries kept so far and the events from now on.
    pub(crate) fn subscribe(&self) -> (Vec<Arc<str>>, broadcast::Receiver<Arc<str>>) {
        let wire = self.wire();
        let rx = self.inner.tx.subscribe();
        (wire.iter().cloned().collect(), rx)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn a_late_page_gets_the_kept_wire_entries_once_and_then_everything() {
        let feed = Feed::new();
        feed.publish(&json!({"type": "wire", "entry": {"seq": 1}}));
        feed.publish(&json!({"type": "progress", "call": "c1"}));
        let (kept, mut rx) = feed.subscribe();
        assert_eq!(kept.len(), 1, "only wire entries are kept");
        assert!(kept[0].contains("\"seq\":1"));
        feed.publish(&json!({"type": "wire", "entry": {"seq": 2}}));
        feed.publish(&json!({"type": "result", "call": "c1"}));
        assert!(rx.recv().await.unwrap().contains("\"seq\":2"));
        assert!(rx.recv().await.unwrap().contains("\"result\""));
    }

    #[test]
    fn the_kept_entries_are_bounded() {
        let feed = Feed::new();
        for seq in 0..WIRE_KEPT + 10 {
            feed.publish(&json!({"type": "wire", "entry": {"seq": seq}}));
        }
        let (kept, _) = feed.subscribe();
        assert_eq!(kept.len(), WIRE_KEPT);
        assert!(kept[0].contains("\"seq\":10"), "{}", kept[0]);
    }
}
