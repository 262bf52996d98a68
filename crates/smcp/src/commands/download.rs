//! `smcp download URI`: a file URI fetched (SEP-2631), its size and digest verified.

use std::path::{Path, PathBuf};

use smcp_client::Client;

use super::ctx::{Ctx, print_json};
use crate::progress;

/// `smcp download`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The `mcp-file://` URI.
    uri: String,
    /// Destination file or directory (default: current directory, server's file name).
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
}

/// Runs `smcp download`.
pub(crate) async fn run(args: &Args, ctx: Ctx<'_>) -> anyhow::Result<()> {
    let dest = args.output.clone().unwrap_or_else(|| PathBuf::from("."));
    let path = download(ctx.client, &args.uri, &dest, ctx.json).await?;
    if ctx.json {
        print_json(&serde_json::json!({"path": path}))?;
    }
    Ok(())
}

/// Downloads `uri` to `dest` (a file, or a directory for the server's file name) with a
/// progress bar, and says where it went (not under `--json`).
pub(crate) async fn download(
    client: &Client,
    uri: &str,
    dest: &Path,
    json: bool,
) -> anyhow::Result<PathBuf> {
    let bar = progress::transfer(json, "download");
    let b = bar.clone();
    let progress = move |done: u64, total: Option<u64>| {
        if let Some(t) = total {
            b.set_length(t);
        }
        b.set_position(done);
    };
    let result = client.download_to(uri, dest, Some(&progress)).await;
    bar.finish_and_clear();
    let (path, file) = result?;
    if !json {
        eprintln!(
            "saved {} ({} bytes, sha-256 {})",
            path.display(),
            file.size.unwrap_or_default(),
            file.digest.map(|d| d.value).unwrap_or_default()
        );
    }
    Ok(path)
}
