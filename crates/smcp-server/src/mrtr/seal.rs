//! Sealing `requestState` (`basic/patterns/mrtr.mdx` §Server Requirements 4–5).
//!
//! The client echoes `requestState` verbatim, so it is attacker-controlled input. We seal it
//! with XChaCha20-Poly1305 (authenticated encryption: tampering is detected and the content
//! is not readable) under a key from a [`KeyRing`] shared by every instance, so a retry may
//! land on any of them. The sealed envelope binds:
//!
//! - the method and a digest of the salient params (tool/prompt name and arguments, resource
//!   URI): state minted for one request is refused on another;
//! - the principal, when the request had one: state is refused for anyone else;
//! - an expiry: state is refused after it lapses;
//! - the round number, so the framework can cap the number of rounds.
//!
//! Wire format: `v1.<key id>.<base64url(nonce ‖ ciphertext ‖ tag)>`; the key id is also
//! authenticated (associated data). Rotation: put the new key first in the ring and keep the
//! old one behind it until the longest state TTL has passed; retries in flight still open.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

const VERSION_PREFIX: &str = "v1.";
const NONCE_LEN: usize = 24;
const AAD_PREFIX: &[u8] = b"smcp/mrtr/v1/";

/// One sealing key with its id (the id travels in clear in every token).
#[derive(Clone)]
pub struct StateKey {
    id: String,
    cipher: XChaCha20Poly1305,
}

impl fmt::Debug for StateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateKey")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Why a key could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The id is empty or has characters other than `[A-Za-z0-9_-]`.
    #[error("a state key id must be 1-32 characters of A-Z a-z 0-9 _ -, got {0:?}")]
    BadId(String),
    /// The key material is not 32 bytes of base64url (or standard base64).
    #[error("a state key must be 32 bytes, base64-encoded: {0}")]
    BadKey(String),
    /// The system random number generator failed.
    #[error("no randomness available: {0}")]
    Random(String),
}

impl StateKey {
    /// A key from its id and 32 bytes of secret material.
    pub fn new(id: impl Into<String>, key: [u8; 32]) -> Result<Self, KeyError> {
        let id = id.into();
        if id.is_empty()
            || id.len() > 32
            || !id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(KeyError::BadId(id));
        }
        Ok(Self {
            id,
            cipher: XChaCha20Poly1305::new(Key::from_slice(&key)),
        })
    }

    /// Parses `ID:BASE64` (32 bytes of key material, base64url or standard alphabet).
    pub fn parse(spec: &str) -> Result<Self, KeyError> {
        let (id, material) = spec
            .split_once(':')
            .ok_or_else(|| KeyError::BadKey("expected ID:BASE64".to_owned()))?;
        let bytes = URL_SAFE_NO_PAD
            .decode(material.trim_end_matches('='))
            .or_else(|_| base64::engine::general_purpose::STANDARD.decode(material))
            .map_err(|e| KeyError::BadKey(e.to_string()))?;
        let key: [u8; 32] = bytes
            .try_into()
            .map_err(|b: Vec<u8>| KeyError::BadKey(format!("got {} bytes", b.len())))?;
        Self::new(id, key)
    }

    /// A fresh random key (e.g. for a single instance, or to print one for configuration).
    pub fn generate(id: impl Into<String>) -> Result<Self, KeyError> {
        Self::new(id, random_bytes::<32>()?)
    }

    /// The key's id.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// The keys that seal and open `requestState`: the first seals, all of them open.
#[derive(Clone, Debug)]
pub struct KeyRing {
    keys: Vec<StateKey>,
}

impl KeyRing {
    /// A ring whose active (sealing) key is `active`.
    pub fn new(active: StateKey) -> Self {
        Self { keys: vec![active] }
    }

    /// Also accepts state sealed with `key` (a previous key, during rotation).
    #[must_use]
    pub fn with_previous(mut self, key: StateKey) -> Self {
        self.keys.push(key);
        self
    }

    /// A ring with one random key. Retries then only open on this process: configure a shared
    /// ring when several instances serve the same clients.
    pub fn ephemeral() -> Result<Self, KeyError> {
        Ok(Self::new(StateKey::generate("ephemeral")?))
    }

    fn active(&self) -> &StateKey {
        &self.keys[0]
    }

    fn find(&self, id: &str) -> Option<&StateKey> {
        self.keys.iter().find(|k| k.id == id)
    }
}

pub(crate) fn random_bytes<const N: usize>() -> Result<[u8; N], KeyError> {
    let mut out = [0u8; N];
    getrandom::fill(&mut out).map_err(|e| KeyError::Random(e.to_string()))?;
    Ok(out)
}

/// What a sealed `requestState` carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Envelope {
    /// Method of the originating request.
    #[serde(rename = "m")]
    pub(crate) method: String,
    /// Digest of its salient params.
    #[serde(rename = "d")]
    pub(crate) digest: String,
    /// The principal, when the request had one.
    #[serde(rename = "p", default, skip_serializing_if = "Option::is_none")]
    pub(crate) principal: Option<String>,
    /// Expiry, milliseconds since the Unix epoch.
    #[serde(rename = "e")]
    pub(crate) expires_ms: u64,
    /// How many `InputRequiredResult`s this chain has produced, this one included.
    #[serde(rename = "n")]
    pub(crate) round: u32,
    /// Random id of this state, for single-use enforcement.
    #[serde(rename = "j")]
    pub(crate) id: String,
    /// Answers the handler consumed in earlier rounds, by input key.
    #[serde(rename = "a", default, skip_serializing_if = "Map::is_empty")]
    pub(crate) answers: Map<String, Value>,
    /// The handler's own state.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub(crate) state: Option<Value>,
}

