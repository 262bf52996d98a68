//! Where bytes live: the [`FileStore`] trait and two implementations.
//!
//! A write is staged ([`FileStore::stage`]), fed chunk by chunk, then either committed with
//! its verified [`FileMeta`] or aborted. Nothing is visible before the commit; dropping a
//! staged write (a dropped connection) removes it. Committing an id twice fails with
//! [`FileStoreError::AlreadyExists`], which is what makes upload tickets single use; an upload
//! is staged with [`FileStore::stage_upload`], which also refuses a second upload of the same
//! id while the first is still running, so racing uploads to one descriptor cannot both write
//! a blob (exactly one commits, the other is refused before it stores anything).

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutPayload};
use tokio::io::AsyncWriteExt;

use crate::direct::DirectTransfer;
use crate::error::FileStoreError;
use crate::meta::FileMeta;
use crate::stream::ByteStream;

/// A boxed future borrowing `'a` (the store's methods borrow `self` and their arguments),
/// unlike `smcp_server::tools::BoxFuture`, which is `'static`.
pub type BorrowedFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The old name of [`BorrowedFuture`].
#[deprecated(note = "renamed to `BorrowedFuture` (smcp_server's `BoxFuture` is the 'static one)")]
pub type BoxFuture<'a, T> = BorrowedFuture<'a, T>;

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
    fn stage(&self) -> BorrowedFuture<'_, Result<Box<dyn StagedFile>, FileStoreError>>;
    /// Starts the staged write of the upload of file `id`: [`FileStoreError::AlreadyExists`] when
    /// `id` is committed or another upload of it is in progress. The default checks for a
    /// committed record only; stores that can claim an id atomically override it.
    fn stage_upload<'a>(
        &'a self,
        id: &'a str,
    ) -> BorrowedFuture<'a, Result<Box<dyn StagedFile>, FileStoreError>> {
        Box::pin(async move {
            if self.meta(id).await?.is_some() {
                return Err(FileStoreError::AlreadyExists);
            }
            self.stage().await
        })
    }
    /// Reads a file's metadata; `Ok(None)` when unknown.
    fn meta<'a>(
        &'a self,
        id: &'a str,
    ) -> BorrowedFuture<'a, Result<Option<FileMeta>, FileStoreError>>;
    /// Streams a committed file's bytes.
    fn open<'a>(
        &'a self,
        meta: &'a FileMeta,
    ) -> BorrowedFuture<'a, Result<ByteStream, FileStoreError>>;
    /// Deletes a file record (its blob goes at the next GC when unreferenced).
    fn delete<'a>(&'a self, id: &'a str) -> BorrowedFuture<'a, Result<(), FileStoreError>>;
    /// Every file record, for GC and listing.
    fn list(&self) -> BorrowedFuture<'_, Result<Vec<FileMeta>, FileStoreError>>;
    /// Deletes expired records, unreferenced blobs and staging objects older than
    /// `now - grace` seconds.
    fn collect_garbage(
        &self,
        now: u64,
        grace: u64,
    ) -> BorrowedFuture<'_, Result<GcReport, FileStoreError>>;
    /// Direct transfers between clients and the store (presigned URLs), when the store can
    /// presign; `None` (the default): every byte goes through the server's data plane.
    fn direct(&self) -> Option<&dyn DirectTransfer> {
        None
    }
}

/// A staged write. Dropping it without [`StagedFile::commit`] discards the bytes.
pub trait StagedFile: Send {
    /// Appends bytes.
    fn write<'a>(&'a mut self, chunk: Bytes) -> BorrowedFuture<'a, Result<(), FileStoreError>>;
    /// Makes the bytes visible under `meta.id` (the local store content-addresses them by
    /// `meta.digest`; an object store names them in `meta.blob`).
    fn commit(
        self: Box<Self>,
        meta: FileMeta,
    ) -> BorrowedFuture<'static, Result<(), FileStoreError>>;
    /// Discards the bytes now.
    fn abort(self: Box<Self>) -> BorrowedFuture<'static, ()>;
}

pub(crate) fn meta_json(meta: &FileMeta) -> Result<Vec<u8>, FileStoreError> {
    serde_json::to_vec(meta).map_err(|e| FileStoreError::Io(e.to_string()))
}

