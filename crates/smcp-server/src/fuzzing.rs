//! Entry points for the fuzz targets in `fuzz/` (the `fuzzing` feature): the server's parsers
//! of untrusted input that are not reachable through the public API. Not a stable API.

use std::collections::BTreeMap;
use std::ops::Range;

use http::HeaderMap;
use serde_json::{Map, Value};
use smcp_proto::x_mcp_header::HeaderParam;

use crate::core::keys::KeyRing;
use crate::core::mrtr::StateError;
use crate::core::mrtr::seal::{self, Envelope};
use crate::core::pagination;
use crate::core::uri_template::UriTemplate;

/// Seals a `requestState` envelope given as JSON (members as `seal.rs` names them: `m`,
/// `d`, `p`, `e`, `n`, `j`, `q`, `a`, `s`); `Err` when it is not one.
pub fn seal_request_state(ring: &KeyRing, envelope: &Value) -> Result<String, String> {
    let envelope: Envelope = serde_json::from_value(envelope.clone()).map_err(|e| e.to_string())?;
    seal::seal(ring, &envelope)
}

/// Opens a `requestState` as the server does, returning the envelope as JSON.
pub fn open_request_state(
    ring: &KeyRing,
    token: &str,
    max_len: usize,
) -> Result<Value, StateError> {
    let envelope = seal::open(ring, token, max_len)?;
    serde_json::to_value(envelope).map_err(|_| StateError::Malformed)
}

/// The cursor of the page starting at `offset`.
pub fn encode_cursor(offset: usize) -> String {
    pagination::encode(offset)
}

/// The offset a cursor names, if it is one of ours.
pub fn decode_cursor(cursor: &str) -> Option<usize> {
    pagination::decode(cursor)
}

/// The page of a list of `len` items for `cursor`: its range and the next cursor.
pub fn page(
    len: usize,
    cursor: Option<&str>,
    page_size: usize,
) -> Result<(Range<usize>, Option<String>), String> {
    let items: Vec<usize> = (0..len).collect();
    let (slice, next) = pagination::page(&items, cursor, page_size)?;
    let start = slice.first().copied().unwrap_or(len);
    Ok((start..start + slice.len(), next))
}

/// Parses `template` as the server does at registration and matches `uri` against it.
pub fn match_uri_template(
    template: &str,
    uri: &str,
) -> Result<Option<BTreeMap<String, String>>, String> {
    Ok(UriTemplate::parse(template)?.matches(uri))
}

/// The server's check of `Mcp-Param-*` headers against a call's arguments.
pub fn check_param_headers(
    headers: &HeaderMap,
    params: &[HeaderParam],
    arguments: &Map<String, Value>,
) -> Result<(), String> {
    crate::http::mirror::check_param_headers(headers, params, arguments)
}
