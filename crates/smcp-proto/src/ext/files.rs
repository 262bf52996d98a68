//! SEP-2631 "File Objects and Transfer": wire types (seed 002 §3–§10, REQUIREMENTS A15–A21).
//!
//! File inputs stay URI strings (a `data:` URI or a server-issued `mcp-file://` URI); these
//! types describe the declarations (`x-mcp-file`), the outputs ([`FileValue`], [`FileContent`],
//! [`FileResourceContents`]), the control plane (`files/authorizeUpload`,
//! `files/authorizeDownload`) and the error vocabulary ([`FileErrorReason`]).

use std::collections::BTreeMap;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::Digest as _;

use crate::basic::{Meta, ResultType};

/// The JSON Schema keyword that marks a URI string property as file-valued.
pub const X_MCP_FILE: &str = "x-mcp-file";
/// `files/authorizeUpload`.
pub const METHOD_AUTHORIZE_UPLOAD: &str = "files/authorizeUpload";
/// `files/authorizeDownload`.
pub const METHOD_AUTHORIZE_DOWNLOAD: &str = "files/authorizeDownload";
/// The only digest algorithm implementations must support.
pub const SHA_256: &str = "sha-256";
/// The only transport family SEP-2631 defines.
pub const TRANSPORT_HTTPS: &str = "https";

/// The value of `x-mcp-file` (SEP-2356 `FileInputDescriptor`, amended by SEP-2631).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileInputDescriptor {
    /// Accepted MIME types (`image/png`, `image/*`) or picker-only extensions (`.pdf`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept: Option<Vec<String>>,
    /// Maximum size in bytes of each file (decoded bytes for `data:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_size: Option<u64>,
    /// Allowed transfer modes; absent means the client chooses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_modes: Option<Vec<String>>,
}

/// A transfer mode of a file-valued field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransferMode {
    /// A `data:` URI in the argument.
    Inline,
    /// `files/authorizeUpload` + an out-of-band upload + the file URI.
    Upload,
}

impl TransferMode {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Inline => "inline",
            Self::Upload => "upload",
        }
    }
}

impl FileInputDescriptor {
    /// Whether `mode` is allowed. Unknown mode strings are ignored (A16 item 98).
    pub fn allows(&self, mode: TransferMode) -> bool {
        match &self.transfer_modes {
            None => true,
            Some(modes) => modes.iter().any(|m| m == mode.as_str()),
        }
    }

    /// Whether `mime_type` satisfies `accept` (absent `accept` = anything).
    pub fn accepts(&self, mime_type: &str) -> bool {
        match &self.accept {
            None => true,
            Some(list) => mime_accepted(list, mime_type),
        }
    }
}

/// The `type/subtype` essence of a media type: parameters dropped, trimmed, lower-cased.
pub fn mime_essence(mime_type: &str) -> String {
    mime_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Whether a well-formed `type/subtype` token pair.
pub fn is_valid_mime(mime_type: &str) -> bool {
    let essence = mime_essence(mime_type);
    let mut parts = essence.splitn(2, '/');
    let token = |s: Option<&str>| {
        s.is_some_and(|s| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
        })
    };
    token(parts.next()) && token(parts.next())
}

/// SEP-2356 server-side `accept` matching: compares only `type/subtype`, case-insensitively,
/// ignoring parameters; `type/*` matches any subtype, `*/*` anything; `.ext` entries are picker
/// hints and never match.
pub fn mime_accepted(accept: &[String], mime_type: &str) -> bool {
    let essence = mime_essence(mime_type);
    accept.iter().any(|entry| {
        let entry = mime_essence(entry);
        if entry.starts_with('.') {
            return false;
        }
        if entry == "*/*" {
            return true;
        }
        match entry.strip_suffix("/*") {
            Some(prefix) => essence.split_once('/').is_some_and(|(t, _)| t == prefix),
            None => entry == essence,
        }
    })
}

/// Content integrity metadata (`FileDigest`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDigest {
    /// The algorithm, e.g. `sha-256`.
    pub algorithm: String,
    /// The digest, base64url without padding.
    pub value: String,
}

impl FileDigest {
    /// The sha-256 digest of `bytes`.
    pub fn sha256(bytes: &[u8]) -> Self {
        let mut hasher = DigestBuilder::new();
        hasher.update(bytes);
        hasher.finish().1
    }

