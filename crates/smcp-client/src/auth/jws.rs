//! The JWTs the client signs (DPoP proofs, `private_key_jwt` client assertions): the
//! [`JwtSigner`] seam and [`KeySigner`], the built-in signer over a private key (aws-lc).

use std::sync::Arc;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, ECDSA_P384_SHA384_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _,
    RSA_PKCS1_SHA256, RsaKeyPair,
};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject as _;
use serde_json::{Map, Value, json};

use super::{AuthError, Secret};

/// Signs the JWTs the client sends: DPoP proofs and client assertions. Implement it to keep
/// the key elsewhere (an HSM, a cloud KMS, an agent); [`KeySigner`] holds one in memory.
pub trait JwtSigner: Send + Sync + std::fmt::Debug + 'static {
    /// The JWS `alg`: `ES256`, `ES384`, `RS256`…
    fn algorithm(&self) -> &str;
    /// The public key as a JWK with no private members: the `jwk` header of a DPoP proof.
    /// `None` for a signer that only signs client assertions (the server knows its key).
    fn public_jwk(&self) -> Option<Map<String, Value>>;
    /// The JWS signature of `input` (for ECDSA the fixed-width `R || S`, RFC 7518 §3.4).
    fn sign(&self, input: &[u8]) -> Result<Vec<u8>, AuthError>;
}

enum Key {
    Ec(EcdsaKeyPair),
    Rsa(RsaKeyPair),
}

/// A private key in memory: EC P-256 (`ES256`), EC P-384 (`ES384`) or RSA (`RS256`).
pub struct KeySigner {
    algorithm: &'static str,
    key: Key,
    /// The PKCS#8 form of a key this process generated (kept with DPoP-bound tokens).
    generated: Option<Secret>,
}

impl std::fmt::Debug for KeySigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeySigner")
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

fn key_error(what: &str) -> AuthError {
    AuthError::Config(format!("signing key: {what}"))
}

impl KeySigner {
    /// A fresh EC P-256 key (`ES256`): what a DPoP client uses unless told otherwise.
    pub fn generate_es256() -> Result<Self, AuthError> {
        let key = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING)
            .map_err(|_| key_error("cannot generate an EC P-256 key"))?;
        let pkcs8 = key
            .to_pkcs8v1()
            .map_err(|_| key_error("cannot encode the generated key"))?;
        Ok(Self {
            algorithm: "ES256",
            key: Key::Ec(key),
            generated: Some(Secret::new(URL_SAFE_NO_PAD.encode(pkcs8.as_ref()))),
        })
    }

    /// A key from PEM: PKCS#8 (`BEGIN PRIVATE KEY`), SEC1 (`BEGIN EC PRIVATE KEY`) or
    /// PKCS#1 (`BEGIN RSA PRIVATE KEY`). EC keys on P-256 sign `ES256`, on P-384 `ES384`;
    /// RSA keys `RS256`. The error never quotes the key.
    pub fn from_pem(pem: &[u8]) -> Result<Self, AuthError> {
        let der = PrivateKeyDer::from_pem_slice(pem)
            .map_err(|_| key_error("not a PEM private key (PKCS#8, SEC1 or PKCS#1)"))?;
        let signer = match &der {
            PrivateKeyDer::Pkcs8(k) => Self::from_pkcs8(k.secret_pkcs8_der()),
            PrivateKeyDer::Sec1(k) => {
                Self::ec(|alg| EcdsaKeyPair::from_private_key_der(alg, k.secret_sec1_der()).ok())
            }
            PrivateKeyDer::Pkcs1(k) => RsaKeyPair::from_der(k.secret_pkcs1_der())
                .ok()
                .map(Self::rsa),
            _ => None,
        };
        signer.ok_or_else(|| key_error("an unsupported key type (EC P-256, EC P-384 or RSA)"))
    }

    /// The key kept with stored tokens (base64url PKCS#8, from a generated key).
    pub(crate) fn from_stored(stored: &Secret) -> Result<Self, AuthError> {
        let der = URL_SAFE_NO_PAD
            .decode(stored.expose())
            .map_err(|_| key_error("the stored DPoP key is not base64url"))?;
        let mut signer =
            Self::from_pkcs8(&der).ok_or_else(|| key_error("the stored DPoP key is unusable"))?;
        signer.generated = Some(stored.clone());
        Ok(signer)
    }

    /// The PKCS#8 of a generated (or stored) key, to keep with the tokens it is bound to.
    pub(crate) fn generated(&self) -> Option<&Secret> {
        self.generated.as_ref()
    }

    fn from_pkcs8(der: &[u8]) -> Option<Self> {
        Self::ec(|alg| EcdsaKeyPair::from_pkcs8(alg, der).ok())
            .or_else(|| RsaKeyPair::from_pkcs8(der).ok().map(Self::rsa))
    }

    fn ec(
        load: impl Fn(&'static aws_lc_rs::signature::EcdsaSigningAlgorithm) -> Option<EcdsaKeyPair>,
    ) -> Option<Self> {
        [
            (&ECDSA_P256_SHA256_FIXED_SIGNING, "ES256"),
            (&ECDSA_P384_SHA384_FIXED_SIGNING, "ES384"),
        ]
        .into_iter()
        .find_map(|(alg, name)| {
            load(alg).map(|key| Self {
                algorithm: name,
                key: Key::Ec(key),
                generated: None,
            })
        })
    }

    fn rsa(key: RsaKeyPair) -> Self {
        Self {
            algorithm: "RS256",
            key: Key::Rsa(key),
            generated: None,
        }
    }
}

