//! The authorization code flow (with PKCE, `state`, `resource`, RFC 9207 `iss` checks), the
//! refresh grant, the client credentials grant and the JWT bearer grants (workload identity;
//! enterprise-managed authorization's ID-JAG), for one discovered authorization server.

use std::collections::BTreeSet;

use super::authorizer::AuthorizationResponse;
use super::discovery::{ResourceMetadata, ServerMetadata};
use super::dpop::Dpop;
use super::grant::{EnterpriseIdp, Grant, ID_JAG_TYPE, ID_TOKEN_TYPE, JWT_BEARER, TOKEN_EXCHANGE};
use super::pkce::{Pkce, random_token};
use super::registration::register;
use super::store::{ClientRegistration, StoredTokens};
use super::token::Endpoint;
use super::{AuthError, OAuthConfig, Secret};

/// The token endpoint of `meta`, with the session's DPoP and assertion keys.
pub(crate) fn endpoint<'a>(
    http: &'a reqwest::Client,
    config: &'a OAuthConfig,
    meta: &'a ServerMetadata,
    dpop: Option<&'a Dpop>,
) -> Endpoint<'a> {
    Endpoint {
        http,
        url: &meta.token_endpoint,
        issuer: &meta.issuer,
        dpop,
        assertion_signer: config.assertion_signer.as_deref(),
    }
}

/// Enterprise-managed authorization, step one: the user's ID token exchanged at the identity
/// provider for an ID-JAG naming the MCP server's authorization server and resource.
async fn id_jag(
    http: &reqwest::Client,
    idp: &EnterpriseIdp,
    audience: &str,
    resource: &str,
    scope: Option<&str>,
) -> Result<Secret, AuthError> {
    let id_token = idp.id_token.assertion().await?;
    let mut params = vec![
        ("grant_type", TOKEN_EXCHANGE.to_owned()),
        ("requested_token_type", ID_JAG_TYPE.to_owned()),
        ("audience", audience.to_owned()),
        ("resource", resource.to_owned()),
        ("subject_token", id_token.expose().to_owned()),
        ("subject_token_type", ID_TOKEN_TYPE.to_owned()),
    ];
    if let Some(s) = scope {
        params.push(("scope", s.to_owned()));
    }
    let client = ClientRegistration {
        client_id: idp.client_id.clone(),
        client_secret: idp.client_secret.clone(),
        auth_method: if idp.client_secret.is_some() {
            "client_secret_basic"
        } else {
            "none"
        }
        .to_owned(),
    };
    let endpoint = Endpoint {
        http,
        url: &idp.token_endpoint,
        issuer: &idp.token_endpoint,
        dpop: None,
        assertion_signer: None,
    };
    let issued = endpoint.post(Some(&client), &params).await?;
    match issued.issued_token_type.as_deref() {
        Some(ID_JAG_TYPE) => Ok(Secret::new(issued.access_token)),
        other => Err(AuthError::BadMetadata {
            document: "identity provider's token exchange response",
            field: "issued_token_type",
            problem: format!("is {other:?}, not {ID_JAG_TYPE}"),
        }),
    }
}

/// The scope string to request: the set (space-joined) plus `offline_access` when the server
/// lists it and the client wants refresh tokens; `None` (omitted) for an empty set.
pub(crate) fn scope_param(
    scopes: &BTreeSet<String>,
    meta: &ServerMetadata,
    offline_access: bool,
) -> Option<String> {
    if scopes.is_empty() {
        return None;
    }
    let mut all: Vec<&str> = scopes.iter().map(String::as_str).collect();
    if offline_access && meta.supports_scope("offline_access") && !scopes.contains("offline_access")
    {
        all.push("offline_access");
    }
    Some(all.join(" "))
}

