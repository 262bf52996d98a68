//! `smcp resources`: the resource list, one row per resource.

use super::ctx::{Ctx, print_json};
use crate::render;

/// Runs `smcp resources`.
pub(crate) async fn run(ctx: Ctx<'_>) -> anyhow::Result<()> {
    let resources = ctx.client.list_resources().await?;
    if ctx.json {
        return print_json(&resources);
    }
    let rows: Vec<Vec<String>> = resources
        .iter()
        .map(|r| {
            vec![
                r.uri.clone(),
                r.name.clone(),
                r.mime_type.clone().unwrap_or_default(),
                r.description.clone().unwrap_or_default(),
            ]
        })
        .collect();
    render::table(&["URI", "NAME", "MIME", "DESCRIPTION"], &rows);
    Ok(())
}
