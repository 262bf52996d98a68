//! The connection every server command shares: the client built from the global options
//! (transport, timeouts, headers, TLS, credentials, file transfer, the terminal's answers),
//! the tool-list cache around the command, and the failure's context for the report.

use std::io::IsTerminal as _;
use std::time::Duration;

use anyhow::Context as _;
use smcp_client::Client;

use crate::cli::Cli;
use crate::commands::{self, Command, Ctx};
use crate::errors::{self, Usage};
use crate::{cache, interact, login, stdio};

/// stdin and stderr are a terminal: prompts can be shown and answered.
pub(crate) fn on_terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// What the failure report of `cli`'s command needs to know about it.
pub(crate) fn error_context(cli: &Cli) -> errors::Context {
    errors::Context {
        stdio: cli.stdio,
        url: cli.url.clone(),
        non_interactive: cli.non_interactive,
        terminal: on_terminal(),
        sampling_cmd: cli.sampling_cmd.is_some(),
        ca_cert: cli.ca_cert.is_some(),
        unknown_tool: None,
        suggestions: Vec::new(),
    }
}

/// Connects, runs `cli`'s command against the server and closes the connection, keeping
/// the tool-list cache. The result, and the context its failure is reported in.
pub(crate) async fn run(cli: &Cli) -> (anyhow::Result<()>, errors::Context) {
    let mut ctx = error_context(cli);
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
    let result = match build_client(cli, era_hint) {
        Ok(client) => {
            if let Some(path) = &cache_file
                && matches!(cli.command, Command::Call(_) | Command::Tool(_))
            {
                let restored = cache::load(&client, path);
                tracing::debug!(restored, path = %path.display(), "cache restored");
            }
            let command = Ctx {
                client: &client,
                json: cli.json,
                save: cli.save.as_deref(),
            };
            let mut result = cli.command.run(command).await;
            let mut keep_cache = true;
            if let (Err(e), Command::Call(call)) = (&result, &cli.command)
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

/// Credentials: `--token`, else an `Authorization` header of the user's, else OAuth with the
/// stored tokens (and the browser step only under `smcp login`). None over stdio.
pub(crate) fn with_auth(
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

/// The client of `cli`'s global options (`era_hint`: the revision the cache remembers).
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
