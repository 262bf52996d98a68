//! SEP-2631 file transfer (feature `files`; `--files-store s3://…` with feature `s3`): the
//! `--files-*` flags, the file service they configure, and its data plane (the upload and
//! download endpoints). Without the feature, no flags and no file tools.

use std::net::SocketAddr;
#[cfg(feature = "files")]
use std::path::PathBuf;
use std::sync::Arc;

#[cfg(feature = "files")]
use anyhow::Context as _;
use smcp_server::ServeOptions;
use smcp_server::core::health::HealthCheck;
#[cfg(feature = "files")]
use std::time::Duration;
use tokio::net::TcpListener;

/// The data plane's task, serving until told to stop.
pub(crate) type DataPlaneTask = tokio::task::JoinHandle<std::io::Result<smcp_server::Drained>>;

/// The SEP-2631 flags.
#[cfg(feature = "files")]
#[derive(Debug, clap::Args)]
pub(crate) struct FilesArgs {
    /// Where uploaded and generated files are stored (default: a temp directory).
    #[arg(long, value_name = "DIR", env = "SMCPD_FILES_DIR")]
    files_dir: Option<PathBuf>,
    /// A key signing file transfer tokens, as `ID:BASE64` (32 bytes; see --generate-key).
    /// Repeat to rotate: the first signs, all verify. Instances sharing keys and a store
    /// serve each other's descriptors. Without one, a random per-process key is used.
    #[arg(
        long = "files-key",
        env = "SMCPD_FILES_KEYS",
        value_delimiter = ',',
        value_name = "ID:BASE64"
    )]
    files_keys: Vec<String>,
    /// The data plane's base URL as clients reach it, when that is not this instance's own
    /// address: the load balancer's URL when several instances serve behind one
    /// (`docs/deploy.md`). An https:// URL turns file transfer on without TLS here (a proxy
    /// in front terminates it). Default: this instance's listen address.
    #[arg(long, value_name = "URL", env = "SMCPD_FILES_BASE_URL")]
    files_base_url: Option<String>,
    /// Issue multipart/form-data POST upload descriptors instead of raw PUT.
    #[arg(long)]
    files_multipart: bool,
    /// Development only: enable file transfer without TLS, issuing http:// descriptors
    /// (refused unless listening on loopback); with --files-presign, also presigned URLs to a
    /// plain-http S3 endpoint on loopback.
    #[arg(long)]
    insecure_http_files: bool,
    /// Disable SEP-2631 file transfer.
    #[arg(long)]
    no_files: bool,
    /// Also serve the SEP-2631 conformance suite's fixture tools (`files_*`), for
    /// `scripts/conformance-files`. Needs file transfer (TLS).
    #[arg(long, conflicts_with = "no_files")]
    sep2631_fixtures: bool,
    /// How long an upload or download descriptor can be redeemed, in seconds (its
    /// `expiresAt`). Descriptors are bearer capabilities: keep this to minutes.
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    files_descriptor_ttl: u64,
    /// Largest uploaded or generated file, in bytes (inline `data:` values stop at 8 MiB).
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30)]
    files_max_size: u64,
    /// Most file values one tools/call may carry (every item of every file field; the same
    /// file named twice counts twice). More is refused (`tooManyFiles`) before any is read.
    #[arg(long, value_name = "N", default_value_t = smcp_files::DEFAULT_MAX_CALL_FILES)]
    files_max_call_files: usize,
    /// Most bytes the file arguments of one tools/call may add up to (a file named twice
    /// counts twice). More is refused (`maxSizeExceeded`) before the tool runs.
    #[arg(long, value_name = "BYTES", default_value_t = smcp_files::DEFAULT_MAX_CALL_BYTES)]
    files_max_call_bytes: u64,
    /// Most bytes the file store may hold (stored files plus uploads in progress); beyond
    /// it uploads are refused with 507 `storeFull`, as on a full disk. Default: no quota
    /// (the disk is the limit).
    #[arg(long, value_name = "BYTES")]
    files_store_quota: Option<u64>,
    /// Store files in an S3 bucket instead of on local disk: `s3://BUCKET[/PREFIX]`. The
    /// endpoint, region and credentials come from the environment (`AWS_ENDPOINT_URL`,
    /// `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_ALLOW_HTTP=true` for a
    /// plain-http endpoint). Instances sharing the bucket, the prefix and --files-key serve
    /// each other's uploads and downloads. The bucket is probed at start (it must exist and
    /// honour conditional puts).
    #[cfg(feature = "s3")]
    #[arg(
        long,
        value_name = "s3://BUCKET[/PREFIX]",
        env = "SMCPD_FILES_STORE",
        conflicts_with_all = ["files_dir", "files_store_quota"],
        value_parser = parse_files_store
    )]
    files_store: Option<smcp_files::S3Location>,
    /// With --files-store: upload descriptors are presigned S3 PUTs bound to the declared
    /// size and sha-256 (S3 refuses other bytes) and download descriptors presigned GETs, so
    /// file bytes go straight between clients and the bucket. A file becomes usable once
    /// the bucket confirms its size and digest. Uploads authorized without a size or digest
    /// still go through this server. Refused without --files-store and with
    /// --files-multipart.
    #[cfg(feature = "s3")]
    // The conflicts too: clap waives `requires` when a conflicting flag of the required one
    // (--files-dir) is given.
    #[arg(
        long,
        requires = "files_store",
        conflicts_with_all = ["files_multipart", "files_dir", "files_store_quota"]
    )]
    files_presign: bool,
}

