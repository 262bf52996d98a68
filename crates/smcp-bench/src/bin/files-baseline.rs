//! `files-baseline`: the physical-limit baseline of `scripts/bench files`.
//!
//! `PUT /upload/{name}` streams the body through sha-256 into `DIR/name` (fsync at the end)
//! and answers the digest; `GET /download/{name}` streams the file back with
//! `Content-Length`. Same TLS stack and accept loop as smcpd, none of the protocol.
// A command-line tool prints by design.
#![allow(clippy::print_stdout)]

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context as _;
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use clap::Parser;
use futures_util::StreamExt;
use smcp_proto::ext::files::DigestBuilder;
use tokio::io::AsyncWriteExt;

/// Minimal hashing upload/download endpoint.
#[derive(Debug, Parser)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// PEM certificate chain (HTTPS).
    #[arg(long)]
    tls_cert: PathBuf,
    /// PEM private key.
    #[arg(long)]
    tls_key: PathBuf,
    /// Where uploads are written.
    #[arg(long)]
    dir: PathBuf,
}

fn safe(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        && !name.starts_with('.')
}

async fn upload(State(dir): State<PathBuf>, Path(name): Path<String>, body: Body) -> Response {
    if !safe(&name) {
        return StatusCode::BAD_REQUEST.into_response();
    }
    let path = dir.join(&name);
    let Ok(mut file) = tokio::fs::File::create(&path).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let mut hasher = DigestBuilder::new();
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else {
            return StatusCode::BAD_REQUEST.into_response();
        };
        hasher.update(&chunk);
        if file.write_all(&chunk).await.is_err() {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
    }
    if file.sync_all().await.is_err() {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    let (size, digest) = hasher.finish();
    format!("{size} {}\n", digest.value).into_response()
}

async fn download(State(dir): State<PathBuf>, Path(name): Path<String>) -> Response {
    if !safe(&name) {
        return StatusCode::BAD_REQUEST.into_response();
    }
    let Ok(file) = tokio::fs::File::open(dir.join(&name)).await else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let len = file.metadata().await.map(|m| m.len()).unwrap_or_default();
    let stream = tokio_util::io::ReaderStream::with_capacity(file, 64 * 1024);
    (
        [(header::CONTENT_LENGTH, len.to_string())],
        Body::from_stream(stream),
    )
        .into_response()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    std::fs::create_dir_all(&args.dir).with_context(|| args.dir.display().to_string())?;
    let tls = smcp_server::http::tls::config_from_files(&args.tls_cert, &args.tls_key)?;
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    println!("listening on https://{}", listener.local_addr()?);
    let app = Router::new()
        .route("/upload/{name}", put(upload))
        .route("/download/{name}", get(download))
        .with_state(args.dir);
    let options = smcp_server::ServeOptions {
        tls: Some(tls),
        ..Default::default()
    };
    smcp_server::serve(listener, app, options, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    Ok(())
}
