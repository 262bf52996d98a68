//! Elicitation on a terminal: form fields prompted by their schema type; URL mode shows the
//! full URL and asks for consent (it never opens the URL). Without a terminal, or with
//! `--non-interactive`, the CLI declares no elicitation capability, so a server that needs
//! input fails with a clear −32021 instead of hanging on a prompt.

use std::io::{BufRead as _, Write as _};

use serde_json::Value;
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult, ElicitValue};
use smcp_client::{BoxFuture, HandlerError, InputHandler, InputKinds};

/// Answers elicitations by asking the person at the terminal.
pub(crate) struct Terminal;

fn ask(prompt: &str) -> Result<String, HandlerError> {
    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    let n = std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| HandlerError::new(format!("cannot read the terminal: {e}")))?;
    if n == 0 {
        return Err(HandlerError::new("end of input while answering the server"));
    }
    Ok(line.trim_end_matches(['\n', '\r']).to_owned())
}

/// Reads one field until it parses for its type; `None` = left empty.
fn field(name: &str, schema: &Value, required: bool) -> Result<Option<ElicitValue>, HandlerError> {
    let title = schema.get("title").and_then(Value::as_str).unwrap_or(name);
    let kind = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("string");
    let choices: Vec<String> = schema
        .get("enum")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .or_else(|| {
            schema.get("oneOf").and_then(Value::as_array).map(|a| {
                a.iter()
                    .filter_map(|o| o.get("const").and_then(Value::as_str).map(str::to_owned))
                    .collect()
            })
        })
        .unwrap_or_default();
    if let Some(d) = schema.get("description").and_then(Value::as_str) {
        eprintln!("  {d}");
    }
    let default = schema.get("default").map(|d| d.to_string());
    loop {
        let hint = if schema.get("x-mcp-file").is_some() {
            "path of a local file".to_owned()
        } else if choices.is_empty() {
            kind.to_owned()
        } else {
            choices.join("/")
        };
        let mut prompt = format!(
            "{title} ({hint}{})",
            if required { ", required" } else { "" }
        );
        if let Some(d) = &default {
            prompt.push_str(&format!(" [{d}]"));
        }
        let raw = ask(&format!("{prompt}: "))?;
        if raw.is_empty() {
            if let Some(d) = schema.get("default")
                && let Ok(v) = serde_json::from_value(d.clone())
            {
                return Ok(Some(v));
            }
            if !required {
                return Ok(None);
            }
            eprintln!("  a value is required");
            continue;
        }
        let parsed = match kind {
            "boolean" => match raw.as_str() {
                "y" | "yes" | "true" => Some(ElicitValue::Bool(true)),
                "n" | "no" | "false" => Some(ElicitValue::Bool(false)),
                _ => None,
            },
            "integer" => raw.parse::<i64>().ok().map(|i| {
                #[allow(clippy::cast_precision_loss)]
                ElicitValue::Number(i as f64)
            }),
            "number" => raw.parse::<f64>().ok().map(ElicitValue::Number),
            "array" => Some(ElicitValue::StringArray(
                raw.split(',').map(|s| s.trim().to_owned()).collect(),
            )),
            _ if !choices.is_empty() && !choices.contains(&raw) => None,
            _ => Some(ElicitValue::String(raw.clone())),
        };
        match parsed {
            Some(v) => return Ok(Some(v)),
            None => eprintln!("  {raw:?} is not a valid {hint}"),
        }
    }
}

fn elicit_blocking(params: ElicitRequestParams) -> Result<ElicitResult, HandlerError> {
    match params {
        ElicitRequestParams::Url(u) => {
            eprintln!(
                "\nThe server asks you to visit a URL:\n  {}\n  {}",
                u.message, u.url
            );
            let answer = ask("Open it yourself and continue? [y/N] ")?;
            Ok(if matches!(answer.trim(), "y" | "yes") {
                ElicitResult::accept(Default::default())
            } else {
                ElicitResult::decline()
            })
        }
        ElicitRequestParams::Form(form) => {
            eprintln!("\nThe server asks: {}", form.message);
            let required = form.requested_schema.required.clone().unwrap_or_default();
            let mut content = std::collections::BTreeMap::new();
            for (name, schema) in &form.requested_schema.properties {
                let schema = serde_json::to_value(schema).unwrap_or(Value::Null);
                if let Some(v) = field(name, &schema, required.contains(name))? {
                    content.insert(name.clone(), v);
                }
            }
            let answer = ask("Send these answers? [Y/n/c(ancel)] ")?;
            Ok(match answer.trim() {
                "" | "y" | "yes" => ElicitResult::accept(content),
                "c" | "cancel" => ElicitResult::cancel(),
                _ => ElicitResult::decline(),
            })
        }
    }
}

impl InputHandler for Terminal {
    fn kinds(&self) -> InputKinds {
        InputKinds {
            elicitation_form: true,
            elicitation_url: true,
            ..InputKinds::default()
        }
    }

    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || elicit_blocking(params))
                .await
                .map_err(|e| HandlerError::new(format!("prompt task failed: {e}")))?
        })
    }
}
