//! `server/discover` (`server/discover.mdx`; `schema.ts` `DiscoverRequest`, `DiscoverResult`).
//!
//! The server's identity is not a top-level member: it goes in
//! `result._meta["io.modelcontextprotocol/serverInfo"]` (see [`DiscoverResult::server_info`]).

use serde::{Deserialize, Serialize};

use crate::basic::{CacheScope, Implementation, Meta, RequestParams, ResultType};
use crate::capabilities::ServerCapabilities;

/// Params of `server/discover`: only `_meta`.
pub type DiscoverRequestParams = RequestParams;

/// The result of `server/discover`. Cacheable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Result metadata (`io.modelcontextprotocol/serverInfo` belongs here).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result type.
    #[serde(default)]
    pub result_type: ResultType,
    /// Protocol versions the server supports.
    pub supported_versions: Vec<String>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// How to use the server, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long the client may cache this result, in milliseconds (absent = 0).
    #[serde(default)]
    pub ttl_ms: u64,
    /// Who may cache it (absent = private).
    #[serde(default)]
    pub cache_scope: CacheScope,
}

impl DiscoverResult {
    /// A complete result supporting this crate's protocol version, with `serverInfo` in `_meta`.
    pub fn new(capabilities: ServerCapabilities, server_info: &Implementation) -> Self {
        let mut meta = Meta::new();
        if let Ok(info) = serde_json::to_value(server_info) {
            meta.insert(crate::meta::SERVER_INFO.to_owned(), info);
        }
        Self {
            meta: Some(meta),
            result_type: ResultType::Complete,
            supported_versions: vec![crate::PROTOCOL_VERSION.to_owned()],
            capabilities,
            instructions: None,
            ttl_ms: 0,
            cache_scope: CacheScope::Private,
        }
    }

    /// The server's self-reported identity from `_meta`, if present and well-formed.
    pub fn server_info(&self) -> Option<Implementation> {
        let v = self.meta.as_ref()?.get(crate::meta::SERVER_INFO)?;
        serde_json::from_value(v.clone()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cache_fields_default_and_server_info_reads_back() {
        let r: DiscoverResult = serde_json::from_value(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
        }))
        .unwrap();
        assert_eq!(r.ttl_ms, 0);
        assert_eq!(r.cache_scope, CacheScope::Private);
        assert_eq!(r.result_type, ResultType::Complete);
        assert_eq!(r.server_info(), Some(Implementation::new("s", "1")));
        let built = DiscoverResult::new(
            ServerCapabilities::default(),
            &Implementation::new("s", "1"),
        );
        assert_eq!(built.server_info(), r.server_info());
    }
}
