//! DPoP-bound access tokens (RFC 9449), resource-server side: [`DpopConfig`], the proof
//! checks, the RFC 7638 key thumbprint and stateless nonces.
//!
//! A request sends `Authorization: DPoP <token>` and one `DPoP: <proof>` header. The proof
//! is a JWT (`typ` `dpop+jwt`) signed by the client's key, which its header carries (`jwk`);
//! it names the request (`htm`, `htu`), when it was made (`iat`), a unique id (`jti`) and the
//! token's hash (`ath`). The token's `cnf.jkt` must be that key's thumbprint.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::Mac as _;
use http::{HeaderMap, Method};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::jwt::AuthConfigError;
use crate::core::mrtr::{DEFAULT_REPLAY_CAPACITY, MemoryReplayGuard, Redeem, ReplayGuard};

/// The `DPoP` request header.
pub const DPOP: &str = "dpop";
/// The `DPoP-Nonce` response header.
pub const DPOP_NONCE: &str = "dpop-nonce";

/// The longest proof accepted, in bytes (a proof is a header, a key and a few claims).
const MAX_PROOF_LEN: usize = 8 * 1024;
/// The longest `jti` accepted, in bytes.
const MAX_JTI_LEN: usize = 256;

type HmacSha256 = hmac::Hmac<Sha256>;

/// How the layer checks DPoP proofs (see [`AuthLayerBuilder::dpop`](super::AuthLayerBuilder::dpop)).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use smcp_server::auth::DpopConfig;
///
/// let dpop = DpopConfig::builder()
///     .required(true)
///     .require_nonce(b"a secret of at least 32 bytes, shared".to_vec())
///     .nonce_window(Duration::from_secs(300))
///     .build()?;
/// # let _ = dpop;
/// # Ok::<(), smcp_server::auth::AuthConfigError>(())
/// ```
#[derive(Clone)]
pub struct DpopConfig {
    algorithms: Vec<Algorithm>,
    required: bool,
    nonce: Option<NonceKey>,
    skew: Duration,
    max_age: Duration,
    replay: Arc<dyn ReplayGuard>,
}

impl std::fmt::Debug for DpopConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopConfig")
            .field("algorithms", &self.algorithms)
            .field("required", &self.required)
            .field("nonce", &self.nonce.is_some())
            .field("skew", &self.skew)
            .field("max_age", &self.max_age)
            .finish_non_exhaustive()
    }
}

/// Builds a [`DpopConfig`] (see [`DpopConfig::builder`]).
pub struct DpopConfigBuilder {
    algorithms: Vec<Algorithm>,
    required: bool,
    nonce_key: Option<Vec<u8>>,
    nonce_window: Duration,
    skew: Duration,
    max_age: Duration,
    replay: Option<Arc<dyn ReplayGuard>>,
}

impl std::fmt::Debug for DpopConfigBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopConfigBuilder")
            .field("algorithms", &self.algorithms)
            .field("required", &self.required)
            .finish_non_exhaustive()
    }
}

/// The key and window of stateless nonces: a nonce is its window's number and an HMAC of
/// it, so every instance holding the key accepts every instance's nonces.
#[derive(Clone)]
struct NonceKey {
    key: Arc<[u8]>,
    window: Duration,
}

impl DpopConfig {
    /// A builder: ES256, RS256, PS256 and EdDSA proofs (and their larger variants), plain
    /// bearer tokens still accepted, no nonce, `iat` at most 60 s ahead and 5 minutes old,
    /// `jti` replays refused by an in-memory guard (one instance).
    pub fn builder() -> DpopConfigBuilder {
        DpopConfigBuilder {
            algorithms: vec![
                Algorithm::ES256,
                Algorithm::ES384,
                Algorithm::RS256,
                Algorithm::RS384,
                Algorithm::RS512,
                Algorithm::PS256,
                Algorithm::PS384,
                Algorithm::PS512,
                Algorithm::EdDSA,
            ],
            required: false,
            nonce_key: None,
            nonce_window: Duration::from_secs(300),
            skew: Duration::from_secs(60),
            max_age: Duration::from_secs(300),
            replay: None,
        }
    }

    /// Whether plain bearer tokens are refused (`dpop_bound_access_tokens_required`).
    pub fn is_required(&self) -> bool {
        self.required
    }

    /// The accepted proof algorithms, as named in `algs` and
    /// `dpop_signing_alg_values_supported`.
    pub fn algorithm_names(&self) -> Vec<String> {
        self.algorithms.iter().map(|a| alg_name(*a)).collect()
    }

