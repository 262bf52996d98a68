//! `smcp prompts`: the prompt list, one row per prompt.

use super::ctx::{Ctx, print_json};
use crate::render;

/// Runs `smcp prompts`.
pub(crate) async fn run(ctx: Ctx<'_>) -> anyhow::Result<()> {
    let prompts = ctx.client.list_prompts().await?;
    if ctx.json {
        return print_json(&prompts);
    }
    let rows: Vec<Vec<String>> = prompts
        .iter()
        .map(|p| {
            let args = p
                .arguments
                .iter()
                .flatten()
                .map(|a| {
                    if a.required == Some(true) {
                        format!("{}*", a.name)
                    } else {
                        a.name.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            vec![
                p.name.clone(),
                args,
                p.description.clone().unwrap_or_default(),
            ]
        })
        .collect();
    render::table(&["NAME", "ARGUMENTS (*required)", "DESCRIPTION"], &rows);
    Ok(())
}
