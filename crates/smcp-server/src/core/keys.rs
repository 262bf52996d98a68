//! One key ring for everything smcp seals or signs, and one clock.
//!
//! A value a client carries back to the server — MRTR `requestState`, a SEP-2631 transfer
//! token — must be verifiable by any instance, so it is protected by a key every instance
//! shares. [`KeyRing`] is that one implementation: 32-byte keys with ids, the first one
//! active, the others accepted during rotation. Each use names its **purpose**
//! (`"mrtr-state"`, `"files-transfer"`, …); the key used is derived from the configured secret
//! and the purpose (HMAC-SHA256), so a value minted for one purpose never verifies for
//! another, even when an operator configures the same secret for both.
//!
//! Two operations, two token shapes:
//!
//! - [`KeyRing::seal`] / [`KeyRing::open`]: authenticated encryption (XChaCha20-Poly1305),
//!   for values whose content the client must not read. `v1.<key id>.<base64url(nonce ‖
//!   ciphertext ‖ tag)>`; the key id and purpose are associated data.
//! - [`KeyRing::sign`] / [`KeyRing::verify`]: HMAC-SHA256, for values the client may read
//!   but not change. `<key id>.<base64url(payload)>.<base64url(tag)>`.
//!
//! Randomness comes from the operating system only ([`random_bytes`]); there is no fallback.
//! Time comes from a [`Clock`], so expiry is testable without waiting.
//!
//! Rotation: put the new key first and keep the old one behind it (`with_previous`) until the
//! longest lifetime of anything it sealed or signed has passed.

use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chacha20poly1305::aead::{Aead, KeyInit as _, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hmac::Mac as _;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The source of "now" for every expiry: [`system_clock`] in production, a fixed or
/// stepped function in tests.
pub type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// The wall clock.
pub fn system_clock() -> Clock {
    Arc::new(SystemTime::now)
}

/// Milliseconds since the Unix epoch at `clock`'s now (0 before the epoch).
pub fn unix_millis(clock: &Clock) -> u64 {
    clock()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

const SEALED_PREFIX: &str = "v1.";
const NONCE_LEN: usize = 24;
const TAG_LEN: usize = 16;
/// Longest token [`KeyRing::verify`] reads; a larger one is malformed without decoding.
const MAX_SIGNED_LEN: usize = 16 * 1024;

/// Why a key could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The id is empty, longer than 32 characters, or has characters other than
    /// `[A-Za-z0-9_-]`.
    #[error("a key id must be 1-32 characters of A-Z a-z 0-9 _ -, got {0:?}")]
    BadId(String),
    /// The key material is not 32 bytes of base64 (url-safe or standard alphabet).
    #[error("a key must be 32 bytes, base64-encoded: {0}")]
    BadKey(String),
    /// The operating system's random number generator failed.
    #[error("no randomness available: {0}")]
    Random(String),
}

/// Why a sealed or signed token was refused. Deliberately coarse: a caller learns nothing
/// about which check failed beyond these three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// Not a token this ring could have made (shape, encoding, size).
    #[error("malformed")]
    Malformed,
    /// Made with a key that is not (or no longer) in the ring.
    #[error("unknownKey")]
    UnknownKey,
    /// Failed authentication: modified, forged, or made for another purpose.
    #[error("tampered")]
    Tampered,
}

/// One 32-byte secret and its id (the id travels in clear in every token).
#[derive(Clone)]
pub struct Key {
    id: String,
    secret: [u8; 32],
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Key")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Key {
    /// A key from its id and 32 bytes of secret material.
    pub fn new(id: impl Into<String>, secret: [u8; 32]) -> Result<Self, KeyError> {
        let id = id.into();
        let valid = (1..=32).contains(&id.len())
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid {
            return Err(KeyError::BadId(id));
        }
        Ok(Self { id, secret })
    }

