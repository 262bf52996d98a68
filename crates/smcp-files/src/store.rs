//! Where bytes live: the [`FileStore`] trait and two implementations.
//!
//! A write is staged ([`FileStore::stage`]), fed chunk by chunk, then either committed with
//! its verified [`FileMeta`] or aborted. Nothing is visible before the commit; dropping a
//! staged write (a dropped connection) removes it. Committing an id twice fails with
//! [`StoreError::AlreadyExists`], which is what makes upload tickets single use.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutPayload};
use tokio::io::AsyncWriteExt;

use crate::error::StoreError;
use crate::handle::ByteStream;
use crate::meta::FileMeta;

/// A boxed future borrowing `'a`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What garbage collection removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Expired file records deleted.
    pub expired: usize,
    /// Unreferenced blobs deleted.
    pub blobs: usize,
    /// Abandoned staging objects deleted.
    pub staging: usize,
}

/// A storage backend for file bytes and metadata.
pub trait FileStore: Send + Sync + std::fmt::Debug + 'static {
    /// Starts a staged (invisible) write.
    fn stage(&self) -> BoxFuture<'_, Result<Box<dyn StagedFile>, StoreError>>;
    /// Reads a file's metadata; `Ok(None)` when unknown.
    fn meta<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<FileMeta>, StoreError>>;
    /// Streams a committed file's bytes.
    fn open<'a>(&'a self, meta: &'a FileMeta) -> BoxFuture<'a, Result<ByteStream, StoreError>>;
    /// Deletes a file record (its blob goes at the next GC when unreferenced).
    fn delete<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Every file record, for GC and listing.
    fn list(&self) -> BoxFuture<'_, Result<Vec<FileMeta>, StoreError>>;
    /// Deletes expired records, unreferenced blobs and staging objects older than
    /// `now - grace` seconds.
    fn collect_garbage(&self, now: u64, grace: u64) -> BoxFuture<'_, Result<GcReport, StoreError>>;
}

/// A staged write. Dropping it without [`StagedFile::commit`] discards the bytes.
pub trait StagedFile: Send {
    /// Appends bytes.
    fn write<'a>(&'a mut self, chunk: Bytes) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Makes the bytes visible under `meta.id` (content-addressed by `meta.digest`).
    fn commit(self: Box<Self>, meta: FileMeta) -> BoxFuture<'static, Result<(), StoreError>>;
    /// Discards the bytes now.
    fn abort(self: Box<Self>) -> BoxFuture<'static, ()>;
}

fn meta_json(meta: &FileMeta) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(meta).map_err(|e| StoreError::Io(e.to_string()))
}

fn parse_meta(bytes: &[u8]) -> Result<FileMeta, StoreError> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Io(format!("corrupt metadata: {e}")))
}

/// Local disk: `root/blobs/<digest>`, `root/files/<id>.json`, `root/tmp/*`.
///
/// Crash safety: bytes go to `tmp/`, are fsynced, then renamed into `blobs/` (atomic); the
/// record is written to `tmp/`, fsynced and hard-linked into `files/` (atomic
/// create-if-absent); directories are fsynced after each step. A crash leaves at most
/// orphaned `tmp/` files or an unreferenced blob, both removed by GC.
#[derive(Debug, Clone)]
pub struct LocalFileStore {
    root: PathBuf,
}

impl LocalFileStore {
    /// Opens (creating) a store under `root`.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, StoreError> {
        let root = root.into();
        for dir in ["blobs", "files", "tmp"] {
            std::fs::create_dir_all(root.join(dir))?;
        }
        Ok(Self { root })
    }

    fn blob_path(&self, digest: &str) -> PathBuf {
        self.root.join("blobs").join(digest)
    }

    fn meta_path(&self, id: &str) -> PathBuf {
        self.root.join("files").join(format!("{id}.json"))
    }

    /// The store root.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

