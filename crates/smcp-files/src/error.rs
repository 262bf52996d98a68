//! Errors: [`FileError`] (a refusal with an A21 `reason`) and [`FileStoreError`] (storage).

use serde_json::{Map, Value, json};
use smcp_proto::error::ErrorObject;
use smcp_proto::ext::files::FileErrorReason;

/// A refused file operation, carrying the machine-readable `reason`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct FileError {
    /// The A21 reason.
    pub reason: FileErrorReason,
    /// Human-readable text (never contains `data:` payloads).
    pub message: String,
    /// Extra machine-readable members (`maxSize`, `actualSize`, …).
    pub details: Map<String, Value>,
}

impl FileError {
    /// A refusal.
    pub fn new(reason: FileErrorReason, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
            details: Map::new(),
        }
    }

    /// Adds a detail member.
    #[must_use]
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// The indistinguishable refusal for unknown, expired and foreign file URIs.
    pub fn unavailable() -> Self {
        Self::new(
            FileErrorReason::FileUnavailable,
            "file is unknown, expired or not available to this caller",
        )
    }

    /// `{"reason": …, …details}`.
    pub fn data(&self) -> Value {
        let mut data = Map::with_capacity(self.details.len() + 1);
        data.insert("reason".into(), json!(self.reason.as_str()));
        data.extend(self.details.clone());
        Value::Object(data)
    }

    /// The JSON-RPC error for `files/*` RPCs (−32602, or −32603 for store failures).
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject::new(self.reason.rpc_code(), self.message.clone()).with_data(self.data())
    }
}

impl From<FileStoreError> for FileError {
    fn from(e: FileStoreError) -> Self {
        tracing::warn!(error = %e, "file store failure");
        match e {
            FileStoreError::NotFound => Self::unavailable(),
            FileStoreError::AlreadyExists => Self::new(
                FileErrorReason::DescriptorExpired,
                "this upload descriptor was already used",
            ),
            FileStoreError::Io(_) => Self::new(FileErrorReason::StoreFull, "file store failure"),
        }
    }
}

/// A failure of the file store ([`crate::FileStore`]).
#[derive(Debug, thiserror::Error)]
pub enum FileStoreError {
    /// The file id was already committed (single-use upload tickets rely on this).
    #[error("file already committed")]
    AlreadyExists,
    /// No such file.
    #[error("file not found")]
    NotFound,
    /// Anything else (disk full, permissions, network to the object store, …).
    #[error("store I/O: {0}")]
    Io(String),
}

/// The old name of [`FileStoreError`].
#[deprecated(note = "renamed to `FileStoreError` (smcp_tasks' is `TaskStoreError`)")]
pub type StoreError = FileStoreError;

impl From<std::io::Error> for FileStoreError {
    fn from(e: std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::NotFound => Self::NotFound,
            std::io::ErrorKind::AlreadyExists => Self::AlreadyExists,
            _ => Self::Io(e.to_string()),
        }
    }
}

impl From<object_store::Error> for FileStoreError {
    fn from(e: object_store::Error) -> Self {
        match e {
            object_store::Error::NotFound { .. } => Self::NotFound,
            object_store::Error::AlreadyExists { .. } => Self::AlreadyExists,
            other => Self::Io(other.to_string()),
        }
    }
}
