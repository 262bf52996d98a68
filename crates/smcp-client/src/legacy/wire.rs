//! What changes on the wire between 2026-07-28 and the stateful revisions: the `initialize`
//! request, the per-request `_meta` members that do not exist there, and the methods and
//! features that exist only in 2026-07-28.

use std::time::Duration;

use serde_json::{Map, Value, json};
use smcp_proto::basic::Implementation;
use smcp_proto::ext::tasks;
use smcp_proto::jsonrpc::Request;
use smcp_proto::messages::method;
use smcp_proto::meta;

use crate::error::{Error, Kind, Result};
use crate::mrtr::InputKinds;

/// Longest wait for the `initialize` answer.
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// The stateful Streamable HTTP revisions this client speaks, preferred first.
pub(crate) const SESSION_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];
/// The HTTP+SSE revision (its `initialize` may still negotiate a later one).
pub(crate) const SSE_VERSION: &str = "2024-11-05";

/// Whether `version` is one this client speaks in a stateful session.
pub(crate) fn speaks(version: &str) -> bool {
    SESSION_VERSIONS.contains(&version) || version == SSE_VERSION
}

/// Whether requests carry `MCP-Protocol-Version` (2025-06-18 and later).
pub(crate) fn sends_version_header(version: &str) -> bool {
    !matches!(version, "2025-03-26" | SSE_VERSION)
}

/// The `initialize` params: the version, the capabilities the handler answers, `clientInfo`.
pub(crate) fn initialize_params(
    version: &str,
    kinds: InputKinds,
    client_info: Option<&Implementation>,
) -> Value {
    let mut caps = Map::new();
    if kinds.elicitation_form || kinds.elicitation_url {
        // The form/url split is 2025-11-25's; earlier revisions know elicitation as a whole.
        let mut e = Map::new();
        if version == "2025-11-25" {
            if kinds.elicitation_form {
                e.insert("form".to_owned(), json!({}));
            }
            if kinds.elicitation_url {
                e.insert("url".to_owned(), json!({}));
            }
        }
        caps.insert("elicitation".to_owned(), Value::Object(e));
    }
    if kinds.sampling {
        caps.insert("sampling".to_owned(), json!({}));
    }
    if kinds.roots {
        caps.insert("roots".to_owned(), json!({"listChanged": false}));
    }
    let info = client_info.map_or_else(
        || json!({"name": "smcp-client", "version": env!("CARGO_PKG_VERSION")}),
        |i| serde_json::to_value(i).unwrap_or_else(|_| json!({})),
    );
    json!({"protocolVersion": version, "capabilities": caps, "clientInfo": info})
}

/// Checks the `protocolVersion` of an `InitializeResult` against what this client speaks.
pub(crate) fn accept_version(result: &Value, offered: &str, pinned: bool) -> Result<String> {
    let Some(answered) = result.get("protocolVersion").and_then(Value::as_str) else {
        return Err(Error::protocol(
            "the initialize result has no protocolVersion string",
        ));
    };
    let ok = if pinned {
        answered == offered
    } else {
        speaks(answered)
    };
    if ok {
        return Ok(answered.to_owned());
    }
    let speaks: Vec<String> = if pinned {
        vec![offered.to_owned()]
    } else {
        let mut v = vec![smcp_proto::PROTOCOL_VERSION.to_owned()];
        v.extend(SESSION_VERSIONS.iter().map(|s| (*s).to_owned()));
        v.push(SSE_VERSION.to_owned());
        v
    };
    Err(Error::new(Kind::NoCommonVersion {
        offered: vec![offered.to_owned()],
        speaks,
        server: format!("answered initialize with {answered:?}, which this client does not speak"),
    }))
}

/// The `_meta` log level a 2026-07-28 request asks for (a session sets it with
/// `logging/setLevel` instead).
pub(crate) fn requested_log_level(request: &Request) -> Option<String> {
    request
        .params
        .as_ref()?
        .get("_meta")?
        .get(meta::LOG_LEVEL)?
        .as_str()
        .map(str::to_owned)
}

/// Rewrites a 2026-07-28 request for a stateful session: drops the `_meta` members that
/// exist only per-request in 2026-07-28 (they were said once in `initialize`), and refuses
/// what the older revisions do not have.
pub(crate) fn to_session_request(request: &Request, version: &str) -> Result<Request> {
    let not_in_era = |feature: &str| {
        Err(Error::new(Kind::NotInEra {
            feature: feature.to_owned(),
            version: version.to_owned(),
        }))
    };
    match request.method.as_str() {
        method::DISCOVER => return not_in_era("server/discover"),
        tasks::METHOD_GET | tasks::METHOD_UPDATE | tasks::METHOD_CANCEL => {
            return not_in_era("SEP-2663 tasks");
        }
        smcp_proto::ext::files::METHOD_AUTHORIZE_UPLOAD
        | smcp_proto::ext::files::METHOD_AUTHORIZE_DOWNLOAD => {
            return not_in_era("SEP-2631 file transfer");
        }
        _ => {}
    }
    let mut out = request.clone();
    if let Some(Value::Object(params)) = &mut out.params {
        if params.contains_key("requestState") || params.contains_key("inputResponses") {
            return not_in_era("requestState/inputResponses (multi round-trip requests)");
        }
        if let Some(Value::Object(m)) = params.get_mut("_meta") {
            for key in [
                meta::PROTOCOL_VERSION,
                meta::CLIENT_CAPABILITIES,
                meta::CLIENT_INFO,
                meta::LOG_LEVEL,
            ] {
                m.remove(key);
            }
            if m.is_empty() {
                params.remove("_meta");
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_requests_lose_the_per_request_meta_and_keep_the_rest() {
        let r = Request {
            id: 7.into(),
            method: "tools/call".to_owned(),
            params: Some(json!({"name": "t", "_meta": {
                meta::PROTOCOL_VERSION: "2026-07-28", meta::CLIENT_INFO: {}, meta::CLIENT_CAPABILITIES: {},
                meta::PROGRESS_TOKEN: 3}})),
        };
        let out = to_session_request(&r, "2025-11-25").unwrap();
        assert_eq!(
            out.params,
            Some(json!({"name": "t", "_meta": {"progressToken": 3}}))
        );
        let d = Request {
            id: 1.into(),
            method: method::DISCOVER.to_owned(),
            params: None,
        };
        let e = to_session_request(&d, "2025-06-18").unwrap_err();
        assert!(
            e.is_unsupported_in_era() && e.negotiated_version() == Some("2025-06-18"),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("server/discover exists only in MCP 2026-07-28"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_initialize_answer_names_both_sides() {
        let e = accept_version(
            &json!({"protocolVersion": "2024-10-07"}),
            "2025-11-25",
            false,
        )
        .unwrap_err();
        assert!(e.is_version_mismatch());
        let t = e.to_string();
        assert!(t.contains("offered 2025-11-25"), "{t}");
        assert!(
            t.contains("2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05"),
            "{t}"
        );
        assert!(t.contains("\"2024-10-07\""), "{t}");
        assert_eq!(
            accept_version(
                &json!({"protocolVersion": "2025-06-18"}),
                "2025-11-25",
                false
            )
            .unwrap(),
            "2025-06-18"
        );
        assert!(
            accept_version(
                &json!({"protocolVersion": "2025-06-18"}),
                "2025-11-25",
                true
            )
            .is_err()
        );
    }
}
