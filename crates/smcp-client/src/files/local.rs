//! Local files: media types, digests, and paths named in elicitation answers.

use std::path::{Path, PathBuf};

use smcp_proto::ext::files::{DigestBuilder, FileDigest, is_valid_mime};

use super::transfer_error::TransferError;
use crate::error::Result;

/// Progress callback: `(bytes done, total if known)`.
pub type Progress<'a> = &'a (dyn Fn(u64, Option<u64>) + Send + Sync);

pub(super) const CHUNK: usize = 256 * 1024;

/// A media type from the file extension (`application/octet-stream` when unknown).
///
/// # Examples
///
/// ```
/// use std::path::Path;
/// use smcp_client::files::guess_mime;
///
/// assert_eq!(guess_mime(Path::new("report.pdf")), "application/pdf");
/// assert_eq!(guess_mime(Path::new("data.unknown")), "application/octet-stream");
/// ```
pub fn guess_mime(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match ext.as_str() {
        "pdf" => "application/pdf",
        "csv" => "text/csv",
        "txt" | "text" | "log" => "text/plain",
        "md" => "text/markdown",
        "json" => "application/json",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "html" | "htm" => "text/html",
        _ => "application/octet-stream",
    }
}

/// A caller-supplied media type, checked (`type/subtype`) and with the whitespace around
/// parameters removed, so it can go into a `data:` URI as is.
pub(crate) fn normalize_mime(mime_type: &str) -> Result<String, TransferError> {
    if !is_valid_mime(mime_type) {
        return Err(TransferError::InvalidMimeType {
            mime_type: mime_type.to_owned(),
        });
    }
    Ok(mime_type
        .split(';')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(";"))
}

/// A local path named by an elicitation answer: a `file://` URL or a string without a URI
/// scheme. Any other URI (`data:`, a server-issued file URI of whatever scheme) is a value to
/// pass through, not a path.
pub(crate) fn local_path(value: &str) -> Option<PathBuf> {
    if value.starts_with("file://") {
        return reqwest::Url::parse(value).ok()?.to_file_path().ok();
    }
    let scheme = value.split_once(':').map(|(s, _)| s);
    let is_uri = scheme.is_some_and(|s| {
        // RFC 3986 scheme; one letter is a Windows drive (`C:\…`), not a scheme.
        s.len() > 1
            && s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    (!is_uri && !value.is_empty()).then(|| PathBuf::from(value))
}

/// Size and sha-256 of a file, read in 1 MiB blocks on one blocking thread (one hand-off for
/// the whole file, not one per block).
pub async fn digest_path(path: &Path) -> Result<(u64, FileDigest)> {
    let owned = path.to_path_buf();
    let hashed = tokio::task::spawn_blocking(move || -> std::io::Result<(u64, FileDigest)> {
        use std::io::Read as _;
        let mut file = std::fs::File::open(&owned)?;
        let mut buf = vec![0u8; 4 * CHUNK];
        let mut hasher = DigestBuilder::new();
        loop {
            match file.read(&mut buf) {
                Ok(0) => return Ok(hasher.finish()),
                Ok(n) => hasher.update(buf.get(..n).unwrap_or_default()),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    })
    .await
    .map_err(|e| TransferError::io(path, std::io::Error::other(e.to_string())))?;
    hashed.map_err(|e| TransferError::io(path, e).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_are_checked_and_compacted() {
        assert_eq!(normalize_mime("text/plain").unwrap(), "text/plain");
        assert_eq!(
            normalize_mime("text/plain; charset=utf-8").unwrap(),
            "text/plain;charset=utf-8"
        );
        assert!(matches!(
            normalize_mime("not a type"),
            Err(TransferError::InvalidMimeType { .. })
        ));
        assert_eq!(guess_mime(Path::new("a/B.TXT")), "text/plain");
        assert_eq!(guess_mime(Path::new("x")), "application/octet-stream");
    }

    #[test]
    fn elicited_values_that_are_paths() {
        assert_eq!(local_path("/tmp/a.txt"), Some(PathBuf::from("/tmp/a.txt")));
        assert_eq!(
            local_path("rel/a b.txt"),
            Some(PathBuf::from("rel/a b.txt"))
        );
        assert_eq!(local_path("C:\\x.txt"), Some(PathBuf::from("C:\\x.txt")));
        assert_eq!(
            local_path("file:///tmp/a%20b.txt"),
            Some(PathBuf::from("/tmp/a b.txt"))
        );
        for uri in [
            "data:text/plain;base64,SGk=",
            "mcp-file://server/file_1",
            "https://files.example/f/1",
            "urn:x-files:1",
            "",
        ] {
            assert_eq!(local_path(uri), None, "{uri}");
        }
    }
}
