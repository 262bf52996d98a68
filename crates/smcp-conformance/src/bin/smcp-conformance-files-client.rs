//! The client under test for the SEP-2631 suite's client leg (`smcp-conformance-files client`),
//! built only on `smcp-client`'s public file API. The contract is the section "Client contract"
//! of `crates/smcp-conformance-files/README.md`.
//!
//! ```text
//! SEP2631_SCENARIO=NAME SEP2631_INPUT_FILE=PATH SEP2631_INPUT_MIME=TYPE SEP2631_OUTPUT_DIR=DIR \
//! [SEP2631_ALLOW_LOOPBACK_HTTP=1] smcp-conformance-files-client <server-url>
//! ```
//!
//! The scenario picks only the tool and its non-file arguments ([`SCENARIOS`]). Everything
//! about files follows the server's declarations: each `x-mcp-file` field of the tool's
//! `inputSchema` (from `tools/list`) and of an MRTR elicitation's `requestedSchema` gets the
//! input file as a `data:` URI or an upload, as its `transferModes`/`maxSize` allow
//! ([`smcp_client::Client::file_argument`]); every `{"type": "file"}` output is downloaded,
//! verified (size and sha-256) and saved as `SEP2631_OUTPUT_DIR/<FileValue.name>`
//! ([`smcp_client::Client::download_file`]). Descriptors must be `https`; with
//! `SEP2631_ALLOW_LOOPBACK_HTTP=1` plain `http` to loopback is accepted too, for the endpoint
//! and for descriptors, and nothing else.
//!
//! Exit status: 0 when the tool call completed and every file checked out; 1 with a message on
//! stderr when anything was refused or failed (a refused descriptor, a digest mismatch, a tool
//! error); 2 on a usage error.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

use anyhow::{Context as _, bail};
use serde_json::{Map, Value, json};
use smcp_client::files::{FileField, check_transfer_url, file_fields, output_files};
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult, ElicitValue};
use smcp_client::{Client, FileTransfer, InputHandler, InputHandlerError, InputKinds};

/// Scenario → tool, as in the client contract's table (arguments: [`fixed_arguments`]).
const SCENARIOS: &[(&str, &str)] = &[
    ("inline-only-field", "files_inline_text"),
    ("upload-only-field", "files_upload_only"),
    ("upload-multipart-field", "files_upload_only"),
    ("output-file-correct-digest", "files_generate"),
    ("output-file-wrong-digest", "files_generate"),
    ("insecure-descriptor", "files_upload_only"),
    ("mrtr-file-elicitation", "files_elicit"),
];

/// The non-file arguments the contract gives a tool.
fn fixed_arguments(tool: &str) -> Map<String, Value> {
    match tool {
        "files_generate" => json!({"size": 1024, "name": "generated.bin"}),
        _ => json!({}),
    }
    .as_object()
    .cloned()
    .unwrap_or_default()
}

/// The `SEP2631_*` environment.
#[derive(Debug, Clone)]
struct Settings {
    scenario: String,
    tool: &'static str,
    url: String,
    input: Option<InputFile>,
    output_dir: Option<PathBuf>,
    allow_loopback_http: bool,
}

/// The file to send and its media type.
#[derive(Debug, Clone)]
struct InputFile {
    path: PathBuf,
    mime: Option<String>,
}

/// Reads the environment and the URL; an error is a usage problem (exit 2).
fn settings() -> Result<Settings, String> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let usage = "usage: smcp-conformance-files-client <server-url> (with SEP2631_SCENARIO set)";
    let scenario = var("SEP2631_SCENARIO").ok_or_else(|| usage.to_owned())?;
    let Some(url) = std::env::args().skip(1).next_back() else {
        return Err(usage.to_owned());
    };
    let Some(&(_, tool)) = SCENARIOS.iter().find(|(s, _)| *s == scenario) else {
        let known: Vec<&str> = SCENARIOS.iter().map(|(s, _)| *s).collect();
        return Err(format!(
            "unknown SEP2631_SCENARIO {scenario:?}; known: {known:?}"
        ));
    };
    Ok(Settings {
        scenario,
        tool,
        url,
        input: var("SEP2631_INPUT_FILE").map(|p| InputFile {
            path: PathBuf::from(p),
            mime: var("SEP2631_INPUT_MIME"),
        }),
        output_dir: var("SEP2631_OUTPUT_DIR").map(PathBuf::from),
        allow_loopback_http: var("SEP2631_ALLOW_LOOPBACK_HTTP").as_deref() == Some("1"),
    })
}

/// The argument value for one file field: the input file, inline or uploaded as the field's
/// declaration allows (an array field gets a one-item array).
async fn file_value(
    client: &Client,
    input: Option<&InputFile>,
    field: &FileField,
) -> anyhow::Result<Value> {
    let Some(input) = input else {
        bail!(
            "field {:?} is file-valued but SEP2631_INPUT_FILE is not set",
            field.name
        );
    };
    let value = client
        .file_argument(&input.path, input.mime.as_deref(), &field.descriptor, None)
        .await
        .with_context(|| {
            format!(
                "supplying {} for file field {:?} (x-mcp-file {})",
                input.path.display(),
                field.name,
                serde_json::to_string(&field.descriptor).unwrap_or_default()
            )
        })?;
    tracing::info!(
        field = %field.name,
        mode = if value.starts_with("data:") { "inline" } else { "upload" },
        "file field satisfied"
    );
    Ok(if field.array {
        json!([value])
    } else {
        Value::String(value)
    })
}