    /// Parses `ID:BASE64` (32 bytes of key material, url-safe or standard alphabet, padding
    /// optional), the form operators configure.
    pub fn parse(spec: &str) -> Result<Self, KeyError> {
        let (id, material) = spec
            .split_once(':')
            .ok_or_else(|| KeyError::BadKey("expected ID:BASE64".to_owned()))?;
        let material = material.trim();
        let bytes = URL_SAFE_NO_PAD
            .decode(material.trim_end_matches('='))
            .or_else(|_| STANDARD.decode(material))
            .map_err(|_| KeyError::BadKey("not base64".to_owned()))?;
        let secret: [u8; 32] = bytes
            .try_into()
            .map_err(|b: Vec<u8>| KeyError::BadKey(format!("got {} bytes", b.len())))?;
        Self::new(id, secret)
    }

    /// A fresh random key.
    pub fn generate(id: impl Into<String>) -> Result<Self, KeyError> {
        Self::new(id, random_bytes::<32>()?)
    }

    /// The key's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// `ID:BASE64`, the form [`Key::parse`] reads (for printing a generated key).
    pub fn to_spec(&self) -> String {
        format!("{}:{}", self.id, URL_SAFE_NO_PAD.encode(self.secret))
    }

    /// The key for `purpose`: HMAC-SHA256(secret, "smcp/v1/" ‖ purpose).
    fn derive(&self, purpose: &str) -> [u8; 32] {
        let mut mac = hmac_with(&self.secret);
        mac.update(b"smcp/v1/");
        mac.update(purpose.as_bytes());
        mac.finalize().into_bytes().into()
    }
}

fn hmac_with(key: &[u8]) -> HmacSha256 {
    // HMAC takes keys of any length, so this cannot fail.
    <HmacSha256 as hmac::KeyInit>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC accepts every key length"))
}

/// The keys that seal, open, sign and verify: the first is active, all are accepted.
///
/// # Examples
///
/// Rotating keys: the new key seals, the previous one still opens what it sealed.
///
/// ```
/// use smcp_server::mrtr::{Key, KeyRing};
///
/// # fn main() -> Result<(), smcp_server::KeyError> {
/// let old = Key::generate("2025-01")?;
/// let new = Key::generate("2025-02")?;
/// let sealed = KeyRing::new(old.clone()).seal("demo", b"state")?;
/// let ring = KeyRing::new(new).with_previous(old);
/// assert_eq!(ring.active_id(), "2025-02");
/// assert_eq!(ring.open("demo", &sealed).ok().as_deref(), Some(&b"state"[..]));
/// # Ok(()) }
/// ```
///
/// Configure one with [`ServerBuilder::mrtr`](crate::ServerBuilder::mrtr).
#[derive(Clone, Debug)]
pub struct KeyRing {
    keys: Vec<Key>,
}

impl KeyRing {
    /// A ring whose active key is `active`.
    pub fn new(active: Key) -> Self {
        Self { keys: vec![active] }
    }

    /// Also accepts what `key` made (a previous key, during rotation).
    #[must_use]
    pub fn with_previous(mut self, key: Key) -> Self {
        self.keys.push(key);
        self
    }

    /// A ring with one random key. What it makes only verifies in this process: configure a
    /// shared ring when several instances serve the same clients.
    pub fn ephemeral() -> Result<Self, KeyError> {
        Ok(Self::new(Key::generate("ephemeral")?))
    }

    /// A ring from `ID:BASE64` specs, the first active; `Ok(None)` when there are none.
    pub fn parse_all<S: AsRef<str>>(specs: &[S]) -> Result<Option<Self>, KeyError> {
        let mut keys = specs.iter().map(|s| Key::parse(s.as_ref().trim()));
        let Some(active) = keys.next().transpose()? else {
            return Ok(None);
        };
        keys.try_fold(Self::new(active), |ring, key| Ok(ring.with_previous(key?)))
            .map(Some)
    }

    /// The active key's id.
    pub fn active_id(&self) -> &str {
        &self.active().id
    }

    fn active(&self) -> &Key {
        // `new` makes a ring with one key and nothing removes keys.
        &self.keys[0]
    }

    fn find(&self, id: &str) -> Option<&Key> {
        self.keys.iter().find(|k| k.id == id)
    }

