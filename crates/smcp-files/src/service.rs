//! [`Files`]: the control plane (`files/authorizeUpload`, `files/authorizeDownload`),
//! validation of file arguments, generated outputs and garbage collection.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use smcp_proto::ext::data_uri::{DataUri, DataUriError, is_data_uri};
use smcp_proto::ext::files::{
    AuthorizeDownloadResult, AuthorizeUploadRequestParams, AuthorizeUploadResult, DigestBuilder,
    FileErrorReason, FileInputDescriptor, FileTransferDescriptor, FileValue, MultipartSpec,
    TRANSPORT_HTTPS, TransferMode, is_valid_mime,
};

use crate::direct::{DirectTransfer, UploadIntent};
use crate::error::FileError;
use crate::handle::FileHandle;
use crate::meta::FileMeta;
use crate::presigned;
use crate::sniff;
use crate::store::{FileStore, GcReport};
use crate::token::{self, Claims, Direction, Route};
use smcp_proto::time::rfc3339;
use smcp_server::keys::{Clock, KeyRing, random_hex, system_clock};

/// The longest `mimeType` `files/authorizeUpload` takes, parameters included (RFC 6838 allows
/// 127 bytes for each of type and subtype).
pub const MAX_MIME_TYPE_BYTES: usize = 255;

/// How upload descriptors send bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UploadStyle {
    /// Raw body, `PUT <base>/files/upload/<token>` (default).
    #[default]
    Put,
    /// `multipart/form-data` `POST <base>/files/upload`, fields `token` then `file`.
    Multipart,
}

/// Default [`FilesConfig::max_call_files`].
pub const DEFAULT_MAX_CALL_FILES: usize = 32;
/// Default [`FilesConfig::max_call_bytes`] (1 GiB).
pub const DEFAULT_MAX_CALL_BYTES: u64 = 1 << 30;

/// Settings of the file service.
#[derive(Debug, Clone)]
pub struct FilesConfig {
    /// The authority of minted URIs: `mcp-file://<authority>/<id>`.
    pub authority: String,
    /// Public origin of the data plane, e.g. `https://files.example:8443`. Settable later
    /// with [`Files::set_base_url`] (after binding port 0).
    pub base_url: Option<String>,
    /// Path prefix of the data-plane routes.
    pub path_prefix: String,
    /// Upload descriptor redemption window, seconds.
    pub upload_ttl: u64,
    /// Download descriptor redemption window, seconds.
    pub download_ttl: u64,
    /// How long a committed file URI resolves, seconds.
    pub retention: u64,
    /// Largest file accepted at all, bytes.
    pub max_size: u64,
    /// Largest decoded `data:` value, bytes (bounded inline limit).
    pub max_inline: u64,
    /// Upload descriptor style.
    pub upload_style: UploadStyle,
    /// Allow `http://` descriptor URLs, only for loopback (development and tests).
    pub allow_insecure_loopback: bool,
    /// Deliberately broken: accept uploads whose digest does not match (fixture only).
    pub skip_digest_check: bool,
    /// GC grace for staging objects and unreferenced blobs, seconds.
    pub gc_grace: u64,
    /// Most file values one `tools/call` may carry (every item of every file field counts,
    /// the same file named twice counts twice); more is refused before any is resolved.
    pub max_call_files: usize,
    /// Most bytes the file arguments of one `tools/call` may add up to (a file named N times
    /// counts N times), so no call pulls in more than this however its files are arranged.
    pub max_call_bytes: u64,
    /// Direct transfers: upload descriptors are presigned `PUT`s to the store, bound to the
    /// authorized size and digest (the store refuses other bytes), and download descriptors
    /// presigned `GET`s, so the bytes bypass the data plane. Needs a store that presigns
    /// ([`crate::FileStore::direct`]: the S3 store) and raw `PUT` uploads; an upload
    /// authorized without a size or digest (or larger than one store request carries) still
    /// goes through the data plane. An uploaded file's URI resolves once the store confirmed
    /// its size and digest ([`Files::lookup`]).
    pub presign: bool,
}

