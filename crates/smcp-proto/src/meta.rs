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
/// JSON. Each is itself raw so the caller can say precisely what is wrong with it. A member
/// that appears more than once reads as its last occurrence, as in the full parse.
#[derive(Debug, Default)]
pub struct MetaView<'a> {
    /// `io.modelcontextprotocol/protocolVersion`.
    pub protocol_version: Option<&'a RawValue>,
    /// `io.modelcontextprotocol/clientCapabilities`.
    pub client_capabilities: Option<&'a RawValue>,
    /// `io.modelcontextprotocol/clientInfo`.
    pub client_info: Option<&'a RawValue>,
    /// `io.modelcontextprotocol/logLevel`.
    pub log_level: Option<&'a RawValue>,
    /// `progressToken`.
    pub progress_token: Option<&'a RawValue>,
}

/// Why a request's `_meta` cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetaError {
    /// `_meta` is not a JSON object.
    #[error("\"params._meta\" must be an object")]
    NotAnObject,
    /// `_meta` is not JSON the full parser accepts (say, a lone surrogate escape).
    #[error("\"params._meta\" is not valid JSON: {0}")]
    Malformed(String),
    /// An object in `_meta` has a member named like one of `serde_json`'s private markers
    /// (`$serde_json::private::RawValue`, `$serde_json::private::Number`). `serde_json::Value`
    /// reads such an object as something else (the marked string re-parsed as JSON), so two
    /// readers of the same `_meta` could disagree on what it says: it is refused instead.
    #[error("\"params._meta\" has a member named {0:?}, a name reserved by the JSON parser")]
    ReservedName(&'static str),
}

/// The member names `serde_json` treats as its own markers rather than as data.
const RESERVED_NAMES: [&str; 2] = [
    "$serde_json::private::RawValue",
    "$serde_json::private::Number",
];

impl<'a> MetaView<'a> {
    /// Reads the view. `Err` when `_meta` is not a JSON object, or when the full parser
    /// would not read it (so reading all of `_meta` later cannot fail).
    pub fn parse(raw: &'a RawValue) -> Result<Self, MetaError> {
        let json = raw.get();
        if !json.starts_with('{') {
            return Err(MetaError::NotAnObject);
        }
        if crate::jsonrpc::screen(json.as_bytes()).is_none() {
            // Something the scan cannot vouch for (it is conservative): the full parser decides.
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(json)
                .map_err(|e| MetaError::Malformed(e.to_string()))?;
        }
        Self::read(json)
    }

    /// [`MetaView::parse`] of text the full parser is known to read ([`RequestMeta`]).
    fn read(json: &'a str) -> Result<Self, MetaError> {
        // A reserved name is spelled with a `$`, or hidden behind an escape: without either,
        // there is none to look for.
        if memchr::memchr2(b'$', b'\\', json.as_bytes()).is_some() {
            check_names(json)?;
        }
        serde_json::from_str(json).map_err(|e| MetaError::Malformed(e.to_string()))
    }
}

/// `params._meta` of a [`crate::jsonrpc::IncomingRequest`], unparsed, and known to be JSON
/// the full parser reads: on the one-pass route the whole body passed the screen that vouches
/// for that, on the precise route it was written from a parsed value. So its
/// [`view`](Self::view) skips the scan [`MetaView::parse`] makes of text of unknown origin:
/// the `_meta` of every request is not scanned twice. Only this crate makes one; it derefs to
/// the raw JSON.
#[derive(Debug, Clone)]
pub struct RequestMeta<'a>(Cow<'a, RawValue>);

impl<'a> RequestMeta<'a> {
    /// `_meta` borrowed from a body that passed the screen.
    pub(crate) fn screened(raw: &'a RawValue) -> Self {
        Self(Cow::Borrowed(raw))
    }

    /// `_meta` written from a value the full parser produced.
    pub(crate) fn written(raw: Box<RawValue>) -> RequestMeta<'static> {
        RequestMeta(Cow::Owned(raw))
    }

    /// The view of the members read on every request: `Err` only when `_meta` is not an
    /// object or has a reserved member name.
    pub fn view(&self) -> Result<MetaView<'_>, MetaError> {
        let json = self.0.get();
        if !json.starts_with('{') {
            return Err(MetaError::NotAnObject);
        }
        MetaView::read(json)
    }

    /// Detaches it from the body (copies a borrowed `_meta`).
    pub fn into_owned(self) -> RequestMeta<'static> {
        RequestMeta(Cow::Owned(self.0.into_owned()))
    }

    /// Whether it borrows from the body it was parsed from.
    pub fn is_borrowed(&self) -> bool {
        matches!(self.0, Cow::Borrowed(_))
    }
}