    /// Encrypts and authenticates `plaintext` for `purpose` under the active key.
    pub fn seal(&self, purpose: &str, plaintext: &[u8]) -> Result<String, KeyError> {
        let key = self.active();
        let cipher = XChaCha20Poly1305::new(&key.derive(purpose).into());
        let nonce = random_bytes::<NONCE_LEN>()?;
        let aad = associated_data(purpose, &key.id);
        let sealed = cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: plaintext,
                    aad: &aad,
                },
            )
            .map_err(|_| KeyError::Random("encryption failed".to_owned()))?;
        let mut raw = Vec::with_capacity(NONCE_LEN + sealed.len());
        raw.extend_from_slice(&nonce);
        raw.extend_from_slice(&sealed);
        Ok(format!(
            "{SEALED_PREFIX}{}.{}",
            key.id,
            URL_SAFE_NO_PAD.encode(raw)
        ))
    }

    /// Opens a token [`KeyRing::seal`] made for `purpose` with any key of the ring.
    pub fn open(&self, purpose: &str, token: &str) -> Result<Vec<u8>, OpenError> {
        let rest = token
            .strip_prefix(SEALED_PREFIX)
            .ok_or(OpenError::Malformed)?;
        let (kid, body) = rest.split_once('.').ok_or(OpenError::Malformed)?;
        let key = self.find(kid).ok_or(OpenError::UnknownKey)?;
        let raw = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| OpenError::Malformed)?;
        if raw.len() < NONCE_LEN + TAG_LEN {
            return Err(OpenError::Malformed);
        }
        let (nonce, sealed) = raw.split_at(NONCE_LEN);
        let cipher = XChaCha20Poly1305::new(&key.derive(purpose).into());
        cipher
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: &associated_data(purpose, kid),
                },
            )
            .map_err(|_| OpenError::Tampered)
    }

    /// Signs `payload` for `purpose` under the active key (the payload stays readable).
    pub fn sign(&self, purpose: &str, payload: &[u8]) -> String {
        let key = self.active();
        let signed = format!("{}.{}", key.id, URL_SAFE_NO_PAD.encode(payload));
        let tag = tag(&key.derive(purpose), signed.as_bytes());
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(tag))
    }

    /// Checks a token [`KeyRing::sign`] made for `purpose`; returns its payload.
    pub fn verify(&self, purpose: &str, token: &str) -> Result<Vec<u8>, OpenError> {
        if token.len() > MAX_SIGNED_LEN {
            return Err(OpenError::Malformed);
        }
        let (signed, tag_b64) = token.rsplit_once('.').ok_or(OpenError::Malformed)?;
        let (kid, payload) = signed.split_once('.').ok_or(OpenError::Malformed)?;
        let key = self.find(kid).ok_or(OpenError::UnknownKey)?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag_b64)
            .map_err(|_| OpenError::Malformed)?;
        let mut mac = hmac_with(&key.derive(purpose));
        mac.update(signed.as_bytes());
        mac.verify_slice(&tag).map_err(|_| OpenError::Tampered)?;
        URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| OpenError::Malformed)
    }
}

fn associated_data(purpose: &str, kid: &str) -> Vec<u8> {
    [
        b"smcp/".as_slice(),
        purpose.as_bytes(),
        b"/v1/",
        kid.as_bytes(),
    ]
    .concat()
}

fn tag(key: &[u8; 32], signed: &[u8]) -> Vec<u8> {
    let mut mac = hmac_with(key);
    mac.update(signed);
    mac.finalize().into_bytes().to_vec()
}

/// `N` bytes from the operating system's random number generator; an error, never a weaker
/// fallback, when it fails.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], KeyError> {
    let mut out = [0u8; N];
    getrandom::fill(&mut out).map_err(|e| KeyError::Random(e.to_string()))?;
    Ok(out)
}

