//! `smcp`: call MCP 2026-07-28 servers from the command line, over Streamable HTTP (`--url`)
//! or stdio (`--stdio … -- PROGRAM ARGS…`, the server launched as a child process). Older
//! servers (2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05 HTTP+SSE) are detected and spoken
//! to in their revision; `--protocol-version` pins one.
//!
//! Human-readable output by default, `--json` for scripts. Every failure is classified
//! (`errors`): a message with its cause chain and a hint, a distinct exit code, and under
//! `--json` one `{"error": …}` object on stdout.
// A command-line tool prints by design.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod cache;
mod errors;
mod interact;
mod login;
mod render;
mod stdio;
mod task;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{CommandFactory as _, Parser, Subcommand};
use futures_util::{FutureExt as _, StreamExt as _};
use serde_json::Value;
use smcp_client::proto::basic::LoggingLevel;
use smcp_client::proto::patterns::subscriptions::SubscriptionFilter;
use smcp_client::proto::server::tools::Tool;
use smcp_client::{Client, SubscriptionEvent};

use crate::errors::{ToolFailed, Usage};

/// Where `smcpd` listens by default.
pub(crate) const DEFAULT_URL: &str = "http://127.0.0.1:8931/mcp";

/// The examples and the exit code table at the end of `--help`.
const AFTER_HELP: &str = "\
Examples:
  smcp tools                                   # the tools of smcpd on http://127.0.0.1:8931/mcp
  smcp --url https://host/mcp --ca-cert ca.pem tools
  smcp tool add                                # one tool's schema (* = required argument)
  smcp call add --arg a=1 --arg b=2
  smcp call add --json-args '{\"a\": 1, \"b\": 2}' --json | jq .structuredContent
  smcp call count --arg to=5 --log-level debug # the server's log lines on stderr
  smcp call ask_llm --arg text=… --sampling-cmd 'llm -s terse'
  smcp complete --prompt greet name A          # completion/complete
  smcp listen                                  # every list change the server offers
  smcp --stdio tools -- smcpd --stdio          # a server launched as a child process
  smcp --url http://127.0.0.1:8000/mcp --protocol-version 2025-11-25 tools   # an older server
  smcp completions bash > ~/.local/share/bash-completion/completions/smcp
  smcp man | man -l -
";

/// A log level for `--log-level`.
fn log_level(text: &str) -> Result<LoggingLevel, String> {
    serde_json::from_value(Value::String(text.to_ascii_lowercase())).map_err(|_| {
        "one of debug, info, notice, warning, error, critical, alert, emergency".to_owned()
    })
}

