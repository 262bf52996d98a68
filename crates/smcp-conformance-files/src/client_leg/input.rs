//! [`INPUT_BYTES`]: the file the client under test uploads.

/// The input file the client sends: 40 bytes of text (fits the 64-byte inline fixture).
pub const INPUT_BYTES: &[u8] = b"SEP-2631 conformance input file, v1.\n\n\n\n";
