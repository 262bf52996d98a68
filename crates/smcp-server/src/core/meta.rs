//! The members of a request's `_meta` every request must get right (`basic/index.mdx`
//! §_meta), read from the raw JSON without parsing the rest. Each reader says precisely what
//! is wrong (−32602); a transport calls them in the order its validation pipeline needs.

use std::borrow::Cow;

use serde_json::Value;
use serde_json::value::RawValue;
use smcp_proto::basic::LoggingLevel;
use smcp_proto::error::ErrorObject;
use smcp_proto::meta::{self, MetaView, raw_str};

fn invalid(message: String) -> ErrorObject {
    ErrorObject::invalid_params(message)
}

/// `params._meta`, which every request must carry, as a view of the members read here.
pub(crate) fn require(raw: Option<&RawValue>) -> Result<MetaView<'_>, ErrorObject> {
    let raw = raw.ok_or_else(|| {
        invalid(format!(
            "\"params._meta\" is required and must carry {:?} and {:?}",
            meta::PROTOCOL_VERSION,
            meta::CLIENT_CAPABILITIES
        ))
    })?;
    MetaView::parse(raw).map_err(|_| invalid("\"params._meta\" must be an object".to_owned()))
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

/// `progressToken`: a string or an integer; anything else is ignored (no progress).
pub(crate) fn progress_token(view: &MetaView<'_>) -> Option<Value> {
    view.progress_token
        .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
}