pub(crate) fn parse_meta(bytes: &[u8]) -> Result<FileMeta, FileStoreError> {
    serde_json::from_slice(bytes).map_err(|e| FileStoreError::Io(format!("corrupt metadata: {e}")))
}

/// Local disk: `root/blobs/<digest>`, `root/files/<id>.json`, `root/tmp/*`.
///
/// Crash safety: bytes go to `tmp/`, are fsynced, then renamed into `blobs/` (atomic); the
/// record is written to `tmp/`, fsynced and hard-linked into `files/` (atomic
/// create-if-absent); directories are fsynced after each step. A crash leaves at most
/// orphaned `tmp/` files or an unreferenced blob. Every staged file and upload claim in
/// `tmp/` is held under an exclusive file lock while in use, which the kernel releases when
/// the process dies: [`LocalFileStore::open`] deletes the `tmp/` entries nobody holds (a killed
/// upload's bytes are gone at the next start, while uploads of another process sharing the
/// directory are left alone), and GC deletes unreferenced blobs.
///
/// An optional byte quota ([`LocalFileStore::with_quota`]) bounds the bytes in `blobs/` plus
/// those being staged; a write beyond it fails like a full disk.
#[derive(Debug, Clone)]
pub struct LocalFileStore {
    root: PathBuf,
    quota: Option<Arc<Quota>>,
}

/// Bytes in use against a [`LocalFileStore`] quota.
#[derive(Debug)]
struct Quota {
    limit: u64,
    used: std::sync::atomic::AtomicU64,
}

impl Quota {
    /// Reserves `n` bytes, or refuses like a full disk.
    fn take(&self, n: u64) -> Result<(), FileStoreError> {
        use std::sync::atomic::Ordering;
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            let next = used.saturating_add(n);
            if next > self.limit {
                return Err(FileStoreError::Io(format!(
                    "store quota of {} bytes is full",
                    self.limit
                )));
            }
            match self
                .used
                .compare_exchange_weak(used, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Ok(()),
                Err(now) => used = now,
            }
        }
    }

    fn give(&self, n: u64) {
        use std::sync::atomic::Ordering;
        let _ = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                Some(u.saturating_sub(n))
            });
    }
}

impl LocalFileStore {
    /// Opens (creating) a store under `root`, and deletes what killed uploads left in `tmp/`
    /// (entries no live process holds locked).
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, FileStoreError> {
        let root = root.into();
        for dir in ["blobs", "files", "tmp"] {
            std::fs::create_dir_all(root.join(dir))?;
        }
        let removed = clean_abandoned(&root.join("tmp"))?;
        if removed > 0 {
            tracing::info!(removed, store = %root.display(), "removed abandoned staged uploads");
        }
        Ok(Self { root, quota: None })
    }

    /// Bounds the bytes the store holds (blobs plus uploads being staged) to `limit`: a write
    /// beyond it fails as a full disk does (`storeFull`). Counts the blobs already there.
    pub fn with_quota(mut self, limit: u64) -> Result<Self, FileStoreError> {
        let mut used = 0u64;
        for entry in std::fs::read_dir(self.root.join("blobs"))? {
            used = used.saturating_add(entry?.metadata()?.len());
        }
        self.quota = Some(Arc::new(Quota {
            limit,
            used: std::sync::atomic::AtomicU64::new(used),
        }));
        Ok(self)
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

    /// A staged write in `tmp/`, locked for as long as it lives; `claim` is the upload claim
    /// it carries (released when the staged write ends).
    async fn stage_with(
        &self,
        claim: Option<Claim>,
    ) -> Result<Box<dyn StagedFile>, FileStoreError> {
        let path = self.root.join("tmp").join(random_name::<16>()?);
        let (file, lock) = {
            let path = path.clone();
            tokio::task::spawn_blocking(move || -> Result<_, FileStoreError> {
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&path)?;
                let lock = file.try_clone()?;
                lock_exclusive(&lock, &path)?;
                Ok((file, lock))
            })
            .await
            .map_err(|e| FileStoreError::Io(e.to_string()))??
        };
        Ok(Box::new(LocalStaged {
            file: Some(tokio::io::BufWriter::with_capacity(
                1 << 20,
                tokio::fs::File::from_std(file),
            )),
            path: Some(path),
            root: self.root.clone(),
            _lock: Some(lock),
            _claim: claim,
            quota: self.quota.clone(),
            written: 0,
        }) as Box<dyn StagedFile>)
    }
}

