//! The members of a request's `_meta` every request must get right (`basic/index.mdx`
//! §_meta), read from the raw JSON without parsing the rest. Each reader says precisely what
//! is wrong (−32602); a transport calls them in the order its validation pipeline needs.

use std::borrow::Cow;
use std::ops::Range;

use bytes::Bytes;
use serde_json::Value;
use serde_json::value::RawValue;
use smcp_proto::basic::LoggingLevel;
use smcp_proto::error::ErrorObject;
use smcp_proto::meta::{self, MetaView, RequestMeta, raw_str};

fn invalid(message: String) -> ErrorObject {
    ErrorObject::invalid_params(message)
}

/// `params._meta`, which every request must carry, as a view of the members read here.
pub(crate) fn require<'a>(raw: Option<&'a RequestMeta<'_>>) -> Result<MetaView<'a>, ErrorObject> {
    let raw = raw.ok_or_else(|| {
        invalid(format!(
            "\"params._meta\" is required and must carry {:?} and {:?}",
            meta::PROTOCOL_VERSION,
            meta::CLIENT_CAPABILITIES
        ))
    })?;
    raw.view().map_err(|e| invalid(e.to_string()))
}

/// `io.modelcontextprotocol/protocolVersion`: required, a string.
pub(crate) fn protocol_version<'a>(view: &MetaView<'a>) -> Result<Cow<'a, str>, ErrorObject> {
    let raw = view.protocol_version.ok_or_else(|| {
        invalid(format!(
            "\"params._meta[{:?}]\" is required",
            meta::PROTOCOL_VERSION
        ))
    })?;
    raw_str(raw).ok_or_else(|| {
        invalid(format!(
            "\"params._meta[{:?}]\" must be a string",
            meta::PROTOCOL_VERSION
        ))
    })
}

/// `io.modelcontextprotocol/clientCapabilities`: required, an object.
pub(crate) fn client_capabilities(view: &MetaView<'_>) -> Result<(), ErrorObject> {
    match view.client_capabilities {
        Some(raw) if raw.get().starts_with('{') => Ok(()),
        Some(_) => Err(invalid(format!(
            "\"params._meta[{:?}]\" must be an object",
            meta::CLIENT_CAPABILITIES
        ))),
        None => Err(invalid(format!(
            "\"params._meta[{:?}]\" is required",
            meta::CLIENT_CAPABILITIES
        ))),
    }
}

/// `io.modelcontextprotocol/logLevel`: optional, one of the eight level names.
pub(crate) fn log_level(view: &MetaView<'_>) -> Result<Option<LoggingLevel>, ErrorObject> {
    let Some(raw) = view.log_level else {
        return Ok(None);
    };
    let level = raw_str(raw).ok_or_else(|| {
        invalid(format!(
            "\"params._meta[{:?}]\" must be a string",
            meta::LOG_LEVEL
        ))
    })?;
    LoggingLevel::parse(&level).map(Some).ok_or_else(|| {
        invalid(format!(
            "\"params._meta[{:?}]\" must be one of debug, info, notice, warning, error, \
             critical, alert, emergency",
            meta::LOG_LEVEL
        ))
    })
}

/// `io.modelcontextprotocol/clientInfo`: optional, an `Implementation` object (its members
/// are the client's own word and not checked further: servers should not act on them).
pub(crate) fn client_info(view: &MetaView<'_>) -> Result<(), ErrorObject> {
    match view.client_info {
        Some(raw) if !raw.get().starts_with('{') => Err(invalid(format!(
            "\"params._meta[{:?}]\" must be an object",
            meta::CLIENT_INFO
        ))),
        _ => Ok(()),
    }
}

/// `progressToken`: optional, a string or an integer (`basic/patterns/progress.mdx`).
pub(crate) fn progress_token(view: &MetaView<'_>) -> Result<Option<Value>, ErrorObject> {
    let Some(raw) = view.progress_token else {
        return Ok(None);
    };
    // `MetaView::parse` vouched that the full parser reads all of `_meta`.
    let token = serde_json::from_str::<Value>(raw.get()).ok();
    match token {
        Some(t) if t.is_string() || t.is_i64() || t.is_u64() => Ok(Some(t)),
        _ => Err(invalid(format!(
            "\"params._meta[{:?}]\" must be a string or an integer",
            meta::PROGRESS_TOKEN
        ))),
    }
}

/// The optional members, after the required ones: client info, log level, progress token.
/// `meta` is the text `view` was read from.
pub(crate) fn optional(
    view: &MetaView<'_>,
    meta: Option<&RawValue>,
) -> Result<Admitted, ErrorObject> {
    client_info(view)?;
    Ok(Admitted {
        log_level: log_level(view)?,
        progress_token: progress_token(view)?,
        client_capabilities: meta
            .zip(view.client_capabilities)
            .and_then(|(meta, caps)| range_in(meta.get(), caps.get())),
    })
}

