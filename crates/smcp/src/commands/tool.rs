//! `smcp tool NAME`: one tool's description, arguments and schemas.

use serde_json::Value;
use smcp_client::Client;
use smcp_client::proto::server::tools::Tool;

use super::ctx::{Ctx, print_json};
use crate::errors::{self, Usage};
use crate::render;

/// `smcp tool`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The tool name.
    name: String,
}

/// Runs `smcp tool NAME`.
pub(crate) async fn run(args: &Args, ctx: Ctx<'_>) -> anyhow::Result<()> {
    let name = &args.name;
    let Some(tool) = find(ctx.client, name).await? else {
        let names: Vec<String> = ctx
            .client
            .list_tools()
            .await?
            .into_iter()
            .map(|t| t.name)
            .collect();
        let near = errors::closest(name, &names);
        let hint = if near.is_empty() {
            "`smcp tools` lists them".to_owned()
        } else {
            format!("did you mean: {}?", near.join(", "))
        };
        return Err(anyhow::Error::new(Usage(format!(
            "the server has no tool {name:?} ({hint})"
        ))));
    };
    if ctx.json {
        return print_json(&tool);
    }
    print(&tool)
}

/// The tool `name` from the tool list, if the server has it.
pub(crate) async fn find(client: &Client, name: &str) -> anyhow::Result<Option<Tool>> {
    Ok(client
        .list_tools()
        .await?
        .into_iter()
        .find(|t| t.name == name))
}

/// Prints one tool as `smcp tool NAME` shows it.
fn print(tool: &Tool) -> anyhow::Result<()> {
    println!("name:        {}", tool.name);
    if let Some(t) = &tool.title {
        println!("title:       {t}");
    }
    if let Some(d) = &tool.description {
        println!("description: {d}");
    }
    let schema = &tool.input_schema;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let rows: Vec<Vec<String>> = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, p)| {
            let kind = p
                .get("type")
                .map(|t| match t {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_else(|| "any".to_owned());
            vec![
                name.clone(),
                kind,
                if required.contains(&name.as_str()) {
                    "yes".to_owned()
                } else {
                    String::new()
                },
                p.get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            ]
        })
        .collect();
    if rows.is_empty() {
        println!("arguments:   none");
    } else {
        println!("arguments:");
        render::table(&["NAME", "TYPE", "REQUIRED", "DESCRIPTION"], &rows);
    }
    println!(
        "input schema:\n{}",
        serde_json::to_string_pretty(&tool.input_schema)?
    );
    if let Some(out) = &tool.output_schema {
        println!("output schema:\n{}", serde_json::to_string_pretty(out)?);
    }
    Ok(())
}
