//! [`TransferError`]: why a SEP-2631 file transfer failed, as data a caller can match on.

use std::fmt;
use std::path::PathBuf;

use serde_json::Value;
use smcp_proto::ext::files::FileDigest;

/// The data-plane direction a [`TransferError`] happened in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Sending bytes to an upload descriptor.
    Upload,
    /// Fetching bytes from a download descriptor.
    Download,
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Upload => "upload",
            Self::Download => "download",
        })
    }
}

/// Why a SEP-2631 file transfer failed. Every [`crate::Error`] of kind
/// [`crate::ErrorKind::FileTransfer`] carries one, reachable through
/// [`crate::Error::transfer_error`].
///
/// Descriptor refusals ([`UnsupportedTransport`](Self::UnsupportedTransport),
/// [`InvalidUrl`](Self::InvalidUrl), [`InsecureUrl`](Self::InsecureUrl),
/// [`NonPublicAddress`](Self::NonPublicAddress), [`InvalidMethod`](Self::InvalidMethod)) are
/// decided before any connection to the descriptor URL is made. Integrity failures ([`SizeMismatch`](Self::SizeMismatch),
/// [`DigestMismatch`](Self::DigestMismatch),
/// [`UnsupportedDigestAlgorithm`](Self::UnsupportedDigestAlgorithm)) leave no file under the
/// destination name.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransferError {
    /// The descriptor names a transport family other than `https`.
    #[error("unsupported transport {transport:?} (only \"https\" is supported)")]
    UnsupportedTransport {
        /// The descriptor's `transport`.
        transport: String,
    },
    /// The descriptor URL does not parse or has no host.
    #[error("invalid descriptor URL: {reason}")]
    InvalidUrl {
        /// What is wrong with it (the URL itself is not repeated: it may carry a bearer token).
        reason: String,
    },
    /// A URL whose scheme is not `https` (plain `http` is allowed only on loopback, and only
    /// with [`crate::FileTransfer::allow_insecure_loopback`]).
    #[error(
        "insecure {scheme}:// URL to {host} refused: https required{}",
        if *loopback_allowed { " (plain http is allowed on loopback only)" } else { "" }
    )]
    InsecureUrl {
        /// The URL scheme.
        scheme: String,
        /// The URL host (path and query are left out: they may carry a bearer token).
        host: String,
        /// Whether plain http to loopback would have been accepted.
        loopback_allowed: bool,
    },
    /// The descriptor's host is, or resolves to, a non-public address (private, loopback,
    /// link-local, unspecified, multicast, …; REQUIREMENTS A22.133) that is neither the MCP
    /// server's own host nor loopback under the development opt-in. Decided before any
    /// connection to that address.
    #[error("descriptor host {host} refused: {address} is not a public address")]
    NonPublicAddress {
        /// The descriptor URL's host (path and query are left out).
        host: String,
        /// The refused address.
        address: std::net::IpAddr,
    },
    /// The descriptor's HTTP method does not fit the direction (`PUT`/`POST` to upload,
    /// `GET` to download).
    #[error("descriptor method {method:?} cannot be used to {operation}")]
    InvalidMethod {
        /// The descriptor's `method`.
        method: String,
        /// What the descriptor was used for.
        operation: Operation,
    },
    /// The local file is larger than the field's `maxSize`; nothing was sent.
    #[error("{}: {size} bytes; the field accepts at most {max_size}", path.display())]
    TooLargeForField {
        /// The local file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The field's `maxSize`.
        max_size: u64,
    },
    /// Neither `inline` nor `upload` is both allowed by the field and enabled in this client.
    #[error("no transfer mode of this field is usable by this client (transferModes {modes:?})")]
    NoUsableTransferMode {
        /// The field's `transferModes` (`None`: absent).
        modes: Option<Vec<String>>,
    },
    /// The media type given for a file is not a `type/subtype`.
    #[error("invalid media type {mime_type:?}")]
    InvalidMimeType {
        /// The rejected value.
        mime_type: String,
    },
    /// The data-plane endpoint answered with a non-success status.
    #[error(
        "{operation} refused: HTTP {status}, reason {}",
        reason.as_deref().unwrap_or("unknown")
    )]
    Refused {
        /// The direction.
        operation: Operation,
        /// The HTTP status.
        status: u16,
        /// The `reason` member of the JSON error body, when there was one.
        reason: Option<String>,
    },
    /// The data-plane request could not be sent or its body could not be read.
    #[error("{operation} failed: {source}")]
    Http {
        /// The direction.
        operation: Operation,
        /// The HTTP client's error.
        source: reqwest::Error,
    },
    /// The received byte count differs from the announced `size` (for a download that runs
    /// past it, `received` is the count when the transfer was stopped).
    #[error("size mismatch: received {received} bytes, expected {expected}")]
    SizeMismatch {
        /// The announced size.
        expected: u64,
        /// Bytes received.
        received: u64,
    },
    /// The received bytes do not hash to the announced digest.
    #[error(
        "digest mismatch: the received bytes hash to sha-256 {}, expected {}",
        received.value,
        expected.value
    )]
    DigestMismatch {
        /// The announced digest.
        expected: FileDigest,
        /// The digest of the received bytes.
        received: FileDigest,
    },
    /// A digest in an algorithm this client cannot compute, so the file cannot be verified.
    #[error("cannot verify a {algorithm:?} digest (only sha-256 is supported)")]
    UnsupportedDigestAlgorithm {
        /// The announced algorithm.
        algorithm: String,
    },
    /// Reading or writing a local file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl TransferError {
    /// An [`Io`](Self::Io) error for `path`.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    /// Whether the transfer was refused because of its descriptor (transport, URL, scheme or
    /// method), before any connection to the descriptor URL.
    pub fn is_descriptor_refused(&self) -> bool {
        matches!(
            self,
            Self::UnsupportedTransport { .. }
                | Self::InvalidUrl { .. }
                | Self::InsecureUrl { .. }
                | Self::NonPublicAddress { .. }
                | Self::InvalidMethod { .. }
        )
    }

    /// Whether received bytes failed verification against the announced size or digest (or
    /// could not be verified).
    pub fn is_integrity_failure(&self) -> bool {
        matches!(
            self,
            Self::SizeMismatch { .. }
                | Self::DigestMismatch { .. }
                | Self::UnsupportedDigestAlgorithm { .. }
        )
    }
}

/// A data-plane refusal: the status and the `reason` of a JSON error body, if any.
pub(super) async fn refusal(resp: reqwest::Response, operation: Operation) -> TransferError {
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    TransferError::Refused {
        operation,
        status,
        reason: body
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_problem_without_the_url() {
        let e = TransferError::InsecureUrl {
            scheme: "http".into(),
            host: "192.0.2.1".into(),
            loopback_allowed: true,
        };
        assert_eq!(
            e.to_string(),
            "insecure http:// URL to 192.0.2.1 refused: https required (plain http is allowed \
             on loopback only)"
        );
        assert!(e.is_descriptor_refused() && !e.is_integrity_failure());
        let e = TransferError::DigestMismatch {
            expected: FileDigest::sha256(b"a"),
            received: FileDigest::sha256(b"b"),
        };
        assert!(e.to_string().starts_with("digest mismatch: "), "{e}");
        assert!(e.is_integrity_failure() && !e.is_descriptor_refused());
        let e = TransferError::Refused {
            operation: Operation::Upload,
            status: 422,
            reason: Some("digestMismatch".into()),
        };
        assert_eq!(
            e.to_string(),
            "upload refused: HTTP 422, reason digestMismatch"
        );
    }
}