/// Checks the redirect (RFC 6749 §10.12 `state`, RFC 9207 `iss`) and returns the code.
pub(crate) fn check_response(
    response: AuthorizationResponse,
    expected_state: &str,
    meta: &ServerMetadata,
) -> Result<String, AuthError> {
    if let Some(error) = response.error {
        return Err(AuthError::Denied {
            error,
            description: response.error_description,
        });
    }
    if response.state.as_deref() != Some(expected_state) {
        return Err(AuthError::StateMismatch);
    }
    let advertised = meta.authorization_response_iss_parameter_supported == Some(true);
    match response.iss.as_deref() {
        // Simple string comparison, no normalization (RFC 9207 §2.4).
        Some(iss) if iss != meta.issuer => {
            return Err(AuthError::IssMismatch {
                expected: meta.issuer.clone(),
                found: Some(iss.to_owned()),
            });
        }
        None if advertised => {
            return Err(AuthError::IssMismatch {
                expected: meta.issuer.clone(),
                found: None,
            });
        }
        _ => {}
    }
    response.code.ok_or(AuthError::NoCode)
}

/// Runs the whole grant for `scopes` against `meta`; returns the tokens (not yet stored).
pub(crate) async fn authorize(
    http: &reqwest::Client,
    config: &OAuthConfig,
    prm: &ResourceMetadata,
    meta: &ServerMetadata,
    client: Option<ClientRegistration>,
    scopes: &BTreeSet<String>,
    dpop: Option<&Dpop>,
) -> Result<StoredTokens, AuthError> {
    let scope = scope_param(
        scopes,
        meta,
        config.offline_access && config.grant.is_interactive(),
    );
    let token = endpoint(http, config, meta, dpop);
    let with_scope = |mut params: Vec<(&'static str, String)>| {
        params.push(("resource", prm.resource.clone()));
        if let Some(s) = &scope {
            params.push(("scope", s.clone()));
        }
        params
    };
    match &config.grant {
        Grant::AuthorizationCode => {}
        Grant::ClientCredentials => {
            let client = match client {
                Some(c) => c,
                None => register(http, config, meta, None, scope.as_deref()).await?,
            };
            let params = with_scope(vec![("grant_type", "client_credentials".to_owned())]);
            return token.request(Some(&client), params, scope.as_deref()).await;
        }
        Grant::WorkloadIdentity(source) => {
            // Client authentication is optional in this grant (RFC 7523 §3.1): a
            // pre-registered client authenticates, else none is sent. No registration.
            let client = match client {
                Some(c) => Some(c),
                None if config.client_id.is_some() => {
                    Some(register(http, config, meta, None, scope.as_deref()).await?)
                }
                None => None,
            };
            let assertion = source.assertion().await?;
            let params = with_scope(vec![
                ("grant_type", JWT_BEARER.to_owned()),
                ("assertion", assertion.expose().to_owned()),
            ]);
            tracing::info!(issuer = %meta.issuer, "JWT bearer grant (workload identity)");
            return token
                .request(client.as_ref(), params, scope.as_deref())
                .await;
        }
        Grant::Enterprise(idp) => {
            let client = match client {
                Some(c) => c,
                None => register(http, config, meta, None, scope.as_deref()).await?,
            };
            let jag = id_jag(http, idp, &meta.issuer, &prm.resource, scope.as_deref()).await?;
            let params = with_scope(vec![
                ("grant_type", JWT_BEARER.to_owned()),
                ("assertion", jag.expose().to_owned()),
            ]);
            tracing::info!(issuer = %meta.issuer, "JWT bearer grant (enterprise-managed, ID-JAG)");
            return token.request(Some(&client), params, scope.as_deref()).await;
        }
    }
    let authorizer = config.authorizer.as_ref().ok_or_else(|| {
        AuthError::Config(
            "the server requires authorization and no Authorizer is configured".into(),
        )
    })?;
    if !meta
        .code_challenge_methods_supported
        .as_ref()
        .is_some_and(|m| m.iter().any(|x| x == "S256"))
    {
        return Err(AuthError::NoPkce {
            issuer: meta.issuer.clone(),
        });
    }
    let endpoint = meta
        .authorization_endpoint
        .as_deref()
        .ok_or(AuthError::BadMetadata {
            document: "authorization server metadata",
            field: "authorization_endpoint",
            problem: "is missing".to_owned(),
        })?;
    let redirect_uri = authorizer.redirect_uri();
    let client = match client {
        Some(c) => c,
        None => register(http, config, meta, Some(&redirect_uri), scope.as_deref()).await?,
    };
    let pkce = Pkce::generate()?;
    let state = random_token()?;
    let mut url = reqwest::Url::parse(endpoint).map_err(|e| AuthError::BadMetadata {
        document: "authorization server metadata",
        field: "authorization_endpoint",
        problem: format!("is not a URL: {e}"),
    })?;
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &client.client_id)
            .append_pair("redirect_uri", &redirect_uri)
            .append_pair("code_challenge", &pkce.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &state)
            .append_pair("resource", &prm.resource);
        if let Some(s) = &scope {
            q.append_pair("scope", s);
        }
    }
    tracing::info!(issuer = %meta.issuer, scope = scope.as_deref().unwrap_or(""), "authorization request");
    let response = authorizer.authorize(url.as_str()).await?;
    let code = check_response(response, &state, meta)?;
    let params = vec![
        ("grant_type", "authorization_code".to_owned()),
        ("code", code),
        ("redirect_uri", redirect_uri),
        ("code_verifier", pkce.verifier.clone()),
        ("resource", prm.resource.clone()),
    ];
    token.request(Some(&client), params, scope.as_deref()).await
}