/// Takes the exclusive lock of a `tmp/` entry; an entry is in use exactly while locked.
fn lock_exclusive(file: &std::fs::File, path: &Path) -> Result<(), FileStoreError> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(FileStoreError::Io(format!(
            "{} is locked by another process",
            path.display()
        ))),
        Err(std::fs::TryLockError::Error(e)) => Err(e.into()),
    }
}

/// Deletes the entries of `tmp` that no process holds locked; returns how many.
fn clean_abandoned(tmp: &Path) -> Result<usize, FileStoreError> {
    let mut removed = 0;
    for entry in std::fs::read_dir(tmp)? {
        let path = entry?.path();
        let Ok(file) = std::fs::File::open(&path) else {
            continue;
        };
        if file.try_lock().is_ok() && std::fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}

/// A claim on an upload's file id: `tmp/<id>.claim`, created exclusively and locked; removed
/// when dropped.
#[derive(Debug)]
struct Claim {
    path: PathBuf,
    _file: std::fs::File,
}

impl Claim {
    /// Claims `id` in `root`, or [`FileStoreError::AlreadyExists`] when another upload holds it.
    fn take(root: &Path, id: &str) -> Result<Self, FileStoreError> {
        let path = root.join("tmp").join(format!("{id}.claim"));
        let file = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(FileStoreError::AlreadyExists);
            }
            Err(e) => return Err(e.into()),
        };
        let claim = Self { path, _file: file };
        lock_exclusive(&claim._file, &claim.path)?;
        Ok(claim)
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

struct LocalStaged {
    file: Option<tokio::io::BufWriter<tokio::fs::File>>,
    path: Option<PathBuf>,
    root: PathBuf,
    /// A second handle on the staged file, holding its lock until the staged write ends.
    _lock: Option<std::fs::File>,
    _claim: Option<Claim>,
    quota: Option<Arc<Quota>>,
    /// Bytes taken from the quota.
    written: u64,
}

impl Drop for LocalStaged {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = std::fs::remove_file(path);
        }
        if let Some(q) = &self.quota {
            q.give(self.written);
        }
    }
}

impl StagedFile for LocalStaged {
    fn write<'a>(&'a mut self, chunk: Bytes) -> BorrowedFuture<'a, Result<(), FileStoreError>> {
        Box::pin(async move {
            let file = self
                .file
                .as_mut()
                .ok_or_else(|| FileStoreError::Io("staged file closed".into()))?;
            if let Some(q) = &self.quota {
                q.take(chunk.len() as u64)?;
                self.written += chunk.len() as u64;
            }
            file.write_all(&chunk).await?;
            Ok(())
        })
    }

    fn commit(
        mut self: Box<Self>,
        meta: FileMeta,
    ) -> BorrowedFuture<'static, Result<(), FileStoreError>> {
        Box::pin(async move {
            let mut file = self
                .file
                .take()
                .ok_or_else(|| FileStoreError::Io("staged file closed".into()))?;
            file.flush().await?;
            file.get_mut().sync_all().await?;
            drop(file);
            let tmp = self
                .path
                .take()
                .ok_or_else(|| FileStoreError::Io("staged file closed".into()))?;
            let root = self.root.clone();
            let json = meta_json(&meta)?;
            let committed =
                tokio::task::spawn_blocking(move || commit_local(&root, &tmp, &meta, &json))
                    .await
                    .map_err(|e| FileStoreError::Io(e.to_string()))?;
            // The bytes now count as a blob, unless an identical blob was there already.
            if let Ok(true) = committed {
                self.written = 0;
            }
            // Dropping `self` gives back what no longer counts and releases the lock and the
            // upload claim, after the record is in place.
            committed.map(|_| ())
        })
    }

    fn abort(self: Box<Self>) -> BorrowedFuture<'static, ()> {
        drop(self);
        Box::pin(async {})
    }
}

