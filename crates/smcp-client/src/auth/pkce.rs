//! PKCE S256 (RFC 7636) and the `state` value: random, URL-safe.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use super::AuthError;

/// A PKCE verifier and its S256 challenge.
#[derive(Clone)]
pub(crate) struct Pkce {
    pub(crate) verifier: String,
    pub(crate) challenge: String,
}

impl std::fmt::Debug for Pkce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pkce(<redacted>)")
    }
}

impl Pkce {
    /// A fresh verifier (32 random bytes → 43 characters) and its challenge.
    pub(crate) fn generate() -> Result<Self, AuthError> {
        let verifier = random_token()?;
        Ok(Self {
            challenge: challenge_of(&verifier),
            verifier,
        })
    }
}

/// `BASE64URL(SHA256(verifier))`.
pub(crate) fn challenge_of(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// 32 random bytes, base64url: for PKCE verifiers and `state`.
pub(crate) fn random_token() -> Result<String, AuthError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| AuthError::Config(format!("no system randomness: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b_vector() {
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_are_fresh_and_long_enough() -> Result<(), AuthError> {
        let a = Pkce::generate()?;
        let b = Pkce::generate()?;
        assert_ne!(a.verifier, b.verifier);
        assert!((43..=128).contains(&a.verifier.len()));
        assert_eq!(a.challenge, challenge_of(&a.verifier));
        Ok(())
    }
}