/// Where `part`, a slice of `whole`, lies in it.
fn range_in(whole: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= whole.len()).then_some(start..end)
}

/// What a transport read from a request's `_meta` while admitting it.
#[derive(Debug)]
pub(crate) struct Admitted {
    /// `io.modelcontextprotocol/logLevel`.
    pub(crate) log_level: Option<LoggingLevel>,
    /// `progressToken`.
    pub(crate) progress_token: Option<Value>,
    /// Where `io.modelcontextprotocol/clientCapabilities` lies in the text of `_meta`, so a
    /// handler that asks reads it alone.
    pub(crate) client_capabilities: Option<Range<usize>>,
}

impl Admitted {
    /// Whether a handler may send anything before its response: progress (with a progress
    /// token) or log messages (with a log level, on a server that logs). Without either a
    /// transport need not make an event channel.
    pub(crate) fn may_emit(&self, logging: bool) -> bool {
        self.progress_token.is_some() || (self.log_level.is_some() && logging)
    }
}

/// The `_meta` checks of a request on a transport that carries all metadata inline (stdio):
/// the HTTP pipeline's order without its header steps. A legacy `initialize` (no `_meta`)
/// gets −32022 naming the versions this server speaks; then `_meta` present and readable
/// (−32602), its protocol version present and supported (−32022), client capabilities, then
/// client info, log level and progress token of the right type (−32602).
#[cfg(feature = "stdio")]
pub(crate) fn admit(
    request: &smcp_proto::jsonrpc::IncomingRequest<'_>,
) -> Result<Admitted, ErrorObject> {
    use super::era::{self, Declared};
    use super::server::SUPPORTED_VERSIONS;
    if era::asks_for_session(Declared::on_stream(request), request) {
        return Err(era::unsupported(request));
    }
    let view = require(request.meta.as_ref())?;
    let version = protocol_version(&view)?;
    if !SUPPORTED_VERSIONS.contains(&&*version) {
        return Err(ErrorObject::unsupported_protocol_version(
            SUPPORTED_VERSIONS,
            &version,
        ));
    }
    client_capabilities(&view)?;
    optional(&view, request.meta.as_deref())
}

/// `_meta` as a slice of the message it was parsed from (no copy), or a copy when it is not
/// from `message` (the precise parser's route re-serializes it).
pub(crate) fn meta_bytes(message: &Bytes, meta: &RawValue) -> Bytes {
    let json = meta.get().as_bytes();
    let start = (json.as_ptr() as usize).wrapping_sub(message.as_ptr() as usize);
    match start.checked_add(json.len()) {
        Some(end) if start <= message.len() && end <= message.len() => message.slice(start..end),
        _ => Bytes::copy_from_slice(json),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn admission_finds_where_the_capabilities_are() {
        let raw = RawValue::from_string(
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities": {"sampling":{}} ,"x":1}"#
                .to_owned(),
        )
        .unwrap();
        let view = MetaView::parse(&raw).unwrap();
        let at = optional(&view, Some(&raw))
            .unwrap()
            .client_capabilities
            .unwrap();
        assert_eq!(&raw.get()[at], r#"{"sampling":{}}"#);
        // Text the view was not read from: no place.
        let other = RawValue::from_string(raw.get().to_owned()).unwrap();
        assert_eq!(
            optional(&view, Some(&other)).unwrap().client_capabilities,
            None
        );
        assert_eq!(optional(&view, None).unwrap().client_capabilities, None);
    }

    #[test]
    fn meta_is_a_slice_of_the_body_or_a_copy() {
        let body = Bytes::from_static(br#"{"params":{"_meta":{"a":1},"name":"x"}}"#);
        #[derive(serde::Deserialize)]
        struct P<'a> {
            #[serde(borrow)]
            params: Inner<'a>,
        }
        #[derive(serde::Deserialize)]
        struct Inner<'a> {
            #[serde(borrow, rename = "_meta")]
            meta: &'a RawValue,
        }
        let parsed: P<'_> = serde_json::from_slice(&body).unwrap();
        let sliced = meta_bytes(&body, parsed.params.meta);
        assert_eq!(&sliced[..], br#"{"a":1}"#);
        // A slice shares the body's storage.
        assert!(body.as_ptr_range().contains(&sliced.as_ptr()));
        let elsewhere = serde_json::value::to_raw_value(&json!({"a": 1})).unwrap();
        let copied = meta_bytes(&body, &elsewhere);
        assert_eq!(&copied[..], br#"{"a":1}"#);
        assert!(!body.as_ptr_range().contains(&copied.as_ptr()));
    }
}