impl std::ops::Deref for RequestMeta<'_> {
    type Target = RawValue;
    fn deref(&self) -> &RawValue {
        &self.0
    }
}

/// Refuses a reserved member name at any depth (names compared after unescaping).
fn check_names(json: &str) -> Result<(), MetaError> {
    struct Names(Option<&'static str>);
    impl<'de> de::DeserializeSeed<'de> for &mut Names {
        type Value = ();
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> de::Visitor<'de> for &mut Names {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(name) = map.next_key::<Cow<'de, str>>()? {
                if let Some(reserved) = RESERVED_NAMES.iter().find(|r| **r == name) {
                    self.0 = Some(reserved);
                    return Err(de::Error::custom("reserved member name"));
                }
                map.next_value_seed(&mut *self)?;
            }
            Ok(())
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq.next_element_seed(&mut *self)?.is_some() {}
            Ok(())
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
    }
    let mut names = Names(None);
    let mut de = serde_json::Deserializer::from_str(json);
    let read = de::DeserializeSeed::deserialize(&mut names, &mut de);
    match (read, names.0) {
        (_, Some(reserved)) => Err(MetaError::ReservedName(reserved)),
        (Ok(()), None) => Ok(()),
        (Err(e), None) => Err(MetaError::Malformed(e.to_string())),
    }
}

impl<'de> Deserialize<'de> for MetaView<'de> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ViewVisitor;
        impl<'de> de::Visitor<'de> for ViewVisitor {
            type Value = MetaView<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a _meta object")
            }
            fn visit_map<A: de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<MetaView<'de>, A::Error> {
                let mut view = MetaView::default();
                while let Some(member) = map.next_key::<Member>()? {
                    let slot = match member {
                        Member::ProtocolVersion => &mut view.protocol_version,
                        Member::ClientCapabilities => &mut view.client_capabilities,
                        Member::ClientInfo => &mut view.client_info,
                        Member::LogLevel => &mut view.log_level,
                        Member::ProgressToken => &mut view.progress_token,
                        Member::Other => {
                            map.next_value::<de::IgnoredAny>()?;
                            continue;
                        }
                    };
                    // A repeated member: the last one counts, as in the full parse.
                    *slot = Some(map.next_value()?);
                }
                Ok(view)
            }
        }
        deserializer.deserialize_map(ViewVisitor)
    }
}

/// Which member of [`MetaView`] a key names (read without copying the key).
enum Member {
    ProtocolVersion,
    ClientCapabilities,
    ClientInfo,
    LogLevel,
    ProgressToken,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MemberVisitor;
        impl de::Visitor<'_> for MemberVisitor {
            type Value = Member;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Member, E> {
                Ok(match key {
                    PROTOCOL_VERSION => Member::ProtocolVersion,
                    CLIENT_CAPABILITIES => Member::ClientCapabilities,
                    CLIENT_INFO => Member::ClientInfo,
                    LOG_LEVEL => Member::LogLevel,
                    PROGRESS_TOKEN => Member::ProgressToken,
                    _ => Member::Other,
                })
            }
        }
        deserializer.deserialize_str(MemberVisitor)
    }
}

