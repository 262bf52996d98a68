//! The `WWW-Authenticate: Bearer …` and `DPoP …` challenges (RFC 6750 §3, RFC 9728 §5.1,
//! RFC 9449 §7.1) and the responses that carry them.

use bytes::Bytes;
use http::header::{CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderValue, Response, StatusCode};
use http_body_util::Full;
use serde_json::json;

use crate::core::access::INSUFFICIENT_SCOPE;

/// The JSON-RPC error code of a request refused for a missing or invalid token (HTTP
/// `401`). A server-defined code (the JSON-RPC range −32000 to −32099).
pub const UNAUTHORIZED: i64 = -32001;

/// One `auth-param`: `name="value"`, the value a quoted-string.
fn param(out: &mut String, name: &str, value: &str) {
    // The first parameter follows the scheme and its space; scheme names have no `=`.
    if out.contains('=') {
        out.push_str(", ");
    }
    out.push_str(name);
    out.push_str("=\"");
    for c in value.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            // A header value cannot carry control characters.
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The challenge of a `401`: `resource_metadata` and `scope`, plus `error="invalid_token"`
/// and its description when a token was given.
pub(crate) fn unauthorized(
    metadata_url: &str,
    scope: Option<&str>,
    invalid: Option<&str>,
) -> String {
    let mut out = String::from("Bearer ");
    if let Some(description) = invalid {
        param(&mut out, "error", "invalid_token");
        param(&mut out, "error_description", description);
    }
    param(&mut out, "resource_metadata", metadata_url);
    if let Some(scope) = scope {
        param(&mut out, "scope", scope);
    }
    out
}

/// The `DPoP` challenge of a `401`: `error` and its description when there is one, the
/// accepted `algs`, `resource_metadata` and `scope`.
pub(crate) fn dpop(
    metadata_url: &str,
    scope: Option<&str>,
    algs: &str,
    error: Option<(&str, &str)>,
) -> String {
    let mut out = String::from("DPoP ");
    if let Some((error, description)) = error {
        param(&mut out, "error", error);
        param(&mut out, "error_description", description);
    }
    param(&mut out, "algs", algs);
    param(&mut out, "resource_metadata", metadata_url);
    if let Some(scope) = scope {
        param(&mut out, "scope", scope);
    }
    out
}

/// The challenge of a `403` for step-up: `error="insufficient_scope"`, every scope the
/// request needs, `resource_metadata`; `scheme` is the one the token came with (`Bearer`,
/// or `DPoP` for a DPoP-bound token, RFC 9449 §7.1).
pub(crate) fn insufficient_scope(scheme: &str, metadata_url: &str, scope: &str) -> String {
    let mut out = format!("{scheme} ");
    param(&mut out, "error", "insufficient_scope");
    param(&mut out, "scope", scope);
    param(&mut out, "resource_metadata", metadata_url);
    param(
        &mut out,
        "error_description",
        "the access token lacks a scope this request needs",
    );
    out
}

/// A refusal: `status`, the challenges (one `WWW-Authenticate` each), and a JSON-RPC error
/// body (`id` null: the body was not read).
pub(crate) fn refusal(
    status: StatusCode,
    challenges: &[String],
    code: i64,
    message: &str,
    data: Option<serde_json::Value>,
) -> Response<Full<Bytes>> {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    let body = json!({ "jsonrpc": "2.0", "id": null, "error": error });
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    for challenge in challenges {
        if let Ok(value) = HeaderValue::from_str(challenge) {
            response.headers_mut().append(WWW_AUTHENTICATE, value);
        }
    }
    response
}

/// The `403` for `scope`.
pub(crate) fn forbidden(scheme: &str, metadata_url: &str, scope: &str) -> Response<Full<Bytes>> {
    refusal(
        StatusCode::FORBIDDEN,
        &[insufficient_scope(scheme, metadata_url, scope)],
        INSUFFICIENT_SCOPE,
        &format!("insufficient scope: this request needs {scope:?}"),
        Some(json!({ "scope": scope })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_quote_their_values() {
        assert_eq!(
            unauthorized(
                "https://m.example/.well-known/oauth-protected-resource/mcp",
                Some("a b"),
                None
            ),
            r#"Bearer resource_metadata="https://m.example/.well-known/oauth-protected-resource/mcp", scope="a b""#
        );
        assert_eq!(
            unauthorized("u", None, Some("say \"hi\"")),
            r#"Bearer error="invalid_token", error_description="say \"hi\"", resource_metadata="u""#
        );
        assert_eq!(
            insufficient_scope("Bearer", "u", "admin"),
            r#"Bearer error="insufficient_scope", scope="admin", resource_metadata="u", error_description="the access token lacks a scope this request needs""#
        );
        assert_eq!(
            dpop(
                "u",
                Some("mcp"),
                "ES256 EdDSA",
                Some(("use_dpop_nonce", "n"))
            ),
            r#"DPoP error="use_dpop_nonce", error_description="n", algs="ES256 EdDSA", resource_metadata="u", scope="mcp""#
        );
        assert_eq!(
            dpop("u", None, "ES256", None),
            r#"DPoP algs="ES256", resource_metadata="u""#
        );
    }
}
