//! `smcp login [URL]`: OAuth authorization in the browser, the tokens stored
//! (`crate::login` keeps them).

use std::time::Duration;

use anyhow::Context as _;
use smcp_client::Client;

use crate::errors::Usage;
use crate::globals::Globals;
use crate::login;

/// `smcp login`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The server (default: --url).
    url: Option<String>,
    /// Only print the authorization URL; do not launch a browser.
    #[arg(long)]
    no_browser: bool,
    /// The loopback port of the redirect listener (0 = any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
}

impl Args {
    /// The server: the argument, else `--url`.
    pub(crate) fn server(&self, globals: &Globals) -> String {
        self.url.clone().unwrap_or_else(|| globals.url.clone())
    }
}

/// Runs `smcp login`; the message to print.
pub(crate) async fn run(args: &Args, globals: &Globals) -> anyhow::Result<String> {
    let url = args.server(globals);
    if globals.stdio || globals.token.is_some() {
        anyhow::bail!(Usage(
            "smcp login is for an HTTP server without --token".to_owned()
        ));
    }
    let store = login::store()?;
    smcp_client::auth::TokenStore::clear(&store, &url)?;
    let authorizer =
        smcp_client::auth::LoopbackAuthorizer::bind(args.port)?.open_browser(!args.no_browser);
    let mut builder = Client::builder(&url)
        .connect_timeout(Duration::from_secs(globals.connect_timeout))
        .timeout(Some(Duration::from_secs(
            smcp_client::auth::DEFAULT_LOOPBACK_TIMEOUT.as_secs() + globals.timeout.max(60),
        )));
    if let Some(v) = &globals.protocol_version {
        builder = builder.protocol_version(v);
    }
    if let Some(ca) = &globals.ca_cert {
        let pem = std::fs::read(ca).with_context(|| format!("reading {}", ca.display()))?;
        builder = builder.ca_cert_pem(&pem);
    }
    let builder = login::with_auth(globals, builder, Some(authorizer))?;
    let client = builder.build()?;
    let result = login::login(&client, &url, &store).await;
    client.close().await;
    result
}
