//! `smcp upload PATH`: a file to the server's store (SEP-2631), its file URI printed.

use std::path::PathBuf;

use super::ctx::{Ctx, print_json};
use crate::progress;

/// `smcp upload`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The file.
    path: PathBuf,
    /// Media type (default: from the extension).
    #[arg(long)]
    mime: Option<String>,
}

/// Runs `smcp upload`.
pub(crate) async fn run(args: &Args, ctx: Ctx<'_>) -> anyhow::Result<()> {
    let Args { path, mime } = args;
    let bar = progress::transfer(ctx.json, "upload");
    let b = bar.clone();
    let progress = move |done: u64, total: Option<u64>| {
        if let Some(t) = total {
            b.set_length(t);
        }
        b.set_position(done);
    };
    let result = ctx
        .client
        .upload_path(path, mime.as_deref(), Some(&progress))
        .await;
    bar.finish_and_clear();
    let file = result?;
    if ctx.json {
        print_json(&file)?;
    } else {
        println!("{}", file.uri);
        eprintln!(
            "uploaded {} ({} bytes, sha-256 {})",
            path.display(),
            file.size.unwrap_or_default(),
            file.digest.map(|d| d.value).unwrap_or_default()
        );
    }
    Ok(())
}