    /// Whether proofs need a nonce.
    pub(crate) fn nonces(&self) -> bool {
        self.nonce.is_some()
    }

    /// A fresh nonce (of the current window), when nonces are on.
    pub(crate) fn fresh_nonce(&self, now: SystemTime) -> Option<String> {
        let nonce = self.nonce.as_ref()?;
        Some(nonce.issue(nonce.window_of(now)))
    }

    /// Remembers `proof`'s `jti`: [`Redeem::Seen`] for a replay, [`Redeem::Full`] when the
    /// guard cannot remember another proof now.
    pub(crate) async fn redeem(&self, proof: &Proof) -> Redeem {
        let mut digest = Sha256::new();
        digest.update(proof.jkt.as_bytes());
        digest.update(b"\0");
        digest.update(proof.jti.as_bytes());
        let id = format!("dpop:{}", URL_SAFE_NO_PAD.encode(digest.finalize()));
        // Accepted while `iat` is within `max_age`: remembered that long, and a second more
        // so that the expiry is never already past.
        let until =
            UNIX_EPOCH + Duration::from_secs(proof.iat) + self.max_age + Duration::from_secs(1);
        self.replay.redeem(&id, until).await
    }
}

impl DpopConfigBuilder {
    /// The proof algorithms accepted (asymmetric only; `HS*` are refused at
    /// [`build`](Self::build)).
    #[must_use]
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// Refuses plain bearer tokens: every request needs a DPoP-bound token and a proof.
    /// The metadata advertises `dpop_bound_access_tokens_required: true`.
    #[must_use]
    pub fn required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    /// Requires a server nonce in every proof (RFC 9449 §8). Nonces are an HMAC under `key`
    /// of the current time window, so instances sharing `key` accept each other's nonces
    /// without shared state. `key`: at least 32 bytes.
    #[must_use]
    pub fn require_nonce(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.nonce_key = Some(key.into());
        self
    }

    /// How long a nonce window lasts (default 5 minutes): a nonce is accepted in its window
    /// and the next.
    #[must_use]
    pub fn nonce_window(mut self, window: Duration) -> Self {
        self.nonce_window = window;
        self
    }

    /// How far ahead of this server's clock a proof's `iat` may be (default 60 s).
    #[must_use]
    pub fn iat_skew(mut self, skew: Duration) -> Self {
        self.skew = skew;
        self
    }

    /// How old a proof may be (default 5 minutes).
    #[must_use]
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// Where used `jti`s are remembered (default: in memory, 100 000 ids). Deployments with
    /// several instances share one (e.g. `smcp_redis::RedisReplayGuard`) so a proof replayed
    /// against another instance is refused too.
    #[must_use]
    pub fn replay_guard(self, guard: impl ReplayGuard) -> Self {
        self.replay_guard_arc(Arc::new(guard))
    }

    /// [`replay_guard`](Self::replay_guard) with a shared guard.
    #[must_use]
    pub fn replay_guard_arc(mut self, guard: Arc<dyn ReplayGuard>) -> Self {
        self.replay = Some(guard);
        self
    }

    /// The configuration.
    ///
    /// # Errors
    ///
    /// No algorithm, a symmetric one, a nonce key shorter than 32 bytes or a zero nonce
    /// window or max age.
    pub fn build(self) -> Result<DpopConfig, AuthConfigError> {
        if self.algorithms.is_empty() {
            return Err(AuthConfigError(
                "DPoP needs at least one algorithm".to_owned(),
            ));
        }
        if let Some(alg) = self
            .algorithms
            .iter()
            .find(|a| matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512))
        {
            return Err(AuthConfigError(format!(
                "DPoP proofs need an asymmetric algorithm, not {alg:?}"
            )));
        }
        if self.max_age.is_zero() {
            return Err(AuthConfigError(
                "the DPoP max age must not be zero".to_owned(),
            ));
        }
        let nonce = match self.nonce_key {
            Some(key) if key.len() < 32 => {
                return Err(AuthConfigError(
                    "the DPoP nonce key must have at least 32 bytes".to_owned(),
                ));
            }
            Some(_) if self.nonce_window.as_secs() == 0 => {
                return Err(AuthConfigError(
                    "the DPoP nonce window must be at least a second".to_owned(),
                ));
            }
            Some(key) => Some(NonceKey {
                key: key.into(),
                window: self.nonce_window,
            }),
            None => None,
        };
        Ok(DpopConfig {
            algorithms: self.algorithms,
            required: self.required,
            nonce,
            skew: self.skew,
            max_age: self.max_age,
            replay: self
                .replay
                .unwrap_or_else(|| Arc::new(MemoryReplayGuard::new(DEFAULT_REPLAY_CAPACITY))),
        })
    }
}