/// The refresh grant (with a proof of the same key when DPoP is on: a bound refresh token
/// needs it); keeps the old refresh token when the server sends none.
pub(crate) async fn refresh(
    http: &reqwest::Client,
    config: &OAuthConfig,
    prm: &ResourceMetadata,
    meta: &ServerMetadata,
    old: &StoredTokens,
    dpop: Option<&Dpop>,
) -> Result<StoredTokens, AuthError> {
    let (Some(rt), Some(client)) = (&old.refresh_token, &old.client) else {
        return Err(AuthError::Token {
            error: "no refresh token".to_owned(),
            description: None,
        });
    };
    let params = vec![
        ("grant_type", "refresh_token".to_owned()),
        ("refresh_token", rt.expose().to_owned()),
        ("resource", prm.resource.clone()),
    ];
    let mut fresh = endpoint(http, config, meta, dpop)
        .request(Some(client), params, old.scope.as_deref())
        .await?;
    if fresh.refresh_token.is_none() {
        fresh.refresh_token = old.refresh_token.clone();
    }
    Ok(fresh)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(iss_supported: Option<bool>) -> ServerMetadata {
        serde_json::from_value(serde_json::json!({
            "issuer": "http://as.example",
            "token_endpoint": "http://as.example/token",
            "authorization_response_iss_parameter_supported": iss_supported,
            "scopes_supported": ["a", "offline_access"],
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    fn resp(state: &str, iss: Option<&str>) -> AuthorizationResponse {
        AuthorizationResponse {
            code: Some("c".into()),
            state: Some(state.into()),
            iss: iss.map(str::to_owned),
            ..Default::default()
        }
    }

    #[test]
    fn state_must_match() {
        assert!(matches!(
            check_response(resp("other", None), "s", &meta(None)),
            Err(AuthError::StateMismatch)
        ));
    }

    #[test]
    fn iss_rules_of_rfc9207() {
        let m = meta(Some(true));
        assert_eq!(
            check_response(resp("s", Some("http://as.example")), "s", &m)
                .ok()
                .as_deref(),
            Some("c")
        );
        // Advertised but missing, wrong, or equal only after normalization: refused.
        for iss in [
            None,
            Some("https://evil.example.com"),
            Some("http://as.example/"),
        ] {
            assert!(
                matches!(
                    check_response(resp("s", iss), "s", &m),
                    Err(AuthError::IssMismatch { .. })
                ),
                "{iss:?}"
            );
        }
        // Not advertised: absent is fine, present must still match.
        let m = meta(None);
        assert!(check_response(resp("s", None), "s", &m).is_ok());
        assert!(check_response(resp("s", Some("https://evil.example.com")), "s", &m).is_err());
    }

    #[test]
    fn scope_adds_offline_access_only_when_listed_and_omits_empty() {
        let set: BTreeSet<String> = ["a".to_owned()].into();
        assert_eq!(
            scope_param(&set, &meta(None), true).as_deref(),
            Some("a offline_access")
        );
        assert_eq!(scope_param(&set, &meta(None), false).as_deref(), Some("a"));
        assert_eq!(scope_param(&BTreeSet::new(), &meta(None), true), None);
        let mut m = meta(None);
        m.scopes_supported = Some(vec!["a".into()]);
        assert_eq!(scope_param(&set, &m, true).as_deref(), Some("a"));
    }
}