/// `--files-store`: an `s3://` URL, with the reason when malformed.
#[cfg(feature = "s3")]
fn parse_files_store(text: &str) -> Result<smcp_files::S3Location, String> {
    smcp_files::S3Location::parse(text).map_err(|e| e.to_string())
}

/// Without the feature: no flags.
#[cfg(not(feature = "files"))]
#[derive(Debug, clap::Args)]
pub(crate) struct FilesArgs {}

/// The file service as the flags configure it: on (with its data plane), off, or (on stdio
/// without TLS) inline `data:` arguments only.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileService {
    #[cfg(feature = "files")]
    files: Option<smcp_files::Files>,
    /// Off only for want of TLS (not by `--no-files`).
    #[cfg(feature = "files")]
    off_without_tls: bool,
    /// The inline-only file tool, for stdio without a data plane.
    #[cfg(feature = "files")]
    inline: bool,
    /// `--sep2631-fixtures`.
    #[cfg(feature = "files")]
    fixtures: bool,
}

#[cfg(feature = "files")]
impl FilesArgs {
    /// Over HTTP: the data plane beside the endpoint, at `base_url` (unless
    /// `--files-base-url`), when TLS (`tls`) or the flags allow it.
    pub(crate) async fn over_http(&self, tls: bool, base_url: &str) -> anyhow::Result<FileService> {
        let files = file_service(self, tls, base_url).await?;
        Ok(self.with(files, false))
    }

    /// On stdio: with TLS (`tls`) or `--insecure-http-files`, the data plane over HTTP on
    /// `listen` (its listener returned, bound); otherwise file arguments inline only.
    pub(crate) async fn beside_stdio(
        &self,
        tls: bool,
        listen: SocketAddr,
    ) -> anyhow::Result<(FileService, Option<TcpListener>)> {
        if self.no_files || !(tls || self.insecure_http_files) {
            return Ok((self.with(None, !self.no_files), None));
        }
        let listener = TcpListener::bind(listen)
            .await
            .with_context(|| format!("cannot listen on {listen}"))?;
        let scheme = if tls { "https" } else { "http" };
        let base = format!("{scheme}://{}", listener.local_addr()?);
        let files = file_service(self, tls, &base).await?;
        tracing::info!(%base, "SEP-2631 data plane over HTTP");
        let inline = files.is_none();
        Ok((self.with(files, inline), Some(listener)))
    }

