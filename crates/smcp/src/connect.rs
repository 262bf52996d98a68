//! The connection every server command shares: the client built from the global options
//! (transport, timeouts, headers, TLS, credentials, file transfer, the terminal's answers),
//! the tool-list cache around the command, and the failure's context for the report.

use std::io::IsTerminal as _;
use std::time::Duration;

use anyhow::Context as _;
use smcp_client::Client;

use crate::commands::ctx::Ctx;
use crate::commands::{self, Command};
use crate::errors::{self, Usage};
use crate::globals::Globals;
use crate::{cache, interact, login, stdio};

/// stdin and stderr are a terminal: prompts can be shown and answered.
pub(crate) fn on_terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// What the failure report of a command run with `globals` needs to know about it.
pub(crate) fn error_context(globals: &Globals) -> errors::Context {
    errors::Context {
        stdio: globals.stdio,
        url: globals.url.clone(),
        non_interactive: globals.non_interactive,
        terminal: on_terminal(),
        sampling_cmd: globals.sampling_cmd.is_some(),
        ca_cert: globals.ca_cert.is_some(),
        unknown_tool: None,
        suggestions: Vec::new(),
    }
}

/// Connects, runs `command` against the server with the `globals` options and closes the
/// connection, keeping the tool-list cache. The result, and the context its failure is
/// reported in.
pub(crate) async fn run(
    globals: &Globals,
    command: &Command,
) -> (anyhow::Result<()>, errors::Context) {
    let mut ctx = error_context(globals);
    let cache_file = (!globals.stdio && !globals.no_cache)
        .then(|| {
            let mut keyed = globals.headers.clone();
            if let Some(t) = &globals.token {
                keyed.push(format!("Authorization: Bearer {t}"));
            }
            cache::file(&globals.url, &keyed)
        })
        .flatten();
    let era_hint = cache_file.as_deref().and_then(cache::era);
    let result = match build_client(globals, era_hint) {
        Ok(client) => {
            if let Some(path) = &cache_file
                && matches!(command, Command::Call(_) | Command::Tool(_))
            {
                let restored = cache::load(&client, path);
                tracing::debug!(restored, path = %path.display(), "cache restored");
            }
            let command_ctx = Ctx {
                client: &client,
                json: globals.json,
                save: globals.save.as_deref(),
            };
            let mut result = command.run(command_ctx).await;
            let mut keep_cache = true;
            if let (Err(e), Command::Call(call)) = (&result, &command)
                && e.downcast_ref::<smcp_client::Error>()
                    .and_then(smcp_client::Error::jsonrpc_code)
                    == Some(-32602)
            {
                // Invalid params: the saved schema may be stale, so the next call fetches it.
                keep_cache = false;
                if let Some(near) = commands::call::unknown_tool(&client, &call.name).await {
                    ctx.unknown_tool = Some(call.name.clone());
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
    (result, ctx)
}

/// The client of the `globals` options (`era_hint`: the revision the cache remembers), with
/// the terminal's answers to the server's questions.
fn build_client(globals: &Globals, era_hint: Option<smcp_client::Era>) -> anyhow::Result<Client> {
    let mut builder = client_builder(globals, era_hint)?;
    let terminal = !globals.non_interactive && on_terminal();
    if terminal || globals.sampling_cmd.is_some() {
        builder = builder.input_handler(interact::Terminal {
            terminal,
            sampling_cmd: globals.sampling_cmd.clone(),
            sampling_timeout: Duration::from_secs(if globals.timeout > 0 {
                globals.timeout
            } else {
                600
            }),
        });
    }
    Ok(builder.build()?)
}

/// The client builder of the `globals` options: transport, timeouts, headers, TLS,
/// credentials and file transfer; no answers to the server's questions yet.
pub(crate) fn client_builder(
    globals: &Globals,
    era_hint: Option<smcp_client::Era>,
) -> anyhow::Result<smcp_client::ClientBuilder> {
    let timeout = (globals.timeout > 0).then(|| Duration::from_secs(globals.timeout));
    let builder = if globals.stdio {
        Client::stdio(stdio::command(
            &globals.server_command,
            &globals.envs,
            globals.quiet_server,
        )?)
    } else {
        if !globals.envs.is_empty() {
            anyhow::bail!("--env is for a stdio server (--stdio)");
        }
        Client::builder(&globals.url)
    };
    let mut builder = builder
        .timeout(timeout)
        .connect_timeout(Duration::from_secs(globals.connect_timeout))
        .http_version(globals.http_version)
        .retry(smcp_client::RetryPolicy::retries(globals.retries))
        .tasks(!globals.no_tasks)
        .client_info(smcp_client::proto::basic::Implementation::new(
            "smcp",
            env!("CARGO_PKG_VERSION"),
        ));
    if !globals.stdio && !globals.no_cache {
        builder = builder.cache(smcp_client::Cache::new());
    }
    if let Some(v) = &globals.protocol_version {
        builder = builder.protocol_version(v);
    }
    if let Some(era) = era_hint {
        builder = builder.era_hint(era);
    }
    for h in &globals.headers {
        let (name, value) = h.split_once(':').ok_or_else(|| {
            anyhow::Error::new(Usage(format!("--header expects `Name: value`, got {h:?}")))
        })?;
        builder = builder.header(name.trim(), value.trim());
    }
    if let Some(ca) = &globals.ca_cert {
        let pem = std::fs::read(ca).with_context(|| format!("reading {}", ca.display()))?;
        builder = builder.ca_cert_pem(&pem);
    }
    builder = login::with_auth(globals, builder, None)?;
    builder = builder.files(smcp_client::FileTransfer {
        inline_threshold: globals.inline_threshold,
        allow_insecure_loopback: globals.insecure_loopback_files,
        ..smcp_client::FileTransfer::default()
    });
    Ok(builder)
}