/// Moves the staged bytes into `blobs/` and links the record; `Ok(true)` when the blob is new
/// (not an identical one already stored).
fn commit_local(
    root: &Path,
    tmp: &Path,
    meta: &FileMeta,
    json: &[u8],
) -> Result<bool, FileStoreError> {
    use std::io::Write as _;
    let final_meta = root.join("files").join(format!("{}.json", meta.id));
    if final_meta.exists() {
        let _ = std::fs::remove_file(tmp);
        return Err(FileStoreError::AlreadyExists);
    }
    let blob = root.join("blobs").join(&meta.digest.value);
    let new_blob = !blob.exists();
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
    Ok(new_blob)
}

/// A random name for a temporary object (an error, never a weaker name, without randomness).
fn random_name<const N: usize>() -> std::io::Result<String> {
    smcp_server::keys::random_hex::<N>().map_err(std::io::Error::other)
}

/// Whether a `tmp/` entry is held locked by a staged write or an upload claim.
fn in_use(path: &Path) -> bool {
    std::fs::File::open(path).is_ok_and(|f| f.try_lock().is_err())
}

fn mtime_secs(md: &std::fs::Metadata) -> u64 {
    md.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs())
}

impl FileStore for LocalFileStore {
    fn stage(&self) -> BorrowedFuture<'_, Result<Box<dyn StagedFile>, FileStoreError>> {
        Box::pin(self.stage_with(None))
    }

    fn stage_upload<'a>(
        &'a self,
        id: &'a str,
    ) -> BorrowedFuture<'a, Result<Box<dyn StagedFile>, FileStoreError>> {
        Box::pin(async move {
            if !FileMeta::valid_id(id) {
                return Err(FileStoreError::NotFound);
            }
            let root = self.root.clone();
            let owned = id.to_owned();
            let claim = tokio::task::spawn_blocking(move || Claim::take(&root, &owned))
                .await
                .map_err(|e| FileStoreError::Io(e.to_string()))??;
            // Claimed: no other upload of `id` runs now; one that finished has its record.
            if self.meta(id).await?.is_some() {
                return Err(FileStoreError::AlreadyExists);
            }
            self.stage_with(Some(claim)).await
        })
    }

    fn meta<'a>(
        &'a self,
        id: &'a str,
    ) -> BorrowedFuture<'a, Result<Option<FileMeta>, FileStoreError>> {
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

    fn open<'a>(
        &'a self,
        meta: &'a FileMeta,
    ) -> BorrowedFuture<'a, Result<ByteStream, FileStoreError>> {
        Box::pin(async move {
            let file = tokio::fs::File::open(self.blob_path(&meta.digest.value)).await?;
            let stream = tokio_util::io::ReaderStream::with_capacity(file, 64 * 1024);
            Ok(Box::pin(stream) as ByteStream)
        })
    }

    fn delete<'a>(&'a self, id: &'a str) -> BorrowedFuture<'a, Result<(), FileStoreError>> {
        Box::pin(async move {
            match tokio::fs::remove_file(self.meta_path(id)).await {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e.into()),
            }
        })
    }

    fn list(&self) -> BorrowedFuture<'_, Result<Vec<FileMeta>, FileStoreError>> {
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

    fn collect_garbage(
        &self,
        now: u64,
        grace: u64,
    ) -> BorrowedFuture<'_, Result<GcReport, FileStoreError>> {
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
                        && (dir == "blobs" || !in_use(&entry.path()))
                        && tokio::fs::remove_file(entry.path()).await.is_ok()
                    {
                        *count += 1;
                        if dir == "blobs"
                            && let Some(q) = &self.quota
                        {
                            q.give(md.len());
                        }
                    }
                }
            }
            Ok(report)
        })
    }
}

/// Any `object_store` backend (S3, GCS, Azure, local, in-memory): `blobs/<random>` (the
/// bytes), `files/<id>.json` (the record, naming its object in [`FileMeta::blob`]),
/// `tmp/<id>.claim` (upload claims); `blobs/<digest>` is still read for a record that names
/// no object (written before objects were named).
///
/// Staged bytes stream through an [`object_store::buffered::BufWriter`] to their final key:
/// up to its capacity (10 MiB) they are buffered, beyond it they go as a multipart upload, and
/// either way the object appears only when the write is completed, at commit, after the
/// caller verified size and digest; an aborted write is aborted (a multipart upload of a
/// killed process stays uncompleted, invisible, for the bucket's lifecycle rule). The record
/// is written with `PutMode::Create`, so of two commits of one id exactly one wins; the
/// loser's object is deleted. No bytes are copied.
///
/// With [`ObjectStoreFileStore::with_direct`] (the S3 store has it) the store also offers
/// direct transfers ([`FileStore::direct`]): presigned uploads land in `blobs/<id digits>`
/// and become files when confirmed (`crate::direct`).
#[derive(Debug, Clone)]
pub struct ObjectStoreFileStore {
    store: Arc<dyn ObjectStore>,
    direct: Option<Arc<dyn DirectTransfer>>,
}

