//! DPoP on the client (RFC 9449): a proof signed with the client's key on every token request
//! and every request that presents a DPoP-bound token, and the nonces servers hand out.
//!
//! The key is generated once per [`OAuthSession`](super::session::OAuthSession) (ES256) unless
//! a [`JwtSigner`](super::JwtSigner) is configured, and kept with the tokens it is bound to, so
//! a refresh token bound to it keeps working in a later run.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::HeaderMap;
use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};

use super::jws::{Signer, sign_jwt};
use super::pkce::random_token;
use super::{AuthError, Secret, now_secs};

/// The `DPoP-Nonce` response header.
pub(crate) const DPOP_NONCE: &str = "dpop-nonce";
/// The `DPoP` request header.
pub(crate) const DPOP: &str = "dpop";

/// When the client binds its tokens to a key with DPoP.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DpopMode {
    /// When the authorization server offers it (`dpop_signing_alg_values_supported` lists the
    /// key's algorithm). The default.
    #[default]
    Auto,
    /// Always: every token request carries a proof, whatever the metadata says.
    Always,
    /// Never.
    Off,
}

/// One session's DPoP key and the latest nonce of each server (by origin).
#[derive(Debug)]
pub(crate) struct Dpop {
    signer: Signer,
    /// The key's PKCS#8 when it is generated (or was stored): kept with the tokens.
    pub(crate) stored: Option<Secret>,
    nonces: Mutex<HashMap<String, String>>,
}

/// `htu`: the URL without query and fragment (RFC 9449 §4.2).
fn htu(url: &reqwest::Url) -> String {
    let mut u = url.clone();
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

/// `ath`: base64url SHA-256 of the access token (RFC 9449 §4.2).
fn ath(access_token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(access_token.as_bytes()))
}

impl Dpop {
    pub(crate) fn new(signer: Signer, stored: Option<Secret>) -> Result<Self, AuthError> {
        if signer.public_jwk().is_none() {
            return Err(AuthError::Config(
                "the DPoP signer has no public JWK (DPoP proofs carry it)".to_owned(),
            ));
        }
        Ok(Self {
            signer,
            stored,
            nonces: Mutex::new(HashMap::new()),
        })
    }

    /// A fresh proof for `method` on `url`; `access_token` adds `ath` (resource requests).
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &reqwest::Url,
        access_token: Option<&str>,
    ) -> Result<String, AuthError> {
        let mut header = Map::new();
        header.insert("typ".to_owned(), json!("dpop+jwt"));
        header.insert(
            "jwk".to_owned(),
            Value::Object(self.signer.public_jwk().unwrap_or_default()),
        );
        let mut claims = json!({
            "jti": random_token()?,
            "htm": method,
            "htu": htu(url),
            "iat": now_secs(),
        });
        if let Some(token) = access_token {
            claims["ath"] = json!(ath(token));
        }
        if let Some(nonce) = self.nonce(url) {
            claims["nonce"] = json!(nonce);
        }
        sign_jwt(self.signer.as_ref(), header, &claims)
    }

    fn nonce(&self, url: &reqwest::Url) -> Option<String> {
        self.nonces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&url.origin().ascii_serialization())
            .cloned()
    }

    /// Keeps the `DPoP-Nonce` a server sent (on an error or any other response); returns
    /// whether there was a new one.
    pub(crate) fn remember_nonce(&self, url: &reqwest::Url, headers: &HeaderMap) -> bool {
        let Some(nonce) = headers
            .get(DPOP_NONCE)
            .and_then(|v| v.to_str().ok())
            .filter(|n| !n.is_empty() && n.len() <= 1024)
        else {
            return false;
        };
        let mut nonces = self.nonces.lock().unwrap_or_else(PoisonError::into_inner);
        let origin = url.origin().ascii_serialization();
        if nonces.get(&origin).map(String::as_str) == Some(nonce) {
            return false;
        }
        nonces.insert(origin, nonce.to_owned());
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::sync::Arc;

    use super::*;
    use crate::auth::KeySigner;

    fn claims(jwt: &str) -> (Value, Value) {
        let mut parts = jwt.split('.');
        let mut next = || -> Value {
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts.next().unwrap()).unwrap()).unwrap()
        };
        (next(), next())
    }

    #[test]
    fn proofs_carry_the_rfc_9449_claims_and_the_latest_nonce() {
        let dpop = Dpop::new(Arc::new(KeySigner::generate_es256().unwrap()), None).unwrap();
        let url = reqwest::Url::parse("https://mcp.example/mcp?x=1#f").unwrap();
        let (header, c) = claims(&dpop.proof("POST", &url, Some("tok")).unwrap());
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"]["x"].is_string() && header["jwk"].get("d").is_none());
        assert_eq!(c["htm"], "POST");
        assert_eq!(c["htu"], "https://mcp.example/mcp");
        assert_eq!(c["ath"], ath("tok"));
        assert!(c.get("nonce").is_none());
        let (_, again) = claims(&dpop.proof("POST", &url, None).unwrap());
        assert_ne!(c["jti"], again["jti"]);
        assert!(again.get("ath").is_none());

        let mut headers = HeaderMap::new();
        headers.insert(DPOP_NONCE, "n1".parse().unwrap());
        assert!(dpop.remember_nonce(&url, &headers));
        assert!(
            !dpop.remember_nonce(&url, &headers),
            "the same nonce is not new"
        );
        let (_, c) = claims(&dpop.proof("GET", &url, None).unwrap());
        assert_eq!(c["nonce"], "n1");
        // Nonces are per server.
        let other = reqwest::Url::parse("https://as.example/token").unwrap();
        let (_, c) = claims(&dpop.proof("POST", &other, None).unwrap());
        assert!(c.get("nonce").is_none());
    }
}
