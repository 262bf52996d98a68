//! Authorization server metadata discovery (RFC 8414 §3, OpenID Connect Discovery 1.0):
//! where the JWKS and the introspection endpoint are.

use serde::Deserialize;

use super::fetch::{self, FetchLimits};
use super::verifier::TokenError;

/// The members of the authorization server's metadata a resource server reads.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ServerMetadata {
    pub(crate) issuer: String,
    #[serde(default)]
    pub(crate) jwks_uri: Option<String>,
}

/// The metadata URLs to try for `issuer`, in order: RFC 8414 with path insertion, OpenID
/// Connect with path insertion, OpenID Connect with the path appended (the spec's order,
/// `authorization-server-discovery.mdx`). Without a path, the two root forms.
pub(crate) fn metadata_urls(issuer: &reqwest::Url) -> Vec<reqwest::Url> {
    let path = issuer.path().trim_end_matches('/');
    let mut urls = Vec::new();
    let mut at = |p: String| {
        let mut url = issuer.clone();
        url.set_path(&p);
        url.set_query(None);
        url.set_fragment(None);
        if !urls.contains(&url) {
            urls.push(url);
        }
    };
    at(format!("/.well-known/oauth-authorization-server{path}"));
    at(format!("/.well-known/openid-configuration{path}"));
    if !path.is_empty() {
        at(format!("{path}/.well-known/openid-configuration"));
    }
    urls
}

/// The metadata of `issuer`: the first document found, whose `issuer` must be `issuer`
/// (RFC 8414 §3.3).
pub(crate) async fn metadata(
    client: &reqwest::Client,
    issuer: &str,
    limits: FetchLimits,
) -> Result<ServerMetadata, TokenError> {
    let base = fetch::check_url(issuer).map_err(TokenError::Unavailable)?;
    for url in metadata_urls(&base) {
        let found: Option<ServerMetadata> =
            fetch::json(client.get(url), "the authorization server metadata", limits).await?;
        if let Some(found) = found {
            if found.issuer.trim_end_matches('/') != issuer.trim_end_matches('/') {
                return Err(TokenError::Unavailable(format!(
                    "the authorization server metadata names issuer {:?}, not {issuer:?}",
                    found.issuer
                )));
            }
            return Ok(found);
        }
    }
    Err(TokenError::Unavailable(format!(
        "no authorization server metadata found for {issuer:?}"
    )))
}

/// The `jwks_uri` of `issuer`'s metadata.
pub(crate) async fn jwks_uri(
    client: &reqwest::Client,
    issuer: &str,
    limits: FetchLimits,
) -> Result<reqwest::Url, TokenError> {
    let found = metadata(client, issuer, limits).await?;
    let uri = found.jwks_uri.ok_or_else(|| {
        TokenError::Unavailable("the authorization server metadata has no jwks_uri".to_owned())
    })?;
    fetch::check_url(&uri).map_err(|e| TokenError::Unavailable(format!("jwks_uri {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(issuer: &str) -> Vec<String> {
        metadata_urls(&reqwest::Url::parse(issuer).unwrap_or_else(|e| panic!("{e}")))
            .into_iter()
            .map(String::from)
            .collect()
    }

    #[test]
    fn path_insertion_then_appending() {
        assert_eq!(
            urls("https://as.example/tenant1"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            urls("https://as.example"),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration",
            ]
        );
    }
}
