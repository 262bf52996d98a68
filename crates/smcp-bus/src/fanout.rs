//! Local delivery: one bounded buffer per subscriber, filled by [`Fanout::deliver`] and
//! drained by the subscriber's [`Subscription`].
//!
//! The buffer is not a plain queue. The three list-changed kinds are flags: a second
//! `tools/list_changed` before the first was read says nothing new, so it coalesces and costs
//! nothing. `resources/updated` URIs queue (deduplicated) up to the subscriber's capacity, and
//! so do topic notifications ([`Change::Topic`]: a newer one for the same topic replaces the
//! unread one, since each carries the topic's whole state); one more closes the subscription as *overflowed* and runs its overflow hook, which the server
//! uses to drop the connection of a client that stopped reading. Memory per subscriber is
//! therefore bounded whatever the client does.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use crate::change::{Change, Interest, TopicNotification};
use crate::error::BusError;

const TOOLS: u8 = 1;
const PROMPTS: u8 = 2;
const RESOURCES: u8 = 4;

/// Runs once when a subscription overflows.
type OverflowHook = Box<dyn FnOnce() + Send + 'static>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The set of local subscribers of a bus. Cheap to clone; clones share subscribers.
#[derive(Debug, Default, Clone)]
pub struct Fanout {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    slots: Mutex<Slots>,
    closed: AtomicBool,
}

#[derive(Debug, Default)]
struct Slots {
    next_id: u64,
    by_id: HashMap<u64, Arc<Slot>>,
}

struct Slot {
    interest: Interest,
    capacity: usize,
    state: Mutex<SlotState>,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("interest", &self.interest)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct SlotState {
    flags: u8,
    uris: VecDeque<Arc<str>>,
    topics: VecDeque<Arc<TopicNotification>>,
    waker: Option<Waker>,
    closed: bool,
    overflowed: bool,
    hook: Option<OverflowHook>,
}

impl SlotState {
    /// Closes the subscription as overflowed, dropping its buffer.
    fn overflow(&mut self) -> (Option<Waker>, Option<OverflowHook>) {
        self.closed = true;
        self.overflowed = true;
        self.flags = 0;
        self.uris = VecDeque::new();
        self.topics = VecDeque::new();
        let hook = self.hook.take();
        (self.waker.take(), hook)
    }
}

impl Slot {
    /// Buffers `change`; returns the waker to wake and, on overflow, the hook to run (both
    /// called by the caller after the lock is released).
    fn push(&self, change: &Change) -> (Option<Waker>, Option<OverflowHook>) {
        let mut state = lock(&self.state);
        if state.closed {
            return (None, None);
        }
        match change {
            Change::ToolsListChanged => state.flags |= TOOLS,
            Change::PromptsListChanged => state.flags |= PROMPTS,
            Change::ResourcesListChanged => state.flags |= RESOURCES,
            Change::ResourceUpdated { uri } => {
                if state.uris.iter().any(|u| u == uri) {
                    return (None, None);
                }
                if state.uris.len() + state.topics.len() >= self.capacity {
                    return state.overflow();
                }
                state.uris.push_back(uri.clone());
            }
            Change::Topic(n) => {
                if let Some(queued) = state.topics.iter_mut().find(|q| q.topic == n.topic) {
                    *queued = n.clone();
                } else if state.uris.len() + state.topics.len() >= self.capacity {
                    return state.overflow();
                } else {
                    state.topics.push_back(n.clone());
                }
            }
        }
        (state.waker.take(), None)
    }

    fn close(&self) -> Option<Waker> {
        let mut state = lock(&self.state);
        state.closed = true;
        state.waker.take()
    }
}

impl Fanout {
    /// An empty fan-out.
    pub fn new() -> Self {
        Self::default()
    }

    /// Attaches a subscriber; see [`crate::ChangeBus::subscribe`].
    pub fn subscribe(&self, interest: Interest, capacity: usize) -> Result<Subscription, BusError> {
        if self.is_closed() {
            return Err(BusError::Closed);
        }
        let slot = Arc::new(Slot {
            interest,
            capacity: capacity.max(1),
            state: Mutex::new(SlotState::default()),
        });
        let mut slots = lock(&self.shared.slots);
        let id = slots.next_id;
        slots.next_id += 1;
        slots.by_id.insert(id, slot.clone());
        Ok(Subscription {
            id,
            slot,
            fanout: self.shared.clone(),
        })
    }

    /// Buffers `change` for every interested subscriber and wakes them. Returns how many
    /// subscribers it reached. Never blocks on a subscriber.
    pub fn deliver(&self, change: &Change) -> usize {
        self.push_each(|slot, push| {
            if !slot.interest.wants(change) {
                return false;
            }
            push(change);
            true
        })
    }

    /// Tells every subscriber that changes may have been missed (a networked bus lost its
    /// backend for a while): each receives every list-changed kind it asked for and a
    /// `resources/updated` for each URI it subscribed to, which makes a client re-fetch
    /// whatever it watches. Spurious notifications of these kinds are harmless: each only
    /// says "read it again". Topic notifications cannot be synthesized (they carry state) and
    /// are not sent. Returns how many subscribers were told.
    pub fn deliver_missed(&self) -> usize {
        self.push_each(|slot, push| {
            let interest = &slot.interest;
            let lists = [
                (interest.tools_list_changed, Change::ToolsListChanged),
                (interest.prompts_list_changed, Change::PromptsListChanged),
                (
                    interest.resources_list_changed,
                    Change::ResourcesListChanged,
                ),
            ];
            for (wanted, change) in lists {
                if wanted {
                    push(&change);
                }
            }
            for uri in &interest.resource_uris {
                push(&Change::resource_updated(uri.as_str()));
            }
            true
        })
    }

