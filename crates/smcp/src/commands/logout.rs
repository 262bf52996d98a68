//! `smcp logout [URL]`: the stored tokens forgotten.

use crate::cli::Cli;
use crate::login;

/// `smcp logout`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The server (default: --url).
    url: Option<String>,
}

impl Args {
    /// The server: the argument, else `--url`.
    pub(crate) fn server(&self, cli: &Cli) -> String {
        self.url.clone().unwrap_or_else(|| cli.url.clone())
    }
}

/// Runs `smcp logout`; the message to print.
pub(crate) fn run(args: &Args, cli: &Cli) -> anyhow::Result<String> {
    login::logout(&args.server(cli))
}