struct LocalStaged {
    file: Option<tokio::io::BufWriter<tokio::fs::File>>,
    path: Option<PathBuf>,
    root: PathBuf,
}

impl Drop for LocalStaged {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl StagedFile for LocalStaged {
    fn write<'a>(&'a mut self, chunk: Bytes) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let file = self
                .file
                .as_mut()
                .ok_or_else(|| StoreError::Io("staged file closed".into()))?;
            file.write_all(&chunk).await?;
            Ok(())
        })
    }

    fn commit(mut self: Box<Self>, meta: FileMeta) -> BoxFuture<'static, Result<(), StoreError>> {
        Box::pin(async move {
            let mut file = self
                .file
                .take()
                .ok_or_else(|| StoreError::Io("staged file closed".into()))?;
            file.flush().await?;
            file.get_mut().sync_all().await?;
            drop(file);
            let tmp = self
                .path
                .take()
                .ok_or_else(|| StoreError::Io("staged file closed".into()))?;
            let root = self.root.clone();
            let json = meta_json(&meta)?;
            tokio::task::spawn_blocking(move || commit_local(&root, &tmp, &meta, &json))
                .await
                .map_err(|e| StoreError::Io(e.to_string()))?
        })
    }

    fn abort(self: Box<Self>) -> BoxFuture<'static, ()> {
        drop(self);
        Box::pin(async {})
    }
}

fn commit_local(root: &Path, tmp: &Path, meta: &FileMeta, json: &[u8]) -> Result<(), StoreError> {
    use std::io::Write as _;
    let final_meta = root.join("files").join(format!("{}.json", meta.id));
    if final_meta.exists() {
        let _ = std::fs::remove_file(tmp);
        return Err(StoreError::AlreadyExists);
    }
    let blob = root.join("blobs").join(&meta.digest.value);
    let renamed = std::fs::rename(tmp, &blob);
    if let Err(e) = renamed {
        let _ = std::fs::remove_file(tmp);
        return Err(e.into());
    }
    sync_dir(&root.join("blobs"))?;
    let tmp_meta = root
        .join("tmp")
        .join(format!("{}.json", random_name::<12>()?));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp_meta)?;
        f.write_all(json)?;
        f.sync_all()?;
        std::fs::hard_link(&tmp_meta, &final_meta)
    })();
    let _ = std::fs::remove_file(&tmp_meta);
    written?;
    sync_dir(&root.join("files"))?;
    Ok(())
}

/// A random name for a temporary object (an error, never a weaker name, without randomness).
fn random_name<const N: usize>() -> std::io::Result<String> {
    smcp_server::keys::random_hex::<N>().map_err(std::io::Error::other)
}

fn mtime_secs(md: &std::fs::Metadata) -> u64 {
    md.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs())
}

