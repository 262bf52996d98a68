//! MCP error codes and their `data` shapes (`basic/index.mdx` §Error Codes, `schema.ts`).
//!
//! Standard JSON-RPC codes plus the three MCP codes of 2026-07-28. Every constructor here
//! produces exactly the shape the schema requires, so a conforming error cannot be built wrong.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid JSON-RPC request.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not available (HTTP 404 on Streamable HTTP).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;
/// Internal JSON-RPC error.
pub const INTERNAL_ERROR: i64 = -32603;
/// An HTTP header does not match the body, or a required header is missing or malformed.
pub const HEADER_MISMATCH: i64 = -32020;
/// The request needs a client capability that was not declared on it.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// The requested protocol version is not supported.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: i64,
    /// A short human-readable description.
    pub message: String,
    /// Additional information; its shape depends on the code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// `error.data` of an [`UNSUPPORTED_PROTOCOL_VERSION`] error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnsupportedProtocolVersionData {
    /// Versions the server supports.
    pub supported: Vec<String>,
    /// The version the client asked for.
    pub requested: String,
}

/// `error.data` of a [`MISSING_REQUIRED_CLIENT_CAPABILITY`] error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the request needs, as a `ClientCapabilities` object.
    pub required_capabilities: serde_json::Map<String, Value>,
}

impl ErrorObject {
    /// An error with a code and message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data`.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// −32700.
    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(PARSE_ERROR, message)
    }

    /// −32600.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(INVALID_REQUEST, message)
    }

    /// −32601 naming the method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    /// −32602.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    /// −32603.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }

    /// −32020.
    pub fn header_mismatch(message: impl Into<String>) -> Self {
        Self::new(HEADER_MISMATCH, message)
    }

    /// −32022 with `data: {supported, requested}`.
    pub fn unsupported_protocol_version(supported: &[&str], requested: &str) -> Self {
        let data = UnsupportedProtocolVersionData {
            supported: supported.iter().map(|s| (*s).to_owned()).collect(),
            requested: requested.to_owned(),
        };
        Self::new(
            UNSUPPORTED_PROTOCOL_VERSION,
            format!(
                "Unsupported protocol version {requested:?}; this server supports {}",
                supported.join(", ")
            ),
        )
        .with_data(json!(data))
    }

    /// −32021 with `data: {requiredCapabilities}`; `capabilities` must be a JSON object such
    /// as `{"elicitation": {}}`.
    pub fn missing_required_client_capability(
        message: impl Into<String>,
        capabilities: serde_json::Map<String, Value>,
    ) -> Self {
        let data = MissingRequiredClientCapabilityData {
            required_capabilities: capabilities,
        };
        Self::new(MISSING_REQUIRED_CLIENT_CAPABILITY, message).with_data(json!(data))
    }

    /// The `data` of a −32022 error, when it has the right shape.
    pub fn unsupported_version_data(&self) -> Option<UnsupportedProtocolVersionData> {
        if self.code != UNSUPPORTED_PROTOCOL_VERSION {
            return None;
        }
        serde_json::from_value(self.data.clone()?).ok()
    }
}

impl std::fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsupported_version_shape() {
        let e = ErrorObject::unsupported_protocol_version(&["2026-07-28"], "1900-01-01");
        assert_eq!(e.code, -32022);
        assert_eq!(
            e.data,
            Some(json!({"supported": ["2026-07-28"], "requested": "1900-01-01"}))
        );
        assert_eq!(
            e.unsupported_version_data().unwrap().requested,
            "1900-01-01"
        );
    }

    #[test]
    fn missing_capability_shape() {
        let mut caps = serde_json::Map::new();
        caps.insert("sampling".into(), json!({}));
        let e = ErrorObject::missing_required_client_capability("needs sampling", caps);
        assert_eq!(e.code, -32021);
        assert_eq!(
            e.data,
            Some(json!({"requiredCapabilities": {"sampling": {}}}))
        );
    }
}
