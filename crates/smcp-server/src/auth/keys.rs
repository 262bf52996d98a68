//! A JWKS as decoding keys: which key verifies a token and with which algorithms.

use std::collections::HashMap;

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};

/// One usable key.
pub(crate) struct Key {
    pub(crate) decoding: DecodingKey,
    /// The algorithms this key may verify: the JWK's `alg`, or its family's. Never `HS*`
    /// (a public key is never an HMAC secret) and never `none`.
    pub(crate) algorithms: Vec<Algorithm>,
}

/// The usable keys of a JWKS, by `kid` (keys without one are tried for tokens without one).
#[derive(Default)]
pub(crate) struct Keys {
    by_kid: HashMap<String, Key>,
    unnamed: Vec<Key>,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keys")
            .field("kids", &self.by_kid.keys().collect::<Vec<_>>())
            .field("unnamed", &self.unnamed.len())
            .finish()
    }
}

impl Keys {
    /// The signing keys of `set`; encryption keys, symmetric keys and keys of unsupported
    /// types are skipped.
    pub(crate) fn from_set(set: &JwkSet) -> Self {
        let mut keys = Self::default();
        for jwk in &set.keys {
            let Some(key) = usable(jwk) else {
                continue;
            };
            match &jwk.common.key_id {
                Some(kid) => {
                    keys.by_kid.insert(kid.clone(), key);
                }
                None => keys.unnamed.push(key),
            }
        }
        keys
    }

    /// The key for `kid` (`None`: the key that names none).
    pub(crate) fn find(&self, kid: Option<&str>) -> Option<&Key> {
        match kid {
            Some(kid) => self.by_kid.get(kid),
            None => match (self.unnamed.as_slice(), self.by_kid.len()) {
                ([only], _) => Some(only),
                ([], 1) => self.by_kid.values().next(),
                _ => None,
            },
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_kid.is_empty() && self.unnamed.is_empty()
    }
}

fn usable(jwk: &Jwk) -> Option<Key> {
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return None;
    }
    let family: Vec<Algorithm> = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => vec![
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ],
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => vec![Algorithm::ES256],
            EllipticCurve::P384 => vec![Algorithm::ES384],
            _ => return None,
        },
        AlgorithmParameters::OctetKeyPair(okp) => match okp.curve {
            EllipticCurve::Ed25519 => vec![Algorithm::EdDSA],
            _ => return None,
        },
        // A symmetric key in a public JWKS: never used.
        _ => return None,
    };
    let algorithms = match jwk
        .common
        .key_algorithm
        .map(|a| a.to_string().parse::<Algorithm>())
    {
        None => family,
        Some(Ok(alg)) if family.contains(&alg) => vec![alg],
        Some(_) => return None,
    };
    let decoding = DecodingKey::from_jwk(jwk).ok()?;
    Some(Key {
        decoding,
        algorithms,
    })
}
