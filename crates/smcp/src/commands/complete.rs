//! `smcp complete`: completion/complete for an argument of a prompt or a resource template.

use std::collections::BTreeMap;

use super::ctx::{Ctx, print_json};
use crate::args as arguments;
use crate::errors::Usage;

/// `smcp complete`'s arguments.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("reference").required(true).args(["prompt", "template"])))]
pub(crate) struct Args {
    /// The prompt whose argument to complete.
    #[arg(long, value_name = "NAME")]
    prompt: Option<String>,
    /// The resource template (its URI template) whose argument to complete.
    #[arg(long, value_name = "URI_TEMPLATE")]
    template: Option<String>,
    /// The argument's name.
    argument: String,
    /// What is typed so far.
    #[arg(default_value = "")]
    value: String,
    /// An argument already given, `NAME=VALUE` (repeatable), as context.
    #[arg(long = "context", value_name = "K=V")]
    context: Vec<String>,
}

/// Runs `smcp complete`.
pub(crate) async fn run(args: &Args, ctx: Ctx<'_>) -> anyhow::Result<()> {
    let reference = match (&args.prompt, &args.template) {
        (Some(p), _) => serde_json::json!({"type": "ref/prompt", "name": p}),
        (None, Some(t)) => serde_json::json!({"type": "ref/resource", "uri": t}),
        (None, None) => {
            return Err(anyhow::Error::new(Usage(
                "complete needs --prompt NAME or --template URI_TEMPLATE".to_owned(),
            )));
        }
    };
    let reference = serde_json::from_value(reference)?;
    let mut context = BTreeMap::new();
    for c in &args.context {
        let (k, v) = arguments::split(c)?;
        context.insert(k.to_owned(), v.to_owned());
    }
    let r = ctx
        .client
        .complete(reference, &args.argument, &args.value, context)
        .await?;
    if ctx.json {
        return print_json(&r);
    }
    for v in &r.completion.values {
        println!("{v}");
    }
    if r.completion.has_more == Some(true) {
        let total = r
            .completion
            .total
            .map(|t| format!(" ({t} in all)"))
            .unwrap_or_default();
        eprintln!("… more values{total}: type more of the value to narrow them");
    }
    Ok(())
}