/// One member of a `_meta` object (`meta`: its JSON text, which the full parser reads), parsed
/// alone: the other members are skipped, not built. A member given more than once reads as
/// its last occurrence, as in the full parse; `Ok(None)` when it is absent. For a reader that
/// needs one member of `_meta` and not the map of all of it.
pub fn member(meta: &str, name: &str) -> Result<Option<serde_json::Value>, serde_json::Error> {
    use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};

    /// Whether a member's name is the one looked for (compared without being kept).
    struct NameIs<'n>(&'n str);
    impl<'de> DeserializeSeed<'de> for NameIs<'_> {
        type Value = bool;
        fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
            deserializer.deserialize_str(self)
        }
    }
    impl Visitor<'_> for NameIs<'_> {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a member name")
        }
        fn visit_str<E: de::Error>(self, key: &str) -> Result<bool, E> {
            Ok(key == self.0)
        }
    }

    struct Find<'n>(&'n str);
    impl<'de> Visitor<'de> for Find<'_> {
        type Value = Option<serde_json::Value>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut found = None;
            while let Some(is) = map.next_key_seed(NameIs(self.0))? {
                if is {
                    found = Some(map.next_value()?);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(found)
        }
    }

    let mut deserializer = serde_json::Deserializer::from_str(meta);
    let found = de::Deserializer::deserialize_map(&mut deserializer, Find(name))?;
    deserializer.end()?;
    Ok(found)
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
    fn one_member_reads_as_in_the_full_parse() {
        let metas = [
            r#"{"a":1,"io.modelcontextprotocol/clientCapabilities":{"x":{}},"b":[1,{"c":2}]}"#,
            r#"{"io.modelcontextprotocol/clientCapabilities":{"x":{}},"io.modelcontextprotocol/clientCapabilities":{"y":true}}"#,
            r#"{"io.modelcontextprotocol\/clientCapabilities":{"escaped":{}}}"#,
            r#"{"io.modelcontextprotocol/logLevel":"debug"}"#,
            r#"{}"#,
        ];
        for text in metas {
            let full: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(text).unwrap();
            for name in [CLIENT_CAPABILITIES, LOG_LEVEL, "b", "missing"] {
                assert_eq!(
                    member(text, name).unwrap(),
                    full.get(name).cloned(),
                    "{name} in {text}"
                );
            }
        }
        assert!(member("[1]", CLIENT_CAPABILITIES).is_err());
        assert!(member(r#"{"a":1} x"#, "a").is_err());
    }

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
    fn a_repeated_member_reads_as_its_last_occurrence() {
        let raw = RawValue::from_string(format!(
            r#"{{"{PROTOCOL_VERSION}":"a","{CLIENT_INFO}":{{"name":"x"}},"{PROTOCOL_VERSION}":"b"}}"#
        ))
        .unwrap();
        let view = MetaView::parse(&raw).unwrap();
        assert_eq!(view.protocol_version.unwrap().get(), r#""b""#);
        assert_eq!(view.client_info.unwrap().get(), r#"{"name":"x"}"#);
        let full: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(raw.get()).unwrap();
        assert_eq!(full[PROTOCOL_VERSION], "b");
    }

    #[test]
    fn what_the_full_parser_refuses_is_malformed() {
        for bad in [
            r#"{"x":"\udc00"}"#,
            r#"{"x":1e400}"#,
            r#"{"progressToken":"\ud800"}"#,
        ] {
            let raw = RawValue::from_string(bad.to_owned()).unwrap();
            assert!(
                matches!(MetaView::parse(&raw), Err(MetaError::Malformed(_))),
                "{bad}"
            );
            assert!(serde_json::from_str::<serde_json::Value>(bad).is_err());
        }
        // The scan declines a four-digit exponent; the full parser reads it.
        let raw = RawValue::from_string(r#"{"x":1e-0400}"#.to_owned()).unwrap();
        assert!(MetaView::parse(&raw).is_ok());
        let raw = RawValue::from_string("[]".to_owned()).unwrap();
        assert_eq!(MetaView::parse(&raw).unwrap_err(), MetaError::NotAnObject);
    }

    #[test]
    fn serde_json_marker_names_are_refused_at_any_depth() {
        for (bad, name) in [
            (
                r#"{"$serde_json::private::RawValue":82}"#,
                RESERVED_NAMES[0],
            ),
            (
                r#"{"$serde_json::private::RawValue":"{\"a\":1}"}"#,
                RESERVED_NAMES[0],
            ),
            (
                r#"{"a":[{"b":{"\u0024serde_json::private::Number":"1"}}]}"#,
                RESERVED_NAMES[1],
            ),
        ] {
            let raw = RawValue::from_string(bad.to_owned()).unwrap();
            assert_eq!(
                MetaView::parse(&raw).unwrap_err(),
                MetaError::ReservedName(name),
                "{bad}"
            );
        }
        // Names that only resemble them, and `$` in values, are data.
        for good in [
            r#"{"$serde_json::private::RawValueX":1,"a":"$serde_json::private::Number"}"#,
            r#"{"\u0061":"\u0024"}"#,
        ] {
            let raw = RawValue::from_string(good.to_owned()).unwrap();
            assert!(MetaView::parse(&raw).is_ok(), "{good}");
        }
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