    /// A sha-256 digest from a raw 32-byte hash.
    pub fn from_sha256_raw(raw: &[u8]) -> Self {
        Self {
            algorithm: SHA_256.to_owned(),
            value: base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw),
        }
    }

    /// Checks the shape: a supported algorithm and a 43-character base64url value.
    pub fn check(&self) -> Result<(), FileErrorReason> {
        if !self.algorithm.eq_ignore_ascii_case(SHA_256) {
            return Err(FileErrorReason::UnsupportedDigestAlgorithm);
        }
        match base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(&self.value) {
            Ok(raw) if raw.len() == 32 => Ok(()),
            _ => Err(FileErrorReason::InvalidDigest),
        }
    }

    /// Whether two digests name the same bytes (algorithm compared case-insensitively).
    pub fn matches(&self, other: &FileDigest) -> bool {
        self.algorithm.eq_ignore_ascii_case(&other.algorithm) && self.value == other.value
    }
}

/// Incremental sha-256 plus a byte count, fed chunk by chunk while streaming.
#[derive(Debug, Clone, Default)]
pub struct DigestBuilder {
    hasher: sha2::Sha256,
    len: u64,
}

impl DigestBuilder {
    /// An empty hasher.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.hasher.update(bytes);
        self.len += bytes.len() as u64;
    }

    /// Bytes fed so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing was fed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The byte count and the digest.
    pub fn finish(self) -> (u64, FileDigest) {
        let raw = self.hasher.finalize();
        (self.len, FileDigest::from_sha256_raw(&raw))
    }
}

/// A file identified by a file URI, with optional display and integrity metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileValue {
    /// The file URI (`mcp-file://…`).
    pub uri: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Integrity metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<FileDigest>,
}

/// Multipart form details of an upload descriptor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MultipartSpec {
    /// The form field that carries the bytes.
    pub file_field: String,
    /// Other form fields to send verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<BTreeMap<String, String>>,
}

/// How to move bytes on the data plane (`FileTransferDescriptor`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileTransferDescriptor {
    /// Transport family (`https`).
    pub transport: String,
    /// HTTP method: `GET`, `PUT` or `POST`.
    pub method: String,
    /// Absolute URL.
    pub url: String,
    /// Headers the client should send (never the MCP `Authorization`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    /// Present for `multipart/form-data` POST uploads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multipart: Option<MultipartSpec>,
    /// RFC 3339 redemption deadline (always set by this implementation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// The shared parent of the `files/authorize*` results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthorizedFile {
    /// The stable file reference.
    pub file: FileValue,
    /// An eager download authorization.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub download: Option<FileTransferDescriptor>,
}

/// `files/authorizeUpload` params; every member is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizeUploadRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Exact size the upload will have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Expected digest; a mismatching upload is rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<FileDigest>,
}

/// `files/authorizeUpload` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizeUploadResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Always `complete` (2026-07-28 requires it).
    #[serde(default)]
    pub result_type: ResultType,
    /// The file the upload will create.
    pub file: FileValue,
    /// Where and how to send the bytes.
    pub upload: FileTransferDescriptor,
    /// An eager download authorization.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub download: Option<FileTransferDescriptor>,
}

/// `files/authorizeDownload` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthorizeDownloadRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The file URI.
    pub uri: String,
}

/// `files/authorizeDownload` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizeDownloadResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Always `complete`.
    #[serde(default)]
    pub result_type: ResultType,
    /// The file.
    pub file: FileValue,
    /// Where and how to fetch the bytes.
    pub download: FileTransferDescriptor,
}

/// A `ContentBlock` of `type: "file"` (only for clients that declared `files.download`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "file")]
pub struct FileContent {
    /// The file.
    pub file: FileValue,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl FileContent {
    /// Wraps a file value.
    pub fn new(file: FileValue) -> Self {
        Self { file, meta: None }
    }
}

/// The `content` member of [`FileResourceContents`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileRef {
    /// The file URI.
    pub uri: String,
}

/// Resource contents whose bytes move out of band (resolve via `files/authorizeDownload`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileResourceContents {
    /// The resource URI.
    pub uri: String,
    /// Media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The file that holds the bytes.
    pub content: FileRef,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The `files` capability, declared by clients per request and advertised by servers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FilesCapability {
    /// Out-of-band upload supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload: Option<bool>,
    /// Out-of-band download supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub download: Option<bool>,
    /// Transport families (open strings; only `https` is executed).
    #[serde(default)]
    pub transports: Vec<String>,
    /// Unknown members, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl FilesCapability {
    /// `{"upload": true, "download": true, "transports": ["https"]}`.
    pub fn full() -> Self {
        Self {
            upload: Some(true),
            download: Some(true),
            transports: vec![TRANSPORT_HTTPS.to_owned()],
            extra: Map::new(),
        }
    }

    /// Reads the `files` member of a capabilities object, if well-formed.
    pub fn from_capabilities(caps: &Map<String, Value>) -> Option<Self> {
        caps.get("files")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    }

    /// Whether uploads are declared together with `https`.
    pub fn can_upload(&self) -> bool {
        self.upload == Some(true) && self.has_https()
    }

    /// Whether downloads are declared together with `https`.
    pub fn can_download(&self) -> bool {
        self.download == Some(true) && self.has_https()
    }

    fn has_https(&self) -> bool {
        self.transports.iter().any(|t| t == TRANSPORT_HTTPS)
    }
}