/// Answers form elicitations whose `requestedSchema` has `x-mcp-file` fields with the input
/// file (inline or uploaded per the field's declaration); declines anything else.
struct FileElicitation {
    client: Arc<OnceLock<Client>>,
    input: Option<InputFile>,
}

impl FileElicitation {
    async fn answer(&self, params: ElicitRequestParams) -> anyhow::Result<ElicitResult> {
        let ElicitRequestParams::Form(form) = params else {
            tracing::warn!("URL-mode elicitation declined: this client only supplies files");
            return Ok(ElicitResult::decline());
        };
        let client = self
            .client
            .get()
            .context("the client is not ready to answer elicitations")?;
        let schema = serde_json::to_value(&form.requested_schema)?;
        let mut content = BTreeMap::new();
        for field in file_fields(&schema).iter().filter(|f| !f.array) {
            if let Value::String(v) = file_value(client, self.input.as_ref(), field).await? {
                content.insert(field.name.clone(), ElicitValue::String(v));
            }
        }
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(missing) = required.iter().find(|r| !content.contains_key(**r)) {
            tracing::warn!(field = %missing, "elicitation asks for a non-file field; declined");
            return Ok(ElicitResult::decline());
        }
        Ok(ElicitResult::accept(content))
    }
}

impl InputHandler for FileElicitation {
    fn kinds(&self) -> InputKinds {
        InputKinds {
            elicitation_form: true,
            ..InputKinds::default()
        }
    }

    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> smcp_client::BoxFuture<'_, Result<ElicitResult, InputHandlerError>> {
        Box::pin(async move {
            self.answer(params)
                .await
                .map_err(|e| InputHandlerError::new(format!("{e:#}")))
        })
    }
}

async fn run(s: &Settings) -> anyhow::Result<Vec<PathBuf>> {
    // The endpoint obeys the same transport rule as descriptors.
    check_transfer_url(&s.url, s.allow_loopback_http)
        .with_context(|| format!("refusing the server URL {}", s.url))?;
    let slot = Arc::new(OnceLock::new());
    let client = Client::builder(&s.url)
        .files(FileTransfer {
            allow_insecure_loopback: s.allow_loopback_http,
            ..FileTransfer::default()
        })
        .input_handler(FileElicitation {
            client: slot.clone(),
            input: s.input.clone(),
        })
        .build()?;
    let _ = slot.set(client.clone());

    let tools = client.list_tools().await.context("tools/list")?;
    let tool = tools
        .iter()
        .find(|t| t.name == s.tool)
        .with_context(|| format!("the server does not list the tool {:?}", s.tool))?;
    let schema = serde_json::to_value(&tool.input_schema)?;
    let mut arguments = fixed_arguments(s.tool);
    for field in file_fields(&schema) {
        let value = file_value(&client, s.input.as_ref(), &field).await?;
        arguments.insert(field.name.clone(), value);
    }
    let result = client
        .call_tool(s.tool, Value::Object(arguments))
        .await
        .with_context(|| format!("tools/call {}", s.tool))?;
    if result.is_error() {
        bail!(
            "tool {} reported an error: {}",
            s.tool,
            result
                .structured_content
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_else(|| format!("{:?}", result.content))
        );
    }

    let outputs = output_files(&result);
    let mut saved = Vec::new();
    if outputs.is_empty() {
        return Ok(saved);
    }
    let dir = s
        .output_dir
        .as_deref()
        .context("the tool returned files but SEP2631_OUTPUT_DIR is not set")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for file in &outputs {
        let (path, _) = client
            .download_file(file, dir, None)
            .await
            .with_context(|| {
                format!(
                    "downloading {} ({})",
                    file.name.as_deref().unwrap_or("unnamed file"),
                    file.uri
                )
            })?;
        saved.push(path);
    }
    Ok(saved)
}

fn report(out: &mut impl std::io::Write, scenario: &str, saved: &[PathBuf]) {
    let _ = writeln!(out, "{scenario}: ok");
    for p in saved {
        let _ = writeln!(out, "saved verified {}", p.display());
    }
}

fn fail(message: &str) {
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr().lock(),
        "smcp-conformance-files-client: {message}"
    );
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RUST_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let s = match settings() {
        Ok(s) => s,
        Err(e) => {
            fail(&e);
            return ExitCode::from(2);
        }
    };
    tracing::info!(scenario = %s.scenario, tool = s.tool, url = %s.url, "SEP-2631 client");
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            fail(&format!("cannot start the runtime: {e}"));
            return ExitCode::from(2);
        }
    };
    match rt.block_on(run(&s)) {
        Ok(saved) => {
            report(&mut std::io::stdout().lock(), &s.scenario, &saved);
            ExitCode::SUCCESS
        }
        Err(e) => {
            fail(&format!("scenario {}: {e:#}", s.scenario));
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_names_a_tool() {
        assert_eq!(SCENARIOS.len(), 7);
        assert_eq!(
            fixed_arguments("files_generate"),
            json!({"size": 1024, "name": "generated.bin"})
                .as_object()
                .cloned()
                .unwrap()
        );
        assert!(fixed_arguments("files_upload_only").is_empty());
    }
}
