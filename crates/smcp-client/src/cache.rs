//! Optional result cache following the CacheableResult rules (A11).
//!
//! * Only the six cacheable methods, only `complete` results, never an MRTR retry (a request
//!   carrying `inputResponses` or `requestState`).
//! * Keyed by method and the params without `_meta`, so a different method or differently
//!   keyed params never hit.
//! * `ttlMs` absent or negative → 0 (not stored); fresh while `now < received + ttlMs`.
//! * `private` entries are keyed by the client's authorization context too, so a cache shared
//!   between clients with different credentials never serves one's private data to another;
//!   `public` entries are shared.
//! * A `list_changed` notification drops the matching lists; `resources/updated` drops that
//!   resource's reads; an invalid cursor drops every cached page of that list.
//! * The cache never polls.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use smcp_proto::jsonrpc::RawResult;
use smcp_proto::messages::method;
use tokio::time::Instant;

/// A result cache that [`crate::ClientBuilder::cache`] installs; clone it to share it between
/// clients (public entries are shared, private ones stay per authorization context).
///
/// # Examples
///
/// ```
/// use smcp_client::{Cache, Client};
///
/// let cache = Cache::new();
/// let client = Client::builder("http://127.0.0.1:8931/mcp").cache(cache.clone()).build()?;
/// assert!(cache.is_empty()); // filled by cacheable results (lists, reads) as they arrive
/// # let _ = client;
/// # Ok::<(), smcp_client::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Cache {
    entries: Arc<Mutex<HashMap<Key, Entry>>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    method: String,
    /// Canonical JSON of the params without `_meta`.
    params: String,
    /// Empty for public entries; the authorization context for private ones.
    context: String,
}

#[derive(Debug, Clone)]
struct Entry {
    /// The result as the server sent it.
    value: RawResult,
    expires: Instant,
}

/// The members of a result the rules read; the rest is not decoded.
#[derive(Deserialize)]
struct Rules {
    #[serde(rename = "resultType")]
    result_type: Option<Value>,
    #[serde(rename = "ttlMs")]
    ttl_ms: Option<Value>,
    #[serde(rename = "cacheScope")]
    cache_scope: Option<Value>,
}

/// The methods whose results are cacheable.
fn cacheable(method_name: &str) -> bool {
    matches!(
        method_name,
        method::DISCOVER
            | method::TOOLS_LIST
            | method::PROMPTS_LIST
            | method::RESOURCES_LIST
            | method::RESOURCES_TEMPLATES_LIST
            | method::RESOURCES_READ
    )
}

/// The params as a key: `_meta` removed, serialized (serde_json keeps insertion order, and the
/// client builds params the same way every time).
fn params_key(params: &Map<String, Value>) -> Option<String> {
    if params.contains_key("inputResponses") || params.contains_key("requestState") {
        return None;
    }
    let mut p = params.clone();
    p.remove("_meta");
    serde_json::to_string(&p).ok()
}

