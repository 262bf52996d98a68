//! Caching of results (`server/utilities/caching.mdx`; `schema.ts` `CacheableResult`).
//!
//! Six complete results carry `ttlMs` and `cacheScope`: `server/discover`, `tools/list`,
//! `prompts/list`, `resources/list`, `resources/templates/list` and `resources/read`. On
//! deserialize an absent `ttlMs` is 0 and an absent `cacheScope` is `private`; both are always
//! written.

pub use crate::basic::CacheScope;
use crate::server::discover::DiscoverResult;
use crate::server::prompts::ListPromptsResult;
use crate::server::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult,
};
use crate::server::tools::ListToolsResult;

/// A result carrying `ttlMs` and `cacheScope`.
pub trait CacheableResult {
    /// How long the result may be served from cache, in milliseconds.
    fn ttl_ms(&self) -> u64;
    /// Who may cache it.
    fn cache_scope(&self) -> CacheScope;
    /// Sets both members.
    fn set_cache(&mut self, ttl_ms: u64, scope: CacheScope);
}

macro_rules! cacheable {
    ($($t:ty),*) => {$(
        impl CacheableResult for $t {
            fn ttl_ms(&self) -> u64 {
                self.ttl_ms
            }
            fn cache_scope(&self) -> CacheScope {
                self.cache_scope
            }
            fn set_cache(&mut self, ttl_ms: u64, scope: CacheScope) {
                self.ttl_ms = ttl_ms;
                self.cache_scope = scope;
            }
        }
    )*};
}

cacheable!(
    DiscoverResult,
    ListToolsResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_cache_updates_both_members() {
        let mut r = ListToolsResult::new(vec![]);
        r.set_cache(5_000, CacheScope::Public);
        assert_eq!((r.ttl_ms(), r.cache_scope()), (5_000, CacheScope::Public));
    }
}