    /// Runs `visit` on every subscriber with a function buffering a change for it; wakes the
    /// subscribers and runs overflow hooks once the lock is released. Returns how many
    /// subscribers `visit` said it reached.
    fn push_each(&self, mut visit: impl FnMut(&Slot, &mut dyn FnMut(&Change)) -> bool) -> usize {
        let mut wake = Vec::new();
        let mut hooks = Vec::new();
        let mut reached = 0;
        {
            let slots = lock(&self.shared.slots);
            for slot in slots.by_id.values() {
                let mut push = |change: &Change| {
                    let (waker, hook) = slot.push(change);
                    wake.extend(waker);
                    hooks.extend(hook);
                };
                if visit(slot, &mut push) {
                    reached += 1;
                }
            }
        }
        for waker in wake {
            waker.wake();
        }
        for hook in hooks {
            hook();
        }
        reached
    }

    /// Subscribers currently attached.
    pub fn subscribers(&self) -> usize {
        lock(&self.shared.slots).by_id.len()
    }

    /// Whether [`Fanout::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::Acquire)
    }

    /// Ends every subscription (not as an overflow) and refuses new ones.
    pub fn close(&self) {
        self.shared.closed.store(true, Ordering::Release);
        let wakers: Vec<Waker> = lock(&self.shared.slots)
            .by_id
            .values()
            .filter_map(|s| s.close())
            .collect();
        for waker in wakers {
            waker.wake();
        }
    }
}

/// One subscriber's end of the bus. Dropping it detaches the subscriber at once.
#[derive(Debug)]
pub struct Subscription {
    id: u64,
    slot: Arc<Slot>,
    fanout: Arc<Shared>,
}

impl Subscription {
    /// The next change: `Ready(None)` once the subscription has ended (bus closed, or
    /// overflowed: see [`Subscription::is_overflowed`]) and its buffer is drained.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Change>> {
        let mut state = lock(&self.slot.state);
        for (bit, change) in [
            (TOOLS, Change::ToolsListChanged),
            (PROMPTS, Change::PromptsListChanged),
            (RESOURCES, Change::ResourcesListChanged),
        ] {
            if state.flags & bit != 0 {
                state.flags &= !bit;
                return Poll::Ready(Some(change));
            }
        }
        if let Some(uri) = state.uris.pop_front() {
            return Poll::Ready(Some(Change::ResourceUpdated { uri }));
        }
        if let Some(n) = state.topics.pop_front() {
            return Poll::Ready(Some(Change::Topic(n)));
        }
        if state.closed {
            return Poll::Ready(None);
        }
        match &state.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => state.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// Waits for the next change; `None` once the subscription has ended.
    pub async fn recv(&mut self) -> Option<Change> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Whether the subscription ended because its buffer overflowed (the subscriber read too
    /// slowly), as opposed to the bus closing.
    pub fn is_overflowed(&self) -> bool {
        lock(&self.slot.state).overflowed
    }

    /// What this subscriber receives.
    pub fn interest(&self) -> &Interest {
        &self.slot.interest
    }

    /// Runs `hook` once if the subscription overflows (at once if it already has). The
    /// hook runs on the publisher's thread: it must be quick and must not publish.
    pub fn on_overflow(&self, hook: impl FnOnce() + Send + 'static) {
        let mut state = lock(&self.slot.state);
        if state.overflowed {
            drop(state);
            hook();
        } else {
            state.hook = Some(Box::new(hook));
        }
    }
}

impl futures_util::Stream for Subscription {
    type Item = Change;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Change>> {
        self.get_mut().poll_recv(cx)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        lock(&self.fanout.slots).by_id.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[tokio::test]
    async fn missed_changes_become_every_wanted_list_kind_and_each_subscribed_uri() {
        let fanout = Fanout::new();
        let mut tools = fanout
            .subscribe(
                Interest {
                    tools_list_changed: true,
                    resource_uris: vec!["test://a".to_owned(), "test://dir/".to_owned()],
                    ..Interest::default()
                },
                8,
            )
            .unwrap();
        let mut prompts = fanout
            .subscribe(
                Interest {
                    prompts_list_changed: true,
                    ..Interest::default()
                },
                8,
            )
            .unwrap();
        assert_eq!(fanout.deliver_missed(), 2);
        let waker = futures_util::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut got = Vec::new();
        while let Poll::Ready(Some(c)) = tools.poll_recv(&mut cx) {
            got.push(c);
        }
        assert_eq!(
            got,
            vec![
                Change::ToolsListChanged,
                Change::resource_updated("test://a"),
                Change::resource_updated("test://dir/"),
            ]
        );
        assert_eq!(prompts.recv().await, Some(Change::PromptsListChanged));
        assert!(prompts.poll_recv(&mut cx).is_pending());
    }
}
