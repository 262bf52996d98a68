//! What a tool handler receives for a file argument: metadata and a byte stream, never a URI
//! or a local path.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use smcp_proto::ext::files::FileDigest;

use crate::error::FileStoreError;
use crate::meta::FileMeta;
use crate::store::FileStore;

pub use crate::stream::ByteStream;

#[derive(Clone)]
enum Source {
    Inline(Bytes),
    Stored(Arc<dyn FileStore>, FileMeta),
}

/// A validated, resolved file argument.
#[derive(Clone)]
pub struct FileHandle {
    name: Option<String>,
    mime_type: String,
    size: u64,
    digest: FileDigest,
    source: Source,
}

impl std::fmt::Debug for FileHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileHandle")
            .field("name", &self.name)
            .field("mime_type", &self.mime_type)
            .field("size", &self.size)
            .field("digest", &self.digest.value)
            .finish_non_exhaustive()
    }
}

impl FileHandle {
    pub(crate) fn inline(mime_type: String, bytes: Bytes) -> Self {
        let digest = FileDigest::sha256(&bytes);
        Self {
            name: None,
            mime_type,
            size: bytes.len() as u64,
            digest,
            source: Source::Inline(bytes),
        }
    }

    pub(crate) fn stored(store: Arc<dyn FileStore>, meta: FileMeta) -> Self {
        Self {
            name: meta.name.clone(),
            mime_type: meta.mime_type.clone(),
            size: meta.size,
            digest: meta.digest.clone(),
            source: Source::Stored(store, meta),
        }
    }

    /// The display name, when the client gave one at upload.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The media type, full (parameters kept).
    pub fn mime_type(&self) -> &str {
        &self.mime_type
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// sha-256 digest (computed by the server).
    pub fn digest(&self) -> &FileDigest {
        &self.digest
    }

    /// Whether the bytes came inline (`data:`) rather than through an upload.
    pub fn is_inline(&self) -> bool {
        matches!(self.source, Source::Inline(_))
    }

    /// The bytes as a stream.
    pub async fn stream(&self) -> Result<ByteStream, FileStoreError> {
        match &self.source {
            Source::Inline(bytes) => {
                let bytes = bytes.clone();
                Ok(Box::pin(futures_util::stream::once(
                    async move { Ok(bytes) },
                )))
            }
            Source::Stored(store, meta) => store.open(meta).await,
        }
    }

    /// Reads at most `limit` bytes into memory (for small files only).
    pub async fn read_to_vec(&self, limit: u64) -> Result<Vec<u8>, FileStoreError> {
        let mut out = Vec::with_capacity(self.size.min(limit) as usize);
        let mut stream = self.stream().await?;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk?;
            if (out.len() + chunk.len()) as u64 > limit {
                return Err(FileStoreError::Io(format!(
                    "file larger than {limit} bytes"
                )));
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }
}