/// Lowercase hex of `N` random bytes (ids, nonces in names).
pub fn random_hex<const N: usize>() -> Result<String, KeyError> {
    use std::fmt::Write as _;
    let bytes = random_bytes::<N>()?;
    let mut out = String::with_capacity(N * 2);
    for b in bytes {
        // Writing to a String cannot fail.
        let _ = write!(out, "{b:02x}");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(id: &str, byte: u8) -> KeyRing {
        KeyRing::new(Key::new(id, [byte; 32]).unwrap())
    }

    #[test]
    fn seal_round_trips_and_detects_every_flipped_byte() {
        let r = ring("k1", 7);
        let token = r.seal("mrtr-state", b"hello").unwrap();
        assert_eq!(r.open("mrtr-state", &token).unwrap(), b"hello");
        let bytes = token.as_bytes();
        for i in 0..bytes.len() {
            let mut t = bytes.to_vec();
            t[i] = if t[i] == b'A' { b'B' } else { b'A' };
            let Ok(t) = String::from_utf8(t) else {
                continue;
            };
            if t != token {
                assert!(r.open("mrtr-state", &t).is_err(), "flip at {i} accepted");
            }
        }
    }

    #[test]
    fn purposes_do_not_cross() {
        let r = ring("k", 3);
        let sealed = r.seal("a", b"x").unwrap();
        assert_eq!(r.open("b", &sealed), Err(OpenError::Tampered));
        let signed = r.sign("a", b"x");
        assert_eq!(r.verify("b", &signed), Err(OpenError::Tampered));
        assert_eq!(r.verify("a", &signed).unwrap(), b"x");
    }

    #[test]
    fn rotation_and_unknown_keys() {
        let old = Key::new("old", [1; 32]).unwrap();
        let new = Key::new("new", [2; 32]).unwrap();
        let sealed = KeyRing::new(old.clone()).seal("p", b"s").unwrap();
        let signed = KeyRing::new(old.clone()).sign("p", b"s");
        let rotated = KeyRing::new(new.clone()).with_previous(old);
        assert!(rotated.open("p", &sealed).is_ok());
        assert!(rotated.verify("p", &signed).is_ok());
        let retired = KeyRing::new(new);
        assert_eq!(retired.open("p", &sealed), Err(OpenError::UnknownKey));
        assert_eq!(retired.verify("p", &signed), Err(OpenError::UnknownKey));
        let impostor = ring("old", 3);
        assert_eq!(impostor.open("p", &sealed), Err(OpenError::Tampered));
        assert_eq!(impostor.verify("p", &signed), Err(OpenError::Tampered));
    }

    #[test]
    fn refuses_malformed_tokens() {
        let r = ring("k", 9);
        for t in [
            "",
            "v1.",
            "v1.k",
            "v2.k.AAAA",
            "v1.k.!!!",
            "v1.k.AAAA",
            "eyJhIjoxfQ",
        ] {
            assert!(r.open("p", t).is_err(), "{t:?}");
        }
        for t in ["", "k", "k.AA", "k.!!.AA", "k.AA.!!"] {
            assert!(r.verify("p", t).is_err(), "{t:?}");
        }
        assert_eq!(
            r.verify("p", &"x".repeat(MAX_SIGNED_LEN + 1)),
            Err(OpenError::Malformed)
        );
    }

    #[test]
    fn key_specs() {
        let k = Key::parse("prod-1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").unwrap();
        assert_eq!(k.id(), "prod-1");
        assert_eq!(Key::parse(&k.to_spec()).unwrap().secret, k.secret);
        assert!(Key::parse("nocolon").is_err());
        assert!(Key::parse("a:AAAA").is_err());
        assert!(Key::parse("bad id:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").is_err());
        assert!(KeyRing::parse_all::<&str>(&[]).unwrap().is_none());
        let ring = KeyRing::parse_all(&[
            "a:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            "b:AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(ring.active_id(), "a");
        assert!(KeyRing::parse_all(&["a:AAAA"]).is_err());
    }

    #[test]
    fn random_hex_is_hex_of_the_right_length() {
        let h = random_hex::<16>().unwrap();
        assert_eq!(h.len(), 32);
        assert!(h.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(h, random_hex::<16>().unwrap());
    }
}
