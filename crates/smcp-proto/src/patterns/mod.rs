//! Cross-cutting protocol patterns (`patterns/`): multi round-trip requests, progress,
//! subscriptions and cancellation.

pub mod cancellation;
pub mod mrtr;
pub mod progress;
pub mod subscriptions;
