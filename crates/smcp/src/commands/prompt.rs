//! `smcp prompt NAME`: one prompt's messages, with its arguments filled in.

use std::collections::BTreeMap;

use super::ctx::{Ctx, print_json};
use crate::{args as arguments, render};

/// `smcp prompt`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The prompt name.
    name: String,
    /// An argument `NAME=VALUE` (repeatable).
    #[arg(long = "arg", short = 'a', value_name = "K=V")]
    args: Vec<String>,
}

/// Runs `smcp prompt`.
pub(crate) async fn run(args: &Args, ctx: Ctx<'_>) -> anyhow::Result<()> {
    let mut map = BTreeMap::new();
    for a in &args.args {
        let (k, v) = arguments::split(a)?;
        map.insert(k.to_owned(), v.to_owned());
    }
    let p = ctx.client.get_prompt(&args.name, map).await?;
    if ctx.json {
        return print_json(&p);
    }
    if let Some(d) = &p.description {
        println!("{d}\n");
    }
    for m in &p.messages {
        println!("{}:", serde_json::to_value(m.role)?.as_str().unwrap_or("?"));
        render::content(std::slice::from_ref(&m.content), ctx.save);
    }
    Ok(())
}
