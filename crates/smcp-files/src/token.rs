//! Signed transfer tokens: `<kid>.<base64url(claims JSON)>.<base64url(HMAC-SHA256)>`, made
//! and checked by the server's one key ring (`smcp_server::KeyRing`) under the purpose
//! [`PURPOSE`].
//!
//! Stateless: the claims carry everything the data plane needs (file id, direction,
//! principal, expiry, and for uploads the expected size/digest and the metadata to commit),
//! so any instance holding the key ring verifies and serves a token another one minted.
//! Upload tokens are single use because the file id can be committed only once
//! ([`crate::FileStoreError::AlreadyExists`]); no replay cache is needed.

use serde::{Deserialize, Serialize};
use smcp_proto::ext::files::FileDigest;
use smcp_server::keys::{KeyRing, OpenError};

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

/// The data-plane route an upload token may be redeemed on: the one its descriptor names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Route {
    /// Raw body, `PUT <prefix>/upload/<token>`.
    #[serde(rename = "p")]
    Put,
    /// `multipart/form-data` `POST <prefix>/upload`.
    #[serde(rename = "f")]
    Form,
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
    /// Upload: the only route the token is good for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<Route>,
}

/// Why a file-transfer token (the one in an upload or download descriptor) was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TransferTokenError {
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
    /// An upload token redeemed on a route other than its descriptor's (a `PUT` token in a
    /// multipart form, or the reverse).
    #[error("token for another upload route")]
    WrongRoute,
}

/// The old name of [`TransferTokenError`].
#[deprecated(
    note = "renamed to `TransferTokenError` (smcp_server's `TokenError` is about bearer tokens)"
)]
pub type TokenError = TransferTokenError;

/// The key-ring purpose of transfer tokens (see `smcp_server::keys`).
pub const PURPOSE: &str = "files-transfer";

/// Signs claims with the ring's active key.
pub fn sign(ring: &KeyRing, claims: &Claims) -> String {
    // Claims are plain data: serializing them cannot fail.
    let json = serde_json::to_vec(claims).unwrap_or_default();
    ring.sign(PURPOSE, &json)
}

/// Verifies an upload token for `route`: [`verify`], and the route the token was issued
/// for (a token without one is refused: every upload token names its route).
pub fn verify_upload(
    ring: &KeyRing,
    token: &str,
    route: Route,
    now: u64,
) -> Result<Claims, TransferTokenError> {
    let claims = verify(ring, token, Direction::Upload, now)?;
    if claims.via != Some(route) {
        return Err(TransferTokenError::WrongRoute);
    }
    Ok(claims)
}

/// Verifies a token's signature, direction and expiry at `now` (Unix seconds).
pub fn verify(
    ring: &KeyRing,
    token: &str,
    dir: Direction,
    now: u64,
) -> Result<Claims, TransferTokenError> {
    let json = ring.verify(PURPOSE, token).map_err(|e| match e {
        OpenError::Malformed => TransferTokenError::Malformed,
        _ => TransferTokenError::BadSignature,
    })?;
    let claims: Claims =
        serde_json::from_slice(&json).map_err(|_| TransferTokenError::Malformed)?;
    if claims.dir != dir {
        return Err(TransferTokenError::WrongDirection);
    }
    if now >= claims.exp {
        return Err(TransferTokenError::Expired);
    }
    Ok(claims)
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
            via: Some(Route::Put),
        }
    }

    fn ring(id: &str, byte: u8) -> KeyRing {
        KeyRing::new(smcp_server::Key::new(id, [byte; 32]).unwrap())
    }

    #[test]
    fn sign_verify_expire_forge_rotate() {
        use base64::Engine as _;
        use base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let ring = ring("k1", 1);
        let t = sign(&ring, &claims(Direction::Upload));
        assert_eq!(
            verify(&ring, &t, Direction::Upload, 99),
            Ok(claims(Direction::Upload))
        );
        assert_eq!(
            verify(&ring, &t, Direction::Upload, 100),
            Err(TransferTokenError::Expired)
        );
        assert_eq!(
            verify(&ring, &t, Direction::Download, 1),
            Err(TransferTokenError::WrongDirection)
        );
        // Forged: claims changed, tag kept.
        let mut forged = claims(Direction::Upload);
        forged.size = Some(6);
        let forged_payload =
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&forged).unwrap_or_default());
        let parts: Vec<&str> = t.split('.').collect();
        let forged = format!("{}.{forged_payload}.{}", parts[0], parts[2]);
        assert_eq!(
            verify(&ring, &forged, Direction::Upload, 1),
            Err(TransferTokenError::BadSignature)
        );
        // Another ring's key under the same id.
        assert_eq!(
            verify(&self::ring("k1", 2), &t, Direction::Upload, 1),
            Err(TransferTokenError::BadSignature)
        );
        // Rotation: a ring that signs with k2 still verifies k1's tokens.
        let rotated = KeyRing::new(smcp_server::Key::new("k2", [2; 32]).unwrap())
            .with_previous(smcp_server::Key::new("k1", [1; 32]).unwrap());
        assert!(verify(&rotated, &t, Direction::Upload, 1).is_ok());
        // Bound to its route.
        assert!(verify_upload(&ring, &t, Route::Put, 1).is_ok());
        assert_eq!(
            verify_upload(&ring, &t, Route::Form, 1),
            Err(TransferTokenError::WrongRoute)
        );
        let mut unbound = claims(Direction::Upload);
        unbound.via = None;
        assert_eq!(
            verify_upload(&ring, &sign(&ring, &unbound), Route::Put, 1),
            Err(TransferTokenError::WrongRoute)
        );
        assert_eq!(
            verify(&ring, "nonsense", Direction::Upload, 1),
            Err(TransferTokenError::Malformed)
        );
        // A value the ring signed for another purpose is not a transfer token.
        let foreign = ring.sign(
            "mrtr-state",
            &serde_json::to_vec(&claims(Direction::Upload)).unwrap(),
        );
        assert_eq!(
            verify(&ring, &foreign, Direction::Upload, 1),
            Err(TransferTokenError::BadSignature)
        );
    }
}
