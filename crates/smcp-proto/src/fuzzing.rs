//! Entry points for the fuzz targets in `fuzz/` (the `fuzzing` feature): internals the
//! targets compare against the public API. Not a stable API.

use crate::jsonrpc::IncomingRequest;

/// The one-pass route of [`crate::jsonrpc::Incoming::parse`] alone: `None` where it declines
/// and the precise route decides.
pub fn one_pass(bytes: &[u8]) -> Option<IncomingRequest<'_>> {
    crate::jsonrpc::incoming::fast(bytes)
}

/// Whether the scan the one-pass route runs first lets `bytes` through.
pub fn screen_passes(bytes: &[u8]) -> bool {
    crate::jsonrpc::screen(bytes).is_some()
}
