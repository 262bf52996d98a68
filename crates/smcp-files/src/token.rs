//! Signed transfer tokens: `<kid>.<base64url(claims JSON)>.<base64url(HMAC-SHA256)>`.
//!
//! Stateless: the claims carry everything the data plane needs (file id, direction,
//! principal, expiry, and for uploads the expected size/digest and the metadata to commit),
//! so any instance holding the key ring verifies and serves a token another one minted.
//! Upload tokens are single use because the file id can be committed only once
//! ([`crate::StoreError::AlreadyExists`]); no replay cache is needed.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{KeyInit, Mac};
use serde::{Deserialize, Serialize};
use smcp_proto::ext::files::FileDigest;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// Upload or download.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Direction {
    /// A single-use upload ticket.
    #[serde(rename = "u")]
    Upload,
    /// A download ticket.
    #[serde(rename = "d")]
    Download,
}

/// What a token grants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claims {
    /// Direction.
    pub dir: Direction,
    /// File id.
    pub fid: String,
    /// Principal the file belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<String>,
    /// Redemption deadline (Unix seconds).
    pub exp: u64,
    /// Upload: exact size required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Upload: the largest size accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
    /// Upload: expected digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<FileDigest>,
    /// Upload: media type to record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
    /// Upload: display name to record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Upload: the file's retention deadline (Unix seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ret: Option<u64>,
}

/// Why a token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not three base64url parts or bad JSON.
    #[error("malformed token")]
    Malformed,
    /// Unknown key id or wrong tag (forged or tampered).
    #[error("bad token signature")]
    BadSignature,
    /// Past `exp`.
    #[error("token expired")]
    Expired,
    /// An upload token used to download or vice versa.
    #[error("token for the other direction")]
    WrongDirection,
}

/// HMAC keys: the first signs, all verify (rotation: prepend the new key, keep the old one
/// until its tokens expired).
#[derive(Clone)]
pub struct KeyRing {
    keys: Vec<(String, Vec<u8>)>,
}

impl std::fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kids: Vec<&str> = self.keys.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("KeyRing").field("kids", &kids).finish()
    }
}

impl KeyRing {
    /// A ring with one signing key.
    pub fn new(kid: impl Into<String>, key: impl Into<Vec<u8>>) -> Self {
        Self {
            keys: vec![(kid.into(), key.into())],
        }
    }

    /// A ring with a fresh random 32-byte key (single instance, or tests).
    pub fn generate() -> Self {
        let key = crate::random_hex(32).into_bytes();
        Self::new(crate::random_hex(4), key)
    }

    /// Adds a verify-only key (an older key during rotation).
    #[must_use]
    pub fn with_verify_key(mut self, kid: impl Into<String>, key: impl Into<Vec<u8>>) -> Self {
        self.keys.push((kid.into(), key.into()));
        self
    }

    fn mac(key: &[u8], signed: &str) -> HmacSha256 {
        // HMAC accepts keys of any length; new_from_slice cannot fail here.
        let mut mac = <HmacSha256 as KeyInit>::new_from_slice(key)
            .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
        mac.update(signed.as_bytes());
        mac
    }

    /// Signs claims.
    pub fn sign(&self, claims: &Claims) -> String {
        let (kid, key) = &self.keys[0];
        let json = serde_json::to_vec(claims).unwrap_or_default();
        let signed = format!("{kid}.{}", URL_SAFE_NO_PAD.encode(json));
        let tag = Self::mac(key, &signed).finalize().into_bytes();
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(tag))
    }

    /// Verifies signature, direction and expiry at `now`.
    pub fn verify(&self, token: &str, dir: Direction, now: u64) -> Result<Claims, TokenError> {
        if token.len() > 4096 {
            return Err(TokenError::Malformed);
        }
        let (signed, tag) = token.rsplit_once('.').ok_or(TokenError::Malformed)?;
        let (kid, payload) = signed.split_once('.').ok_or(TokenError::Malformed)?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| TokenError::Malformed)?;
        let key = self
            .keys
            .iter()
            .find(|(k, _)| k == kid)
            .map(|(_, key)| key)
            .ok_or(TokenError::BadSignature)?;
        Self::mac(key, signed)
            .verify_slice(&tag)
            .map_err(|_| TokenError::BadSignature)?;
        let json = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| TokenError::Malformed)?;
        let claims: Claims = serde_json::from_slice(&json).map_err(|_| TokenError::Malformed)?;
        if claims.dir != dir {
            return Err(TokenError::WrongDirection);
        }
        if now >= claims.exp {
            return Err(TokenError::Expired);
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(dir: Direction) -> Claims {
        Claims {
            dir,
            fid: "file_0".into(),
            sub: Some("alice".into()),
            exp: 100,
            size: Some(5),
            max: None,
            digest: None,
            mime: None,
            name: None,
            ret: None,
        }
    }

    #[test]
    fn sign_verify_expire_forge_rotate() {
        let ring = KeyRing::new("k1", b"secret-1".to_vec());
        let t = ring.sign(&claims(Direction::Upload));
        assert_eq!(
            ring.verify(&t, Direction::Upload, 99),
            Ok(claims(Direction::Upload))
        );
        assert_eq!(
            ring.verify(&t, Direction::Upload, 100),
            Err(TokenError::Expired)
        );
        assert_eq!(
            ring.verify(&t, Direction::Download, 1),
            Err(TokenError::WrongDirection)
        );
        // Forged: claims changed, tag kept.
        let mut forged = claims(Direction::Upload);
        forged.size = Some(6);
        let forged_payload =
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&forged).unwrap_or_default());
        let parts: Vec<&str> = t.split('.').collect();
        let forged = format!("{}.{forged_payload}.{}", parts[0], parts[2]);
        assert_eq!(
            ring.verify(&forged, Direction::Upload, 1),
            Err(TokenError::BadSignature)
        );
        // Another ring's key.
        let other = KeyRing::new("k1", b"secret-2".to_vec());
        assert_eq!(
            other.verify(&t, Direction::Upload, 1),
            Err(TokenError::BadSignature)
        );
        // Rotation: a ring that signs with k2 still verifies k1's tokens.
        let rotated =
            KeyRing::new("k2", b"secret-2".to_vec()).with_verify_key("k1", b"secret-1".to_vec());
        assert!(rotated.verify(&t, Direction::Upload, 1).is_ok());
        assert_eq!(
            ring.verify("nonsense", Direction::Upload, 1),
            Err(TokenError::Malformed)
        );
    }
}
