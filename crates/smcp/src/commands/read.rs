//! `smcp read URI`: one resource's contents.

use super::ctx::{Ctx, print_json};
use crate::render;

/// `smcp read`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The resource URI.
    uri: String,
}

/// Runs `smcp read`.
pub(crate) async fn run(args: &Args, ctx: Ctx<'_>) -> anyhow::Result<()> {
    let r = ctx.client.read_resource(&args.uri).await?;
    if ctx.json {
        return print_json(&r);
    }
    for (i, c) in r.contents.iter().enumerate() {
        render::resource_contents(c, i, ctx.save);
    }
    Ok(())
}