impl ObjectStoreFileStore {
    /// Wraps a store.
    pub fn new(store: Arc<dyn ObjectStore>) -> Self {
        Self {
            store,
            direct: None,
        }
    }

    /// The same store offering `direct` transfers (which must use the same objects).
    #[must_use]
    pub fn with_direct(mut self, direct: Arc<dyn DirectTransfer>) -> Self {
        self.direct = Some(direct);
        self
    }
}

impl ObjectStaged {
    async fn abort_now(self) {
        Box::new(self).abort().await;
    }
}

pub(crate) fn os_path(dir: &str, name: &str) -> object_store::path::Path {
    object_store::path::Path::from(format!("{dir}/{name}"))
}

/// Where a record's bytes are: the object it names (`blobs/<32 hex digits>`, nothing else),
/// or `blobs/<digest>` for a record that names none.
fn blob_path(meta: &FileMeta) -> Result<object_store::path::Path, FileStoreError> {
    match &meta.blob {
        None => Ok(os_path("blobs", &meta.digest.value)),
        Some(key) => match key.strip_prefix("blobs/") {
            Some(name) if name.len() == 32 && name.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Ok(os_path("blobs", name))
            }
            _ => Err(FileStoreError::Io(format!(
                "corrupt metadata: record {} names an object outside blobs/",
                meta.id
            ))),
        },
    }
}

struct ObjectStaged {
    store: Arc<dyn ObjectStore>,
    path: object_store::path::Path,
    writer: Option<object_store::buffered::BufWriter>,
    /// The upload claim (`tmp/<id>.claim`, created with `PutMode::Create`), deleted when the
    /// staged write ends; a claim left by a crash goes with GC's staging sweep.
    claim: Option<object_store::path::Path>,
}

impl Drop for ObjectStaged {
    fn drop(&mut self) {
        let writer = self.writer.take();
        let claim = self.claim.take();
        if writer.is_none() && claim.is_none() {
            return;
        }
        let store = self.store.clone();
        let path = self.path.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                if let Some(mut writer) = writer {
                    let _ = writer.abort().await;
                    let _ = store.delete(&path).await;
                }
                if let Some(claim) = claim {
                    let _ = store.delete(&claim).await;
                }
            });
        }
    }
}

impl StagedFile for ObjectStaged {
    fn write<'a>(&'a mut self, chunk: Bytes) -> BorrowedFuture<'a, Result<(), FileStoreError>> {
        Box::pin(async move {
            let writer = self
                .writer
                .as_mut()
                .ok_or_else(|| FileStoreError::Io("staged object closed".into()))?;
            writer.put(chunk).await?;
            Ok(())
        })
    }

    fn commit(
        mut self: Box<Self>,
        mut meta: FileMeta,
    ) -> BorrowedFuture<'static, Result<(), FileStoreError>> {
        Box::pin(async move {
            let mut writer = self
                .writer
                .take()
                .ok_or_else(|| FileStoreError::Io("staged object closed".into()))?;
            let store = self.store.clone();
            let object = self.path.clone();
            let record = os_path("files", &format!("{}.json", meta.id));
            if store.head(&record).await.is_ok() {
                let _ = writer.abort().await;
                return Err(FileStoreError::AlreadyExists);
            }
            // The object appears now, verified; it is the file once the record names it.
            writer
                .shutdown()
                .await
                .map_err(|e| FileStoreError::Io(e.to_string()))?;
            meta.blob = Some(object.to_string());
            let json = meta_json(&meta)?;
            let created = store
                .put_opts(&record, PutPayload::from(json), PutMode::Create.into())
                .await;
            if created.is_err() {
                let _ = store.delete(&object).await;
            }
            created?;
            // Dropping `self` releases the upload claim, now that the record is in place.
            Ok(())
        })
    }

    fn abort(mut self: Box<Self>) -> BorrowedFuture<'static, ()> {
        let writer = self.writer.take();
        let claim = self.claim.take();
        let store = self.store.clone();
        let path = self.path.clone();
        Box::pin(async move {
            if let Some(mut w) = writer {
                let _ = w.abort().await;
            }
            let _ = store.delete(&path).await;
            if let Some(claim) = claim {
                let _ = store.delete(&claim).await;
            }
        })
    }
}