    fn with(&self, files: Option<smcp_files::Files>, inline: bool) -> FileService {
        FileService {
            off_without_tls: files.is_none() && !self.no_files,
            files,
            inline,
            fixtures: self.sep2631_fixtures,
        }
    }
}

#[cfg(feature = "files")]
impl FileService {
    /// Readiness fails while the store does not answer.
    pub(crate) fn health_checks(&self, checks: &mut Vec<Arc<dyn HealthCheck>>) {
        if let Some(files) = &self.files {
            checks.push(Arc::new(smcpd::health::StoreHealth::new(
                files.store().clone(),
            )));
        }
    }

    /// The files extension and the file tools in `config`.
    pub(crate) fn configure(&self, config: &mut smcpd::DemoConfig) {
        config.files.clone_from(&self.files);
        config.sep2631_fixtures = self.fixtures;
        config.files_inline = self.inline;
    }

    /// Once the server is built: the transfers in its metrics.
    pub(crate) fn observe(&self, server: &smcp_server::Server) {
        if let Some(files) = &self.files {
            files.set_metrics(server.metrics());
        }
    }

    /// After the ready line: why file transfer is off, when TLS is what it lacks.
    pub(crate) fn say_if_off(&self) {
        if self.off_without_tls {
            tracing::info!(
                "file transfer (SEP-2631) is off without TLS: serve TLS (--tls-cert/--tls-key or \
                 --tls-self-signed DIR) or pass --insecure-http-files on loopback"
            );
        }
    }

    /// The data plane on the endpoint's other paths.
    pub(crate) fn beside(
        &self,
        endpoint: smcp_server::http::Endpoint,
    ) -> smcp_server::http::Endpoint {
        match &self.files {
            Some(files) => endpoint.fallback(files.router()),
            None => endpoint,
        }
    }

    /// The data plane alone on `listener` (stdio) until `stop`.
    pub(crate) fn serve(
        &self,
        listener: Option<TcpListener>,
        options: ServeOptions,
        stop: tokio::sync::oneshot::Receiver<()>,
    ) -> Option<DataPlaneTask> {
        let (Some(files), Some(listener)) = (&self.files, listener) else {
            return None;
        };
        Some(tokio::spawn(smcp_server::serve(
            listener,
            files.router(),
            options,
            async move {
                let _ = stop.await;
            },
        )))
    }
}

#[cfg(not(feature = "files"))]
impl FilesArgs {
    /// No file transfer.
    pub(crate) async fn over_http(
        &self,
        _tls: bool,
        _base_url: &str,
    ) -> anyhow::Result<FileService> {
        Ok(FileService::default())
    }

    /// No file transfer, and no listener.
    pub(crate) async fn beside_stdio(
        &self,
        _tls: bool,
        _listen: SocketAddr,
    ) -> anyhow::Result<(FileService, Option<TcpListener>)> {
        Ok((FileService::default(), None))
    }
}

#[cfg(not(feature = "files"))]
impl FileService {
    /// No checks.
    pub(crate) fn health_checks(&self, _checks: &mut Vec<Arc<dyn HealthCheck>>) {}

    /// Nothing to configure.
    pub(crate) fn configure(&self, _config: &mut smcpd::DemoConfig) {}

    /// Nothing to observe.
    pub(crate) fn observe(&self, _server: &smcp_server::Server) {}

    /// Nothing to say.
    pub(crate) fn say_if_off(&self) {}

    /// No data plane.
    pub(crate) fn beside(
        &self,
        endpoint: smcp_server::http::Endpoint,
    ) -> smcp_server::http::Endpoint {
        endpoint
    }

    /// No data plane.
    pub(crate) fn serve(
        &self,
        _listener: Option<TcpListener>,
        _options: ServeOptions,
        _stop: tokio::sync::oneshot::Receiver<()>,
    ) -> Option<DataPlaneTask> {
        None
    }
}

