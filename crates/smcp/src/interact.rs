//! Input requests from the server. Elicitation on a terminal: form fields prompted by their
//! schema type; URL mode shows the full URL and asks for consent (it never opens the URL).
//! Sampling: answered by `--sampling-cmd CMD` (the request's params as JSON on its stdin, its
//! stdout the model's answer), or else by the person at the terminal, who types the answer.
//! Without a terminal, or with `--non-interactive`, the CLI declares only what it can answer
//! (sampling with `--sampling-cmd`), so a server that needs more fails with a clear −32021
//! instead of hanging on a prompt.

use std::io::{BufRead as _, Write as _};
use std::time::Duration;

use serde_json::{Value, json};
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult, ElicitValue};
use smcp_client::proto::client::sampling::{CreateMessageRequestParams, CreateMessageResult};
use smcp_client::{BoxFuture, InputHandler, InputHandlerError as HandlerError, InputKinds};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// Largest answer read from `--sampling-cmd`'s stdout.
const MAX_SAMPLING_OUTPUT: u64 = 1024 * 1024;
/// Longest line count the person at the terminal may type as a sampling answer.
const MAX_TYPED_LINES: usize = 1_000;

/// Answers the server's input requests: on the terminal, and sampling by a command.
pub(crate) struct Terminal {
    /// Ask the person at the terminal (elicitation, and sampling without a command).
    pub(crate) terminal: bool,
    /// `--sampling-cmd`: a shell command that produces the model's answer.
    pub(crate) sampling_cmd: Option<String>,
    /// How long the command may take.
    pub(crate) sampling_timeout: Duration,
}

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

/// Shows a sampling request and reads the answer the person types (until an empty line).
fn sample_blocking(params: &CreateMessageRequestParams) -> Result<String, HandlerError> {
    eprintln!("\nThe server asks for a model's answer (sampling/createMessage):");
    if let Some(system) = &params.system_prompt {
        eprintln!("  system: {system}");
    }
    for m in &params.messages {
        let role = serde_json::to_value(m.role)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        for block in m.content.blocks() {
            match block.as_text() {
                Some(text) => eprintln!("  {role}: {text}"),
                None => eprintln!("  {role}: [non-text content]"),
            }
        }
    }
    eprintln!(
        "  (at most {} tokens) Type the answer; an empty line ends it, an empty answer refuses.",
        params.max_tokens
    );
    let mut lines = Vec::new();
    loop {
        let line = ask(if lines.is_empty() { "> " } else { ". " })?;
        if line.is_empty() || lines.len() >= MAX_TYPED_LINES {
            break;
        }
        lines.push(line);
    }
    if lines.is_empty() {
        return Err(HandlerError::new(
            "the sampling request was refused at the terminal",
        ));
    }
    Ok(lines.join("\n"))
}

/// Runs `cmd` (through `sh -c`) with the request's params as JSON on its stdin; its stdout,
/// bounded in size and time, is the answer: a `CreateMessageResult` object, or plain text.
async fn sample_command(
    cmd: &str,
    params: &CreateMessageRequestParams,
    timeout: Duration,
) -> Result<CreateMessageResult, HandlerError> {
    let input = serde_json::to_vec(params)
        .map_err(|e| HandlerError::new(format!("cannot encode the sampling request: {e}")))?;
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| HandlerError::new(format!("--sampling-cmd: cannot start sh: {e}")))?;
    let mut stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let run = async {
        if let Some(mut w) = stdin.take() {
            // A command that does not read its input is fine.
            let _ = w.write_all(&input).await;
        }
        let mut out = Vec::new();
        if let Some(r) = stdout {
            r.take(MAX_SAMPLING_OUTPUT + 1)
                .read_to_end(&mut out)
                .await
                .map_err(|e| HandlerError::new(format!("--sampling-cmd: reading stdout: {e}")))?;
        }
        let status = child
            .wait()
            .await
            .map_err(|e| HandlerError::new(format!("--sampling-cmd: {e}")))?;
        Ok::<_, HandlerError>((status, out))
    };
    let (status, out) = tokio::time::timeout(timeout, run).await.map_err(|_| {
        HandlerError::new(format!(
            "--sampling-cmd did not answer within {} s",
            timeout.as_secs()
        ))
    })??;
    if !status.success() {
        return Err(HandlerError::new(format!(
            "--sampling-cmd failed ({status})"
        )));
    }
    if out.len() as u64 > MAX_SAMPLING_OUTPUT {
        return Err(HandlerError::new(format!(
            "--sampling-cmd wrote more than {MAX_SAMPLING_OUTPUT} bytes"
        )));
    }
    let text = String::from_utf8(out)
        .map_err(|_| HandlerError::new("--sampling-cmd wrote invalid UTF-8"))?;
    let text = text.trim();
    if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(text)
        && v.get("content").is_some()
    {
        return serde_json::from_value(v).map_err(|e| {
            HandlerError::new(format!("--sampling-cmd: not a CreateMessageResult: {e}"))
        });
    }
    if text.is_empty() {
        return Err(HandlerError::new("--sampling-cmd wrote no answer"));
    }
    let model = cmd.split_whitespace().next().unwrap_or("sampling-cmd");
    text_result(text, model)
}

/// An assistant text answer.
fn text_result(text: &str, model: &str) -> Result<CreateMessageResult, HandlerError> {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": model,
        "stopReason": "endTurn",
    }))
    .map_err(|e| HandlerError::new(format!("cannot build the answer: {e}")))
}

impl InputHandler for Terminal {
    fn kinds(&self) -> InputKinds {
        InputKinds {
            elicitation_form: self.terminal,
            elicitation_url: self.terminal,
            sampling: self.terminal || self.sampling_cmd.is_some(),
            ..InputKinds::default()
        }
    }

    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        Box::pin(async move {
            if let Some(cmd) = &self.sampling_cmd {
                return sample_command(cmd, &params, self.sampling_timeout).await;
            }
            let text = tokio::task::spawn_blocking(move || sample_blocking(&params))
                .await
                .map_err(|e| HandlerError::new(format!("prompt task failed: {e}")))??;
            text_result(&text, "human at the terminal")
        })
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
