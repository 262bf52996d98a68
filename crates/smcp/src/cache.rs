//! The server's cacheable results kept between runs, so `smcp call` does not fetch the tool
//! list before every call: one file per endpoint and credentials, holding the client's
//! [`Client::cache_snapshot`] (results with the wall-clock time each expires, from the server's
//! `ttlMs`; `private` entries only ever come back to the same endpoint and headers, and no
//! credential is written), and the era of an older server (so the next run skips the
//! 2026-07-28 probe). HTTP only; `--no-cache` turns it off.
//!
//! The directory: `SMCP_CACHE_DIR`, else `$XDG_CACHE_HOME/smcp`, else `$HOME/.cache/smcp`.

use std::path::PathBuf;

use serde_json::Value;
use sha2::Digest as _;
use smcp_client::{Client, Era};

/// Largest cache file read back.
const MAX_FILE: u64 = 8 * 1024 * 1024;

/// The cache directory, if one can be named.
fn dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(d) = var("SMCP_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = var("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("smcp"));
    }
    var("HOME").map(|h| PathBuf::from(h).join(".cache").join("smcp"))
}

/// The file for this endpoint and these headers (a digest: neither is readable from the name).
pub(crate) fn file(url: &str, headers: &[String]) -> Option<PathBuf> {
    let mut h = sha2::Sha256::new();
    h.update(url.as_bytes());
    let mut headers = headers.to_vec();
    headers.sort();
    for header in &headers {
        h.update(b"\n");
        h.update(header.as_bytes());
    }
    let digest = h.finalize();
    let name: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    Some(dir()?.join(format!("{name}.json")))
}

/// Restores the saved entries into `client` (nothing when the file is missing, too large or
/// unreadable: the cache only ever saves requests). Returns how many were restored.
pub(crate) fn load(client: &Client, path: &std::path::Path) -> usize {
    let Ok(meta) = std::fs::metadata(path) else {
        return 0;
    };
    if meta.len() > MAX_FILE {
        return 0;
    }
    let Ok(text) = std::fs::read(path) else {
        return 0;
    };
    match serde_json::from_slice::<Value>(&text) {
        Ok(v) => client.restore_cache(&v),
        Err(_) => 0,
    }
}

/// The era an earlier run found the endpoint speaks, when it was an older one (`"era"` in
/// the file: `session` or `http+sse`).
pub(crate) fn era(path: &std::path::Path) -> Option<Era> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > MAX_FILE {
        return None;
    }
    let v: Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    match v.get("era")?.as_str()? {
        "session" => Some(Era::Session),
        "http+sse" => Some(Era::HttpSse),
        _ => None,
    }
}

/// Saves the client's fresh entries and the era of an older server (removes the file when
/// there is neither). Failures are logged, never fatal.
pub(crate) fn save(client: &Client, path: &std::path::Path) {
    let Some(mut snapshot) = client.cache_snapshot() else {
        return;
    };
    let era = match client.era() {
        Some(Era::Session) => Some("session"),
        Some(Era::HttpSse) => Some("http+sse"),
        _ => None,
    };
    if let (Some(era), Some(obj)) = (era, snapshot.as_object_mut()) {
        obj.insert("era".to_owned(), Value::String(era.to_owned()));
    }
    let empty = snapshot
        .get("entries")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if empty && era.is_none() {
        let _ = std::fs::remove_file(path);
        return;
    }
    if let Err(e) = write(path, &snapshot) {
        tracing::debug!(path = %path.display(), error = %e, "cannot write the cache file");
    }
}

/// Drops the saved entries (the server contradicted them).
pub(crate) fn clear(path: &std::path::Path) {
    let _ = std::fs::remove_file(path);
}

/// Writes atomically (a temporary file renamed over), readable by the owner only.
fn write(path: &std::path::Path, value: &Value) -> std::io::Result<()> {
    use std::io::Write as _;
    let Some(parent) = path.parent() else {
        return Ok(());
    };
    std::fs::create_dir_all(parent)?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut f = options.open(&tmp)?;
    f.write_all(&serde_json::to_vec(value).map_err(std::io::Error::other)?)?;
    f.sync_all().ok();
    drop(f);
    std::fs::rename(&tmp, path)
}