/// The machine-readable `reason` vocabulary (REQUIREMENTS A21 item 126).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FileErrorReason {
    /// Decoded or uploaded size above `maxSize` (or the server limit).
    MaxSizeExceeded,
    /// Uploaded byte count differs from the authorized size.
    SizeMismatch,
    /// Media type not in `accept`.
    MimeTypeNotAccepted,
    /// Media type not a `type/subtype`.
    InvalidMimeType,
    /// Uploaded bytes do not match the authorized digest.
    DigestMismatch,
    /// Digest value malformed.
    InvalidDigest,
    /// Digest algorithm other than `sha-256`.
    UnsupportedDigestAlgorithm,
    /// A `data:` or file URI that does not parse.
    MalformedFileUri,
    /// A URI scheme other than `data:` or this server's file URIs.
    UnsupportedScheme,
    /// The value's transfer mode is not in `transferModes`.
    TransferModeNotAllowed,
    /// Unknown, expired or foreign file URI (deliberately indistinguishable).
    FileUnavailable,
    /// The transfer descriptor expired.
    DescriptorExpired,
    /// The store failed (e.g. disk full).
    StoreFull,
    /// `size` in `files/authorizeUpload` is not a non-negative integer.
    InvalidSize,
    /// `name` in `files/authorizeUpload` is not a string of at most 1024 bytes.
    InvalidName,
    /// A `tools/call` names more files than the server takes in one call.
    TooManyFiles,
}

impl FileErrorReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaxSizeExceeded => "maxSizeExceeded",
            Self::SizeMismatch => "sizeMismatch",
            Self::MimeTypeNotAccepted => "mimeTypeNotAccepted",
            Self::InvalidMimeType => "invalidMimeType",
            Self::DigestMismatch => "digestMismatch",
            Self::InvalidDigest => "invalidDigest",
            Self::UnsupportedDigestAlgorithm => "unsupportedDigestAlgorithm",
            Self::MalformedFileUri => "malformedFileUri",
            Self::UnsupportedScheme => "unsupportedScheme",
            Self::TransferModeNotAllowed => "transferModeNotAllowed",
            Self::FileUnavailable => "fileUnavailable",
            Self::DescriptorExpired => "descriptorExpired",
            Self::StoreFull => "storeFull",
            Self::InvalidSize => "invalidSize",
            Self::InvalidName => "invalidName",
            Self::TooManyFiles => "tooManyFiles",
        }
    }

    /// The JSON-RPC code for `files/*` RPC failures: −32603 for store failures, else −32602.
    pub fn rpc_code(self) -> i64 {
        match self {
            Self::StoreFull => crate::error::INTERNAL_ERROR,
            _ => crate::error::INVALID_PARAMS,
        }
    }

    /// The data-plane HTTP status (A21 item 128; the table in `docs/files/errors.md`).
    pub fn http_status(self) -> u16 {
        match self {
            Self::MaxSizeExceeded | Self::SizeMismatch => 413,
            Self::MimeTypeNotAccepted => 415,
            Self::DigestMismatch => 422,
            Self::DescriptorExpired => 410,
            Self::FileUnavailable => 404,
            Self::StoreFull => 507,
            _ => 400,
        }
    }
}

