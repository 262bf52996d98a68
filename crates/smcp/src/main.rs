//! `smcp`: call MCP 2026-07-28 servers from the command line, over Streamable HTTP (`--url`)
//! or stdio (`--stdio … -- PROGRAM ARGS…`, the server launched as a child process).
//!
//! Human-readable output by default, `--json` for scripts. Errors print the HTTP status, the
//! JSON-RPC code and message, and exit non-zero.
// A command-line tool prints by design.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod interact;
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
use clap::{Parser, Subcommand};
use futures_util::{FutureExt as _, StreamExt as _};
use serde_json::Value;
use smcp_client::proto::patterns::subscriptions::SubscriptionFilter;
use smcp_client::proto::server::tools::Tool;
use smcp_client::{Client, SubscriptionEvent};

/// Where `smcpd` listens by default.
const DEFAULT_URL: &str = "http://127.0.0.1:8931/mcp";

#[derive(Debug, Parser)]
#[command(
    version,
    about = "Call MCP (2026-07-28) servers over Streamable HTTP or stdio",
    override_usage = "smcp [OPTIONS] <COMMAND>\n       smcp --stdio [OPTIONS] <COMMAND> -- <PROGRAM> [ARGS]...",
    after_help = "Examples:\n  \
        smcp --url http://127.0.0.1:8931/mcp tools\n  \
        smcp --stdio tools -- smcpd --stdio\n  \
        smcp --stdio --env LOG=debug call echo --arg text=hi -- python3 server.py --stdio"
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
    /// Log filter for diagnostics on stderr (e.g. `debug`).
    #[arg(long, env = "SMCP_LOG", default_value = "warn", global = true)]
    log: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show the server's versions, capabilities and instructions.
    Discover,
    /// List the tools.
    Tools,
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
    /// Inspect or cancel a task (SEP-2663) by its id.
    Task {
        #[command(subcommand)]
        action: TaskAction,
    },
    /// Listen for change notifications until interrupted or the server ends the stream.
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

fn build_client(cli: &Cli) -> anyhow::Result<Client> {
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
    let mut builder = builder.timeout(timeout).tasks(!cli.no_tasks).client_info(
        smcp_client::proto::basic::Implementation::new("smcp", env!("CARGO_PKG_VERSION")),
    );
    for h in &cli.headers {
        let (name, value) = h
            .split_once(':')
            .with_context(|| format!("--header expects `Name: value`, got {h:?}"))?;
        builder = builder.header(name.trim(), value.trim());
    }
    if let Some(ca) = &cli.ca_cert {
        let pem = std::fs::read(ca).with_context(|| format!("reading {}", ca.display()))?;
        builder = builder.ca_cert_pem(&pem);
    }
    builder = builder.files(smcp_client::FileTransfer {
        inline_threshold: cli.inline_threshold,
        allow_insecure_loopback: cli.insecure_loopback_files,
        ..smcp_client::FileTransfer::default()
    });
    let interactive =
        !cli.non_interactive && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if interactive {
        builder = builder.input_handler(interact::Terminal);
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
            let d = client.discover().await?;
            if cli.json {
                return print_json(&d).map(|()| ExitCode::SUCCESS);
            }
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
                    let params = t
                        .input_schema
                        .get("properties")
                        .and_then(Value::as_object)
                        .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
                        .unwrap_or_default();
                    vec![
                        t.name.clone(),
                        params,
                        t.description.clone().unwrap_or_default(),
                    ]
                })
                .collect();
            render::table(&["NAME", "ARGUMENTS", "DESCRIPTION"], &rows);
        }
        Command::Call {
            name,
            args,
            json_args,
            files,
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
            let result = client
                .tool_call(name)
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
                eprintln!("error: the tool reported a failure (isError: true)");
                return Ok(ExitCode::FAILURE);
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
            let filter = SubscriptionFilter {
                tools_list_changed: tools.then_some(true),
                prompts_list_changed: prompts.then_some(true),
                resources_list_changed: resources.then_some(true),
                resource_subscriptions: (!resource.is_empty()).then(|| resource.clone()),
                task_ids: (!task.is_empty()).then(|| task.clone()),
            };
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

/// Prints an error with everything a person needs: HTTP status, JSON-RPC code, message, data.
fn report(err: &anyhow::Error, stdio: bool) {
    eprintln!("error: {err}");
    if let Some(e) = err.downcast_ref::<smcp_client::Error>() {
        if let Some(data) = e.jsonrpc_error().and_then(|o| o.data.as_ref()) {
            eprintln!("  data: {data}");
        }
        if let Some(id) = e.task_id() {
            if e.is_cancelled() {
                eprintln!("  task {id} was cancelled (tasks/cancel sent)");
            } else {
                eprintln!("  task: {id} (`smcp task get {id}` shows it)");
            }
        }
        let needs_tasks = e
            .jsonrpc_error()
            .and_then(|o| o.data.as_ref())
            .and_then(|d| d.pointer("/requiredCapabilities/extensions"))
            .and_then(|x| x.get("io.modelcontextprotocol/tasks"))
            .is_some();
        if e.jsonrpc_code() == Some(-32021) && needs_tasks {
            eprintln!("  hint: the server runs this only as a task; drop --no-tasks");
        } else if e.jsonrpc_code() == Some(-32021) {
            eprintln!(
                "  hint: the server needs input from you (e.g. elicitation); run smcp on a terminal \
                 without --non-interactive"
            );
        }
        if e.is_connect() && !stdio {
            eprintln!("  hint: is the server running? (smcpd listens on {DEFAULT_URL} by default)");
        }
        if e.is_server_exited() {
            eprintln!("  hint: the server's stderr (shown unless --quiet-server) may say why");
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let (args, server_command) = stdio::split_args(std::env::args_os());
    let mut cli = Cli::parse_from(args);
    if let Some(command) = server_command {
        cli.server_command = command;
    }
    let filter = tracing_subscriber::EnvFilter::try_new(&cli.log)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let result = match build_client(&cli) {
        Ok(client) => {
            let result = run(&cli, &client).await;
            // A stdio server gets its stdin closed and time to exit (then SIGTERM, SIGKILL).
            client.close().await;
            result
        }
        Err(e) => Err(e),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            report(&e, cli.stdio);
            let cancelled = e
                .downcast_ref::<smcp_client::Error>()
                .is_some_and(smcp_client::Error::is_cancelled);
            if cancelled {
                // Interrupted (Ctrl-C): exit now, even if a prompt is still waiting on stdin.
                std::process::exit(130);
            }
            ExitCode::FAILURE
        }
    }
}