impl NonceKey {
    fn window_of(&self, now: SystemTime) -> u64 {
        let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        secs / self.window.as_secs().max(1)
    }

    fn mac(&self, window: u64) -> HmacSha256 {
        let mut mac = <HmacSha256 as hmac::KeyInit>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts every key length"));
        mac.update(b"smcp/v1/dpop-nonce/");
        mac.update(&window.to_be_bytes());
        mac
    }

    fn issue(&self, window: u64) -> String {
        let mut bytes = window.to_be_bytes().to_vec();
        bytes.extend_from_slice(&self.mac(window).finalize().into_bytes());
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// Whether `nonce` was issued in the current window or the one before: `Some(true)` for
    /// a nonce of the current window, `Some(false)` for one of the window before, `None`
    /// for any other.
    fn check(&self, nonce: &str, now: SystemTime) -> Option<bool> {
        let bytes = URL_SAFE_NO_PAD.decode(nonce).ok()?;
        let (window, tag) = bytes.split_first_chunk::<8>()?;
        let window = u64::from_be_bytes(*window);
        let current = self.window_of(now);
        let fresh = window == current;
        let fits = fresh || window.checked_add(1) == Some(current);
        (fits && self.mac(window).verify_slice(tag).is_ok()).then_some(fresh)
    }
}

/// Why a DPoP request was refused. The message names what is wrong and never contains the
/// token or the proof.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DpopError {
    /// `Authorization: DPoP` without a `DPoP` header.
    #[error("no DPoP proof: send a DPoP header")]
    Missing,
    /// More than one `DPoP` header.
    #[error("more than one DPoP header")]
    Multiple,
    /// Not a well-formed proof JWT.
    #[error("malformed DPoP proof: {0}")]
    Malformed(&'static str),
    /// `typ` is not `dpop+jwt`.
    #[error("DPoP proof typ must be dpop+jwt")]
    Typ,
    /// `alg` is not an accepted algorithm.
    #[error("DPoP proof alg is not accepted")]
    Algorithm,
    /// `jwk` is missing, not a supported public key, or has private members.
    #[error("DPoP proof jwk is missing, not a supported public key, or has private members")]
    Jwk,
    /// The signature does not verify with the embedded key.
    #[error("DPoP proof signature does not verify")]
    Signature,
    /// A claim is missing or of the wrong type.
    #[error("DPoP proof {0} claim is missing or invalid")]
    Claim(&'static str),
    /// `htm` is not the request's method.
    #[error("DPoP proof htm does not match the request method")]
    Htm,
    /// `htu` is not the request's URI.
    #[error("DPoP proof htu does not match the request URI")]
    Htu,
    /// `iat` is too far in the future or too old.
    #[error("DPoP proof iat is outside the accepted window")]
    Iat,
    /// `ath` is not the hash of the access token.
    #[error("DPoP proof ath does not match the access token")]
    Ath,
    /// The `jti` was used before.
    #[error("DPoP proof jti was already used")]
    Replayed,
    /// A nonce is required and the proof has none, or an old or forged one.
    #[error("DPoP proof nonce is missing or no longer valid; use the DPoP-Nonce given")]
    Nonce,
    /// The proof key's thumbprint is not the token's `cnf.jkt`.
    #[error("the DPoP proof key does not match the access token's key binding (cnf.jkt)")]
    KeyMismatch,
    /// A token without `cnf.jkt` sent with the `DPoP` scheme.
    #[error("the access token is not DPoP-bound (no cnf.jkt)")]
    NotBound,
    /// A DPoP-bound token sent with the `Bearer` scheme.
    #[error("a DPoP-bound access token must be sent with the DPoP scheme and a proof")]
    BoundAsBearer,
    /// A plain bearer token where DPoP-bound tokens are required.
    #[error("this resource requires DPoP-bound access tokens")]
    BearerRefused,
}

impl DpopError {
    /// The `error` of the `DPoP` challenge (RFC 9449 §7.1, §8, §12.2): `use_dpop_nonce`,
    /// `invalid_token` for the token's binding, else `invalid_dpop_proof`.
    pub fn error_code(&self) -> &'static str {
        match self {
            Self::Nonce => "use_dpop_nonce",
            Self::KeyMismatch | Self::NotBound | Self::BoundAsBearer | Self::BearerRefused => {
                "invalid_token"
            }
            _ => "invalid_dpop_proof",
        }
    }
}

/// What a valid proof says, for the checks that need the token or the replay guard.
#[derive(Debug)]
pub(crate) struct Proof {
    /// The thumbprint of the proof key.
    pub(crate) jkt: String,
    /// A nonce of the current window, when the proof's was of the window before (sent
    /// back as `DPoP-Nonce` on success, so the client moves on before it expires).
    pub(crate) next_nonce: Option<String>,
    jti: String,
    iat: u64,
}

#[derive(Deserialize)]
struct ProofClaims {
    jti: Option<String>,
    htm: Option<String>,
    htu: Option<String>,
    iat: Option<u64>,
    ath: Option<String>,
    nonce: Option<String>,
}

/// What a proof is checked against.
pub(crate) struct Target<'a> {
    /// The request method.
    pub(crate) method: &'a Method,
    /// The resource's origin (`scheme://host[:port]`) as clients address it.
    pub(crate) origin: &'a str,
    /// The request path.
    pub(crate) path: &'a str,
    /// The access token.
    pub(crate) token: &'a str,
}

