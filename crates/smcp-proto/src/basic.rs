//! Base protocol types (`basic/index.mdx`; `schema.ts` §Base types, §`_meta`, §Result).
//!
//! Shared building blocks: the `_meta` objects, [`ResultType`], [`Implementation`], [`Icon`],
//! [`Annotations`], [`LoggingLevel`], [`Role`] and [`CacheScope`]. Numbers the schema types as
//! `number` are `f64` in Rust and are written back in their shortest form (`50`, not `50.0`), so a
//! document survives a parse/serialize round trip unchanged.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::capabilities::ClientCapabilities;
pub use crate::json::JsonObject;
use crate::json::{num, open_string_enum};

/// A `_meta` object: free-form, keyed by (optionally prefixed) names (`basic/index.mdx` §_meta).
pub type Meta = Map<String, Value>;

/// A progress token: a string or a number, preserved exactly (same wire shape as a request id).
pub type ProgressToken = crate::jsonrpc::id::RequestId;

/// An opaque pagination cursor. An empty string is a real cursor, not "end of list".
pub type Cursor = String;

/// `params._meta` of a request (`schema.ts` `RequestMetaObject`).
///
/// The schema requires `protocolVersion` and `clientCapabilities`; they are `Option` here so a
/// server can report exactly which one is missing. Unknown keys are kept in [`Self::extra`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`: the protocol revision of this request.
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub protocol_version: Option<String>,
    /// `io.modelcontextprotocol/clientCapabilities`: what the client supports on this request.
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_capabilities: Option<ClientCapabilities>,
    /// `io.modelcontextprotocol/clientInfo`: the client's self-reported identity.
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// `io.modelcontextprotocol/logLevel`: opt-in to `notifications/message` at or above a level.
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
    /// `progressToken`: opt-in to `notifications/progress`.
    #[serde(
        rename = "progressToken",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub progress_token: Option<ProgressToken>,
    /// Every other key (trace context, extension keys, …), kept verbatim.
    #[serde(flatten)]
    pub extra: Meta,
}

impl RequestMeta {
    /// The `_meta` every request must carry: this crate's protocol version and `capabilities`.
    pub fn new(capabilities: ClientCapabilities) -> Self {
        Self {
            protocol_version: Some(crate::PROTOCOL_VERSION.to_owned()),
            client_capabilities: Some(capabilities),
            ..Self::default()
        }
    }
}

/// Params of a request that carries nothing but `_meta` (`schema.ts` `RequestParams`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestParams {
    /// Request metadata (required by the schema).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
}

/// Params of a notification that carries nothing but `_meta` (`schema.ts` `NotificationParams`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationParams {
    /// Notification metadata (e.g. `io.modelcontextprotocol/subscriptionId`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

open_string_enum! {
    /// `resultType` of every result (`basic/index.mdx` §ResultType).
    ///
    /// Absent on the wire means [`ResultType::Complete`] (older servers). Unknown values are kept
    /// as [`ResultType::Other`]; a client must treat them as invalid unless an extension it
    /// negotiated defines them.
    ResultType {
        /// `"complete"`: the result is final.
        Complete = "complete",
        /// `"input_required"`: an `InputRequiredResult`; the client must retry with responses.
        InputRequired = "input_required",
    }
}

#[allow(clippy::derivable_impls)] // the enum is macro-generated
impl Default for ResultType {
    fn default() -> Self {
        Self::Complete
    }
}

/// A result that carries nothing but `resultType` and `_meta` (`schema.ts` `EmptyResult`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyResult {
    /// Result metadata (e.g. `io.modelcontextprotocol/serverInfo`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The result type.
    #[serde(default)]
    pub result_type: ResultType,
}

/// Who may cache a cacheable result (`server/utilities/caching.mdx`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// No user-specific data: any cache may serve it across authorization contexts.
    Public,
    /// Reusable only within the same authorization context. The default when absent.
    #[default]
    Private,
}

/// The severity of a log message, ordered from least to most severe (RFC 5424).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// System is unusable.
    Emergency,
}

impl LoggingLevel {
    /// The wire name (`"debug"`, …, `"emergency"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }

    /// Parses a wire name; `None` for anything else.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "debug" => Self::Debug,
            "info" => Self::Info,
            "notice" => Self::Notice,
            "warning" => Self::Warning,
            "error" => Self::Error,
            "critical" => Self::Critical,
            "alert" => Self::Alert,
            "emergency" => Self::Emergency,
            _ => return None,
        })
    }
}

/// The sender or recipient of a message in a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant (the model).
    Assistant,
}

/// The UI theme an icon is designed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// For light backgrounds.
    Light,
    /// For dark backgrounds.
    Dark,
}

/// An icon a client can display (`schema.ts` `Icon`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// The icon's URI (`https:` or `data:`).
    pub src: String,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes it is available in (`"48x48"`, `"any"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme it is designed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon with only a `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Self {
            src: src.into(),
            mime_type: None,
            sizes: None,
            theme: None,
        }
    }
}

/// The name and version of a client or server (`schema.ts` `Implementation`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Version string.
    pub version: String,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Website URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
}

impl Implementation {
    /// An implementation with a name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            version: version.into(),
            description: None,
            website_url: None,
            icons: None,
        }
    }
}

/// Hints to the client about how to use or display an object (`schema.ts` `Annotations`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Intended audience(s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (most).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "num::opt_f64"
    )]
    pub priority: Option<f64>,
    /// ISO 8601 timestamp of the last modification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn result_type_absent_is_complete_and_unknown_is_kept() {
        let r: EmptyResult = serde_json::from_value(json!({})).unwrap();
        assert_eq!(r.result_type, ResultType::Complete);
        let r: EmptyResult = serde_json::from_value(json!({"resultType": "task"})).unwrap();
        assert_eq!(r.result_type, ResultType::Other("task".into()));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"resultType": "task"})
        );
        assert_eq!(
            serde_json::to_value(ResultType::InputRequired).unwrap(),
            json!("input_required")
        );
    }

    #[test]
    fn logging_levels_are_ordered() {
        assert!(LoggingLevel::Debug < LoggingLevel::Info);
        assert!(LoggingLevel::Warning < LoggingLevel::Emergency);
        let l: LoggingLevel = serde_json::from_value(json!("critical")).unwrap();
        assert_eq!(l, LoggingLevel::Critical);
        assert!(serde_json::from_value::<LoggingLevel>(json!("verbose")).is_err());
    }

    #[test]
    fn request_meta_keeps_known_and_unknown_keys() {
        let v = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
            "progressToken": 7,
            "traceparent": "00-abc-def-01",
        });
        let m: RequestMeta = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(m.protocol_version.as_deref(), Some("2026-07-28"));
        assert_eq!(m.progress_token, Some(ProgressToken::from(7)));
        assert_eq!(m.extra.len(), 1);
        assert_eq!(serde_json::to_value(&m).unwrap(), v);
    }

    #[test]
    fn integral_numbers_stay_integers() {
        let a = Annotations {
            priority: Some(1.0),
            ..Annotations::default()
        };
        assert_eq!(serde_json::to_string(&a).unwrap(), r#"{"priority":1}"#);
        let a = Annotations {
            priority: Some(0.25),
            ..Annotations::default()
        };
        assert_eq!(serde_json::to_string(&a).unwrap(), r#"{"priority":0.25}"#);
    }
}
