//! Discovery: Protected Resource Metadata (RFC 9728) and authorization server metadata
//! (RFC 8414 / OpenID Connect Discovery), in the order the MCP authorization spec gives.

use serde::Deserialize;

use super::AuthError;
use super::fetch::{Fetched, get_json};

/// The fields of Protected Resource Metadata the flow uses.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ResourceMetadata {
    /// The resource identifier (sent verbatim as the RFC 8707 `resource`).
    pub(crate) resource: String,
    /// Its authorization servers (issuer identifiers).
    #[serde(default)]
    pub(crate) authorization_servers: Vec<String>,
    /// Scopes the resource knows.
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
}

/// The fields of authorization server metadata the flow uses.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ServerMetadata {
    pub(crate) issuer: String,
    #[serde(default)]
    pub(crate) authorization_endpoint: Option<String>,
    pub(crate) token_endpoint: String,
    #[serde(default)]
    pub(crate) registration_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) client_id_metadata_document_supported: Option<bool>,
    #[serde(default)]
    pub(crate) authorization_response_iss_parameter_supported: Option<bool>,
    /// RFC 9449 §5.1: the JWS algorithms the server accepts in DPoP proofs.
    #[serde(default)]
    pub(crate) dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl ServerMetadata {
    /// The token endpoint auth methods, with RFC 8414's default.
    pub(crate) fn auth_methods(&self) -> Vec<String> {
        self.token_endpoint_auth_methods_supported
            .clone()
            .unwrap_or_else(|| vec!["client_secret_basic".to_owned()])
    }

    /// Whether the server accepts DPoP proofs signed with `alg`.
    pub(crate) fn offers_dpop(&self, alg: &str) -> bool {
        self.dpop_signing_alg_values_supported
            .as_ref()
            .is_some_and(|algs| algs.iter().any(|a| a == alg))
    }

    /// Whether the server lists `scope` in `scopes_supported`.
    pub(crate) fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == scope))
    }
}

/// Where to look for Protected Resource Metadata: the challenge's `resource_metadata` first,
/// then the path-inserted well-known URL, then the root one (RFC 9728 §3.1).
pub(crate) fn resource_metadata_urls(
    server: &reqwest::Url,
    from_header: Option<&str>,
) -> Vec<String> {
    let mut urls = Vec::new();
    if let Some(h) = from_header {
        urls.push(h.to_owned());
    }
    let origin = server.origin().ascii_serialization();
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        urls.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    urls.push(format!("{origin}/.well-known/oauth-protected-resource"));
    urls.dedup();
    urls
}

/// Where to look for an issuer's metadata (MCP authorization, "Authorization Server Metadata
/// Discovery"): with a path, RFC 8414 path insertion, OpenID path insertion, OpenID path
/// appending; without, RFC 8414 then OpenID.
pub(crate) fn server_metadata_urls(issuer: &str) -> Result<Vec<String>, AuthError> {
    let url = reqwest::Url::parse(issuer).map_err(|e| AuthError::BadMetadata {
        document: "protected resource metadata",
        field: "authorization_servers",
        problem: format!("holds {issuer:?}, not a URL: {e}"),
    })?;
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    Ok(if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    })
}

/// Whether the PRM `resource` identifies `server`: same scheme, host and port, and its path
/// is the server's path or a parent of it (segment-wise).
pub(crate) fn resource_matches(resource: &str, server: &reqwest::Url) -> bool {
    let Ok(r) = reqwest::Url::parse(resource) else {
        return false;
    };
    if r.origin() != server.origin() || r.fragment().is_some() {
        return false;
    }
    let rp = r.path().trim_end_matches('/');
    let sp = server.path().trim_end_matches('/');
    rp.is_empty() || sp == rp || sp.starts_with(&format!("{rp}/"))
}

/// Fetches the PRM (in order), checks its `resource` against `server`.
pub(crate) async fn resource_metadata(
    http: &reqwest::Client,
    server: &reqwest::Url,
    from_header: Option<&str>,
) -> Result<ResourceMetadata, AuthError> {
    let urls = resource_metadata_urls(server, from_header);
    for url in &urls {
        match get_json::<ResourceMetadata>(http, "protected resource metadata", url).await {
            Ok(Fetched::Found(prm)) => {
                if !resource_matches(&prm.resource, server) {
                    return Err(AuthError::ResourceMismatch {
                        resource: prm.resource,
                        server: server.to_string(),
                    });
                }
                if prm.authorization_servers.is_empty() {
                    return Err(AuthError::BadMetadata {
                        document: "protected resource metadata",
                        field: "authorization_servers",
                        problem: "is missing or empty".to_owned(),
                    });
                }
                tracing::debug!(%url, resource = %prm.resource, "protected resource metadata");
                return Ok(prm);
            }
            Ok(Fetched::NotFound(status)) => {
                tracing::debug!(%url, status, "no protected resource metadata here");
            }
            Err(e) => tracing::debug!(%url, error = %e, "protected resource metadata fetch failed"),
        }
    }
    Err(AuthError::NoResourceMetadata {
        server: server.to_string(),
        tried: urls.join(", "),
    })
}

/// Fetches the issuer's metadata (in order) and checks `issuer` equals it exactly.
pub(crate) async fn server_metadata(
    http: &reqwest::Client,
    issuer: &str,
) -> Result<ServerMetadata, AuthError> {
    let urls = server_metadata_urls(issuer)?;
    for url in &urls {
        match get_json::<ServerMetadata>(http, "authorization server metadata", url).await? {
            Fetched::Found(meta) => {
                if meta.issuer != issuer {
                    return Err(AuthError::IssuerMismatch {
                        expected: issuer.to_owned(),
                        found: meta.issuer,
                        url: url.clone(),
                    });
                }
                return Ok(meta);
            }
            Fetched::NotFound(status) => {
                tracing::debug!(%url, status, "no authorization server metadata here");
            }
        }
    }
    Err(AuthError::NoServerMetadata {
        issuer: issuer.to_owned(),
        tried: urls.join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> reqwest::Url {
        reqwest::Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn prm_urls_header_first_then_path_then_root() {
        assert_eq!(
            resource_metadata_urls(
                &url("https://h:8443/a/mcp"),
                Some("https://h:8443/custom.json")
            ),
            [
                "https://h:8443/custom.json",
                "https://h:8443/.well-known/oauth-protected-resource/a/mcp",
                "https://h:8443/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            resource_metadata_urls(&url("https://h/"), None),
            ["https://h/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn as_urls_follow_the_spec_order() -> Result<(), AuthError> {
        assert_eq!(
            server_metadata_urls("https://auth.example.com/tenant1")?,
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            server_metadata_urls("https://auth.example.com")?,
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
        assert!(server_metadata_urls("not a url").is_err());
        Ok(())
    }

    #[test]
    fn resource_must_be_the_server_or_a_parent() {
        let server = url("http://localhost:3000/mcp");
        assert!(resource_matches("http://localhost:3000/mcp", &server));
        assert!(resource_matches("http://localhost:3000", &server));
        assert!(resource_matches("http://localhost:3000/", &server));
        assert!(!resource_matches("https://evil.example.com/mcp", &server));
        assert!(!resource_matches("http://localhost:3001/mcp", &server));
        assert!(!resource_matches("http://localhost:3000/mcp2", &server));
        assert!(!resource_matches("http://localhost:3000/other", &server));
    }
}