/// Checks the request's proof: everything but the token binding and the `jti` replay.
pub(crate) fn check_proof(
    config: &DpopConfig,
    headers: &HeaderMap,
    target: &Target<'_>,
    now: SystemTime,
) -> Result<Proof, DpopError> {
    let mut values = headers.get_all(DPOP).iter();
    let proof = values.next().ok_or(DpopError::Missing)?;
    if values.next().is_some() {
        return Err(DpopError::Multiple);
    }
    if proof.len() > MAX_PROOF_LEN {
        return Err(DpopError::Malformed("the proof is too long"));
    }
    let proof = proof
        .to_str()
        .map_err(|_| DpopError::Malformed("the proof is not ASCII"))?;
    let header_b64 = match proof.split('.').collect::<Vec<_>>().as_slice() {
        [header, _, _] => *header,
        _ => return Err(DpopError::Malformed("a JWT has three dot-separated parts")),
    };
    let header: Value = URL_SAFE_NO_PAD
        .decode(header_b64)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or(DpopError::Malformed("the JOSE header is not valid"))?;
    // A media type: compared case-insensitively (RFC 7515 §4.1.9).
    if !header
        .get("typ")
        .and_then(Value::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("dpop+jwt"))
    {
        return Err(DpopError::Typ);
    }
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .and_then(|a| a.parse::<Algorithm>().ok())
        .filter(|a| config.algorithms.contains(a))
        .ok_or(DpopError::Algorithm)?;
    let jwk_value = header.get("jwk").ok_or(DpopError::Jwk)?;
    let jkt = thumbprint(jwk_value).ok_or(DpopError::Jwk)?;
    let jwk: Jwk = serde_json::from_value(jwk_value.clone()).map_err(|_| DpopError::Jwk)?;
    let key = DecodingKey::from_jwk(&jwk).map_err(|_| DpopError::Jwk)?;
    let mut validation = Validation::new(alg);
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.set_required_spec_claims::<&str>(&[]);
    let claims = jsonwebtoken::decode::<ProofClaims>(proof, &key, &validation)
        .map_err(|e| match e.kind() {
            jsonwebtoken::errors::ErrorKind::InvalidSignature => DpopError::Signature,
            jsonwebtoken::errors::ErrorKind::InvalidAlgorithm
            | jsonwebtoken::errors::ErrorKind::InvalidAlgorithmName => DpopError::Algorithm,
            jsonwebtoken::errors::ErrorKind::Json(_) => {
                DpopError::Malformed("the claims are not valid")
            }
            _ => DpopError::Signature,
        })?
        .claims;
    let jti = claims
        .jti
        .filter(|j| !j.is_empty() && j.len() <= MAX_JTI_LEN)
        .ok_or(DpopError::Claim("jti"))?;
    let htm = claims.htm.ok_or(DpopError::Claim("htm"))?;
    if htm != target.method.as_str() {
        return Err(DpopError::Htm);
    }
    let htu = claims.htu.ok_or(DpopError::Claim("htu"))?;
    let url = reqwest::Url::parse(&htu).map_err(|_| DpopError::Htu)?;
    if !matches!(url.scheme(), "https" | "http")
        || url.origin().ascii_serialization() != target.origin
        || url.path() != target.path
    {
        return Err(DpopError::Htu);
    }
    let iat = claims.iat.ok_or(DpopError::Claim("iat"))?;
    let now_secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    if iat > now_secs.saturating_add(config.skew.as_secs())
        || iat < now_secs.saturating_sub(config.max_age.as_secs())
    {
        return Err(DpopError::Iat);
    }
    let ath = claims.ath.ok_or(DpopError::Claim("ath"))?;
    if ath != access_token_hash(target.token) {
        return Err(DpopError::Ath);
    }
    let mut next_nonce = None;
    if let Some(nonces) = &config.nonce {
        let fresh = claims
            .nonce
            .and_then(|n| nonces.check(&n, now))
            .ok_or(DpopError::Nonce)?;
        if !fresh {
            next_nonce = Some(nonces.issue(nonces.window_of(now)));
        }
    }
    Ok(Proof {
        jkt,
        jti,
        iat,
        next_nonce,
    })
}