#[derive(Debug, Parser)]
#[command(
    version,
    about = "Call MCP servers (2026-07-28, and the stateful 2025 revisions) over Streamable HTTP or stdio",
    override_usage = "smcp [OPTIONS] <COMMAND>\n       smcp --stdio [OPTIONS] <COMMAND> -- <PROGRAM> [ARGS]...",
    after_help = "Run `smcp --help` for examples and the exit codes.",
    after_long_help = format!("{AFTER_HELP}\n{}\n", errors::EXIT_CODES)
)]
struct Cli {
    /// The server's MCP endpoint (ignored with --stdio).
    #[arg(long, env = "SMCP_URL", default_value = DEFAULT_URL, global = true)]
    url: String,
    /// Launch the server as a child process and speak MCP over its stdin/stdout; the server's
    /// command line goes last, after `--`.
    #[arg(long, global = true)]
    stdio: bool,
    /// An environment variable for the stdio server, `NAME=VALUE` (repeatable).
    #[arg(long = "env", value_name = "K=V", global = true)]
    envs: Vec<String>,
    /// Discard the stdio server's stderr (by default it goes to smcp's stderr).
    #[arg(long, global = true)]
    quiet_server: bool,
    /// The stdio server's command line (everything after `--`; not parsed by clap).
    #[arg(skip)]
    server_command: Vec<OsString>,
    /// Extra HTTP header for every request, `Name: value` (repeatable).
    #[arg(long = "header", short = 'H', value_name = "K:V", global = true)]
    headers: Vec<String>,
    /// Print machine-readable JSON instead of tables and text.
    #[arg(long, global = true)]
    json: bool,
    /// Never prompt; a server that needs input then fails with a clear error.
    #[arg(long, global = true)]
    non_interactive: bool,
    /// Timeout of each call, in seconds (0 = none). For a call the server runs as a task, it
    /// bounds each request (the call, each poll); the task itself is bounded by its TTL.
    #[arg(long, default_value_t = 60, global = true)]
    timeout: u64,
    /// Timeout for establishing the connection (TCP and TLS), in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..), global = true)]
    connect_timeout: u64,
    /// Resend a request that failed in transit up to N times, where that is safe: one that
    /// never reached the server, or one without side effects (lists, reads, a call of a tool
    /// listed read-only or idempotent). For a server behind a load balancer.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=10), global = true)]
    retries: u32,
    /// Do not keep the server's cacheable lists between runs (by default `smcp call` reuses
    /// the tool list for as long as the server's `ttlMs` allows; see SMCP_CACHE_DIR).
    #[arg(long, global = true)]
    no_cache: bool,
    /// Answer the server's sampling requests (sampling/createMessage) with this shell
    /// command: the request's params as JSON on its stdin, its stdout the model's answer
    /// (plain text, or a CreateMessageResult object). Bounded by --timeout and 1 MiB.
    #[arg(long, value_name = "CMD", env = "SMCP_SAMPLING_CMD", global = true)]
    sampling_cmd: Option<String>,
    /// Write images, audio and blobs to this directory instead of summarising them.
    #[arg(long, value_name = "DIR", global = true)]
    save: Option<PathBuf>,
    /// Trust this CA certificate (PEM) for the server and its file descriptors.
    #[arg(long, value_name = "PEM", env = "SMCP_CA_CERT", global = true)]
    ca_cert: Option<PathBuf>,
    /// Files up to this many bytes go inline as data: URIs when the field allows it.
    #[arg(long, default_value_t = 256 * 1024, global = true)]
    inline_threshold: u64,
    /// Development only: accept plain-http file descriptors on 127.0.0.1/[::1]/localhost.
    #[arg(long, global = true)]
    insecure_loopback_files: bool,
    /// Do not declare the tasks extension (SEP-2663): the server must answer calls inline.
    #[arg(long, global = true)]
    no_tasks: bool,
    /// Speak this MCP version instead of negotiating: 2026-07-28 (no fallback), or an older
    /// one (2025-11-25, 2025-06-18, 2025-03-26: a stateful session; 2024-11-05: HTTP+SSE).
    /// By default 2026-07-28 is tried first and an older server is detected.
    #[arg(
        long,
        value_name = "VERSION",
        env = "SMCP_PROTOCOL_VERSION",
        global = true
    )]
    protocol_version: Option<String>,
    /// Log filter for smcp's own diagnostics on stderr (e.g. `debug`; `RUST_LOG` syntax).
    /// Coloured only on a terminal, and never with NO_COLOR set.
    #[arg(long, env = "SMCP_LOG", default_value = "warn", global = true)]
    log: String,
    /// A bearer token you already have, sent as `Authorization: Bearer …` (instead of the
    /// tokens `smcp login` stored).
    #[arg(long, env = "SMCP_TOKEN", hide_env_values = true, global = true)]
    token: Option<String>,
    /// A pre-registered OAuth client id for `smcp login` (otherwise the client registers
    /// itself: Client ID Metadata Document or Dynamic Client Registration).
    #[arg(long, env = "SMCP_CLIENT_ID", global = true)]
    client_id: Option<String>,
    /// The pre-registered client's secret.
    #[arg(
        long,
        env = "SMCP_CLIENT_SECRET",
        hide_env_values = true,
        global = true
    )]
    client_secret: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show the server's versions, capabilities and instructions.
    Discover,
    /// List the tools (ARGUMENTS: * = required).
    Tools,
    /// Show one tool: description, arguments (* = required) and its input/output schema.
    Tool {
        /// The tool name.
        name: String,
    },
    /// Call a tool.
    Call {
        /// The tool name.
        name: String,
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
    },
    /// Upload a file (files/authorizeUpload + HTTPS upload) and print its file URI.
    Upload {
        /// The file.
        path: PathBuf,
        /// Media type (default: from the extension).
        #[arg(long)]
        mime: Option<String>,
    },
    /// Download a file URI (files/authorizeDownload), verifying size and digest.
    Download {
        /// The `mcp-file://` URI.
        uri: String,
        /// Destination file or directory (default: current directory, server's file name).
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
    },
    /// List the resources.
    Resources,
    /// List the resource templates.
    Templates,
    /// Read a resource.
    Read {
        /// The resource URI.
        uri: String,
    },
    /// List the prompts.
    Prompts,
    /// Get a prompt.
    Prompt {
        /// The prompt name.
        name: String,
        /// An argument `NAME=VALUE` (repeatable).
        #[arg(long = "arg", short = 'a', value_name = "K=V")]
        args: Vec<String>,
    },
    /// Ask the server to complete an argument of a prompt or a resource template
    /// (completion/complete).
    #[command(group(clap::ArgGroup::new("reference").required(true).args(["prompt", "template"])))]
    Complete {
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
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `smcp man | man -l -`.
    Man,
    /// Authorize with the server's OAuth authorization server in the browser and store the
    /// tokens (one file per server, mode 0600; see SMCP_TOKEN_DIR). Later commands use and
    /// refresh them.
    Login {
        /// The server (default: --url).
        url: Option<String>,
        /// Only print the authorization URL; do not launch a browser.
        #[arg(long)]
        no_browser: bool,
        /// The loopback port of the redirect listener (0 = any free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
    /// Forget the tokens stored for the server.
    Logout {
        /// The server (default: --url).
        url: Option<String>,
    },
    /// Inspect or cancel a task (SEP-2663) by its id.
    Task {
        #[command(subcommand)]
        action: TaskAction,
    },
    /// Listen for change notifications until interrupted or the server ends the stream.
    /// Without flags: every list change the server offers (from server/discover).
    Listen {
        /// Tool list changes.
        #[arg(long)]
        tools: bool,
        /// Prompt list changes.
        #[arg(long)]
        prompts: bool,
        /// Resource list changes.
        #[arg(long)]
        resources: bool,
        /// Updates of this resource URI (repeatable).
        #[arg(long = "resource", value_name = "URI")]
        resource: Vec<String>,
        /// Status changes of this task (SEP-2663; repeatable).
        #[arg(long = "task", value_name = "ID")]
        task: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
enum TaskAction {
    /// Show a task: status, message, and its result, error or input requests (tasks/get).
    Get {
        /// The task id.
        id: String,
    },
    /// Ask the server to cancel a task (tasks/cancel; cancellation is cooperative).
    Cancel {
        /// The task id.
        id: String,
    },
}

/// stdin and stderr are a terminal: prompts can be shown and answered.
fn on_terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Credentials: `--token`, else an `Authorization` header of the user's, else OAuth with the
/// stored tokens (and the browser step only under `smcp login`). None over stdio.
fn with_auth(
    cli: &Cli,
    builder: smcp_client::ClientBuilder,
    authorizer: Option<smcp_client::auth::LoopbackAuthorizer>,
) -> anyhow::Result<smcp_client::ClientBuilder> {
    if cli.stdio {
        if cli.token.is_some() {
            anyhow::bail!(Usage("--token is for an HTTP server".to_owned()));
        }
        return Ok(builder);
    }
    if let Some(t) = &cli.token {
        return Ok(builder.bearer_token(t));
    }
    let has_header = cli.headers.iter().any(|h| {
        h.split_once(':')
            .is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case("authorization"))
    });
    if has_header {
        return Ok(builder);
    }
    let Ok(store) = login::store() else {
        return Ok(builder);
    };
    Ok(builder.oauth(login::config(
        std::sync::Arc::new(store),
        cli.client_id.as_deref(),
        cli.client_secret.as_deref(),
        authorizer,
    )))
}

fn build_client(cli: &Cli, era_hint: Option<smcp_client::Era>) -> anyhow::Result<Client> {
    let timeout = (cli.timeout > 0).then(|| Duration::from_secs(cli.timeout));
    let builder = if cli.stdio {
        Client::stdio(stdio::command(
            &cli.server_command,
            &cli.envs,
            cli.quiet_server,
        )?)
    } else {
        if !cli.envs.is_empty() {
            anyhow::bail!("--env is for a stdio server (--stdio)");
        }
        Client::builder(&cli.url)
    };
    let mut builder = builder
        .timeout(timeout)
        .connect_timeout(Duration::from_secs(cli.connect_timeout))
        .retry(smcp_client::RetryPolicy::retries(cli.retries))
        .tasks(!cli.no_tasks)
        .client_info(smcp_client::proto::basic::Implementation::new(
            "smcp",
            env!("CARGO_PKG_VERSION"),
        ));
    if !cli.stdio && !cli.no_cache {
        builder = builder.cache(smcp_client::Cache::new());
    }
    if let Some(v) = &cli.protocol_version {
        builder = builder.protocol_version(v);
    }
    if let Some(era) = era_hint {
        builder = builder.era_hint(era);
    }
    for h in &cli.headers {
        let (name, value) = h.split_once(':').ok_or_else(|| {
            anyhow::Error::new(Usage(format!("--header expects `Name: value`, got {h:?}")))
        })?;
        builder = builder.header(name.trim(), value.trim());
    }
    if let Some(ca) = &cli.ca_cert {
        let pem = std::fs::read(ca).with_context(|| format!("reading {}", ca.display()))?;
        builder = builder.ca_cert_pem(&pem);
    }
    builder = with_auth(cli, builder, None)?;
    builder = builder.files(smcp_client::FileTransfer {
        inline_threshold: cli.inline_threshold,
        allow_insecure_loopback: cli.insecure_loopback_files,
        ..smcp_client::FileTransfer::default()
    });
    let terminal = !cli.non_interactive && on_terminal();
    if terminal || cli.sampling_cmd.is_some() {
        builder = builder.input_handler(interact::Terminal {
            terminal,
            sampling_cmd: cli.sampling_cmd.clone(),
            sampling_timeout: Duration::from_secs(if cli.timeout > 0 { cli.timeout } else { 600 }),
        });
    }
    Ok(builder.build()?)
}

fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// A live progress bar on a terminal; hidden otherwise.
fn progress_bar(json: bool) -> indicatif::ProgressBar {
    if json || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(0);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// A byte progress bar with rate, on a terminal; hidden otherwise.
fn transfer_bar(json: bool, label: &str) -> indicatif::ProgressBar {
    if json || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(0);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{msg} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(label.to_owned());
    bar
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

async fn download(
    client: &Client,
    uri: &str,
    dest: &std::path::Path,
    json: bool,
) -> anyhow::Result<PathBuf> {
    let bar = transfer_bar(json, "download");
    let b = bar.clone();
    let progress = move |done: u64, total: Option<u64>| {
        if let Some(t) = total {
            b.set_length(t);
        }
        b.set_position(done);
    };
    let result = client.download_to(uri, dest, Some(&progress)).await;
    bar.finish_and_clear();
    let (path, file) = result?;
    if !json {
        eprintln!(
            "saved {} ({} bytes, sha-256 {})",
            path.display(),
            file.size.unwrap_or_default(),
            file.digest.map(|d| d.value).unwrap_or_default()
        );
    }
    Ok(path)
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

/// Prints one tool as `smcp tool NAME` shows it.
fn print_tool(tool: &Tool) -> anyhow::Result<()> {
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

/// `smcp discover` against an older revision: what the server said in `initialize`.
async fn show_session(client: &Client, json: bool) -> anyhow::Result<()> {
    let Some(info) = client.session_info().await else {
        anyhow::bail!("no session with the server");
    };
    let era = match info.era {
        smcp_client::Era::HttpSse => "HTTP+SSE",
        _ => "stateful session",
    };
    if json {
        return print_json(&serde_json::json!({
            "protocolVersion": info.protocol_version,
            "era": era,
            "serverInfo": info.server_info,
            "capabilities": info.capabilities,
            "instructions": info.instructions,
        }));
    }
    println!(
        "protocol:  {} ({era}, negotiated by initialize)",
        info.protocol_version
    );
    if let Some(name) = info.server_info.get("name").and_then(Value::as_str) {
        let title = info.server_info.get("title").and_then(Value::as_str);
        let version = info.server_info.get("version").and_then(Value::as_str);
        println!(
            "server:    {} {}",
            title.unwrap_or(name),
            version.unwrap_or("")
        );
    }
    let names: Vec<&str> = info
        .capabilities
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    println!("offers:    {}", names.join(", "));
    if let Some(i) = &info.instructions {
        println!("\n{i}");
    }
    Ok(())
}

async fn find_tool(client: &Client, name: &str) -> anyhow::Result<Option<Tool>> {
    Ok(client
        .list_tools()
        .await?
        .into_iter()
        .find(|t| t.name == name))
}

async fn run(cli: &Cli, client: &Client) -> anyhow::Result<ExitCode> {
    let save = cli.save.as_deref();
    match &cli.command {
        Command::Discover => {
            let d = match client.discover().await {
                Err(e) if e.is_unsupported_in_era() => {
                    return show_session(client, cli.json)
                        .await
                        .map(|()| ExitCode::SUCCESS);
                }
                other => other?,
            };
            if cli.json {
                return print_json(&d).map(|()| ExitCode::SUCCESS);
            }
            println!("protocol:  {} (stateless)", client.protocol_version());
            if let Some(info) = d.server_info() {
                println!(
                    "server:    {} {}",
                    info.title.as_deref().unwrap_or(&info.name),
                    info.version
                );
            }
            println!("versions:  {}", d.supported_versions.join(", "));
            let caps = serde_json::to_value(&d.capabilities)?;
            let names: Vec<&str> = caps
                .as_object()
                .map(|o| o.keys().map(String::as_str).collect())
                .unwrap_or_default();
            println!("offers:    {}", names.join(", "));
            if let Some(i) = &d.instructions {
                println!("\n{i}");
            }
        }
        Command::Tools => {
            let tools = client.list_tools().await?;
            if cli.json {
                return print_json(&tools).map(|()| ExitCode::SUCCESS);
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
        }
        Command::Tool { name } => {
            let Some(tool) = find_tool(client, name).await? else {
                let names: Vec<String> = client
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
            if cli.json {
                return print_json(&tool).map(|()| ExitCode::SUCCESS);
            }
            print_tool(&tool)?;
        }
        Command::Call {
            name,
            args,
            json_args,
            files,
            log_level,
        } => {
            // The schema coerces `--arg` values and drives the Mcp-Param-* headers.
            let schema = find_tool(client, name)
                .await?
                .map(|t| t.input_schema)
                .unwrap_or_default();
            let mut arguments = args::tool_arguments(&schema, json_args.as_deref(), args)?;
            let fields = smcp_client::files::file_fields(&serde_json::to_value(&schema)?);
            for spec in files {
                let (field, path) = spec
                    .split_once('=')
                    .with_context(|| format!("--file expects FIELD=PATH, got {spec:?}"))?;
                let decl = fields.iter().find(|f| f.name == field).with_context(|| {
                    format!("{name}: {field:?} is not a file field (x-mcp-file)")
                })?;
                let bar = transfer_bar(cli.json, &format!("upload {path}"));
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
            let bar = progress_bar(cli.json);
            let b = bar.clone();
            // A task shows its status live; Ctrl-C cancels the call (tasks/cancel for a task).
            let status = std::sync::Arc::new(task::StatusView::new(cli.json));
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
            if cli.json {
                print_json(&result)?;
            } else {
                render::content(&result.content, save);
                if result.content.is_empty()
                    && let Some(s) = &result.structured_content
                {
                    println!("{}", serde_json::to_string_pretty(s)?);
                }
            }
            if result.is_error() {
                return Err(anyhow::Error::new(ToolFailed));
            }
            if let Some(dir) = save {
                let mut uris = Vec::new();
                file_values(&serde_json::to_value(&result)?, &mut uris);
                std::fs::create_dir_all(dir)?;
                for uri in uris {
                    download(client, &uri, dir, cli.json).await?;
                }
            }
        }
        Command::Upload { path, mime } => {
            let bar = transfer_bar(cli.json, "upload");
            let b = bar.clone();
            let progress = move |done: u64, total: Option<u64>| {
                if let Some(t) = total {
                    b.set_length(t);
                }
                b.set_position(done);
            };
            let result = client
                .upload_path(path, mime.as_deref(), Some(&progress))
                .await;
            bar.finish_and_clear();
            let file = result?;
            if cli.json {
                print_json(&file)?;
            } else {
                println!("{}", file.uri);
                eprintln!(
                    "uploaded {} ({} bytes, sha-256 {})",
                    path.display(),
                    file.size.unwrap_or_default(),
                    file.digest.map(|d| d.value).unwrap_or_default()
                );
            }
        }
        Command::Download { uri, output } => {
            let dest = output.clone().unwrap_or_else(|| PathBuf::from("."));
            let path = download(client, uri, &dest, cli.json).await?;
            if cli.json {
                print_json(&serde_json::json!({"path": path}))?;
            }
        }
        Command::Resources => {
            let resources = client.list_resources().await?;
            if cli.json {
                return print_json(&resources).map(|()| ExitCode::SUCCESS);
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
        }
        Command::Templates => {
            let templates = client.list_resource_templates().await?;
            if cli.json {
                return print_json(&templates).map(|()| ExitCode::SUCCESS);
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
        }
        Command::Complete {
            prompt,
            template,
            argument,
            value,
            context,
        } => {
            let reference = match (prompt, template) {
                (Some(p), _) => serde_json::json!({"type": "ref/prompt", "name": p}),
                (None, Some(t)) => serde_json::json!({"type": "ref/resource", "uri": t}),
                (None, None) => {
                    return Err(anyhow::Error::new(Usage(
                        "complete needs --prompt NAME or --template URI_TEMPLATE".to_owned(),
                    )));
                }
            };
            let reference = serde_json::from_value(reference)?;
            let mut ctx = BTreeMap::new();
            for c in context {
                let (k, v) = args::split(c)?;
                ctx.insert(k.to_owned(), v.to_owned());
            }
            let r = client.complete(reference, argument, value, ctx).await?;
            if cli.json {
                return print_json(&r).map(|()| ExitCode::SUCCESS);
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
        }
        Command::Completions { .. }
        | Command::Man
        | Command::Login { .. }
        | Command::Logout { .. } => {}
        Command::Read { uri } => {
            let r = client.read_resource(uri).await?;
            if cli.json {
                return print_json(&r).map(|()| ExitCode::SUCCESS);
            }
            for (i, c) in r.contents.iter().enumerate() {
                render::resource_contents(c, i, save);
            }
        }
        Command::Prompts => {
            let prompts = client.list_prompts().await?;
            if cli.json {
                return print_json(&prompts).map(|()| ExitCode::SUCCESS);
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
        }
        Command::Prompt { name, args } => {
            let mut map = BTreeMap::new();
            for a in args {
                let (k, v) = args::split(a)?;
                map.insert(k.to_owned(), v.to_owned());
            }
            let p = client.get_prompt(name, map).await?;
            if cli.json {
                return print_json(&p).map(|()| ExitCode::SUCCESS);
            }
            if let Some(d) = &p.description {
                println!("{d}\n");
            }
            for m in &p.messages {
                println!("{}:", serde_json::to_value(m.role)?.as_str().unwrap_or("?"));
                render::content(std::slice::from_ref(&m.content), save);
            }
        }
        Command::Task { action } => match action {
            TaskAction::Get { id } => {
                let t = client.get_task(id).await?;
                if cli.json {
                    print_json(&t)?;
                } else {
                    task::print(&t, save)?;
                }
            }
            TaskAction::Cancel { id } => {
                client.cancel_task(id).await?;
                if cli.json {
                    print_json(&serde_json::json!({"taskId": id, "cancelRequested": true}))?;
                } else {
                    println!(
                        "cancellation of task {id} requested (the server decides when it stops; \
                         `smcp task get {id}` shows how it ended)"
                    );
                }
            }
        },
        Command::Listen {
            tools,
            prompts,
            resources,
            resource,
            task,
        } => {
            let mut filter = SubscriptionFilter {
                tools_list_changed: tools.then_some(true),
                prompts_list_changed: prompts.then_some(true),
                resources_list_changed: resources.then_some(true),
                resource_subscriptions: (!resource.is_empty()).then(|| resource.clone()),
                task_ids: (!task.is_empty()).then(|| task.clone()),
            };
            if !tools && !prompts && !resources && resource.is_empty() && task.is_empty() {
                // Bare `smcp listen`: every list change the server offers.
                let caps = match client.discover().await {
                    Err(e) if e.is_unsupported_in_era() => match client.session_info().await {
                        Some(info) => serde_json::from_value(info.capabilities)?,
                        None => return Err(e.into()),
                    },
                    other => other?.capabilities,
                };
                let offered = |x: Option<bool>| (x == Some(true)).then_some(true);
                filter.tools_list_changed = offered(caps.tools.and_then(|t| t.list_changed));
                filter.prompts_list_changed = offered(caps.prompts.and_then(|p| p.list_changed));
                filter.resources_list_changed =
                    offered(caps.resources.and_then(|r| r.list_changed));
                let following: Vec<&str> = [
                    ("tools", filter.tools_list_changed),
                    ("prompts", filter.prompts_list_changed),
                    ("resources", filter.resources_list_changed),
                ]
                .into_iter()
                .filter_map(|(n, on)| on.map(|_| n))
                .collect();
                if following.is_empty() {
                    anyhow::bail!(
                        "the server announces no list changes (no listChanged capability); \
                         follow a resource with --resource URI or a task with --task ID"
                    );
                }
                if !cli.json {
                    eprintln!(
                        "following changes of: {} (Ctrl-C to stop)",
                        following.join(", ")
                    );
                }
            }
            let mut sub = client.listen(filter);
            loop {
                let event = tokio::select! {
                    e = sub.next() => e,
                    _ = tokio::signal::ctrl_c() => None,
                };
                let Some(event) = event else { break };
                let event = event?;
                if cli.json {
                    let line = match &event {
                        SubscriptionEvent::Acknowledged(f) => {
                            serde_json::json!({"event": "acknowledged", "notifications": f})
                        }
                        SubscriptionEvent::ResourceUpdated { uri } => {
                            serde_json::json!({"event": "resource_updated", "uri": uri})
                        }
                        SubscriptionEvent::Task(t) => {
                            serde_json::json!({"event": "task", "task": t})
                        }
                        other => serde_json::json!({"event": format!("{other:?}")}),
                    };
                    println!("{line}");
                } else {
                    match event {
                        SubscriptionEvent::Acknowledged(f) => {
                            println!("subscribed: {}", serde_json::to_string(&f)?);
                        }
                        SubscriptionEvent::ToolsListChanged => println!("tools list changed"),
                        SubscriptionEvent::PromptsListChanged => println!("prompts list changed"),
                        SubscriptionEvent::ResourcesListChanged => {
                            println!("resources list changed");
                        }
                        SubscriptionEvent::ResourceUpdated { uri } => {
                            println!("resource updated: {uri}");
                        }
                        SubscriptionEvent::Task(t) => {
                            let m = t.task.status_message.as_deref().unwrap_or("");
                            println!("task {}: {} {m}", t.task.task_id, t.task.status);
                        }
                        other => println!("{other:?}"),
                    }
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// After a failed `smcp call NAME` answered −32602: when the tool list lacks NAME, the names
/// to suggest (possibly none).
async fn unknown_tool(client: &Client, name: &str) -> Option<Vec<String>> {
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

/// Prints `failure` (stderr, or `{"error": …}` on stdout under `--json`, except for a tool
/// error whose result is printed already) and returns its exit code.
fn report(failure: &errors::Failure, json: bool) -> ExitCode {
    if json {
        // A tool error's result is already the output (it says `isError: true`).
        if failure.exit != errors::Exit::Tool {
            println!("{}", failure.json());
        }
    } else {
        eprint!("{}", failure.text());
    }
    if failure.exit == errors::Exit::Cancelled {
        // Interrupted (Ctrl-C): exit now, even if a prompt is still waiting on stdin.
        std::process::exit(130);
    }
    ExitCode::from(failure.exit as u8)
}

/// Logs for smcp itself: on stderr, coloured only on a terminal without NO_COLOR. The TLS
/// verifier's own error line is silenced: the error report says it, with a hint.
fn init_logging(filter: &str) {
    let ansi = std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let filter =
        tracing_subscriber::EnvFilter::try_new(format!("{filter},rustls_platform_verifier=off"))
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr)
        .init();
}

/// `smcp login` and `smcp logout`; `None` for every other command.
async fn login_or_logout(cli: &mut Cli) -> Option<ExitCode> {
    let (url, result) = match &cli.command {
        Command::Logout { url } => {
            let url = url.clone().unwrap_or_else(|| cli.url.clone());
            (url.clone(), login::logout(&url))
        }
        Command::Login {
            url,
            no_browser,
            port,
        } => {
            let url = url.clone().unwrap_or_else(|| cli.url.clone());
            cli.url.clone_from(&url);
            let (no_browser, port) = (*no_browser, *port);
            (url.clone(), run_login(cli, &url, no_browser, port).await)
        }
        _ => return None,
    };
    let ctx = errors::Context {
        stdio: false,
        url,
        non_interactive: cli.non_interactive,
        terminal: on_terminal(),
        sampling_cmd: false,
        ca_cert: cli.ca_cert.is_some(),
        unknown_tool: None,
        suggestions: Vec::new(),
    };
    Some(match result {
        Ok(message) => {
            if cli.json {
                println!("{}", serde_json::json!({ "message": message }));
            } else {
                println!("{message}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => report(&errors::classify(&e, &ctx), cli.json),
    })
}

async fn run_login(cli: &Cli, url: &str, no_browser: bool, port: u16) -> anyhow::Result<String> {
    if cli.stdio || cli.token.is_some() {
        anyhow::bail!(Usage(
            "smcp login is for an HTTP server without --token".to_owned()
        ));
    }
    let store = login::store()?;
    smcp_client::auth::TokenStore::clear(&store, url)?;
    let authorizer = smcp_client::auth::LoopbackAuthorizer::bind(port)?.open_browser(!no_browser);
    let mut builder = Client::builder(url)
        .connect_timeout(Duration::from_secs(cli.connect_timeout))
        .timeout(Some(Duration::from_secs(
            smcp_client::auth::DEFAULT_LOOPBACK_TIMEOUT.as_secs() + cli.timeout.max(60),
        )));
    if let Some(v) = &cli.protocol_version {
        builder = builder.protocol_version(v);
    }
    if let Some(ca) = &cli.ca_cert {
        let pem = std::fs::read(ca).with_context(|| format!("reading {}", ca.display()))?;
        builder = builder.ca_cert_pem(&pem);
    }
    let builder = with_auth(cli, builder, Some(authorizer))?;
    let client = builder.build()?;
    let result = login::login(&client, url, &store).await;
    client.close().await;
    result
}

#[tokio::main]
async fn main() -> ExitCode {
    let (args, server_command) = stdio::split_args(std::env::args_os());
    let json = args.iter().any(|a| a == "--json");
    let mut cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) if json && e.use_stderr() => {
            // A usage error under --json is JSON too (exit code 2, as clap's).
            let text = e.render().to_string();
            let message = text
                .lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ")
                .to_owned();
            let failure = errors::Failure {
                kind: "usage",
                exit: errors::Exit::Usage,
                message,
                causes: Vec::new(),
                hints: vec!["smcp --help lists the commands and options".to_owned()],
                code: None,
                status: None,
                data: None,
                task: None,
            };
            return report(&failure, true);
        }
        Err(e) => e.exit(),
    };
    if let Some(command) = server_command {
        cli.server_command = command;
    }
    match &cli.command {
        Command::Completions { shell } => {
            clap_complete::generate(*shell, &mut Cli::command(), "smcp", &mut std::io::stdout());
            return ExitCode::SUCCESS;
        }
        Command::Man => {
            let mut out = std::io::stdout();
            return match clap_mangen::Man::new(Cli::command()).render(&mut out) {
                Ok(()) => ExitCode::SUCCESS,
                // `smcp man | head` closes the pipe early: not a failure.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: cannot write the manual page: {e}");
                    ExitCode::from(errors::Exit::Other as u8)
                }
            };
        }
        _ => {}
    }
    init_logging(&cli.log);
    if let Some(code) = login_or_logout(&mut cli).await {
        return code;
    }
    let mut ctx = errors::Context {
        stdio: cli.stdio,
        url: cli.url.clone(),
        non_interactive: cli.non_interactive,
        terminal: on_terminal(),
        sampling_cmd: cli.sampling_cmd.is_some(),
        ca_cert: cli.ca_cert.is_some(),
        unknown_tool: None,
        suggestions: Vec::new(),
    };
    let cache_file = (!cli.stdio && !cli.no_cache)
        .then(|| {
            let mut keyed = cli.headers.clone();
            if let Some(t) = &cli.token {
                keyed.push(format!("Authorization: Bearer {t}"));
            }
            cache::file(&cli.url, &keyed)
        })
        .flatten();
    let era_hint = cache_file.as_deref().and_then(cache::era);
    let result = match build_client(&cli, era_hint) {
        Ok(client) => {
            if let Some(path) = &cache_file
                && matches!(cli.command, Command::Call { .. } | Command::Tool { .. })
            {
                let restored = cache::load(&client, path);
                tracing::debug!(restored, path = %path.display(), "cache restored");
            }
            let mut result = run(&cli, &client).await;
            let mut keep_cache = true;
            if let (Err(e), Command::Call { name, .. }) = (&result, &cli.command)
                && e.downcast_ref::<smcp_client::Error>()
                    .and_then(smcp_client::Error::jsonrpc_code)
                    == Some(-32602)
            {
                // Invalid params: the saved schema may be stale, so the next call fetches it.
                keep_cache = false;
                if let Some(near) = unknown_tool(&client, name).await {
                    ctx.unknown_tool = Some(name.clone());
                    ctx.suggestions = near;
                }
            }
            if let Some(path) = &cache_file {
                if keep_cache {
                    cache::save(&client, path);
                } else {
                    cache::clear(path);
                }
            }
            // A stdio server gets its stdin closed and time to exit (then SIGTERM, SIGKILL).
            client.close().await;
            if let Err(e) = &result
                && e.downcast_ref::<Usage>().is_none()
                && e.downcast_ref::<smcp_client::Error>()
                    .is_some_and(smcp_client::Error::is_config)
            {
                result = Err(anyhow::Error::new(Usage(e.to_string())));
            }
            result
        }
        Err(e) => match e.downcast_ref::<smcp_client::Error>() {
            Some(c) if c.is_config() => Err(anyhow::Error::new(Usage(c.to_string()))),
            _ => Err(e),
        },
    };
    match result {
        Ok(code) => code,
        Err(e) => report(&errors::classify(&e, &ctx), cli.json),
    }
}
