//! The stdio mode: MCP on standard input and output. The SEP-2631 data plane, when file
//! transfer is on, is served over HTTP on `--listen` beside it.

use super::cli::Cli;
use super::{App, Base, drained};

/// Serves on stdio until the input ends, Ctrl-C or SIGTERM, and the drain.
pub(crate) async fn serve(cli: &Cli, base: Base) -> anyhow::Result<()> {
    let (files, data_plane) = cli.files.beside_stdio(base.tls(), cli.serve.listen).await?;
    // --metrics-listen counts the requests read from stdin as it counts HTTP ones.
    let app = App::build(cli, base.demo, &files).await?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let data_plane = files.serve(data_plane, base.options, stopped);
    tracing::info!("smcpd serving MCP on stdio");
    let options = smcp_server::StdioOptions::default()
        .drain_timeout(cli.serve.deadlines.drain_timeout)
        .blocking_io(cli.serve.stdio_blocking_io);
    let outcome =
        smcp_server::serve_stdio(&app.server, smcp_server::shutdown_signal(), options).await?;
    app.stop().await?;
    let _ = stop.send(());
    if let Some(task) = data_plane {
        task.await??;
    }
    drained(outcome)
}