impl Default for FilesConfig {
    fn default() -> Self {
        Self {
            authority: "smcp".into(),
            base_url: None,
            path_prefix: "/files".into(),
            upload_ttl: 300,
            download_ttl: 300,
            retention: 24 * 3600,
            max_size: 4 << 30,
            max_inline: 8 << 20,
            upload_style: UploadStyle::Put,
            allow_insecure_loopback: false,
            skip_digest_check: false,
            gc_grace: 3600,
            max_call_files: DEFAULT_MAX_CALL_FILES,
            max_call_bytes: DEFAULT_MAX_CALL_BYTES,
            presign: false,
        }
    }
}

/// The file service; cheap to clone.
#[derive(Clone)]
pub struct Files {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) store: Arc<dyn FileStore>,
    pub(crate) keys: KeyRing,
    pub(crate) config: FilesConfig,
    pub(crate) clock: Clock,
    base_url: RwLock<Option<String>>,
    /// Where data-plane bytes are counted (nowhere until [`Files::set_metrics`]).
    pub(crate) metrics: RwLock<smcp_server::core::metrics::MetricsHandle>,
}

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Files")
            .field("store", &self.inner.store)
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// Why the data plane's public origin was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BaseUrlError {
    /// `http://` to a host that is not loopback, or without the development opt-in.
    #[error(
        "plain http data plane {url:?} refused: use TLS, or enable insecure loopback \
         development on 127.0.0.1/[::1]"
    )]
    Insecure {
        /// The refused URL.
        url: String,
    },
    /// Neither `https://` nor `http://`.
    #[error("data plane URL {url:?} must be https://")]
    NotHttps {
        /// The refused URL.
        url: String,
    },
}

/// Why a file service could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// The data plane's (or the store's presigned URLs') origin was refused.
    #[error(transparent)]
    BaseUrl(#[from] BaseUrlError),
    /// [`FilesConfig::presign`] with a store that cannot presign.
    #[error("presigned transfers need a store that presigns URLs (an S3 store), not {store}")]
    PresignUnsupported {
        /// The store, as it describes itself.
        store: String,
    },
    /// [`FilesConfig::presign`] with multipart upload descriptors.
    #[error("presigned uploads are raw PUTs: presign and multipart uploads exclude each other")]
    PresignMultipart,
}

/// Checks a data-plane origin: `https://…`, or `http://` on loopback when allowed.
pub fn check_base_url(url: &str, allow_insecure_loopback: bool) -> Result<(), BaseUrlError> {
    if url.starts_with("https://") {
        return Ok(());
    }
    if let Some(rest) = url.strip_prefix("http://") {
        let host = rest.split('/').next().unwrap_or_default();
        let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
        let loopback = host == "localhost"
            || host == "[::1]"
            || host
                .parse::<std::net::Ipv4Addr>()
                .is_ok_and(|a| a.is_loopback());
        if allow_insecure_loopback && loopback {
            return Ok(());
        }
        return Err(BaseUrlError::Insecure {
            url: url.to_owned(),
        });
    }
    Err(BaseUrlError::NotHttps {
        url: url.to_owned(),
    })
}

impl Files {
    /// A service over `store`, signing transfer tokens with `keys` (share the ring, and the
    /// store, between instances so any of them serves a descriptor another issued).
    pub fn new(
        store: Arc<dyn FileStore>,
        keys: KeyRing,
        config: FilesConfig,
    ) -> Result<Self, SetupError> {
        if let Some(url) = &config.base_url {
            check_base_url(url, config.allow_insecure_loopback)?;
        }
        if config.presign {
            let Some(direct) = store.direct() else {
                return Err(SetupError::PresignUnsupported {
                    store: format!("{store:?}").chars().take(120).collect(),
                });
            };
            if config.upload_style == UploadStyle::Multipart {
                return Err(SetupError::PresignMultipart);
            }
            check_base_url(direct.origin(), config.allow_insecure_loopback)?;
        }
        let base_url = RwLock::new(config.base_url.clone());
        Ok(Self {
            inner: Arc::new(Inner {
                store,
                keys,
                config,
                clock: system_clock(),
                base_url,
                metrics: RwLock::default(),
            }),
        })
    }

