//! Entry points for the fuzz targets in `fuzz/` (the `fuzzing` feature). Not a stable API.

use http::header::{HeaderName, HeaderValue};
use serde_json::{Map, Value};
use smcp_proto::x_mcp_header::HeaderParam;

/// The MCP headers the client sends with a request: `MCP-Protocol-Version`, `Mcp-Method`,
/// `Mcp-Name` and the `Mcp-Param-*` mirrors of `header_params`.
pub fn request_headers(
    version: &str,
    method: &str,
    params: &Map<String, Value>,
    header_params: &[HeaderParam],
) -> crate::Result<Vec<(HeaderName, HeaderValue)>> {
    crate::headers::request_headers(version, method, params, header_params)
}
