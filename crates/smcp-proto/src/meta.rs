//! Reserved `_meta` keys (`basic/index.mdx` §_meta), and [`MetaView`]: the members of a
//! request's raw `_meta` a server reads on every request, borrowed.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de;
use serde_json::value::RawValue;

/// `params._meta` key carrying the request's protocol version (required on every request).
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `params._meta` key carrying the client's capabilities for this request (required).
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `params._meta` key carrying the client's `Implementation` (recommended).
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `result._meta` key carrying the server's `Implementation`.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `params._meta` key opting a request into `notifications/message` at or above a level.
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key tagging notifications and the close result of a `subscriptions/listen` stream.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// `params._meta` key opting a request into progress notifications.
pub const PROGRESS_TOKEN: &str = "progressToken";
/// W3C Trace Context parent, propagated unprefixed.
pub const TRACEPARENT: &str = "traceparent";
/// W3C Trace Context state.
pub const TRACESTATE: &str = "tracestate";
/// W3C Baggage.
pub const BAGGAGE: &str = "baggage";

/// The members of a request's `_meta` a server reads on every request, borrowed from the raw
/// JSON. Each is itself raw so the caller can say precisely what is wrong with it.
#[derive(Debug, Default, Deserialize)]
pub struct MetaView<'a> {
    /// `io.modelcontextprotocol/protocolVersion`.
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    pub protocol_version: Option<&'a RawValue>,
    /// `io.modelcontextprotocol/clientCapabilities`.
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow, default)]
    pub client_capabilities: Option<&'a RawValue>,
    /// `io.modelcontextprotocol/logLevel`.
    #[serde(rename = "io.modelcontextprotocol/logLevel", borrow, default)]
    pub log_level: Option<&'a RawValue>,
    /// `progressToken`.
    #[serde(rename = "progressToken", borrow, default)]
    pub progress_token: Option<&'a RawValue>,
}

impl<'a> MetaView<'a> {
    /// Reads the view; `Err` when `_meta` is not a JSON object.
    pub fn parse(raw: &'a RawValue) -> Result<Self, serde_json::Error> {
        if !raw.get().starts_with('{') {
            return Err(de::Error::custom("_meta must be an object"));
        }
        serde_json::from_str(raw.get())
    }
}

/// The string in `raw`, if it is a JSON string; borrowed unless it has escapes.
pub fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let json = raw.get();
    if !json.starts_with('"') {
        return None;
    }
    // serde gives `Cow<str>` only owned; `&str` borrows when there is nothing to unescape.
    match serde_json::from_str::<&str>(json) {
        Ok(text) => Some(Cow::Borrowed(text)),
        Err(_) => serde_json::from_str::<String>(json).ok().map(Cow::Owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn view_borrows_the_members() {
        let raw = serde_json::value::to_raw_value(&json!({
            PROTOCOL_VERSION: "2026-07-28", LOG_LEVEL: "info", "other": [1]}))
        .unwrap();
        let view = MetaView::parse(&raw).unwrap();
        assert_eq!(
            raw_str(view.protocol_version.unwrap()).unwrap(),
            "2026-07-28"
        );
        assert_eq!(view.log_level.unwrap().get(), "\"info\"");
        assert!(view.client_capabilities.is_none() && view.progress_token.is_none());
    }

    #[test]
    fn meta_must_be_an_object() {
        let raw = serde_json::value::to_raw_value(&json!([1])).unwrap();
        assert!(MetaView::parse(&raw).is_err());
        let raw = serde_json::value::to_raw_value(&json!("x")).unwrap();
        assert!(MetaView::parse(&raw).is_err());
    }

    #[test]
    fn raw_str_borrows_unless_escaped() {
        let plain = RawValue::from_string("\"2026-07-28\"".to_owned()).unwrap();
        assert!(matches!(raw_str(&plain), Some(Cow::Borrowed("2026-07-28"))));
        let escaped = RawValue::from_string(r#""a\"b\u00e9""#.to_owned()).unwrap();
        assert_eq!(raw_str(&escaped).as_deref(), Some("a\"bé"));
        assert!(matches!(raw_str(&escaped), Some(Cow::Owned(_))));
        assert!(raw_str(&RawValue::from_string("1".to_owned()).unwrap()).is_none());
    }
}