    /// The same service reading time from `clock` (for tests of expiry).
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        let inner = &self.inner;
        Self {
            inner: Arc::new(Inner {
                store: inner.store.clone(),
                keys: inner.keys.clone(),
                config: inner.config.clone(),
                clock,
                base_url: RwLock::new(self.base_url().ok()),
                metrics: RwLock::new(self.metrics()),
            }),
        }
    }

    /// Counts the data plane's bytes into `metrics` (`smcp_file_bytes_total`): those of each
    /// committed upload (`in`) and those sent by downloads (`out`). Pass
    /// [`Server::metrics`](smcp_server::Server::metrics).
    pub fn set_metrics(&self, metrics: smcp_server::core::metrics::MetricsHandle) {
        *self
            .inner
            .metrics
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = metrics;
    }

    /// The handle data-plane bytes are counted through.
    pub(crate) fn metrics(&self) -> smcp_server::core::metrics::MetricsHandle {
        self.inner
            .metrics
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Unix seconds now, from the service's clock.
    pub fn now(&self) -> u64 {
        smcp_server::keys::unix_millis(&self.inner.clock) / 1000
    }

    /// A fresh file id (`file_` + 32 hex digits).
    fn new_id() -> Result<String, FileError> {
        random_hex::<16>()
            .map(|hex| format!("file_{hex}"))
            .map_err(|e| FileError::new(FileErrorReason::StoreFull, e.to_string()))
    }

    /// Sets the data-plane origin (e.g. after binding port 0).
    pub fn set_base_url(&self, url: &str) -> Result<(), BaseUrlError> {
        check_base_url(url, self.inner.config.allow_insecure_loopback)?;
        *self
            .inner
            .base_url
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some(url.trim_end_matches('/').to_owned());
        Ok(())
    }

    /// The settings.
    pub fn config(&self) -> &FilesConfig {
        &self.inner.config
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn FileStore> {
        &self.inner.store
    }

    fn base_url(&self) -> Result<String, FileError> {
        self.inner
            .base_url
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
            .ok_or_else(|| {
                FileError::new(
                    FileErrorReason::StoreFull,
                    "file data plane has no public URL",
                )
            })
    }

    /// `mcp-file://<authority>/<id>`.
    pub fn uri_for(&self, id: &str) -> String {
        format!("mcp-file://{}/{id}", self.inner.config.authority)
    }

    /// The id of a URI this service minted; `Err` says why not.
    pub fn parse_uri(&self, uri: &str) -> Result<String, FileError> {
        let Some(rest) = uri.strip_prefix("mcp-file://") else {
            return Err(FileError::new(
                FileErrorReason::MalformedFileUri,
                "not an mcp-file:// URI",
            ));
        };
        let Some((authority, id)) = rest.split_once('/') else {
            return Err(FileError::new(
                FileErrorReason::MalformedFileUri,
                "file URI has no id",
            ));
        };
        if authority != self.inner.config.authority {
            return Err(FileError::unavailable());
        }
        let well_formed = !id.is_empty()
            && id.len() <= 256
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
            && id != "."
            && id != "..";
        if !well_formed {
            return Err(FileError::new(
                FileErrorReason::MalformedFileUri,
                "malformed file id",
            ));
        }
        // Well-formed but not an id this service mints: it cannot exist (unknown).
        if !FileMeta::valid_id(id) {
            return Err(FileError::unavailable());
        }
        Ok(id.to_owned())
    }

    fn route(&self, tail: &str) -> Result<String, FileError> {
        Ok(format!(
            "{}{}{tail}",
            self.base_url()?,
            self.inner.config.path_prefix
        ))
    }

    /// The store's direct transfers, when [`FilesConfig::presign`] uses them.
    fn direct(&self) -> Option<&dyn DirectTransfer> {
        self.inner
            .config
            .presign
            .then(|| self.inner.store.direct())
            .flatten()
    }

    /// `files/authorizeUpload` as configured: with [`FilesConfig::presign`], an upload whose
    /// size and digest are declared gets a presigned `PUT` to the store (the intent is
    /// recorded in the store first); otherwise, [`Files::authorize_upload`]'s descriptor.
    pub async fn authorize(
        &self,
        params: &AuthorizeUploadRequestParams,
        principal: Option<&str>,
    ) -> Result<AuthorizeUploadResult, FileError> {
        let Some(direct) = self.direct() else {
            return self.authorize_upload(params, principal);
        };
        let (Some(size), Some(digest)) = (params.size, &params.digest) else {
            return self.authorize_upload(params, principal);
        };
        if size > direct.max_upload() {
            return self.authorize_upload(params, principal);
        }
        let mime = self.check_upload(params)?;
        let cfg = &self.inner.config;
        let now = self.now();
        let id = Self::new_id()?;
        let intent = UploadIntent {
            meta: FileMeta {
                id: id.clone(),
                name: params.name.clone(),
                mime_type: mime,
                size,
                digest: digest.clone(),
                owner: principal.map(str::to_owned),
                created_at: now,
                expires_at: now + cfg.upload_ttl + cfg.retention,
                detected_type: None,
                blob: None,
            },
            upload_expires_at: now + cfg.upload_ttl,
        };
        let upload = presigned::upload(direct, &intent, now).await?;
        Ok(AuthorizeUploadResult {
            meta: None,
            result_type: Default::default(),
            file: FileValue {
                uri: self.uri_for(&id),
                name: params.name.clone(),
                mime_type: Some(intent.meta.mime_type),
                size: Some(size),
                digest: Some(digest.clone()),
            },
            upload,
            download: None,
        })
    }

    /// Checks `files/authorizeUpload`'s parameters; returns the media type to record.
    fn check_upload(&self, params: &AuthorizeUploadRequestParams) -> Result<String, FileError> {
        let cfg = &self.inner.config;
        let mime = params
            .mime_type
            .clone()
            .unwrap_or_else(|| "application/octet-stream".into());
        if !is_valid_mime(&mime) {
            return Err(FileError::new(
                FileErrorReason::InvalidMimeType,
                "mimeType must be type/subtype",
            ));
        }
        // The media type travels in the signed upload token: unbounded, it would mint a token
        // longer than the data plane accepts.
        if mime.len() > MAX_MIME_TYPE_BYTES {
            return Err(FileError::new(
                FileErrorReason::InvalidMimeType,
                format!("mimeType longer than {MAX_MIME_TYPE_BYTES} bytes"),
            ));
        }
        if let Some(size) = params.size
            && size > cfg.max_size
        {
            return Err(FileError::new(
                FileErrorReason::MaxSizeExceeded,
                format!("size {size} exceeds the server limit {}", cfg.max_size),
            )
            .with("maxSize", cfg.max_size)
            .with("actualSize", size));
        }
        if let Some(digest) = &params.digest {
            digest.check().map_err(|reason| {
                FileError::new(
                    reason,
                    "digest must be sha-256 in base64url without padding",
                )
            })?;
        }
        if params.name.as_ref().is_some_and(|n| n.len() > 1024) {
            return Err(FileError::new(
                FileErrorReason::InvalidName,
                "name longer than 1024 bytes",
            ));
        }
        Ok(mime)
    }

    /// `files/authorizeUpload` through the data plane: mints a URI and a single-use,
    /// short-lived upload descriptor to this service's upload route (whatever
    /// [`FilesConfig::presign`] says; [`Files::authorize`] presigns when configured).
    pub fn authorize_upload(
        &self,
        params: &AuthorizeUploadRequestParams,
        principal: Option<&str>,
    ) -> Result<AuthorizeUploadResult, FileError> {
        let cfg = &self.inner.config;
        let mime = self.check_upload(params)?;
        let now = self.now();
        let id = Self::new_id()?;
        let claims = Claims {
            dir: Direction::Upload,
            fid: id.clone(),
            sub: principal.map(str::to_owned),
            exp: now + cfg.upload_ttl,
            size: params.size,
            max: Some(cfg.max_size),
            digest: params.digest.clone(),
            mime: Some(mime.clone()),
            name: params.name.clone(),
            ret: Some(now + cfg.upload_ttl + cfg.retention),
            via: Some(match cfg.upload_style {
                UploadStyle::Put => Route::Put,
                UploadStyle::Multipart => Route::Form,
            }),
        };
        let token = token::sign(&self.inner.keys, &claims);
        let expires_at = Some(rfc3339(i64::try_from(claims.exp).unwrap_or(i64::MAX)));
        let upload = match cfg.upload_style {
            UploadStyle::Put => FileTransferDescriptor {
                transport: TRANSPORT_HTTPS.into(),
                method: "PUT".into(),
                url: self.route(&format!("/upload/{token}"))?,
                headers: Some(BTreeMap::from([("Content-Type".to_owned(), mime.clone())])),
                multipart: None,
                expires_at,
            },
            UploadStyle::Multipart => FileTransferDescriptor {
                transport: TRANSPORT_HTTPS.into(),
                method: "POST".into(),
                url: self.route("/upload")?,
                headers: None,
                multipart: Some(MultipartSpec {
                    file_field: "file".into(),
                    fields: Some(BTreeMap::from([("token".to_owned(), token)])),
                }),
                expires_at,
            },
        };
        Ok(AuthorizeUploadResult {
            meta: None,
            result_type: Default::default(),
            file: FileValue {
                uri: self.uri_for(&id),
                name: params.name.clone(),
                mime_type: Some(mime),
                size: params.size,
                digest: params.digest.clone(),
            },
            upload,
            download: None,
        })
    }

    /// Looks a URI up for `principal`: unknown, expired and foreign are the same error. With
    /// [`FilesConfig::presign`], a file uploaded directly to the store is confirmed here the
    /// first time it is named (its size and digest as the store reports them), and is unknown
    /// until then.
    pub async fn lookup(&self, uri: &str, principal: Option<&str>) -> Result<FileMeta, FileError> {
        let id = self.parse_uri(uri)?;
        let mut meta = self.inner.store.meta(&id).await?;
        if meta.is_none()
            && let Some(direct) = self.direct()
        {
            meta = presigned::confirm(direct, &id, self.now()).await?;
        }
        match meta {
            Some(meta) if meta.usable_by(principal, self.now()) => Ok(meta),
            _ => Err(FileError::unavailable()),
        }
    }

    /// `files/authorizeDownload`.
    pub async fn authorize_download(
        &self,
        uri: &str,
        principal: Option<&str>,
    ) -> Result<AuthorizeDownloadResult, FileError> {
        let meta = self.lookup(uri, principal).await?;
        let now = self.now();
        let exp = (now + self.inner.config.download_ttl).min(meta.expires_at);
        if let Some(direct) = self.direct() {
            return Ok(AuthorizeDownloadResult {
                meta: None,
                result_type: Default::default(),
                file: meta.file_value(uri.to_owned()),
                download: presigned::download(direct, &meta, now, exp).await?,
            });
        }
        let claims = Claims {
            dir: Direction::Download,
            fid: meta.id.clone(),
            sub: meta.owner.clone(),
            exp,
            size: None,
            max: None,
            digest: None,
            mime: None,
            name: None,
            ret: None,
            via: None,
        };
        let token = token::sign(&self.inner.keys, &claims);
        Ok(AuthorizeDownloadResult {
            meta: None,
            result_type: Default::default(),
            file: meta.file_value(uri.to_owned()),
            download: FileTransferDescriptor {
                transport: TRANSPORT_HTTPS.into(),
                method: "GET".into(),
                url: self.route(&format!("/download/{token}"))?,
                headers: None,
                multipart: None,
                expires_at: Some(rfc3339(i64::try_from(exp).unwrap_or(i64::MAX))),
            },
        })
    }

    /// Validates and resolves one file argument value against its declaration.
    pub async fn resolve(
        &self,
        value: &str,
        descriptor: &FileInputDescriptor,
        principal: Option<&str>,
    ) -> Result<FileHandle, FileError> {
        if is_data_uri(value) {
            return resolve_inline(value, descriptor, self.inner.config.max_inline);
        }
        if value.starts_with("mcp-file:") {
            if !descriptor.allows(TransferMode::Upload) {
                return Err(mode_error(TransferMode::Upload));
            }
            let meta = self.lookup(value, principal).await?;
            check_constraints(descriptor, &meta.mime_type, meta.size)?;
            sniff::check_content(descriptor, &meta.mime_type, meta.detected_type.as_deref())?;
            return Ok(FileHandle::stored(self.inner.store.clone(), meta));
        }
        Err(scheme_error(value))
    }

    /// Stores a generated file owned by `principal` and returns its `FileValue`.
    pub async fn create<S>(
        &self,
        name: Option<String>,
        mime_type: &str,
        mut bytes: S,
        principal: Option<&str>,
    ) -> Result<FileValue, FileError>
    where
        S: Stream<Item = Result<Bytes, std::io::Error>> + Send + Unpin,
    {
        if !is_valid_mime(mime_type) {
            return Err(FileError::new(
                FileErrorReason::InvalidMimeType,
                "mimeType must be type/subtype",
            ));
        }
        let mut staged = self.inner.store.stage().await?;
        let mut hasher = DigestBuilder::new();
        let mut head = Vec::new();
        while let Some(chunk) = bytes.next().await {
            let chunk =
                chunk.map_err(|e| FileError::new(FileErrorReason::StoreFull, e.to_string()))?;
            hasher.update(&chunk);
            sniff_head(&mut head, &chunk);
            if hasher.len() > self.inner.config.max_size {
                staged.abort().await;
                return Err(FileError::new(
                    FileErrorReason::MaxSizeExceeded,
                    "generated file too large",
                ));
            }
            staged.write(chunk).await?;
        }
        let (size, digest) = hasher.finish();
        let now = self.now();
        let meta = FileMeta {
            id: Self::new_id()?,
            name,
            mime_type: mime_type.to_owned(),
            size,
            digest,
            owner: principal.map(str::to_owned),
            created_at: now,
            expires_at: now + self.inner.config.retention,
            detected_type: sniff::detect(&head).map(str::to_owned),
            blob: None,
        };
        staged.commit(meta.clone()).await?;
        Ok(meta.file_value(self.uri_for(&meta.id)))
    }

    /// [`Files::create`] from bytes in memory.
    pub async fn create_bytes(
        &self,
        name: Option<String>,
        mime_type: &str,
        bytes: impl Into<Bytes>,
        principal: Option<&str>,
    ) -> Result<FileValue, FileError> {
        let stream = futures_util::stream::once(std::future::ready(Ok(bytes.into())));
        self.create(name, mime_type, stream, principal).await
    }

    /// One garbage-collection pass (with [`FilesConfig::presign`], first confirming the direct
    /// uploads the store received, so none is swept as unreferenced).
    pub async fn collect_garbage(&self) -> Result<GcReport, FileError> {
        if let Some(direct) = self.direct() {
            let confirmed = presigned::sweep(direct, self.now()).await?;
            if confirmed > 0 {
                tracing::debug!(confirmed, "direct uploads confirmed by GC");
            }
        }
        Ok(self
            .inner
            .store
            .collect_garbage(self.now(), self.inner.config.gc_grace)
            .await?)
    }

    /// Runs GC every `every` until the returned handle is aborted.
    pub fn spawn_gc(&self, every: std::time::Duration) -> tokio::task::JoinHandle<()> {
        let files = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                match files.collect_garbage().await {
                    Ok(r) => tracing::debug!(?r, "file GC"),
                    Err(e) => tracing::warn!(error = %e, "file GC failed"),
                }
            }
        })
    }
}