/// Why a `requestState` was refused. The `reason` strings are stable and appear in
/// `error.data.reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// Not a state this server could have issued.
    #[error("malformed")]
    Malformed,
    /// Sealed with a key that is not (or no longer) in the ring.
    #[error("unknownKey")]
    UnknownKey,
    /// Failed authentication: modified, or forged.
    #[error("tampered")]
    Tampered,
    /// Past its expiry.
    #[error("expired")]
    Expired,
    /// Minted for another method, tool, prompt, resource or other arguments.
    #[error("wrongRequest")]
    WrongRequest,
    /// Minted for another principal.
    #[error("wrongPrincipal")]
    WrongPrincipal,
    /// Larger than the configured limit.
    #[error("tooLarge")]
    TooLarge,
    /// Already used, for a handler that requires single use.
    #[error("replayed")]
    Replayed,
}

pub(crate) fn seal(ring: &KeyRing, envelope: &Envelope) -> Result<String, String> {
    let key = ring.active();
    let plaintext = serde_json::to_vec(envelope).map_err(|e| e.to_string())?;
    let nonce = random_bytes::<NONCE_LEN>().map_err(|e| e.to_string())?;
    let aad = [AAD_PREFIX, key.id.as_bytes()].concat();
    let sealed = key
        .cipher
        .encrypt(
            XNonce::from_slice(&nonce),
            Payload {
                msg: &plaintext,
                aad: &aad,
            },
        )
        .map_err(|_| "encryption failed".to_owned())?;
    let mut raw = Vec::with_capacity(NONCE_LEN + sealed.len());
    raw.extend_from_slice(&nonce);
    raw.extend_from_slice(&sealed);
    Ok(format!(
        "{VERSION_PREFIX}{}.{}",
        key.id,
        URL_SAFE_NO_PAD.encode(raw)
    ))
}

pub(crate) fn open(ring: &KeyRing, token: &str, max_len: usize) -> Result<Envelope, StateError> {
    if token.len() > max_len {
        return Err(StateError::TooLarge);
    }
    let rest = token
        .strip_prefix(VERSION_PREFIX)
        .ok_or(StateError::Malformed)?;
    let (kid, body) = rest.split_once('.').ok_or(StateError::Malformed)?;
    let key = ring.find(kid).ok_or(StateError::UnknownKey)?;
    let raw = URL_SAFE_NO_PAD
        .decode(body)
        .map_err(|_| StateError::Malformed)?;
    if raw.len() < NONCE_LEN + 16 {
        return Err(StateError::Malformed);
    }
    let (nonce, sealed) = raw.split_at(NONCE_LEN);
    let aad = [AAD_PREFIX, kid.as_bytes()].concat();
    let plaintext = key
        .cipher
        .decrypt(
            XNonce::from_slice(nonce),
            Payload {
                msg: sealed,
                aad: &aad,
            },
        )
        .map_err(|_| StateError::Tampered)?;
    serde_json::from_slice(&plaintext).map_err(|_| StateError::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope() -> Envelope {
        Envelope {
            method: "tools/call".into(),
            digest: "d".into(),
            principal: None,
            expires_ms: 1,
            round: 1,
            id: "j".into(),
            answers: Map::new(),
            state: Some(serde_json::json!({"step": 1})),
        }
    }

    #[test]
    fn round_trips_and_detects_every_flipped_byte() {
        let ring = KeyRing::new(StateKey::new("k1", [7; 32]).unwrap());
        let token = seal(&ring, &envelope()).unwrap();
        assert_eq!(open(&ring, &token, 1 << 16).unwrap(), envelope());
        let bytes = token.as_bytes();
        for i in 0..bytes.len() {
            let mut t = bytes.to_vec();
            t[i] = if t[i] == b'A' { b'B' } else { b'A' };
            let Ok(t) = String::from_utf8(t) else {
                continue;
            };
            if t == token {
                continue;
            }
            assert!(open(&ring, &t, 1 << 16).is_err(), "flip at {i} accepted");
        }
    }

    #[test]
    fn rotation_and_unknown_keys() {
        let old = StateKey::new("old", [1; 32]).unwrap();
        let new = StateKey::new("new", [2; 32]).unwrap();
        let token = seal(&KeyRing::new(old.clone()), &envelope()).unwrap();
        let rotated = KeyRing::new(new.clone()).with_previous(old);
        assert!(
            open(&rotated, &token, 1 << 16).is_ok(),
            "in-flight retries survive rotation"
        );
        let retired = KeyRing::new(new);
        assert_eq!(open(&retired, &token, 1 << 16), Err(StateError::UnknownKey));
        // Same id, different material: authentication fails.
        let impostor = KeyRing::new(StateKey::new("old", [3; 32]).unwrap());
        assert_eq!(open(&impostor, &token, 1 << 16), Err(StateError::Tampered));
    }

    #[test]
    fn refuses_malformed_and_oversized() {
        let ring = KeyRing::new(StateKey::new("k", [9; 32]).unwrap());
        for t in [
            "",
            "v1.",
            "v1.k",
            "v2.k.AAAA",
            "v1.k.!!!",
            "v1.k.AAAA",
            "eyJhIjoxfQ",
        ] {
            assert!(open(&ring, t, 1 << 16).is_err(), "{t:?}");
        }
        let token = seal(&ring, &envelope()).unwrap();
        assert_eq!(open(&ring, &token, 10), Err(StateError::TooLarge));
    }

    #[test]
    fn key_parsing() {
        let k = StateKey::parse("prod-1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").unwrap();
        assert_eq!(k.id(), "prod-1");
        assert!(StateKey::parse("nocolon").is_err());
        assert!(StateKey::parse("a:AAAA").is_err());
        assert!(StateKey::parse("bad id:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").is_err());
    }
}
