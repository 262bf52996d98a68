//! The token endpoint: authorization code, refresh and client credentials grants, with
//! `client_secret_basic`, `client_secret_post` or `none`, and `resource` (RFC 8707).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;

use super::fetch::read_body;
use super::store::{ClientRegistration, StoredTokens};
use super::{AuthError, Secret, now_secs};

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    scope: Option<String>,
}

#[derive(Deserialize)]
struct OAuthErrorBody {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// `application/x-www-form-urlencoded` escaping, also used by `client_secret_basic`
/// (RFC 6749 §2.3.1).
fn form_encode(s: &str) -> String {
    url_form(&[("", s)]).trim_start_matches('=').to_owned()
}

fn url_form(pairs: &[(&str, &str)]) -> String {
    let mut ser = reqwest::Url::parse("http://x/").ok();
    if let Some(u) = ser.as_mut() {
        let mut q = u.query_pairs_mut();
        for (k, v) in pairs {
            q.append_pair(k, v);
        }
    }
    ser.and_then(|u| u.query().map(str::to_owned))
        .unwrap_or_default()
}

/// POSTs a grant to the token endpoint and returns the tokens to store.
pub(crate) async fn request(
    http: &reqwest::Client,
    token_endpoint: &str,
    issuer: &str,
    client: &ClientRegistration,
    mut params: Vec<(&str, String)>,
    scope_requested: Option<&str>,
) -> Result<StoredTokens, AuthError> {
    let mut req = http.post(token_endpoint);
    match client.auth_method.as_str() {
        "client_secret_basic" => {
            let secret = client
                .client_secret
                .as_ref()
                .map(Secret::expose)
                .unwrap_or("");
            let pair = format!("{}:{}", form_encode(&client.client_id), form_encode(secret));
            req = req.header(
                http::header::AUTHORIZATION,
                format!("Basic {}", STANDARD.encode(pair)),
            );
        }
        "client_secret_post" => {
            params.push(("client_id", client.client_id.clone()));
            if let Some(s) = &client.client_secret {
                params.push(("client_secret", s.expose().to_owned()));
            }
        }
        _ => params.push(("client_id", client.client_id.clone())),
    }
    let pairs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let fail = |detail: String| AuthError::Fetch {
        what: "token endpoint",
        url: token_endpoint.to_owned(),
        detail,
    };
    let response = req
        .header(
            http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(http::header::ACCEPT, "application/json")
        .body(url_form(&pairs))
        .send()
        .await
        .map_err(|e| fail(e.to_string()))?;
    let status = response.status().as_u16();
    let bytes = read_body(response).await.map_err(fail)?;
    if !(200..300).contains(&status) {
        return Err(match serde_json::from_slice::<OAuthErrorBody>(&bytes) {
            Ok(e) => AuthError::Token {
                error: e.error,
                description: e.error_description,
            },
            Err(_) => AuthError::Token {
                error: format!("HTTP {status}"),
                description: None,
            },
        });
    }
    let t: TokenResponse = serde_json::from_slice(&bytes).map_err(|e| AuthError::BadMetadata {
        document: "token response",
        field: "access_token",
        problem: format!("missing or malformed ({})", e.classify_name()),
    })?;
    Ok(StoredTokens {
        issuer: issuer.to_owned(),
        access_token: Secret::new(t.access_token),
        refresh_token: t.refresh_token.map(Secret::new),
        expires_at: t.expires_in.map(|s| now_secs().saturating_add(s)),
        scope: t.scope.or_else(|| scope_requested.map(str::to_owned)),
        client: Some(client.clone()),
    })
}

trait Classify {
    fn classify_name(&self) -> &'static str;
}

impl Classify for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "I/O",
            serde_json::error::Category::Syntax => "not JSON",
            serde_json::error::Category::Data => "wrong shape",
            serde_json::error::Category::Eof => "truncated",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_encoding_escapes_reserved_characters() {
        assert_eq!(form_encode("a b:c"), "a+b%3Ac");
        assert_eq!(
            url_form(&[("k", "v&w"), ("r", "http://h/mcp")]),
            "k=v%26w&r=http%3A%2F%2Fh%2Fmcp"
        );
    }
}
