//! DPoP proofs (RFC 9449) for the `echo-dpop` case: `smcp-load --dpop-key` sends every
//! request with `Authorization: DPoP <token>` and a proof of its own.
//!
//! A proof is an ES256 JWT (`typ` `dpop+jwt`, the client's public key as `jwk`) naming the
//! request (`htm` `POST`, `htu` the target URL), when it was made (`iat`), a unique id (`jti`)
//! and the token's hash (`ath`). The server remembers every `jti` and refuses a second use, so
//! no proof is ever sent twice.
//!
//! [`ProofPool`] signs the proofs of a run before it starts: signing one costs the load
//! generator more CPU than the rest of a request (an ECDSA signature, and `jsonwebtoken`
//! parses the key again for each: about 36 µs here, against 12 µs for a whole echo request
//! to the baseline), which on the single core the load runs on would make the generator the
//! bottleneck and blur its `load` figure against `echo-jwt`. A pool that runs dry signs the
//! rest inline and counts them ([`ProofPool::inline`]), or, against a server that does not
//! check proofs (the baseline), hands its proofs out again ([`ProofPool::new`]'s `reuse`).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::HeaderValue;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;
use sha2::{Digest as _, Sha256};

/// Signs the proofs of one client key for one URL and access token.
pub struct ProofSigner {
    key: EncodingKey,
    header: Header,
    htu: String,
    ath: String,
    /// Unique to this process, so that two runs against one server never share a `jti`.
    jti_prefix: String,
    next: AtomicU64,
}

impl std::fmt::Debug for ProofSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProofSigner")
            .field("htu", &self.htu)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
struct Claims<'a> {
    jti: String,
    htm: &'static str,
    htu: &'a str,
    iat: u64,
    ath: &'a str,
}

impl ProofSigner {
    /// A signer for `POST htu` with `token`, by the P-256 private key `pem` (PKCS#8 PEM).
    ///
    /// # Errors
    ///
    /// `pem` is not a PKCS#8 PEM of a P-256 private key.
    pub fn from_pem(pem: &[u8], htu: &str, token: &str) -> anyhow::Result<Self> {
        let key = EncodingKey::from_ec_der(&pkcs8_der(pem)?);
        let mut jwk = public_jwk(&key).context("not a P-256 private key")?;
        // The header carries the key's public members only.
        jwk.common.key_algorithm = None;
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".to_owned());
        header.jwk = Some(jwk);
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Ok(Self {
            key,
            header,
            htu: htu.to_owned(),
            ath: URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes())),
            jti_prefix: format!("{:x}-{:x}", std::process::id(), started.as_nanos()),
            next: AtomicU64::new(0),
        })
    }

    /// A fresh proof: a new `jti`, `iat` now.
    ///
    /// # Errors
    ///
    /// Signing failed.
    pub fn sign(&self) -> anyhow::Result<HeaderValue> {
        let iat = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let claims = Claims {
            jti: format!("{}-{n}", self.jti_prefix),
            htm: "POST",
            htu: &self.htu,
            iat,
            ath: &self.ath,
        };
        let proof = jsonwebtoken::encode(&self.header, &claims, &self.key)?;
        Ok(HeaderValue::from_str(&proof)?)
    }
}

/// The DER of a `PRIVATE KEY` (PKCS#8) PEM block.
fn pkcs8_der(pem: &[u8]) -> anyhow::Result<Vec<u8>> {
    const BEGIN: &str = "-----BEGIN PRIVATE KEY-----";
    const END: &str = "-----END PRIVATE KEY-----";
    let text = std::str::from_utf8(pem).context("not a PEM file")?;
    let body = text
        .split_once(BEGIN)
        .and_then(|(_, rest)| rest.split_once(END))
        .map(|(body, _)| body)
        .context("no PKCS#8 PRIVATE KEY block")?;
    let b64: String = body.split_whitespace().collect();
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .context("the PRIVATE KEY block is not base64")
}

/// The public JWK of the P-256 key `key`.
///
/// # Errors
///
/// `key` is not a P-256 key.
pub fn public_jwk(key: &EncodingKey) -> anyhow::Result<Jwk> {
    Ok(Jwk::from_encoding_key(key, Algorithm::ES256)?)
}

/// The RFC 7638 SHA-256 thumbprint of `jwk`: a token's `cnf.jkt` binding it to that key.
///
/// # Errors
///
/// `jwk` is of a kind without a thumbprint.
pub fn thumbprint(jwk: &Jwk) -> anyhow::Result<String> {
    Ok(jwk.thumbprint(ThumbprintHash::SHA256)?)
}