impl ObjectStoreFileStore {
    fn staged(
        &self,
        claim: Option<object_store::path::Path>,
    ) -> Result<ObjectStaged, FileStoreError> {
        let path = os_path("blobs", &random_name::<16>()?);
        let writer = object_store::buffered::BufWriter::new(self.store.clone(), path.clone());
        Ok(ObjectStaged {
            store: self.store.clone(),
            path,
            writer: Some(writer),
            claim,
        })
    }
}

impl FileStore for ObjectStoreFileStore {
    fn direct(&self) -> Option<&dyn DirectTransfer> {
        self.direct.as_deref()
    }

    fn stage(&self) -> BorrowedFuture<'_, Result<Box<dyn StagedFile>, FileStoreError>> {
        Box::pin(async move { Ok(Box::new(self.staged(None)?) as Box<dyn StagedFile>) })
    }

    fn stage_upload<'a>(
        &'a self,
        id: &'a str,
    ) -> BorrowedFuture<'a, Result<Box<dyn StagedFile>, FileStoreError>> {
        Box::pin(async move {
            if !FileMeta::valid_id(id) {
                return Err(FileStoreError::NotFound);
            }
            let claim = os_path("tmp", &format!("{id}.claim"));
            self.store
                .put_opts(&claim, PutPayload::new(), PutMode::Create.into())
                .await?;
            // Build the staged write first, so the claim is released on every path below.
            let staged = match self.staged(Some(claim.clone())) {
                Ok(s) => s,
                Err(e) => {
                    let _ = self.store.delete(&claim).await;
                    return Err(e);
                }
            };
            if self.meta(id).await?.is_some() {
                staged.abort_now().await;
                return Err(FileStoreError::AlreadyExists);
            }
            Ok(Box::new(staged) as Box<dyn StagedFile>)
        })
    }

    fn meta<'a>(
        &'a self,
        id: &'a str,
    ) -> BorrowedFuture<'a, Result<Option<FileMeta>, FileStoreError>> {
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

    fn open<'a>(
        &'a self,
        meta: &'a FileMeta,
    ) -> BorrowedFuture<'a, Result<ByteStream, FileStoreError>> {
        Box::pin(async move {
            let result = self.store.get(&blob_path(meta)?).await?;
            let stream = result
                .into_stream()
                .map_err(|e| std::io::Error::other(e.to_string()));
            Ok(Box::pin(stream) as ByteStream)
        })
    }

    fn delete<'a>(&'a self, id: &'a str) -> BorrowedFuture<'a, Result<(), FileStoreError>> {
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

    fn list(&self) -> BorrowedFuture<'_, Result<Vec<FileMeta>, FileStoreError>> {
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

    fn collect_garbage(
        &self,
        now: u64,
        grace: u64,
    ) -> BorrowedFuture<'_, Result<GcReport, FileStoreError>> {
        Box::pin(async move {
            let mut report = GcReport::default();
            let mut live = std::collections::HashSet::new();
            for meta in self.list().await? {
                if now >= meta.expires_at {
                    self.delete(&meta.id).await?;
                    report.expired += 1;
                } else if let Ok(path) = blob_path(&meta) {
                    live.insert(path);
                }
            }
            let cutoff = i64::try_from(now.saturating_sub(grace)).unwrap_or(i64::MAX);
            for dir in ["blobs", "tmp"] {
                let prefix = object_store::path::Path::from(dir);
                let mut listing = self.store.list(Some(&prefix));
                while let Some(object) = listing.next().await {
                    let object = object?;
                    if live.contains(&object.location) {
                        continue;
                    }
                    if object.last_modified.timestamp() <= cutoff
                        && self.store.delete(&object.location).await.is_ok()
                    {
                        if dir == "tmp" {
                            report.staging += 1;
                        } else {
                            report.blobs += 1;
                        }
                    }
                }
            }
            Ok(report)
        })
    }
}
