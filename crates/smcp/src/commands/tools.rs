//! `smcp tools`: the tool list, one row per tool.

use serde_json::Value;

use super::ctx::{Ctx, print_json};
use crate::render;

/// Runs `smcp tools`.
pub(crate) async fn run(ctx: Ctx<'_>) -> anyhow::Result<()> {
    let tools = ctx.client.list_tools().await?;
    if ctx.json {
        return print_json(&tools);
    }
    let rows: Vec<Vec<String>> = tools
        .iter()
        .map(|t| {
            vec![
                t.name.clone(),
                argument_names(&t.input_schema).join(", "),
                t.description.clone().unwrap_or_default(),
            ]
        })
        .collect();
    render::table(&["NAME", "ARGUMENTS (*required)", "DESCRIPTION"], &rows);
    Ok(())
}

/// Names of the arguments in `schema`, the required ones marked `*`, required first.
fn argument_names(schema: &serde_json::Map<String, Value>) -> Vec<String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut names: Vec<(bool, String)> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.keys()
                .map(|k| {
                    let r = required.contains(&k.as_str());
                    (!r, if r { format!("{k}*") } else { k.clone() })
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort_by_key(|n| n.0);
    names.into_iter().map(|(_, n)| n).collect()
}