fn mode_error(mode: TransferMode) -> FileError {
    FileError::new(
        FileErrorReason::TransferModeNotAllowed,
        format!(
            "transfer mode {:?} is not allowed for this field",
            mode.as_str()
        ),
    )
    .with("transferMode", mode.as_str())
}

fn scheme_error(value: &str) -> FileError {
    let scheme = value.split_once(':').map(|(s, _)| s).filter(|s| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    });
    match scheme {
        Some(s) => FileError::new(
            FileErrorReason::UnsupportedScheme,
            format!(
                "URI scheme {s:?} is not accepted: use a data: URI or a file URI from files/authorizeUpload"
            ),
        ),
        None => FileError::new(FileErrorReason::MalformedFileUri, "not a URI"),
    }
}

fn check_constraints(d: &FileInputDescriptor, mime: &str, size: u64) -> Result<(), FileError> {
    if !d.accepts(mime) {
        return Err(FileError::new(
            FileErrorReason::MimeTypeNotAccepted,
            format!(
                "media type {:?} is not accepted",
                smcp_proto::ext::files::mime_essence(mime)
            ),
        )
        .with("mimeType", smcp_proto::ext::files::mime_essence(mime)));
    }
    if let Some(max) = d.max_size
        && size > max
    {
        return Err(FileError::new(
            FileErrorReason::MaxSizeExceeded,
            format!("file is {size} bytes, more than maxSize {max}"),
        )
        .with("maxSize", max)
        .with("actualSize", size));
    }
    Ok(())
}

