//! Client identity with an authorization server, in the spec's order of preference:
//! pre-registered client → Client ID Metadata Document → Dynamic Client Registration (RFC 7591).

use serde::Deserialize;
use serde_json::json;

use super::discovery::ServerMetadata;
use super::fetch::read_body;
use super::grant::{Grant, JWT_BEARER};
use super::store::ClientRegistration;
use super::{AuthError, OAuthConfig, Secret};

/// Picks the token endpoint auth method for a client with (or without) a secret or an
/// assertion key: `private_key_jwt` when offered, then the secret methods, then `none`, and
/// `private_key_jwt` again when the key is all the client has and `none` is not offered.
pub(crate) fn choose_auth_method(meta: &ServerMetadata, has_secret: bool, has_key: bool) -> String {
    let supported = meta.auth_methods();
    let has = |m: &str| supported.iter().any(|s| s == m);
    if has_key && (has("private_key_jwt") || (!has_secret && !has("none"))) {
        return "private_key_jwt".to_owned();
    }
    if !has_secret {
        return "none".to_owned();
    }
    if has("client_secret_basic") {
        "client_secret_basic".to_owned()
    } else if has("client_secret_post") {
        "client_secret_post".to_owned()
    } else if has("none") {
        "none".to_owned()
    } else {
        "client_secret_basic".to_owned()
    }
}

/// `application_type` for DCR: `native` for a loopback or custom-scheme redirect
/// (RFC 8252), `web` otherwise.
fn application_type(redirect_uri: Option<&str>) -> &'static str {
    let Some(u) = redirect_uri.and_then(|r| reqwest::Url::parse(r).ok()) else {
        return "native";
    };
    let loopback = matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    if loopback || !matches!(u.scheme(), "http" | "https") {
        "native"
    } else {
        "web"
    }
}

/// The method to ask for in a DCR request: `none` when offered (a public native client),
/// else basic, else post.
fn dcr_auth_method(meta: &ServerMetadata) -> &'static str {
    let supported = meta.auth_methods();
    let has = |m: &str| supported.iter().any(|s| s == m);
    if has("none") {
        "none"
    } else if has("client_secret_basic") {
        "client_secret_basic"
    } else if has("client_secret_post") {
        "client_secret_post"
    } else {
        "none"
    }
}

#[derive(Deserialize)]
struct DcrResponse {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// How this client identifies itself to `meta.issuer`.
pub(crate) async fn register(
    http: &reqwest::Client,
    config: &OAuthConfig,
    meta: &ServerMetadata,
    redirect_uri: Option<&str>,
    scope: Option<&str>,
) -> Result<ClientRegistration, AuthError> {
    if let Some(id) = &config.client_id
        && config
            .client_issuer
            .as_deref()
            .is_none_or(|i| i == meta.issuer)
    {
        let auth_method = choose_auth_method(
            meta,
            config.client_secret.is_some(),
            config.assertion_signer.is_some(),
        );
        return Ok(ClientRegistration {
            client_id: id.clone(),
            client_secret: config.client_secret.clone(),
            auth_method,
        });
    }
    if let Some(url) = &config.client_metadata_url
        && meta.client_id_metadata_document_supported == Some(true)
    {
        return Ok(ClientRegistration {
            client_id: url.clone(),
            client_secret: None,
            auth_method: "none".to_owned(),
        });
    }
    let Some(endpoint) = &meta.registration_endpoint else {
        return Err(AuthError::NoRegistration {
            issuer: meta.issuer.clone(),
        });
    };
    let method = dcr_auth_method(meta);
    let grant_types = match &config.grant {
        Grant::AuthorizationCode => vec!["authorization_code", "refresh_token"],
        Grant::ClientCredentials => vec!["client_credentials"],
        Grant::WorkloadIdentity(_) | Grant::Enterprise(_) => vec![JWT_BEARER],
    };
    let interactive = config.grant.is_interactive();
    let mut body = json!({
        "client_name": config.client_name,
        "grant_types": grant_types,
        "response_types": if interactive { vec!["code"] } else { vec![] },
        "token_endpoint_auth_method": method,
        "application_type": application_type(redirect_uri),
    });
    if let Some(r) = redirect_uri {
        body["redirect_uris"] = json!([r]);
    }
    if let Some(s) = scope {
        body["scope"] = json!(s);
    }
    let fail = |detail: String| AuthError::Fetch {
        what: "registration endpoint",
        url: endpoint.clone(),
        detail,
    };
    let response = http
        .post(endpoint)
        .json(&body)
        .send()
        .await
        .map_err(|e| fail(e.to_string()))?;
    let status = response.status().as_u16();
    let bytes = read_body(response).await.map_err(fail)?;
    if !(200..300).contains(&status) {
        return Err(fail(format!("HTTP {status}")));
    }
    let r: DcrResponse = serde_json::from_slice(&bytes)
        .map_err(|e| fail(format!("not a client registration response: {e}")))?;
    let auth_method = match r.token_endpoint_auth_method {
        Some(m) => m,
        None if r.client_secret.is_some() && method == "none" => {
            choose_auth_method(meta, true, false)
        }
        None => method.to_owned(),
    };
    tracing::info!(issuer = %meta.issuer, %auth_method, "registered (dynamic client registration)");
    Ok(ClientRegistration {
        client_id: r.client_id,
        client_secret: r.client_secret.map(Secret::new),
        auth_method,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(methods: &[&str]) -> ServerMetadata {
        serde_json::from_value(serde_json::json!({
            "issuer": "http://as", "token_endpoint": "http://as/token",
            "token_endpoint_auth_methods_supported": methods,
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn auth_method_follows_what_the_server_offers() {
        assert_eq!(
            choose_auth_method(&meta(&["client_secret_post"]), true, false),
            "client_secret_post"
        );
        assert_eq!(
            choose_auth_method(
                &meta(&["client_secret_post", "client_secret_basic"]),
                true,
                false
            ),
            "client_secret_basic"
        );
        assert_eq!(choose_auth_method(&meta(&["none"]), true, false), "none");
        assert_eq!(
            choose_auth_method(&meta(&["client_secret_basic"]), false, false),
            "none"
        );
        // A key: private_key_jwt when offered, or when there is no secret to fall back on.
        assert_eq!(
            choose_auth_method(
                &meta(&["client_secret_basic", "private_key_jwt"]),
                true,
                true
            ),
            "private_key_jwt"
        );
        assert_eq!(
            choose_auth_method(&meta(&["client_secret_basic"]), true, true),
            "client_secret_basic"
        );
        assert_eq!(choose_auth_method(&meta(&["none"]), false, true), "none");
        assert_eq!(
            choose_auth_method(&meta(&["client_secret_basic"]), false, true),
            "private_key_jwt"
        );
        assert_eq!(
            dcr_auth_method(&meta(&["none", "client_secret_basic"])),
            "none"
        );
        assert_eq!(
            dcr_auth_method(&meta(&["client_secret_post"])),
            "client_secret_post"
        );
    }

    #[test]
    fn application_type_is_native_for_loopback() {
        assert_eq!(
            application_type(Some("http://127.0.0.1:1/callback")),
            "native"
        );
        assert_eq!(
            application_type(Some("http://localhost:3000/callback")),
            "native"
        );
        assert_eq!(application_type(Some("https://app.example.com/cb")), "web");
    }
}
