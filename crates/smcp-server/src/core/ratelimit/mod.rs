//! Rate limits and quotas per principal and per tool: token buckets (a rate and a burst)
//! behind a plain trait, decided before dispatch does any work.
//!
//! A server built with [`ServerBuilder::rate_limits`](crate::ServerBuilder::rate_limits)
//! asks its [`RateLimiter`] about every request (except `subscriptions/listen`, which has its
//! own caps) once the request is parsed: one call with every bucket the request draws from
//! (the caller's, the tool's for the caller, the tool's for everyone), which takes one token
//! from each or from none. A refusal is a JSON-RPC error, code [`SERVER_BUSY`](crate::SERVER_BUSY)
//! (−31000, the code of every "the server is at a limit" refusal), with `data.limit` the rule
//! (`"principal"`, `"tool:NAME"`, `"global-tool:NAME"`) and `data.retryAfterMs`; the HTTP
//! transport answers it with `429 Too Many Requests` and `Retry-After` (see
//! [`RateLimited::from_error_object`]). Without rules nothing is asked: one branch per request.
//!
//! The buckets are a GCRA (generic cell rate algorithm): one timestamp per bucket, the
//! "theoretical arrival time" of the next token, which is equivalent to a token bucket that
//! refills at `rate` up to `burst` tokens ([`gcra`]). A bucket whose time has passed is full,
//! so it can be forgotten: [`MemoryRateLimiter`] evicts it, and a shared store lets the key
//! expire then (`smcp_redis::RedisRateLimiter`).

mod gate;
mod limiter;
mod memory;
mod rate;
mod rules;

pub use crate::core::future::BoxFuture;
pub(crate) use gate::{Gate, Gatekeeper};
pub use limiter::{
    Bucket, BucketKey, Decision, LimitError, RateLimited, RateLimiter, Verdict, gcra, unix_micros,
};
pub use memory::{DEFAULT_MAX_BUCKETS, MemoryRateLimiter};
pub use rate::{MAX_BURST, Rate, RuleError};
pub use rules::{Anonymous, RateLimits, RateRule, Scope};