impl FileStore for LocalFileStore {
    fn stage(&self) -> BoxFuture<'_, Result<Box<dyn StagedFile>, StoreError>> {
        Box::pin(async move {
            let path = self.root.join("tmp").join(random_name::<16>()?);
            let file = tokio::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .await?;
            Ok(Box::new(LocalStaged {
                file: Some(tokio::io::BufWriter::with_capacity(1 << 20, file)),
                path: Some(path),
                root: self.root.clone(),
            }) as Box<dyn StagedFile>)
        })
    }

    fn meta<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<FileMeta>, StoreError>> {
        Box::pin(async move {
            if !FileMeta::valid_id(id) {
                return Ok(None);
            }
            match tokio::fs::read(self.meta_path(id)).await {
                Ok(bytes) => parse_meta(&bytes).map(Some),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e.into()),
            }
        })
    }

    fn open<'a>(&'a self, meta: &'a FileMeta) -> BoxFuture<'a, Result<ByteStream, StoreError>> {
        Box::pin(async move {
            let file = tokio::fs::File::open(self.blob_path(&meta.digest.value)).await?;
            let stream = tokio_util::io::ReaderStream::with_capacity(file, 64 * 1024);
            Ok(Box::pin(stream) as ByteStream)
        })
    }

    fn delete<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            match tokio::fs::remove_file(self.meta_path(id)).await {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e.into()),
            }
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<FileMeta>, StoreError>> {
        Box::pin(async move {
            let mut out = Vec::new();
            let mut dir = tokio::fs::read_dir(self.root.join("files")).await?;
            while let Some(entry) = dir.next_entry().await? {
                if let Ok(bytes) = tokio::fs::read(entry.path()).await
                    && let Ok(meta) = parse_meta(&bytes)
                {
                    out.push(meta);
                }
            }
            Ok(out)
        })
    }

    fn collect_garbage(&self, now: u64, grace: u64) -> BoxFuture<'_, Result<GcReport, StoreError>> {
        Box::pin(async move {
            let mut report = GcReport::default();
            let mut live = std::collections::HashSet::new();
            for meta in self.list().await? {
                if now >= meta.expires_at {
                    self.delete(&meta.id).await?;
                    report.expired += 1;
                } else {
                    live.insert(meta.digest.value);
                }
            }
            let cutoff = now.saturating_sub(grace);
            for (dir, count) in [("blobs", &mut report.blobs), ("tmp", &mut report.staging)] {
                let mut rd = tokio::fs::read_dir(self.root.join(dir)).await?;
                while let Some(entry) = rd.next_entry().await? {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if dir == "blobs" && live.contains(&name) {
                        continue;
                    }
                    let Ok(md) = entry.metadata().await else {
                        continue;
                    };
                    if mtime_secs(&md) <= cutoff
                        && tokio::fs::remove_file(entry.path()).await.is_ok()
                    {
                        *count += 1;
                    }
                }
            }
            Ok(report)
        })
    }
}

/// Any `object_store` backend (S3, GCS, Azure, local, in-memory): `blobs/<digest>`,
/// `files/<id>.json`, `tmp/<random>`. Staged bytes stream through a multipart
/// [`object_store::buffered::BufWriter`]; the record is written with `PutMode::Create`.
#[derive(Debug, Clone)]
pub struct ObjectStoreFileStore {
    store: Arc<dyn ObjectStore>,
}

impl ObjectStoreFileStore {
    /// Wraps a store.
    pub fn new(store: Arc<dyn ObjectStore>) -> Self {
        Self { store }
    }
}

fn os_path(dir: &str, name: &str) -> object_store::path::Path {
    object_store::path::Path::from(format!("{dir}/{name}"))
}

struct ObjectStaged {
    store: Arc<dyn ObjectStore>,
    path: object_store::path::Path,
    writer: Option<object_store::buffered::BufWriter>,
}

impl Drop for ObjectStaged {
    fn drop(&mut self) {
        if let Some(mut writer) = self.writer.take() {
            let store = self.store.clone();
            let path = self.path.clone();
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    let _ = writer.abort().await;
                    let _ = store.delete(&path).await;
                });
            }
        }
    }
}

impl StagedFile for ObjectStaged {
    fn write<'a>(&'a mut self, chunk: Bytes) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let writer = self
                .writer
                .as_mut()
                .ok_or_else(|| StoreError::Io("staged object closed".into()))?;
            writer.put(chunk).await?;
            Ok(())
        })
    }

    fn commit(mut self: Box<Self>, meta: FileMeta) -> BoxFuture<'static, Result<(), StoreError>> {
        Box::pin(async move {
            let mut writer = self
                .writer
                .take()
                .ok_or_else(|| StoreError::Io("staged object closed".into()))?;
            let store = self.store.clone();
            let tmp = self.path.clone();
            writer
                .shutdown()
                .await
                .map_err(|e| StoreError::Io(e.to_string()))?;
            let record = os_path("files", &format!("{}.json", meta.id));
            if store.head(&record).await.is_ok() {
                let _ = store.delete(&tmp).await;
                return Err(StoreError::AlreadyExists);
            }
            let blob = os_path("blobs", &meta.digest.value);
            let copied = store.copy(&tmp, &blob).await;
            let _ = store.delete(&tmp).await;
            copied?;
            let json = meta_json(&meta)?;
            store
                .put_opts(&record, PutPayload::from(json), PutMode::Create.into())
                .await?;
            Ok(())
        })
    }

    fn abort(mut self: Box<Self>) -> BoxFuture<'static, ()> {
        let writer = self.writer.take();
        let store = self.store.clone();
        let path = self.path.clone();
        Box::pin(async move {
            if let Some(mut w) = writer {
                let _ = w.abort().await;
            }
            let _ = store.delete(&path).await;
        })
    }
}