impl std::fmt::Display for FileErrorReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn digest_vectors() {
        // sha256("hello"), ECOSYSTEM.md; 43 chars, no padding.
        let d = FileDigest::sha256(b"hello");
        assert_eq!(d.value, "LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ");
        assert_eq!(d.algorithm, "sha-256");
        assert_eq!(d.value.len(), 43);
        assert_eq!(
            FileDigest::sha256(b"").value,
            "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"
        );
        assert!(d.check().is_ok());
        let bad = FileDigest {
            algorithm: "sha-256".into(),
            value: "LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=".into(),
        };
        assert_eq!(bad.check(), Err(FileErrorReason::InvalidDigest));
        let md5 = FileDigest {
            algorithm: "md5".into(),
            value: d.value.clone(),
        };
        assert_eq!(
            md5.check(),
            Err(FileErrorReason::UnsupportedDigestAlgorithm)
        );
        let mut b = DigestBuilder::new();
        b.update(b"hel");
        b.update(b"lo");
        assert_eq!(b.finish(), (5, d));
    }

    #[test]
    fn accept_matching() {
        let accept = vec!["image/*".to_owned(), "application/PDF".to_owned()];
        assert!(mime_accepted(&accept, "image/png"));
        assert!(mime_accepted(&accept, "IMAGE/SVG+xml; charset=utf-8"));
        assert!(mime_accepted(&accept, "application/pdf;name=x"));
        assert!(!mime_accepted(&accept, "text/plain"));
        assert!(!mime_accepted(&accept, "imagex/png"));
        assert!(!mime_accepted(&[".pdf".to_owned()], "application/pdf"));
        assert!(mime_accepted(&["*/*".to_owned()], "a/b"));
        assert!(is_valid_mime("text/plain;charset=US-ASCII"));
        assert!(!is_valid_mime("text"));
        assert!(!is_valid_mime("te xt/plain"));
    }

    #[test]
    fn transfer_modes() {
        let d: FileInputDescriptor =
            serde_json::from_value(json!({"transferModes": ["upload", "carrier-pigeon"]}))
                .unwrap_or_default();
        assert!(d.allows(TransferMode::Upload));
        assert!(!d.allows(TransferMode::Inline));
        assert!(FileInputDescriptor::default().allows(TransferMode::Inline));
    }

    #[test]
    fn wire_shapes_round_trip() {
        let upload = json!({
            "resultType": "complete",
            "file": {"uri": "mcp-file://server/file_01HXYZ", "name": "report.pdf",
                     "mimeType": "application/pdf", "size": 248123,
                     "digest": {"algorithm": "sha-256", "value": "uU0nuZNNPgilLlLX2n2r-sSE7-N6U4D6ZVe-_rYh2sU"}},
            "upload": {"transport": "https", "method": "POST", "url": "https://upload.example.com/x",
                       "multipart": {"fileField": "file", "fields": {"token": "abc123"}},
                       "expiresAt": "2026-04-20T18:30:00Z"}
        });
        let parsed: AuthorizeUploadResult =
            serde_json::from_value(upload.clone()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(serde_json::to_value(&parsed).ok(), Some(upload));
        let block = json!({"type": "file", "file": {"uri": "mcp-file://s/f"}});
        let parsed: FileContent =
            serde_json::from_value(block.clone()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(serde_json::to_value(&parsed).ok(), Some(block));
        let res = json!({"uri": "mcp-resource://r", "mimeType": "application/pdf",
                         "content": {"uri": "mcp-file://s/f"}});
        let parsed: FileResourceContents =
            serde_json::from_value(res.clone()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(serde_json::to_value(&parsed).ok(), Some(res));
        let caps = json!({"files": {"upload": true, "transports": ["https", "x"], "future": 1}});
        let caps = caps.as_object().cloned().unwrap_or_default();
        let files = FilesCapability::from_capabilities(&caps).unwrap_or_default();
        assert!(files.can_upload());
        assert!(!files.can_download());
        assert_eq!(files.extra.get("future"), Some(&json!(1)));
        assert_eq!(
            serde_json::to_value(FileErrorReason::MaxSizeExceeded).ok(),
            Some(json!("maxSizeExceeded"))
        );
    }

    #[test]
    fn reasons_map_to_the_documented_statuses() {
        // docs/files/errors.md, "Data-plane errors".
        for (reason, status) in [
            (FileErrorReason::MaxSizeExceeded, 413),
            (FileErrorReason::SizeMismatch, 413),
            (FileErrorReason::DigestMismatch, 422),
            (FileErrorReason::DescriptorExpired, 410),
            (FileErrorReason::MimeTypeNotAccepted, 415),
            (FileErrorReason::StoreFull, 507),
        ] {
            assert_eq!(reason.http_status(), status, "{reason}");
        }
        for reason in [
            FileErrorReason::InvalidSize,
            FileErrorReason::InvalidName,
            FileErrorReason::TooManyFiles,
        ] {
            let wire = serde_json::to_value(reason).ok();
            assert_eq!(wire, Some(json!(reason.as_str())));
            assert_eq!(reason.rpc_code(), crate::error::INVALID_PARAMS);
        }
    }
}
