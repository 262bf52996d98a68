//! How the HTTP transport frames a JSON-RPC message on an SSE stream: a leaf that the responses
//! and the listen stream both read.

use crate::core::context::Framing;

/// SSE framing: one JSON-RPC message per event, in one `data:` line (compact JSON has no line
/// breaks), no event name, no id (REQUIREMENTS A1 item 12).
pub(crate) const SSE: Framing = Framing {
    prefix: b"data: ",
    suffix: b"\n\n",
};
