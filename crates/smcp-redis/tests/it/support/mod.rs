//! A real `redis-server` on a free loopback port, started and stopped by the test: the helper
//! of `smcp_test_support::redis` (shared with smcpd's multi-instance tests).
//! `SMCP_REDIS=skip` skips the tests that need it.

pub(crate) use smcp_test_support::redis::{RedisServer, skipped};
