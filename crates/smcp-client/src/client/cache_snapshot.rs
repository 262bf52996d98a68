//! The client's [`Cache`](crate::Cache) kept across processes: a snapshot without credentials,
//! and its restore under this client's credentials.

use serde_json::Value;

use super::handle::Client;

impl Client {
    /// The fresh entries of this client's [`Cache`](crate::Cache) (its private ones and the public ones) as
    /// JSON, each with the wall-clock time it expires, for a host that keeps cached results
    /// across processes (the `smcp` CLI keeps one file per endpoint and credentials). No
    /// credential is in it. `None` without a cache.
    ///
    /// # Examples
    ///
    /// Keeping the cache across restarts:
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// if let Some(snapshot) = client.cache_snapshot() {
    ///     std::fs::write("cache.json", serde_json::to_vec(&snapshot)?)?;
    /// }
    /// // … in the next run, with a client built with a cache:
    /// let snapshot: serde_json::Value = serde_json::from_slice(&std::fs::read("cache.json")?)?;
    /// let restored = client.restore_cache(&snapshot);
    /// println!("{restored} entries restored");
    /// # Ok(()) }
    /// ```
    pub fn cache_snapshot(&self) -> Option<Value> {
        let cache = self.inner.cache.as_ref()?;
        Some(cache.snapshot(&self.inner.auth_context))
    }

    /// Restores a [`cache_snapshot`](Self::cache_snapshot) into this client's cache, private
    /// entries under this client's credentials; entries expired since are skipped. Restore
    /// only a snapshot taken for the same endpoint and credentials. Returns how many entries
    /// were restored (0 without a cache).
    pub fn restore_cache(&self, snapshot: &Value) -> usize {
        match &self.inner.cache {
            Some(cache) => cache.restore(&self.inner.auth_context, snapshot),
            None => 0,
        }
    }
}