impl Cache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A fresh cached result for this request, if any (private first, then public).
    pub(crate) fn get(
        &self,
        method_name: &str,
        params: &Map<String, Value>,
        context: &str,
    ) -> Option<RawResult> {
        if !cacheable(method_name) {
            return None;
        }
        let params = params_key(params)?;
        let now = Instant::now();
        let mut entries = self.lock();
        for ctx in [context, ""] {
            let key = Key {
                method: method_name.to_owned(),
                params: params.clone(),
                context: ctx.to_owned(),
            };
            match entries.get(&key) {
                Some(e) if now < e.expires => return Some(e.value.clone()),
                Some(_) => {
                    entries.remove(&key);
                }
                None => {}
            }
        }
        None
    }

    /// Stores a result if the rules allow it.
    pub(crate) fn put(
        &self,
        method_name: &str,
        params: &Map<String, Value>,
        context: &str,
        result: &RawValue,
    ) {
        if !cacheable(method_name) {
            return;
        }
        let Some(params) = params_key(params) else {
            return;
        };
        let Ok(rules) = serde_json::from_str::<Rules>(result.get()) else {
            return;
        };
        if !matches!(
            rules.result_type.as_ref().map(Value::as_str),
            None | Some(Some("complete"))
        ) {
            return;
        }
        let ttl = match rules.ttl_ms {
            Some(Value::Number(n)) => n
                .as_u64()
                .or_else(|| n.as_f64().filter(|f| *f > 0.0).map(|f| f as u64))
                .unwrap_or(0),
            _ => 0,
        };
        if ttl == 0 {
            return;
        }
        let public = rules.cache_scope.as_ref().and_then(Value::as_str) == Some("public");
        let key = Key {
            method: method_name.to_owned(),
            params,
            context: if public {
                String::new()
            } else {
                context.to_owned()
            },
        };
        let expires = Instant::now() + Duration::from_millis(ttl);
        self.lock().insert(
            key,
            Entry {
                value: result.to_owned(),
                expires,
            },
        );
    }

    /// Drops every cached result of `method_name`.
    pub fn invalidate_method(&self, method_name: &str) {
        self.lock().retain(|k, _| k.method != method_name);
    }

    /// Drops the cached reads of one resource URI.
    pub fn invalidate_resource(&self, uri: &str) {
        self.lock().retain(|k, _| {
            k.method != method::RESOURCES_READ
                || serde_json::from_str::<Value>(&k.params)
                    .ok()
                    .and_then(|p| p.get("uri").and_then(Value::as_str).map(|u| u != uri))
                    .unwrap_or(true)
        });
    }

    /// Applies a notification seen on a `subscriptions/listen` stream.
    pub(crate) fn on_notification(&self, notification_method: &str, params: Option<&Value>) {
        match notification_method {
            method::TOOLS_LIST_CHANGED => self.invalidate_method(method::TOOLS_LIST),
            method::PROMPTS_LIST_CHANGED => self.invalidate_method(method::PROMPTS_LIST),
            method::RESOURCES_LIST_CHANGED => {
                self.invalidate_method(method::RESOURCES_LIST);
                self.invalidate_method(method::RESOURCES_TEMPLATES_LIST);
            }
            method::RESOURCES_UPDATED => {
                if let Some(uri) = params.and_then(|p| p.get("uri")).and_then(Value::as_str) {
                    self.invalidate_resource(uri);
                }
            }
            _ => {}
        }
    }

    /// The fresh entries seen from `context` (its private ones and the public ones), with the
    /// wall-clock time each expires, as JSON; private entries are written without their
    /// context, so no credential is in the snapshot.
    pub(crate) fn snapshot(&self, context: &str) -> Value {
        let now = Instant::now();
        let wall = now_unix_ms();
        let entries: Vec<Value> = self
            .lock()
            .iter()
            .filter(|(k, e)| now < e.expires && (k.context.is_empty() || k.context == context))
            .map(|(k, e)| {
                let left = u64::try_from(e.expires.duration_since(now).as_millis()).unwrap_or(0);
                serde_json::json!({
                    "method": k.method,
                    "params": k.params,
                    "public": k.context.is_empty(),
                    "expiresAtMs": wall.saturating_add(left),
                    "result": e.value,
                })
            })
            .collect();
        serde_json::json!({ "entries": entries })
    }

    /// Restores a [`snapshot`](Self::snapshot) under `context`; expired or malformed entries
    /// are skipped. Returns how many were restored.
    pub(crate) fn restore(&self, context: &str, snapshot: &Value) -> usize {
        let now = Instant::now();
        let wall = now_unix_ms();
        let mut restored = 0;
        let mut entries = self.lock();
        for e in snapshot
            .get("entries")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .take(MAX_RESTORED)
        {
            let (Some(m), Some(params), Some(expires), Some(Ok(result))) = (
                e.get("method").and_then(Value::as_str),
                e.get("params").and_then(Value::as_str),
                e.get("expiresAtMs").and_then(Value::as_u64),
                e.get("result").map(serde_json::value::to_raw_value),
            ) else {
                continue;
            };
            if !cacheable(m) || expires <= wall {
                continue;
            }
            let public = e.get("public").and_then(Value::as_bool) == Some(true);
            entries.insert(
                Key {
                    method: m.to_owned(),
                    params: params.to_owned(),
                    context: if public {
                        String::new()
                    } else {
                        context.to_owned()
                    },
                },
                Entry {
                    value: result,
                    expires: now + Duration::from_millis(expires - wall),
                },
            );
            restored += 1;
        }
        restored
    }

    /// Number of stored entries (fresh or not), for tests and diagnostics.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Most entries one [`Client::restore_cache`](crate::Client::restore_cache) takes.