/// The SEP-2631 file service from the flags: on with TLS, or with `--insecure-http-files`
/// on loopback; off otherwise.
#[cfg(feature = "files")]
async fn file_service(
    args: &FilesArgs,
    tls: bool,
    base_url: &str,
) -> anyhow::Result<Option<smcp_files::Files>> {
    use smcp_files::{Files, FilesConfig, UploadStyle};
    if args.no_files {
        return Ok(None);
    }
    // Behind a proxy that terminates TLS, the descriptors' https:// base URL is the proxy's.
    let behind_tls = args
        .files_base_url
        .as_deref()
        .is_some_and(|url| url.starts_with("https://"));
    if !tls && !args.insecure_http_files && !behind_tls {
        if args.files_base_url.is_some() {
            anyhow::bail!(
                "--files-base-url: file transfer needs an https:// URL here (or \
                 --insecure-http-files for http:// on loopback)"
            );
        }
        // Said after the ready line (an optional feature, not a problem).
        return Ok(None);
    }
    let (store, described) = file_store(args).await?;
    let keys = match smcp_server::KeyRing::parse_all(&args.files_keys)
        .context("--files-key expects ID:BASE64 (32 bytes)")?
    {
        Some(ring) => ring,
        None => smcp_server::KeyRing::ephemeral()?,
    };
    let config = FilesConfig {
        authority: "smcpd".into(),
        upload_style: if args.files_multipart {
            UploadStyle::Multipart
        } else {
            UploadStyle::Put
        },
        // Without TLS: http:// descriptors on loopback. With TLS the data plane is https, and
        // the flag only lets --files-presign give out a plain-http S3 endpoint on loopback.
        allow_insecure_loopback: args.insecure_http_files,
        upload_ttl: args.files_descriptor_ttl,
        download_ttl: args.files_descriptor_ttl,
        max_size: args.files_max_size,
        max_call_files: args.files_max_call_files,
        max_call_bytes: args.files_max_call_bytes,
        #[cfg(feature = "s3")]
        presign: args.files_presign,
        ..FilesConfig::default()
    };
    let files = Files::new(store, keys, config).map_err(|e| match e {
        smcp_files::SetupError::BaseUrl(smcp_files::BaseUrlError::Insecure { .. }) => {
            anyhow::anyhow!(
                "--files-presign: {e} (the S3 endpoint's presigned URLs are given to clients)"
            )
        }
        other => anyhow::anyhow!(other),
    })?;
    files
        .set_base_url(args.files_base_url.as_deref().unwrap_or(base_url))
        .context("--files-base-url")?;
    files.spawn_gc(Duration::from_secs(600));
    tracing::info!(store = %described, presign = files.config().presign, "file transfer (SEP-2631) on");
    Ok(Some(files))
}

/// The file store from the flags, and how to name it in the log: the S3 bucket of
/// `--files-store` (probed), else the local directory of `--files-dir`.
#[cfg(feature = "files")]
async fn file_store(
    args: &FilesArgs,
) -> anyhow::Result<(std::sync::Arc<dyn smcp_files::FileStore>, String)> {
    #[cfg(feature = "s3")]
    if let Some(location) = &args.files_store {
        let store = smcp_files::S3StoreBuilder::from_env(&location.to_string())
            .map_err(|e| anyhow::anyhow!("--files-store {location}: {e}"))?
            .build()
            .await
            .map_err(|e| anyhow::anyhow!("--files-store {location}: {e}"))?;
        return Ok((std::sync::Arc::new(store), location.to_string()));
    }
    let dir = args
        .files_dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("smcpd-files"));
    let mut store = smcp_files::LocalFileStore::open(&dir)
        .map_err(|e| anyhow::anyhow!("file store {}: {e}", dir.display()))?;
    if let Some(quota) = args.files_store_quota {
        store = store
            .with_quota(quota)
            .map_err(|e| anyhow::anyhow!("file store {}: {e}", dir.display()))?;
    }
    Ok((std::sync::Arc::new(store), dir.display().to_string()))
}
