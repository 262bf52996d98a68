//! Sealing `requestState` (`basic/patterns/mrtr.mdx` §Server Requirements 4–5).
//!
//! The client echoes `requestState` verbatim, so it is attacker-controlled input. It is sealed
//! with the server's [`KeyRing`] (authenticated encryption: tampering is detected and the
//! content is not readable), under the purpose `mrtr-state`, so a retry may land on any
//! instance that shares the ring. The sealed envelope binds:
//!
//! - the method and a digest of the salient params (tool/prompt name and arguments, resource
//!   URI): state minted for one request is refused on another;
//! - the principal, when the request had one: state is refused for anyone else;
//! - an expiry: state is refused after it lapses;
//! - the round number, so the framework can cap the number of rounds.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::core::keys::{KeyRing, OpenError};

/// The key-ring purpose of `requestState`.
pub(crate) const PURPOSE: &str = "mrtr-state";

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
    /// The input keys this state's `InputRequiredResult` asked for: the only `inputResponses`
    /// the next round accepts (an answer nobody asked for is never taken).
    #[serde(rename = "q", default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) asked: Vec<String>,
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
    let plaintext = serde_json::to_vec(envelope).map_err(|e| e.to_string())?;
    ring.seal(PURPOSE, &plaintext).map_err(|e| e.to_string())
}

pub(crate) fn open(ring: &KeyRing, token: &str, max_len: usize) -> Result<Envelope, StateError> {
    if token.len() > max_len {
        return Err(StateError::TooLarge);
    }
    let plaintext = ring.open(PURPOSE, token).map_err(|e| match e {
        OpenError::UnknownKey => StateError::UnknownKey,
        OpenError::Tampered => StateError::Tampered,
        _ => StateError::Malformed,
    })?;
    serde_json::from_slice(&plaintext).map_err(|_| StateError::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::keys::Key;

    fn envelope() -> Envelope {
        Envelope {
            method: "tools/call".into(),
            digest: "d".into(),
            principal: None,
            expires_ms: 1,
            round: 1,
            id: "j".into(),
            asked: vec!["confirm".into()],
            answers: Map::new(),
            state: Some(serde_json::json!({"step": 1})),
        }
    }

    #[test]
    fn round_trips_and_maps_refusals() {
        let ring = KeyRing::new(Key::new("k1", [7; 32]).unwrap());
        let token = seal(&ring, &envelope()).unwrap();
        assert_eq!(open(&ring, &token, 1 << 16).unwrap(), envelope());
        assert_eq!(open(&ring, &token, 10), Err(StateError::TooLarge));
        let other = KeyRing::new(Key::new("k2", [7; 32]).unwrap());
        assert_eq!(open(&other, &token, 1 << 16), Err(StateError::UnknownKey));
        let impostor = KeyRing::new(Key::new("k1", [8; 32]).unwrap());
        assert_eq!(open(&impostor, &token, 1 << 16), Err(StateError::Tampered));
        assert_eq!(
            open(&ring, "v1.k1.AAAA", 1 << 16),
            Err(StateError::Malformed)
        );
        // A value the ring sealed for another purpose is not a requestState.
        let foreign = ring.seal("files-transfer", b"{}").unwrap();
        assert_eq!(open(&ring, &foreign, 1 << 16), Err(StateError::Tampered));
    }
}