/// Validates a `data:` value (no file service needed). `max_inline` bounds every inline
/// value regardless of the declaration.
pub fn resolve_inline(
    value: &str,
    descriptor: &FileInputDescriptor,
    max_inline: u64,
) -> Result<FileHandle, FileError> {
    if !is_data_uri(value) {
        return Err(scheme_error(value));
    }
    if !descriptor.allows(TransferMode::Inline) {
        return Err(mode_error(TransferMode::Inline));
    }
    let uri = DataUri::parse(value).map_err(|e| data_error(&e))?;
    check_constraints(descriptor, uri.media_type(), uri.decoded_len())?;
    let bytes = uri.decode(Some(max_inline)).map_err(|e| data_error(&e))?;
    sniff::check_content(descriptor, uri.media_type(), sniff::detect(&bytes))?;
    Ok(FileHandle::inline(
        uri.media_type().to_owned(),
        Bytes::from(bytes),
    ))
}

/// Appends to `head` what it still lacks of the first [`sniff::SNIFF_LEN`] bytes.
pub(crate) fn sniff_head(head: &mut Vec<u8>, chunk: &[u8]) {
    let missing = sniff::SNIFF_LEN.saturating_sub(head.len());
    head.extend_from_slice(&chunk[..chunk.len().min(missing)]);
}

fn data_error(e: &DataUriError) -> FileError {
    let err = FileError::new(e.reason(), e.to_string());
    match e {
        DataUriError::TooLarge { max, actual } => {
            err.with("maxSize", *max).with("actualSize", *actual)
        }
        _ => err,
    }
}