/// Proofs signed ahead of a run, handed out once each.
#[derive(Debug)]
pub struct ProofPool {
    signer: ProofSigner,
    proofs: Vec<HeaderValue>,
    reuse: bool,
    taken: AtomicUsize,
    inline: AtomicU64,
}

impl ProofPool {
    /// `size` proofs signed now by `signer`. Once they are used up, [`take`](Self::take)
    /// signs new ones, or with `reuse` starts over from the first: only for a server that
    /// does not check proofs (a replayed `jti` is refused by one that does).
    ///
    /// # Errors
    ///
    /// Signing failed.
    pub fn new(signer: ProofSigner, size: usize, reuse: bool) -> anyhow::Result<Self> {
        let proofs = (0..size)
            .map(|_| signer.sign())
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Self {
            signer,
            proofs,
            reuse,
            taken: AtomicUsize::new(0),
            inline: AtomicU64::new(0),
        })
    }

    /// The next unused proof; once the pool is used up, one signed now (or with `reuse`, the
    /// pool's proofs again).
    ///
    /// # Errors
    ///
    /// Signing failed.
    pub fn take(&self) -> anyhow::Result<HeaderValue> {
        let i = self.taken.fetch_add(1, Ordering::Relaxed);
        if let Some(proof) = self.proofs.get(i) {
            return Ok(proof.clone());
        }
        if self.reuse && !self.proofs.is_empty() {
            return Ok(self.proofs[i % self.proofs.len()].clone());
        }
        self.inline.fetch_add(1, Ordering::Relaxed);
        self.signer.sign()
    }

    /// How many proofs were signed during the run, after the pool ran dry.
    pub fn inline(&self) -> u64 {
        self.inline.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};
    use serde_json::Value;

    const TOKEN: &str = "header.claims.signature";
    const HTU: &str = "http://127.0.0.1:8080/mcp";

    fn signer() -> ProofSigner {
        let pair = rcgen::KeyPair::generate().unwrap();
        ProofSigner::from_pem(pair.serialize_pem().as_bytes(), HTU, TOKEN).unwrap()
    }

    #[test]
    fn a_proof_verifies_with_its_header_key_and_names_the_request() {
        let signer = signer();
        let proof = signer.sign().unwrap();
        let proof = proof.to_str().unwrap();
        let header = jsonwebtoken::decode_header(proof).unwrap();
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        assert_eq!(header.alg, Algorithm::ES256);
        let jwk = header.jwk.unwrap();
        let value = serde_json::to_value(&jwk).unwrap();
        assert!(value.get("d").is_none(), "{value}");
        let mut validation = Validation::new(Algorithm::ES256);
        validation.validate_exp = false;
        validation.set_required_spec_claims::<&str>(&[]);
        let key = DecodingKey::from_jwk(&jwk).unwrap();
        let claims = jsonwebtoken::decode::<Value>(proof, &key, &validation)
            .unwrap()
            .claims;
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], HTU);
        assert_eq!(
            claims["ath"],
            URL_SAFE_NO_PAD.encode(Sha256::digest(TOKEN.as_bytes()))
        );
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(
            claims["iat"].as_u64().unwrap().abs_diff(now) <= 1,
            "{claims}"
        );
        assert_eq!(thumbprint(&jwk).unwrap().len(), 43);
    }

    #[test]
    fn the_pool_hands_out_each_proof_once_then_signs_more() {
        let pool = ProofPool::new(signer(), 3, false).unwrap();
        let jtis: Vec<String> = (0..5).map(|_| jti(&pool)).collect();
        let distinct: std::collections::HashSet<_> = jtis.iter().collect();
        assert_eq!(distinct.len(), 5, "{jtis:?}");
        assert_eq!(pool.inline(), 2);
    }

    #[test]
    fn a_reusing_pool_starts_over_instead() {
        let pool = ProofPool::new(signer(), 2, true).unwrap();
        let jtis: Vec<String> = (0..5).map(|_| jti(&pool)).collect();
        assert_eq!(jtis[2], jtis[0]);
        assert_eq!(jtis[3], jtis[1]);
        assert_eq!(jtis[4], jtis[0]);
        assert_ne!(jtis[0], jtis[1]);
        assert_eq!(pool.inline(), 0);
    }

    /// The `jti` of the pool's next proof.
    fn jti(pool: &ProofPool) -> String {
        let proof = pool.take().unwrap();
        let payload = proof
            .to_str()
            .unwrap()
            .split('.')
            .nth(1)
            .unwrap()
            .to_owned();
        let claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        claims["jti"].as_str().unwrap().to_owned()
    }
}
