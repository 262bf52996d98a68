//! Which revisions a request belongs to: 2026-07-28, or the earlier revisions' sessions
//! (2025-11-25, 2025-06-18, 2025-03-26, served with feature `legacy`). Decided here for every
//! transport: a transport says what its request declares ([`Declared`]) and whether it names
//! a session, this module decides.
//!
//! | request | era |
//! |---|---|
//! | names a session, declares no version or an earlier one | earlier: that session ([`in_session`]) |
//! | `initialize` declaring no version or an earlier one | earlier: a new session ([`asks_for_session`]) |
//! | declares an earlier version, and `_meta` has no 2026-07-28 protocol version | earlier, refused for its missing session ([`is_earlier`]) |
//! | anything else | 2026-07-28 |
//!
//! Where a request declares its version: over HTTP in `MCP-Protocol-Version`; over stdio,
//! which has no headers, in `_meta`: a request without `_meta` declares nothing (as the
//! earlier revisions' requests are sent), one with `_meta` declares it the 2026-07-28 way.
//! Where the earlier revisions are not served, an `initialize` that asks for a session is
//! answered −32022, naming the versions that are ([`unsupported`]).

use serde_json::Value;
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::{ClientRequest, IncomingRequest};
use smcp_proto::messages::method;

use super::versions::SUPPORTED_VERSIONS;

/// The version a request declares where its transport carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Declared {
    /// None: an HTTP request without `MCP-Protocol-Version`, a stdio request without `_meta`.
    Nothing,
    /// One of the earlier revisions served here.
    #[cfg(feature = "legacy")]
    Earlier,
    /// Anything else: 2026-07-28, a version this server does not know, an unreadable header.
    Other,
}

impl Declared {
    /// The version a header names (its optional whitespace trimmed).
    #[cfg(feature = "legacy")]
    pub(crate) fn version(text: &str) -> Self {
        if super::versions::is_legacy(text.trim_matches([' ', '\t'])) {
            Self::Earlier
        } else {
            Self::Other
        }
    }

    /// What a request on a stream declares: nothing without `_meta`.
    #[cfg(feature = "stdio")]
    pub(crate) fn on_stream(request: &IncomingRequest<'_>) -> Self {
        match request.meta {
            None => Self::Nothing,
            Some(_) => Self::Other,
        }
    }
}

/// Whether `request` asks for a session of the earlier revisions: an `initialize` that
/// declares no version or an earlier one.
pub(crate) fn asks_for_session(declared: Declared, request: &IncomingRequest<'_>) -> bool {
    request.method == method::INITIALIZE && declared != Declared::Other
}

/// Whether a request belongs to a session by what its transport read before the body: it
/// names a session, and declares no version or an earlier one.
#[cfg(feature = "legacy")]
pub(crate) fn in_session(declared: Declared, names_session: bool) -> bool {
    names_session && declared != Declared::Other
}

/// Whether a request that names no session belongs to the earlier revisions: it asks for a
/// session, or it declares an earlier version and its `_meta` no 2026-07-28 one (it is then
/// refused for its missing session). With a 2026-07-28 `_meta` it stays a 2026-07-28
/// request, refused as a header mismatch (−32020).
#[cfg(feature = "legacy")]
pub(crate) fn is_earlier(declared: Declared, request: &IncomingRequest<'_>) -> bool {
    if request.method == method::INITIALIZE {
        return asks_for_session(declared, request);
    }
    declared == Declared::Earlier
        && !request
            .meta
            .as_ref()
            .is_some_and(|m| m.view().is_ok_and(|v| v.protocol_version.is_some()))
}

/// The answer to an `initialize` that asks for a session where none is served: −32022 naming
/// the versions this server speaks, and the one the client asked for.
pub(crate) fn unsupported(request: &IncomingRequest<'_>) -> ErrorObject {
    let requested = match &request.params {
        Ok(ClientRequest::Other(params)) => params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default(),
        _ => "",
    };
    ErrorObject::unsupported_protocol_version(SUPPORTED_VERSIONS, requested)
}

#[cfg(all(test, feature = "legacy"))]
mod tests {
    use super::*;
    use bytes::Bytes;
    use smcp_proto::jsonrpc::Incoming;

    fn decide(body: &str, declared: Declared, session: bool) -> (bool, bool, bool) {
        let body = Bytes::from(body.to_owned());
        let Ok(Incoming::Request(request)) = Incoming::parse(&body) else {
            panic!("{body:?}");
        };
        (
            asks_for_session(declared, &request),
            in_session(declared, session),
            is_earlier(declared, &request),
        )
    }

    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}"#;
    const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}"#;
    const CALL_2026: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;

    #[test]
    fn the_table_of_the_module() {
        use Declared::{Earlier, Nothing, Other};
        assert_eq!(Declared::version(" 2025-06-18\t"), Earlier);
        assert_eq!(Declared::version("2026-07-28"), Other);
        assert_eq!(Declared::version("2024-11-05"), Other);
        // initialize: a session unless it declares another version.
        assert_eq!(decide(INIT, Nothing, false), (true, false, true));
        assert_eq!(decide(INIT, Earlier, false), (true, false, true));
        assert_eq!(decide(INIT, Other, false), (false, false, false));
        // A session named: by the head alone.
        assert!(decide(CALL, Nothing, true).1 && decide(CALL, Earlier, true).1);
        assert!(!decide(CALL, Other, true).1);
        // An earlier version without a session, unless `_meta` is 2026-07-28's.
        assert!(decide(CALL, Earlier, false).2);
        assert!(!decide(CALL_2026, Earlier, false).2);
        assert!(!decide(CALL, Nothing, false).2 && !decide(CALL, Other, false).2);
    }

    #[test]
    fn an_unserved_initialize_names_what_it_asked_for() {
        let body = Bytes::from_static(INIT.as_bytes());
        let Ok(Incoming::Request(request)) = Incoming::parse(&body) else {
            panic!()
        };
        let error = unsupported(&request);
        assert_eq!(error.code, smcp_proto::error::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(error.data.unwrap()["requested"], "2025-06-18");
    }
}
