//! `smcp logout [URL]`: the stored tokens forgotten.

use crate::globals::Globals;
use crate::login;

/// `smcp logout`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The server (default: --url).
    url: Option<String>,
}

impl Args {
    /// The server: the argument, else `--url`.
    pub(crate) fn server(&self, globals: &Globals) -> String {
        self.url.clone().unwrap_or_else(|| globals.url.clone())
    }
}

/// Runs `smcp logout`; the message to print.
pub(crate) fn run(args: &Args, globals: &Globals) -> anyhow::Result<String> {
    login::logout(&args.server(globals))
}
