//! File metadata, stored next to the bytes so any instance can resolve a file URI.

use serde::{Deserialize, Serialize};
use smcp_proto::ext::files::{FileDigest, FileValue};

/// What the store keeps about one committed file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileMeta {
    /// The file id (last path segment of the `mcp-file://` URI).
    pub id: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Media type (validated `type/subtype`).
    pub mime_type: String,
    /// Size in bytes (counted by the server).
    pub size: u64,
    /// sha-256 of the bytes (computed by the server); also the content address.
    pub digest: FileDigest,
    /// The principal that may use it; `None` = anyone who knows the URI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Unix seconds of the commit.
    pub created_at: u64,
    /// Unix seconds after which the URI no longer resolves and GC may delete it.
    pub expires_at: u64,
    /// The media type the content's magic bytes show (`crate::sniff::detect`), when they show
    /// one; checked against a field's `accept` with the declared type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detected_type: Option<String>,
    /// Where an [`crate::ObjectStoreFileStore`] keeps the bytes (`blobs/<random>`), set by
    /// the store at commit; `None`: under the digest (`blobs/<digest>`), as the local store
    /// keeps them. Stores ignore a value they did not write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

impl FileMeta {
    /// The `FileValue` for `uri`.
    pub fn file_value(&self, uri: String) -> FileValue {
        FileValue {
            uri,
            name: self.name.clone(),
            mime_type: Some(self.mime_type.clone()),
            size: Some(self.size),
            digest: Some(self.digest.clone()),
        }
    }

    /// Whether `principal` may use the file at `now`.
    pub fn usable_by(&self, principal: Option<&str>, now: u64) -> bool {
        now < self.expires_at
            && match &self.owner {
                None => true,
                Some(owner) => principal == Some(owner.as_str()),
            }
    }

    /// Whether `id` has the shape this crate mints (`file_` + 32 hex digits).
    pub fn valid_id(id: &str) -> bool {
        id.strip_prefix("file_")
            .is_some_and(|h| h.len() == 32 && h.bytes().all(|b| b.is_ascii_hexdigit()))
    }
}
