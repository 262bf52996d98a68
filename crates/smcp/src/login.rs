//! OAuth in the CLI: `smcp login [URL]` runs the authorization code flow in the browser
//! (a loopback redirect listener on 127.0.0.1), `smcp logout [URL]` forgets the tokens, and
//! every other command reuses (and refreshes) the stored tokens of its server.
//!
//! Tokens live in one file per server, mode 0600, under `SMCP_TOKEN_DIR`, else
//! `$XDG_CONFIG_HOME/smcp/tokens`, else `$HOME/.config/smcp/tokens` (written atomically by
//! [`FileTokenStore`]). `--token` / `SMCP_TOKEN` sends a bearer you already have instead.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use smcp_client::Client;
use smcp_client::auth::{FileTokenStore, LoopbackAuthorizer, OAuthConfig, TokenStore};

use crate::errors::Usage;
use crate::globals::Globals;

/// The token directory, if one can be named.
pub(crate) fn token_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(d) = var("SMCP_TOKEN_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = var("XDG_CONFIG_HOME") {
        return Some(PathBuf::from(d).join("smcp").join("tokens"));
    }
    var("HOME").map(|h| PathBuf::from(h).join(".config").join("smcp").join("tokens"))
}

/// The store, or an error naming the variables to set.
pub(crate) fn store() -> anyhow::Result<FileTokenStore> {
    token_dir()
        .map(FileTokenStore::new)
        .context("no directory for tokens: set SMCP_TOKEN_DIR or HOME")
}

/// The OAuth settings every command shares: the file store, the pre-registered client if
/// given, and (for `login`) the loopback authorizer.
pub(crate) fn config(
    store: Arc<dyn TokenStore>,
    client_id: Option<&str>,
    client_secret: Option<&str>,
    authorizer: Option<LoopbackAuthorizer>,
) -> OAuthConfig {
    let mut b = OAuthConfig::builder()
        .shared_token_store(store)
        .client_name("smcp");
    if let Some(id) = client_id {
        b = b.client_id(id);
    }
    if let Some(s) = client_secret {
        b = b.client_secret(s);
    }
    if let Some(a) = authorizer {
        b = b.authorizer(a);
    }
    b.build()
}

/// `smcp login`: forgets the old tokens, makes one request so the server's `401` starts the
/// flow, and says where the tokens went.
pub(crate) async fn login(
    client: &Client,
    url: &str,
    store: &FileTokenStore,
) -> anyhow::Result<String> {
    client.list_tools().await?;
    Ok(if store.load(url)?.is_some() {
        format!(
            "Logged in to {url} (tokens in {}).",
            store.path_for(url).display()
        )
    } else {
        format!("{url} did not ask for authorization; nothing stored.")
    })
}

/// `smcp logout`: removes the server's token file.
pub(crate) fn logout(url: &str) -> anyhow::Result<String> {
    let store = store()?;
    let existed = store.load(url).ok().flatten().is_some();
    store.clear(url)?;
    Ok(if existed {
        format!("Logged out of {url}.")
    } else {
        format!("No tokens were stored for {url}.")
    })
}

/// Credentials: `--token`, else an `Authorization` header of the user's, else OAuth with the
/// stored tokens (and the browser step only under `smcp login`). None over stdio.
pub(crate) fn with_auth(
    globals: &Globals,
    builder: smcp_client::ClientBuilder,
    authorizer: Option<LoopbackAuthorizer>,
) -> anyhow::Result<smcp_client::ClientBuilder> {
    if globals.stdio {
        if globals.token.is_some() {
            anyhow::bail!(Usage("--token is for an HTTP server".to_owned()));
        }
        return Ok(builder);
    }
    if let Some(t) = &globals.token {
        return Ok(builder.bearer_token(t));
    }
    let has_header = globals.headers.iter().any(|h| {
        h.split_once(':')
            .is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case("authorization"))
    });
    if has_header {
        return Ok(builder);
    }
    let Ok(store) = store() else {
        return Ok(builder);
    };
    Ok(builder.oauth(config(
        Arc::new(store),
        globals.client_id.as_deref(),
        globals.client_secret.as_deref(),
        authorizer,
    )))
}
