//! What every server command runs with ([`Ctx`]) and prints with ([`print_json`]). A leaf:
//! the commands import it, not their parent module, which names them.

use std::path::Path;

use smcp_client::Client;

/// What a command runs with: the connected client and the output options.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx<'a> {
    /// The server.
    pub(crate) client: &'a Client,
    /// `--json`: machine-readable output.
    pub(crate) json: bool,
    /// `--save DIR`: where images, audio and blobs go.
    pub(crate) save: Option<&'a Path>,
}

/// Prints `value` as pretty JSON (`--json`).
pub(crate) fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}
