//! `smcp-conformance-server --listen 127.0.0.1:PORT [--tls-cert PEM --tls-key PEM]`: serves
//! the fixture surface at `/mcp`, plus the SEP-2631 `files_*` fixtures and their data plane
//! (`/files/...`). Prints `listening on https://ADDR/mcp` (or `http://` without TLS; plain
//! HTTP descriptors are then allowed, on loopback only).
//!
//! `smcp-conformance-server --stdio`: the same fixtures but the files on stdin and stdout,
//! for a host that launches it (the gateway's conformance leg fronts it this way).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser;
use smcp_files::{Files, FilesConfig, LocalFileStore, UploadStyle};
use smcp_server::ServeOptions;
use smcp_server::http::tls;

/// Serves the conformance fixtures.
#[derive(Debug, Parser)]
struct Args {
    /// Serve on stdin and stdout instead of HTTP (no SEP-2631 fixtures: they need the data
    /// plane).
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key", "tls_self_signed", "redis"])]
    stdio: bool,
    /// Address to listen on (loopback by default; port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// PEM certificate chain: serve HTTPS.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// PEM private key for --tls-cert.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Generate a throwaway CA + server certificate for 127.0.0.1/localhost into DIR
    /// (ca.pem, cert.pem, key.pem) and serve HTTPS with it; give clients DIR/ca.pem.
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key"])]
    tls_self_signed: Option<PathBuf>,
    /// Directory of the file store (default: a fresh temp directory).
    #[arg(long)]
    files_dir: Option<PathBuf>,
    /// Issue multipart POST upload descriptors instead of raw PUT.
    #[arg(long)]
    multipart: bool,
    /// Deliberately broken: accept uploads whose bytes do not match the authorized digest.
    #[arg(long)]
    broken_skip_digest_check: bool,
    /// Redemption window of upload/download descriptors, in seconds (`expiresAt`).
    #[arg(long, default_value_t = 300)]
    descriptor_ttl_secs: u64,
    /// How long an issued file URI resolves, in seconds.
    #[arg(long, default_value_t = 3600)]
    file_retention_secs: u64,
    /// Disable SEP-2631 (no `files` capability, no `files_*` tools).
    #[arg(long)]
    no_files: bool,
    /// Key sealing `requestState` (`ID:BASE64`, from `smcpd --generate-key`), shared by the
    /// instances of a cluster so that a retry may land on any of them. Default: a random one.
    #[arg(long, value_name = "ID:BASE64")]
    state_key: Option<String>,
    /// Key of the file transfer tokens (`ID:BASE64`), shared by the instances of a cluster.
    /// Default: a random one.
    #[arg(long, value_name = "ID:BASE64")]
    files_key: Option<String>,
    /// The public origin of the data plane in descriptors (the load balancer's, in a
    /// cluster). Default: this process's own address.
    #[arg(long, value_name = "URL")]
    files_base_url: Option<String>,
    /// Share state with the other instances of a cluster through Redis
    /// (`redis://host:port/`): the change bus, single-use request states, 2025-era sessions.
    #[arg(long, value_name = "URL")]
    redis: Option<String>,
    /// Prefix of every Redis key of this deployment.
    #[arg(
        long,
        value_name = "PREFIX",
        default_value = "smcp:",
        requires = "redis"
    )]
    redis_prefix: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    if args.stdio {
        return serve_stdio(&args).await;
    }
    let tls_config = match (&args.tls_self_signed, &args.tls_cert, &args.tls_key) {
        (Some(dir), _, _) => {
            let certs = tls::write_dev_certificates(dir, &["127.0.0.1", "localhost", "::1"])?;
            Some(tls::config_from_files(&certs.cert, &certs.key)?)
        }
        (None, Some(cert), Some(key)) => Some(tls::config_from_files(cert, key)?),
        _ => None,
    };
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    let addr = listener.local_addr()?;
    let scheme = if tls_config.is_some() {
        "https"
    } else {
        "http"
    };
    // A directory this process made up is its own: removed again when it stops.
    let mut own_dir = None;
    let file_service = if args.no_files {
        None
    } else {
        let dir = args.files_dir.clone().unwrap_or_else(|| {
            let dir =
                std::env::temp_dir().join(format!("smcp-conformance-files-{}", std::process::id()));
            own_dir = Some(dir.clone());
            dir
        });
        let store = LocalFileStore::open(&dir)
            .map_err(|e| anyhow::anyhow!("file store {}: {e}", dir.display()))?;
        let config = FilesConfig {
            authority: "smcp-conformance".into(),
            upload_style: if args.multipart {
                UploadStyle::Multipart
            } else {
                UploadStyle::Put
            },
            allow_insecure_loopback: tls_config.is_none() && addr.ip().is_loopback(),
            skip_digest_check: args.broken_skip_digest_check,
            max_size: 64 << 20,
            upload_ttl: args.descriptor_ttl_secs,
            download_ttl: args.descriptor_ttl_secs,
            retention: args.file_retention_secs,
            ..FilesConfig::default()
        };
        let keys = match &args.files_key {
            Some(key) => smcp_server::KeyRing::parse_all(std::slice::from_ref(key))
                .context("--files-key")?
                .context("--files-key: no key")?,
            None => smcp_server::KeyRing::ephemeral()?,
        };
        let files = Files::new(Arc::new(store), keys, config)?;
        let base = args
            .files_base_url
            .clone()
            .unwrap_or_else(|| format!("{scheme}://{addr}"));
        files.set_base_url(&base).context("--files-base-url")?;
        files.spawn_gc(std::time::Duration::from_secs(300));
        Some(files)
    };
    let server_files = file_service.clone();
    let mrtr = smcpd::mrtr_config(
        &args.state_key.iter().cloned().collect::<Vec<_>>(),
        std::time::Duration::from_secs(600),
    )
    .context("--state-key")?;
    let cluster = match &args.redis {
        Some(url) => {
            Some(smcpd::cluster::Cluster::connect(url, &args.redis_prefix).context("--redis")?)
        }
        None => None,
    };
    let server = smcp_conformance::server::server_with(
        smcp_conformance::server::Fixture::new()
            .files(file_service)
            .mrtr(mrtr)
            .cluster(cluster),
    )?;
    #[allow(clippy::print_stdout)]
    {
        println!("listening on {scheme}://{addr}/mcp");
    }
    // The SEP-2631 data plane (uploads and downloads) on the other paths.
    let app = match server_files {
        Some(files) => server.endpoint("/mcp").fallback(files.router()),
        None => server.endpoint("/mcp"),
    };
    let options = ServeOptions {
        tls: tls_config,
        ..ServeOptions::default()
    };
    let served = smcp_server::serve(listener, app, options, smcp_server::shutdown_signal()).await;
    if let Some(dir) = own_dir
        && let Err(e) = std::fs::remove_dir_all(&dir)
    {
        tracing::warn!(dir = %dir.display(), error = %e, "could not remove the file store");
    }
    served?;
    Ok(())
}

/// `--stdio`: the fixtures but the files, on stdin and stdout, until stdin closes.
async fn serve_stdio(args: &Args) -> anyhow::Result<()> {
    let mrtr = smcpd::mrtr_config(
        &args.state_key.iter().cloned().collect::<Vec<_>>(),
        std::time::Duration::from_secs(600),
    )
    .context("--state-key")?;
    let server =
        smcp_conformance::server::server_with(smcp_conformance::server::Fixture::new().mrtr(mrtr))?;
    smcp_server::serve_stdio(
        &server,
        smcp_server::shutdown_signal(),
        smcp_server::StdioOptions::default(),
    )
    .await?;
    Ok(())
}