const MAX_RESTORED: usize = 1_000;

fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The text a server would send for `v`.
    fn raw(v: &Value) -> RawResult {
        serde_json::value::to_raw_value(v).unwrap()
    }

    /// A cached result, read back as a value.
    fn value(r: Option<RawResult>) -> Option<Value> {
        r.map(|r| serde_json::from_str(r.get()).unwrap())
    }

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn follows_ttl_scope_and_invalidation() {
        let cache = Cache::new();
        let p = obj(json!({"_meta": {"a": 1}}));
        let r =
            json!({"resultType": "complete", "tools": [], "ttlMs": 1000, "cacheScope": "private"});
        cache.put("tools/list", &p, "alice", &raw(&r));
        assert_eq!(
            value(cache.get("tools/list", &obj(json!({})), "alice")),
            Some(r.clone())
        );
        assert_eq!(
            value(cache.get("tools/list", &p, "bob")),
            None,
            "private is per context"
        );
        assert_eq!(
            value(cache.get("prompts/list", &p, "alice")),
            None,
            "other method"
        );
        assert_eq!(
            value(cache.get("tools/list", &obj(json!({"cursor": "x"})), "alice")),
            None
        );
        tokio::time::advance(Duration::from_millis(1001)).await;
        assert_eq!(value(cache.get("tools/list", &p, "alice")), None, "expired");

        let public = json!({"resultType": "complete", "contents": [], "ttlMs": 1000, "cacheScope": "public"});
        let read = obj(json!({"uri": "a://x"}));
        cache.put("resources/read", &read, "alice", &raw(&public));
        assert!(
            value(cache.get("resources/read", &read, "bob")).is_some(),
            "public is shared"
        );
        cache.on_notification(
            "notifications/resources/updated",
            Some(&json!({"uri": "a://x"})),
        );
        assert!(value(cache.get("resources/read", &read, "bob")).is_none());
    }

    #[test]
    fn a_snapshot_restores_fresh_entries_without_credentials() {
        let cache = Cache::new();
        let p = obj(json!({}));
        let private = json!({"tools": [], "ttlMs": 60_000, "cacheScope": "private"});
        let public = json!({"prompts": [], "ttlMs": 60_000, "cacheScope": "public"});
        cache.put("tools/list", &p, "Bearer secret", &raw(&private));
        cache.put("prompts/list", &p, "Bearer secret", &raw(&public));
        cache.put("resources/list", &p, "other", &raw(&private));
        let snap = cache.snapshot("Bearer secret");
        assert!(!snap.to_string().contains("secret"), "{snap}");
        assert_eq!(snap["entries"].as_array().unwrap().len(), 2, "{snap}");
        let restored = Cache::new();
        assert_eq!(restored.restore("ctx", &snap), 2);
        assert_eq!(value(restored.get("tools/list", &p, "ctx")), Some(private));
        assert_eq!(value(restored.get("tools/list", &p, "another")), None);
        assert_eq!(
            value(restored.get("prompts/list", &p, "another")),
            Some(public)
        );
        let mut stale = snap;
        stale["entries"][0]["expiresAtMs"] = json!(1);
        stale["entries"][1]["method"] = json!("tools/call");
        assert_eq!(Cache::new().restore("ctx", &stale), 0);
    }

    #[test]
    fn never_caches_retries_zero_negative_or_incomplete() {
        let cache = Cache::new();
        let retry = obj(json!({"uri": "a://x", "requestState": "s"}));
        let ok = json!({"contents": [], "ttlMs": 1000});
        cache.put("resources/read", &retry, "", &raw(&ok));
        cache.put(
            "resources/read",
            &obj(json!({})),
            "",
            &raw(&json!({"contents": [], "ttlMs": -5})),
        );
        cache.put(
            "resources/read",
            &obj(json!({})),
            "",
            &raw(&json!({"contents": []})),
        );
        cache.put(
            "resources/read",
            &obj(json!({})),
            "",
            &raw(&json!({"resultType": "input_required", "ttlMs": 1000})),
        );
        cache.put("tools/call", &obj(json!({})), "", &raw(&ok));
        assert!(cache.is_empty());
    }
}
