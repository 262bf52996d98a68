//! `smcp call NAME`: a tool call, its arguments coerced by the tool's input schema, file
//! arguments sent inline or uploaded (SEP-2631), a task followed live (SEP-2663).

use anyhow::Context as _;
use futures_util::FutureExt as _;
use serde_json::Value;
use smcp_client::Client;
use smcp_client::proto::basic::LoggingLevel;

use super::ctx::{Ctx, print_json};
use super::{download, tool};
use crate::errors::{self, ToolFailed};
use crate::{args as arguments, progress, render, task};

/// `smcp call`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The tool name.
    pub(crate) name: String,
    /// An argument `NAME=VALUE`, coerced by the tool's input schema (repeatable).
    #[arg(long = "arg", short = 'a', value_name = "K=V")]
    args: Vec<String>,
    /// All arguments as one JSON object (`--arg` values override its members).
    #[arg(long, value_name = "JSON")]
    json_args: Option<String>,
    /// A file argument `FIELD=PATH` (repeatable; repeat a field for arrays). Sent inline
    /// or uploaded, as the field allows (SEP-2631).
    #[arg(long = "file", short = 'f', value_name = "FIELD=PATH")]
    files: Vec<String>,
    /// Ask the server for its log messages at or above this level for this call
    /// (`_meta` logLevel); they are printed to stderr.
    #[arg(long, value_name = "LEVEL", value_parser = log_level)]
    log_level: Option<LoggingLevel>,
}

/// A log level for `--log-level`.
fn log_level(text: &str) -> Result<LoggingLevel, String> {
    serde_json::from_value(Value::String(text.to_ascii_lowercase())).map_err(|_| {
        "one of debug, info, notice, warning, error, critical, alert, emergency".to_owned()
    })
}

/// Runs `smcp call`.
pub(crate) async fn run(args: &Args, ctx: Ctx<'_>) -> anyhow::Result<()> {
    let Args {
        name,
        args,
        json_args,
        files,
        log_level,
    } = args;
    let client = ctx.client;
    // The schema coerces `--arg` values and drives the Mcp-Param-* headers.
    let schema = tool::find(client, name)
        .await?
        .map(|t| t.input_schema)
        .unwrap_or_default();
    let mut arguments = arguments::tool_arguments(&schema, json_args.as_deref(), args)?;
    let fields = smcp_client::files::file_fields(&serde_json::to_value(&schema)?);
    for spec in files {
        let (field, path) = spec
            .split_once('=')
            .with_context(|| format!("--file expects FIELD=PATH, got {spec:?}"))?;
        let decl = fields
            .iter()
            .find(|f| f.name == field)
            .with_context(|| format!("{name}: {field:?} is not a file field (x-mcp-file)"))?;
        let bar = progress::transfer(ctx.json, &format!("upload {path}"));
        let b = bar.clone();
        let progress = move |done: u64, total: Option<u64>| {
            if let Some(t) = total {
                b.set_length(t);
            }
            b.set_position(done);
        };
        let value = client
            .file_argument(
                std::path::Path::new(path),
                None,
                &decl.descriptor,
                Some(&progress),
            )
            .await;
        bar.finish_and_clear();
        let value = Value::String(value?);
        let Value::Object(map) = &mut arguments else {
            anyhow::bail!("tool arguments must be an object");
        };
        if decl.array {
            match map
                .entry(field.to_owned())
                .or_insert_with(|| Value::Array(Vec::new()))
            {
                Value::Array(items) => items.push(value),
                other => *other = Value::Array(vec![value]),
            }
        } else {
            map.insert(field.to_owned(), value);
        }
    }
    let bar = progress::bar(ctx.json);
    let b = bar.clone();
    // A task shows its status live; Ctrl-C cancels the call (tasks/cancel for a task).
    let status = std::sync::Arc::new(task::StatusView::new(ctx.json));
    let view = status.clone();
    let cancel = smcp_client::CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    let mut sigint = Box::pin(tokio::signal::ctrl_c());
    // The first poll installs the handler, before anything is sent.
    let early = sigint.as_mut().now_or_never();
    let ctrl_c = tokio::spawn(async move {
        let received = match early {
            Some(r) => r,
            None => sigint.await,
        };
        if received.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let mut call = client.tool_call(name);
    if let Some(level) = log_level {
        let bar = bar.clone();
        call = call.on_log(*level, move |m| {
            let level = serde_json::to_value(m.level)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let logger = m.logger.map(|l| format!(" {l}")).unwrap_or_default();
            let data = match m.data {
                Value::String(s) => s,
                other => other.to_string(),
            };
            bar.suspend(|| eprintln!("server {level}{logger}: {data}"));
        });
    }
    let result = call
        .arguments(arguments)
        .cancellation(cancel)
        .on_task_status(move |t| view.show(t))
        .on_progress(move |p| {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            {
                if let Some(total) = p.total {
                    b.set_length(total.max(0.0) as u64);
                }
                b.set_position(p.progress.max(0.0) as u64);
            }
            if let Some(m) = p.message {
                b.set_message(m);
            }
        })
        .send()
        .await;
    ctrl_c.abort();
    status.clear();
    bar.finish_and_clear();
    let result = result?;
    if ctx.json {
        print_json(&result)?;
    } else {
        render::content(&result.content, ctx.save);
        if result.content.is_empty()
            && let Some(s) = &result.structured_content
        {
            println!("{}", serde_json::to_string_pretty(s)?);
        }
    }
    if result.is_error() {
        return Err(anyhow::Error::new(ToolFailed));
    }
    if let Some(dir) = ctx.save {
        let mut uris = Vec::new();
        file_values(&serde_json::to_value(&result)?, &mut uris);
        std::fs::create_dir_all(dir)?;
        for uri in uris {
            download::download(client, &uri, dir, ctx.json).await?;
        }
    }
    Ok(())
}

/// Every `FileValue`-shaped object (an `mcp-file:` `uri`) in a result.
fn file_values(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(uri)) = m.get("uri")
                && uri.starts_with("mcp-file:")
                && !out.contains(uri)
            {
                out.push(uri.clone());
            }
            m.values().for_each(|x| file_values(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| file_values(x, out)),
        _ => {}
    }
}

/// After a failed `smcp call NAME` answered −32602: when the tool list lacks NAME, the names
/// to suggest (possibly none).
pub(crate) async fn unknown_tool(client: &Client, name: &str) -> Option<Vec<String>> {
    let names: Vec<String> = client
        .list_tools()
        .await
        .ok()?
        .into_iter()
        .map(|t| t.name)
        .collect();
    if names.iter().any(|n| n == name) {
        return None;
    }
    Some(errors::closest(name, &names))
}
