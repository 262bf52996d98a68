//! SEP-2631 file transfer for smcp servers.
//!
//! Layout:
//! - [`store`]: the [`FileStore`] trait; [`LocalFileStore`] (content-addressed, crash-safe:
//!   temp file + fsync + rename) and [`ObjectStoreFileStore`] (any `object_store` backend).
//! - [`token`]: HMAC-SHA256 transfer tokens under a shared [`KeyRing`], so any instance
//!   verifies what another issued; no server-side session state.
//! - [`meta`]: [`FileMeta`], stored next to the bytes so any instance resolves a file URI.
//! - [`schema`]: finds `x-mcp-file` declarations in tool and elicitation schemas.
//! - [`service`]: [`Files`], the control plane (`files/authorize*`), validation of file
//!   arguments into [`FileHandle`]s, generated outputs, garbage collection.
//! - [`http`]: the data plane (upload and download endpoints) as an axum router.

pub mod error;
pub mod handle;
pub mod http;
pub mod meta;
pub mod schema;
pub mod service;
pub mod store;
pub mod token;

pub use error::{FileError, StoreError};
pub use handle::{ByteStream, FileHandle};
pub use meta::FileMeta;
pub use schema::{FileField, file_fields};
pub use service::{Files, FilesConfig, UploadStyle};
pub use store::{FileStore, LocalFileStore, ObjectStoreFileStore, StagedFile};
pub use token::{Claims, Direction, KeyRing, TokenError};

/// Seconds since the Unix epoch.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// RFC 3339 UTC timestamp of a Unix time in seconds.
pub fn rfc3339(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Howard Hinnant's days-to-civil algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Random lowercase hex of `n` bytes.
pub(crate) fn random_hex(n: usize) -> String {
    let mut buf = vec![0u8; n];
    if getrandom::fill(&mut buf).is_err() {
        // Fall back to time-derived bytes only if the OS RNG is unavailable; ids still unique
        // enough for temp names, and tokens are signed anyway.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (t >> ((i % 16) * 8)) as u8;
        }
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(1_776_710_700), "2026-04-20T18:45:00Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
