//! [`InProcessBus`]: the default bus, one process and one [`Fanout`].

use crate::bus::ChangeBus;
use crate::change::{Change, Interest};
use crate::error::BusError;
use crate::fanout::{Fanout, Subscription};

/// The default bus: delivers within this process only.
#[derive(Debug, Default, Clone)]
pub struct InProcessBus {
    fanout: Fanout,
}

impl InProcessBus {
    /// A bus with no subscribers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Subscribers currently attached.
    pub fn subscribers(&self) -> usize {
        self.fanout.subscribers()
    }

    /// Ends every subscription (each sees the end of its stream, not an overflow) and
    /// refuses new ones.
    pub fn close(&self) {
        self.fanout.close();
    }
}

impl ChangeBus for InProcessBus {
    fn publish(&self, change: Change) -> Result<(), BusError> {
        if self.fanout.is_closed() {
            return Err(BusError::Closed);
        }
        self.fanout.deliver(&change);
        Ok(())
    }

    fn subscribe(&self, interest: Interest, capacity: usize) -> Result<Subscription, BusError> {
        self.fanout.subscribe(interest, capacity)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::atomic::AtomicUsize;

    use std::sync::Arc;
    use std::sync::atomic::Ordering;
    use std::task::Context;

    use super::*;

    fn all() -> Interest {
        Interest {
            resource_uris: vec!["test://".to_owned()],
            ..Interest::all_lists()
        }
    }

    #[tokio::test]
    async fn delivers_only_what_the_interest_selects() {
        let bus = InProcessBus::new();
        let mut prompts = bus
            .subscribe(
                Interest {
                    prompts_list_changed: true,
                    ..Interest::default()
                },
                4,
            )
            .unwrap();
        bus.publish(Change::ToolsListChanged).unwrap();
        bus.publish(Change::PromptsListChanged).unwrap();
        assert_eq!(prompts.recv().await, Some(Change::PromptsListChanged));
        let waker = futures_util::task::noop_waker();
        assert!(
            prompts
                .poll_recv(&mut Context::from_waker(&waker))
                .is_pending()
        );
    }

    #[tokio::test]
    async fn list_changes_coalesce_and_uris_deduplicate() {
        let bus = InProcessBus::new();
        let mut sub = bus.subscribe(all(), 2).unwrap();
        for _ in 0..100 {
            bus.publish(Change::ToolsListChanged).unwrap();
            bus.publish(Change::resource_updated("test://a")).unwrap();
        }
        assert_eq!(sub.recv().await, Some(Change::ToolsListChanged));
        assert_eq!(sub.recv().await, Some(Change::resource_updated("test://a")));
        assert!(!sub.is_overflowed());
    }

    #[tokio::test]
    async fn overflow_closes_the_subscription_and_runs_the_hook_once() {
        let bus = InProcessBus::new();
        let mut sub = bus.subscribe(all(), 3).unwrap();
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        sub.on_overflow(move || {
            h.fetch_add(1, Ordering::SeqCst);
        });
        for i in 0..10 {
            bus.publish(Change::resource_updated(format!("test://{i}")))
                .unwrap();
        }
        assert_eq!(hits.load(Ordering::SeqCst), 1);
        assert!(sub.is_overflowed());
        assert_eq!(sub.recv().await, None, "buffer dropped on overflow");
    }

    #[tokio::test]
    async fn drop_detaches_and_close_ends_streams() {
        let bus = InProcessBus::new();
        let a = bus.subscribe(all(), 1).unwrap();
        let mut b = bus.subscribe(all(), 1).unwrap();
        assert_eq!(bus.subscribers(), 2);
        drop(a);
        assert_eq!(bus.subscribers(), 1);
        let waiter = tokio::spawn(async move { (b.recv().await, b.is_overflowed()) });
        tokio::task::yield_now().await;
        bus.close();
        assert_eq!(waiter.await.unwrap(), (None, false));
        assert!(bus.subscribe(all(), 1).is_err());
        assert!(bus.publish(Change::ToolsListChanged).is_err());
    }

    #[tokio::test]
    async fn topic_notifications_replace_unread_ones_and_count_against_capacity() {
        let bus = InProcessBus::new();
        let mut sub = bus
            .subscribe(
                Interest {
                    topics: vec!["a".to_owned(), "b".to_owned()],
                    ..Interest::default()
                },
                2,
            )
            .unwrap();
        bus.publish(Change::topic("a", "notifications/tasks", r#"{"n":1}"#))
            .unwrap();
        bus.publish(Change::topic("b", "notifications/tasks", r#"{"n":2}"#))
            .unwrap();
        bus.publish(Change::topic("a", "notifications/tasks", r#"{"n":3}"#))
            .unwrap();
        bus.publish(Change::topic("c", "notifications/tasks", r#"{"n":4}"#))
            .unwrap();
        assert_eq!(
            sub.recv().await,
            Some(Change::topic("a", "notifications/tasks", r#"{"n":3}"#))
        );
        assert_eq!(
            sub.recv().await,
            Some(Change::topic("b", "notifications/tasks", r#"{"n":2}"#))
        );
        assert!(!sub.is_overflowed());
        for i in 0..3 {
            let topic = if i % 2 == 0 { "a" } else { "b" };
            bus.publish(Change::topic(topic, "m", "{}")).unwrap();
        }
        assert!(
            !sub.is_overflowed(),
            "two topics never exceed a capacity of two"
        );
        let mut tight = bus
            .subscribe(
                Interest {
                    topics: vec!["a".to_owned()],
                    resource_uris: vec!["test://".to_owned()],
                    ..Interest::default()
                },
                1,
            )
            .unwrap();
        bus.publish(Change::resource_updated("test://x")).unwrap();
        bus.publish(Change::topic("a", "m", "{}")).unwrap();
        assert!(tight.is_overflowed());
        assert_eq!(tight.recv().await, None);
    }

    #[test]
    fn the_trait_is_object_safe() {
        let bus: Arc<dyn ChangeBus> = Arc::new(InProcessBus::new());
        assert!(bus.subscribe(Interest::default(), 1).is_ok());
    }
}
