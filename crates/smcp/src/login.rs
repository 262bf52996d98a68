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
use smcp_client::auth::{
    AssertionEnv, AssertionFile, DpopMode, EnterpriseIdp, FileTokenStore, KeySigner,
    LoopbackAuthorizer, OAuthConfig, TokenStore,
};

use crate::auth_flags::{AuthFlags, Dpop};
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

/// The OAuth settings every command shares: the file store, the pre-registered client and its
/// assertion key, DPoP, the grant (a browser-free one from the flags, else the authorization
/// code flow with `authorizer`, which only `login` passes).
pub(crate) fn config(
    store: Arc<dyn TokenStore>,
    flags: &AuthFlags,
    authorizer: Option<LoopbackAuthorizer>,
) -> anyhow::Result<OAuthConfig> {
    let mut b = OAuthConfig::builder()
        .shared_token_store(store)
        .client_name("smcp")
        .dpop(match flags.dpop {
            Dpop::Auto => DpopMode::Auto,
            Dpop::Always => DpopMode::Always,
            Dpop::Off => DpopMode::Off,
        });
    if let Some(id) = &flags.client_id {
        b = b.client_id(id);
    }
    if let Some(s) = &flags.client_secret {
        b = b.client_secret(s);
    }
    if let Some(path) = &flags.client_assertion_key {
        let pem = std::fs::read(path)
            .with_context(|| format!("reading --client-assertion-key {}", path.display()))?;
        let key = KeySigner::from_pem(&pem)
            .with_context(|| format!("--client-assertion-key {}", path.display()))?;
        b = b.client_assertion_signer(key);
    }
    if let Some(a) = authorizer {
        b = b.authorizer(a);
    }
    let workload = match (&flags.workload_token_file, &flags.workload_token_env) {
        (Some(f), _) => Some(b.clone().workload_identity(AssertionFile::new(f))),
        (None, Some(v)) => Some(b.clone().workload_identity(AssertionEnv::new(v))),
        (None, None) => None,
    };
    let enterprise = enterprise_idp(flags)?;
    let grants = usize::from(flags.client_credentials)
        + usize::from(workload.is_some())
        + usize::from(enterprise.is_some());
    if grants > 1 {
        anyhow::bail!(Usage(
            "choose one of --client-credentials, --workload-token-file/-env, --idp-token-file/-env"
                .to_owned()
        ));
    }
    if let Some(w) = workload {
        b = w;
    }
    if flags.client_credentials {
        b = b.client_credentials(true);
    }
    if let Some(idp) = enterprise {
        b = b.enterprise_idp(idp);
    }
    Ok(b.build())
}

/// The enterprise identity provider of `--idp-*`, if any.
fn enterprise_idp(flags: &AuthFlags) -> anyhow::Result<Option<EnterpriseIdp>> {
    let token = (&flags.idp_token_file, &flags.idp_token_env);
    let Some(endpoint) = &flags.idp_token_endpoint else {
        if token != (&None, &None) {
            anyhow::bail!(Usage(
                "--idp-token-file/--idp-token-env need --idp-token-endpoint".to_owned()
            ));
        }
        return Ok(None);
    };
    let client_id = flags
        .idp_client_id
        .clone()
        .ok_or_else(|| Usage("--idp-token-endpoint needs --idp-client-id".to_owned()))?;
    let idp = match token {
        (Some(f), _) => EnterpriseIdp::new(endpoint, client_id, AssertionFile::new(f)),
        (None, Some(v)) => EnterpriseIdp::new(endpoint, client_id, AssertionEnv::new(v)),
        (None, None) => anyhow::bail!(Usage(
            "--idp-token-endpoint needs --idp-token-file or --idp-token-env".to_owned()
        )),
    };
    Ok(Some(match &flags.idp_client_secret {
        Some(s) => idp.client_secret(s),
        None => idp,
    }))
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
    Ok(builder.oauth(config(Arc::new(store), &globals.auth, authorizer)?))
}
