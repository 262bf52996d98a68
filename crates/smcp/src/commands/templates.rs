//! `smcp templates`: the resource templates, one row each.

use super::ctx::{Ctx, print_json};
use crate::render;

/// Runs `smcp templates`.
pub(crate) async fn run(ctx: Ctx<'_>) -> anyhow::Result<()> {
    let templates = ctx.client.list_resource_templates().await?;
    if ctx.json {
        return print_json(&templates);
    }
    let rows: Vec<Vec<String>> = templates
        .iter()
        .map(|t| {
            vec![
                t.uri_template.clone(),
                t.name.clone(),
                t.mime_type.clone().unwrap_or_default(),
                t.description.clone().unwrap_or_default(),
            ]
        })
        .collect();
    render::table(&["URI TEMPLATE", "NAME", "MIME", "DESCRIPTION"], &rows);
    Ok(())
}
