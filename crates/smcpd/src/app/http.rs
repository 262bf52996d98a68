//! The HTTP mode: the MCP endpoint on `--listen` (HTTPS with TLS), the SEP-2631 data plane
//! on its other paths, the OAuth layer in front with `--auth-issuer`.

use anyhow::Context as _;

use super::cli::Cli;
use super::{App, Base, drained};

/// Serves over HTTP until Ctrl-C or SIGTERM and the drain.
pub(crate) async fn serve(cli: &Cli, base: Base) -> anyhow::Result<()> {
    let listen = cli.serve.listen;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let addr = listener.local_addr()?;
    let tls = base.tls();
    let scheme = if tls { "https" } else { "http" };
    smcpd::warn_if_exposed(addr, cli.auth.enabled());
    let files = cli
        .files
        .over_http(tls, &format!("{scheme}://{addr}"))
        .await?;
    let app = App::build(cli, base.demo, &files).await?;
    // With an operations listener, readiness turns 503 as soon as the drain starts.
    let draining = app.has_ops().then(|| app.server.clone());
    // Listening for SIGTERM before the ready line: a supervisor that stops smcpd as soon as it
    // says it listens gets a graceful drain, not the default action.
    let signal = smcp_server::shutdown_signal();
    let shutdown = async move {
        signal.await;
        if let Some(server) = draining {
            server.shutdown();
        }
    };
    let url = format!("{scheme}://{addr}/mcp");
    let guard = cli
        .auth
        .guard(&url, app.shared.replay_guard(), &app.scopes, app.keep_token)
        .await?;
    #[allow(clippy::print_stdout)]
    {
        println!("listening on {url}");
    }
    // The ready line: where it listens and what to run next.
    let ca = cli.tls.ca_hint(tls);
    tracing::info!("smcpd ready on {url}; try: smcp --url {url}{ca} tools");
    files.say_if_off();
    let endpoint = app
        .server
        .endpoint("/mcp")
        .readiness(&cli.observe.readyz_path)
        .liveness(&cli.observe.livez_path);
    // The SEP-2631 data plane (uploads and downloads) on the other paths.
    let endpoint = files.beside(endpoint);
    let outcome = guard
        .serve(listener, endpoint, base.options, shutdown)
        .await?;
    app.stop().await?;
    drained(outcome)
}