impl FileStore for ObjectStoreFileStore {
    fn stage(&self) -> BoxFuture<'_, Result<Box<dyn StagedFile>, StoreError>> {
        Box::pin(async move {
            let path = os_path("tmp", &random_name::<16>()?);
            let writer = object_store::buffered::BufWriter::new(self.store.clone(), path.clone());
            Ok(Box::new(ObjectStaged {
                store: self.store.clone(),
                path,
                writer: Some(writer),
            }) as Box<dyn StagedFile>)
        })
    }

    fn meta<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<FileMeta>, StoreError>> {
        Box::pin(async move {
            if !FileMeta::valid_id(id) {
                return Ok(None);
            }
            match self
                .store
                .get(&os_path("files", &format!("{id}.json")))
                .await
            {
                Ok(result) => parse_meta(&result.bytes().await?).map(Some),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e.into()),
            }
        })
    }

    fn open<'a>(&'a self, meta: &'a FileMeta) -> BoxFuture<'a, Result<ByteStream, StoreError>> {
        Box::pin(async move {
            let result = self
                .store
                .get(&os_path("blobs", &meta.digest.value))
                .await?;
            let stream = result
                .into_stream()
                .map_err(|e| std::io::Error::other(e.to_string()));
            Ok(Box::pin(stream) as ByteStream)
        })
    }

    fn delete<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            match self
                .store
                .delete(&os_path("files", &format!("{id}.json")))
                .await
            {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(e.into()),
            }
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<FileMeta>, StoreError>> {
        Box::pin(async move {
            let prefix = object_store::path::Path::from("files");
            let objects: Vec<_> = self.store.list(Some(&prefix)).try_collect().await?;
            let mut out = Vec::with_capacity(objects.len());
            for object in objects {
                if let Ok(result) = self.store.get(&object.location).await
                    && let Ok(bytes) = result.bytes().await
                    && let Ok(meta) = parse_meta(&bytes)
                {
                    out.push(meta);
                }
            }
            Ok(out)
        })
    }

    fn collect_garbage(&self, now: u64, grace: u64) -> BoxFuture<'_, Result<GcReport, StoreError>> {
        Box::pin(async move {
            let mut report = GcReport::default();
            let mut live = std::collections::HashSet::new();
            for meta in self.list().await? {
                if now >= meta.expires_at {
                    self.delete(&meta.id).await?;
                    report.expired += 1;
                } else {
                    live.insert(meta.digest.value);
                }
            }
            let cutoff = i64::try_from(now.saturating_sub(grace)).unwrap_or(i64::MAX);
            for dir in ["blobs", "tmp"] {
                let prefix = object_store::path::Path::from(dir);
                let mut listing = self.store.list(Some(&prefix));
                while let Some(object) = listing.next().await {
                    let object = object?;
                    let name = object.location.filename().unwrap_or_default().to_owned();
                    if dir == "blobs" && live.contains(&name) {
                        continue;
                    }
                    if object.last_modified.timestamp() <= cutoff
                        && self.store.delete(&object.location).await.is_ok()
                    {
                        if dir == "blobs" {
                            report.blobs += 1;
                        } else {
                            report.staging += 1;
                        }
                    }
                }
            }
            Ok(report)
        })
    }
}