/// `ath`: base64url(SHA-256(token)).
pub(crate) fn access_token_hash(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

/// The RFC 7638 SHA-256 thumbprint of a public JWK: base64url of the hash of its required
/// members in lexicographic order, no whitespace. `None` for an unknown `kty`, a missing
/// member, or a key with private members.
pub fn thumbprint(jwk: &Value) -> Option<String> {
    const PRIVATE: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];
    let object = jwk.as_object()?;
    if PRIVATE.iter().any(|m| object.contains_key(*m)) {
        return None;
    }
    let members: &[&str] = match object.get("kty")?.as_str()? {
        "EC" => &["crv", "kty", "x", "y"],
        "RSA" => &["e", "kty", "n"],
        "OKP" => &["crv", "kty", "x"],
        _ => return None,
    };
    let mut canonical = String::from("{");
    for (i, member) in members.iter().enumerate() {
        let value = object.get(*member)?.as_str()?;
        if i > 0 {
            canonical.push(',');
        }
        canonical.push_str(&serde_json::to_string(member).ok()?);
        canonical.push(':');
        canonical.push_str(&serde_json::to_string(value).ok()?);
    }
    canonical.push('}');
    Some(URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes())))
}

/// The JOSE name of `alg`.
fn alg_name(alg: Algorithm) -> String {
    serde_json::to_value(alg)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{alg:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn thumbprint_of_the_rfc_7638_example() {
        // RFC 7638 §3.1.
        let jwk = json!({
            "kty": "RSA",
            "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
            "e": "AQAB",
            "alg": "RS256",
            "kid": "2011-04-29"
        });
        assert_eq!(
            thumbprint(&jwk).as_deref(),
            Some("NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
        );
    }

    #[test]
    fn thumbprint_ignores_optional_members_and_refuses_private_keys() {
        let public = json!({"kty": "EC", "crv": "P-256", "x": "a", "y": "b"});
        let labelled =
            json!({"kty": "EC", "crv": "P-256", "x": "a", "y": "b", "kid": "k", "use": "sig"});
        assert_eq!(thumbprint(&public), thumbprint(&labelled));
        assert!(thumbprint(&public).is_some());
        let private = json!({"kty": "EC", "crv": "P-256", "x": "a", "y": "b", "d": "secret"});
        assert_eq!(thumbprint(&private), None);
        assert_eq!(thumbprint(&json!({"kty": "oct", "k": "c2VjcmV0"})), None);
        assert_eq!(
            thumbprint(&json!({"kty": "EC", "crv": "P-256", "x": "a"})),
            None
        );
    }

    #[test]
    fn nonces_last_their_window_and_the_next() {
        let key = NonceKey {
            key: vec![7; 32].into(),
            window: Duration::from_secs(60),
        };
        let t0 = UNIX_EPOCH + Duration::from_secs(6_000);
        let nonce = key.issue(key.window_of(t0));
        assert_eq!(key.check(&nonce, t0), Some(true));
        assert_eq!(key.check(&nonce, t0 + Duration::from_secs(60)), Some(false));
        assert_eq!(key.check(&nonce, t0 + Duration::from_secs(120)), None);
        assert_eq!(key.check(&nonce, t0 - Duration::from_secs(60)), None);
        let other = NonceKey {
            key: vec![8; 32].into(),
            window: Duration::from_secs(60),
        };
        assert_eq!(other.check(&nonce, t0), None);
        assert_eq!(key.check("not-a-nonce", t0), None);
    }

    #[test]
    fn symmetric_algorithms_and_short_nonce_keys_are_refused() {
        assert!(
            DpopConfig::builder()
                .algorithms([Algorithm::HS256])
                .build()
                .is_err()
        );
        assert!(DpopConfig::builder().algorithms([]).build().is_err());
        assert!(
            DpopConfig::builder()
                .require_nonce(vec![1; 16])
                .build()
                .is_err()
        );
        let config = DpopConfig::builder()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(config.algorithm_names()[0], "ES256");
        assert!(config.algorithm_names().contains(&"EdDSA".to_owned()));
    }
}