impl JwtSigner for KeySigner {
    fn algorithm(&self) -> &str {
        self.algorithm
    }

    fn public_jwk(&self) -> Option<Map<String, Value>> {
        let Key::Ec(key) = &self.key else {
            // Only EC keys sign DPoP proofs here; RSA keys sign client assertions.
            return None;
        };
        // The uncompressed point: 0x04 || X || Y.
        let point = key.public_key().as_ref();
        let half = point.len().checked_sub(1)? / 2;
        let (x, y) = point.get(1..)?.split_at(half);
        let crv = if self.algorithm == "ES384" {
            "P-384"
        } else {
            "P-256"
        };
        let jwk = json!({
            "kty": "EC",
            "crv": crv,
            "x": URL_SAFE_NO_PAD.encode(x),
            "y": URL_SAFE_NO_PAD.encode(y),
        });
        jwk.as_object().cloned()
    }

    fn sign(&self, input: &[u8]) -> Result<Vec<u8>, AuthError> {
        let rng = SystemRandom::new();
        match &self.key {
            Key::Ec(key) => key
                .sign(&rng, input)
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| key_error("ECDSA signing failed")),
            Key::Rsa(key) => {
                let mut signature = vec![0; key.public_modulus_len()];
                key.sign(&RSA_PKCS1_SHA256, &rng, input, &mut signature)
                    .map_err(|_| key_error("RSA signing failed"))?;
                Ok(signature)
            }
        }
    }
}

/// A compact JWS: `header` (with `alg` added) and `claims`, signed by `signer`.
pub(crate) fn sign_jwt(
    signer: &dyn JwtSigner,
    mut header: Map<String, Value>,
    claims: &Value,
) -> Result<String, AuthError> {
    header.insert("alg".to_owned(), Value::from(signer.algorithm()));
    let input = format!("{}.{}", b64_json(&header)?, b64_json(claims)?);
    let signature = signer.sign(input.as_bytes())?;
    Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature)))
}

fn b64_json(value: &impl serde::Serialize) -> Result<String, AuthError> {
    serde_json::to_vec(value)
        .map(|bytes| URL_SAFE_NO_PAD.encode(bytes))
        .map_err(|e| AuthError::Config(format!("cannot encode a JWT: {e}")))
}

/// A shared signer.
pub(crate) type Signer = Arc<dyn JwtSigner>;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};

    #[test]
    fn a_generated_key_signs_jwts_its_jwk_verifies_and_survives_storage() {
        let signer = KeySigner::generate_es256().unwrap();
        let jwk = signer.public_jwk().unwrap();
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(jwk["crv"], "P-256");
        assert!(!jwk.contains_key("d"));
        let jwt = sign_jwt(&signer, Map::new(), &json!({"a": 1})).unwrap();
        let (input, signature) = jwt.rsplit_once('.').unwrap();
        let point = [
            &[4u8][..],
            &URL_SAFE_NO_PAD.decode(jwk["x"].as_str().unwrap()).unwrap(),
            &URL_SAFE_NO_PAD.decode(jwk["y"].as_str().unwrap()).unwrap(),
        ]
        .concat();
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &point)
            .verify(
                input.as_bytes(),
                &URL_SAFE_NO_PAD.decode(signature).unwrap(),
            )
            .unwrap();
        let header: Value = serde_json::from_slice(
            &URL_SAFE_NO_PAD
                .decode(input.split('.').next().unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(header["alg"], "ES256");
        let again = KeySigner::from_stored(signer.generated().unwrap()).unwrap();
        assert_eq!(again.public_jwk(), Some(jwk));
    }

    #[test]
    fn pem_keys_load_and_garbage_is_refused_without_echo() {
        let ec = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384).unwrap();
        let signer = KeySigner::from_pem(ec.serialize_pem().as_bytes()).unwrap();
        assert_eq!(signer.algorithm(), "ES384");
        let err = KeySigner::from_pem(
            b"-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n",
        )
        .unwrap_err()
        .to_string();
        assert!(!err.contains("c2VjcmV0"), "{err}");
        assert!(KeySigner::from_pem(b"not a key").is_err());
    }
}
