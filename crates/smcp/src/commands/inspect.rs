//! `smcp inspect`'s flags; the inspector itself is `crate::inspect`.

use std::net::SocketAddr;

/// `smcp inspect`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Where the page is served: a loopback address (port 0: any free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub(crate) listen: SocketAddr,
    /// Only print the page's URL; do not open a browser.
    #[arg(long)]
    pub(crate) no_open: bool,
}
