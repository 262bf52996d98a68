//! The one adapter between the 2026-07-28 request path and an earlier stateful revision
//! (2025-11-25, 2025-06-18, 2025-03-26; 2024-11-05 over HTTP+SSE), used alike by the HTTP
//! session (`session.rs`), HTTP+SSE (`sse.rs`) and the stdio session (`crate::stdio`):
//!
//! * the handshake, [`Initialize`]: the `initialize` request offering a version, its answer
//!   checked and read into the typed [`SessionInfo`], then [`initialized`];
//! * each outgoing request, [`Adapter::request`]: the per-request `_meta` members of
//!   2026-07-28 go (the session said them once, in `initialize`), and what exists only in
//!   2026-07-28 is refused with the typed error naming the negotiated version
//!   ([`Error::is_unsupported_in_era`](crate::Error::is_unsupported_in_era));
//! * each reply: an earlier revision's result is already what the request path reads (a
//!   result without `resultType` is a complete one in 2026-07-28 too), so the only reply read
//!   here is the `InitializeResult` ([`Initialize::accept`]); what the server sends unasked is
//!   mapped where it arrives: its requests answered by `answer.rs` (as the `InputRequest`s
//!   of 2026-07-28), its change notifications by `listen.rs`.
//!
//! The method names the earlier revisions have and 2026-07-28 does not are spelled here
//! ([`method`]); the others are `smcp_proto::messages::method`'s.

use std::time::Duration;

use serde_json::{Map, Value, json};
use smcp_proto::ext::{files, tasks};
use smcp_proto::jsonrpc::{Notification, Request, RequestId};
use smcp_proto::meta;

use super::info::{Era, LegacyConfig, SessionInfo};
use crate::error::{Error, Kind, Result};
use crate::mrtr::InputKinds;

/// The methods of the earlier revisions that 2026-07-28 does not have.
pub(crate) mod method {
    /// `initialize`: the first request of a session.
    pub(crate) const INITIALIZE: &str = "initialize";
    /// `notifications/initialized`: the client's answer to the `InitializeResult`.
    pub(crate) const INITIALIZED: &str = "notifications/initialized";
    /// `ping`, which a server may send the client.
    pub(crate) const PING: &str = "ping";
    /// `logging/setLevel`: the session's log level (2026-07-28 asks per request, in `_meta`).
    pub(crate) const LOGGING_SET_LEVEL: &str = "logging/setLevel";
    /// `resources/subscribe` (2026-07-28 subscribes in `subscriptions/listen`).
    pub(crate) const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
    /// `resources/unsubscribe`.
    pub(crate) const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
}

/// Longest wait for the `initialize` answer.
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// The stateful Streamable HTTP revisions this client speaks, preferred first.
pub(crate) const SESSION_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];
/// The HTTP+SSE revision (its `initialize` may still negotiate a later one).
pub(crate) const SSE_VERSION: &str = "2024-11-05";

/// Every version a client can be pinned to ([`ClientBuilder::protocol_version`]), newest
/// first.
///
/// [`ClientBuilder::protocol_version`]: crate::ClientBuilder::protocol_version
pub(crate) const SUPPORTED_VERSIONS: [&str; 5] = [
    smcp_proto::PROTOCOL_VERSION,
    SESSION_VERSIONS[0],
    SESSION_VERSIONS[1],
    SESSION_VERSIONS[2],
    SSE_VERSION,
];

/// Whether `version` is one this client speaks in a stateful session.
fn speaks(version: &str) -> bool {
    SESSION_VERSIONS.contains(&version) || version == SSE_VERSION
}

/// The `initialize` exchange that starts a session, the same on every transport.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Initialize<'a> {
    offered: &'a str,
    pinned: bool,
}

impl<'a> Initialize<'a> {
    /// Offers the pinned version, or else the newest this client speaks in a session (the
    /// server may answer with another it prefers).
    pub(crate) fn new(pin: Option<&'a str>) -> Self {
        Self {
            offered: pin.unwrap_or(SESSION_VERSIONS[0]),
            pinned: pin.is_some(),
        }
    }

    /// The version offered.
    pub(crate) fn offered(&self) -> &'a str {
        self.offered
    }

    /// The `initialize` request: the version, the capabilities the input handler answers,
    /// `clientInfo`.
    pub(crate) fn request(&self, id: RequestId, config: &LegacyConfig) -> Request {
        Request {
            id,
            method: method::INITIALIZE.to_owned(),
            params: Some(initialize_params(self.offered, config)),
        }
    }

    /// Reads the `InitializeResult`: its `protocolVersion` must be the one offered when pinned,
    /// one this client speaks otherwise.
    pub(crate) fn accept(&self, era: Era, result: &Value) -> Result<SessionInfo> {
        let version = accept_version(result, self.offered, self.pinned)?;
        Ok(SessionInfo::from_result(era, &version, result))
    }
}

/// `notifications/initialized`, sent once the `InitializeResult` is accepted.
pub(crate) fn initialized() -> Notification {
    Notification {
        method: method::INITIALIZED.to_owned(),
        params: None,
    }
}

/// The `initialize` params.
fn initialize_params(version: &str, config: &LegacyConfig) -> Value {
    let kinds: InputKinds = config.kinds();
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
    let info = config.client_info.as_ref().map_or_else(
        || json!({"name": "smcp-client", "version": env!("CARGO_PKG_VERSION")}),
        |i| serde_json::to_value(i).unwrap_or_else(|_| json!({})),
    );
    json!({"protocolVersion": version, "capabilities": caps, "clientInfo": info})
}

/// Checks the `protocolVersion` of an `InitializeResult` against what this client speaks.
fn accept_version(result: &Value, offered: &str, pinned: bool) -> Result<String> {
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
        SUPPORTED_VERSIONS.iter().map(|s| (*s).to_owned()).collect()
    };
    Err(Error::new(Kind::NoCommonVersion {
        offered: vec![offered.to_owned()],
        speaks,
        server: format!("answered initialize with {answered:?}, which this client does not speak"),
    }))
}

/// The error for what `version` (as negotiated, and over what) does not have.
pub(crate) fn not_in_era(feature: &str, version: String) -> Error {
    Error::new(Kind::NotInEra {
        feature: feature.to_owned(),
        version,
    })
}

/// A session in a negotiated earlier version: how a 2026-07-28 request is said in it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Adapter<'a> {
    version: &'a str,
}

impl<'a> Adapter<'a> {
    /// For a session that negotiated `version`.
    pub(crate) fn new(version: &'a str) -> Self {
        Self { version }
    }

    /// Whether requests carry `MCP-Protocol-Version` (2025-06-18 and later).
    pub(crate) fn sends_version_header(&self) -> bool {
        !matches!(self.version, "2025-03-26" | SSE_VERSION)
    }

    /// Rewrites a 2026-07-28 request for the session: drops the `_meta` members that exist
    /// only per-request in 2026-07-28 (they were said once in `initialize`), and refuses what
    /// the earlier revisions do not have.
    pub(crate) fn request(&self, request: &Request) -> Result<Request> {
        let refuse = |feature: &str| Err(not_in_era(feature, self.version.to_owned()));
        match request.method.as_str() {
            smcp_proto::messages::method::DISCOVER => {
                return refuse(smcp_proto::messages::method::DISCOVER);
            }
            tasks::METHOD_GET | tasks::METHOD_UPDATE | tasks::METHOD_CANCEL => {
                return refuse("SEP-2663 tasks");
            }
            files::METHOD_AUTHORIZE_UPLOAD | files::METHOD_AUTHORIZE_DOWNLOAD => {
                return refuse("SEP-2631 file transfer");
            }
            _ => {}
        }
        let mut out = request.clone();
        if let Some(Value::Object(params)) = &mut out.params {
            if params.contains_key("requestState") || params.contains_key("inputResponses") {
                return refuse("requestState/inputResponses (multi round-trip requests)");
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
        let out = Adapter::new("2025-11-25").request(&r).unwrap();
        assert_eq!(
            out.params,
            Some(json!({"name": "t", "_meta": {"progressToken": 3}}))
        );
        let d = Request {
            id: 1.into(),
            method: smcp_proto::messages::method::DISCOVER.to_owned(),
            params: None,
        };
        let e = Adapter::new("2025-06-18").request(&d).unwrap_err();
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
    fn what_exists_only_in_2026_07_28_is_refused_naming_the_negotiated_version() {
        let adapter = Adapter::new("2025-03-26");
        for (method_name, params) in [
            (tasks::METHOD_GET, json!({"taskId": "t"})),
            (tasks::METHOD_CANCEL, json!({"taskId": "t"})),
            (files::METHOD_AUTHORIZE_UPLOAD, json!({})),
            ("tools/call", json!({"name": "t", "requestState": "s"})),
            ("tools/call", json!({"name": "t", "inputResponses": {}})),
        ] {
            let r = Request {
                id: 1.into(),
                method: method_name.to_owned(),
                params: Some(params),
            };
            let e = adapter.request(&r).unwrap_err();
            assert!(
                e.is_unsupported_in_era() && e.negotiated_version() == Some("2025-03-26"),
                "{method_name}: {e}"
            );
        }
        let plain = Request {
            id: 2.into(),
            method: "tools/list".to_owned(),
            params: Some(json!({"_meta": {meta::LOG_LEVEL: "info"}})),
        };
        assert_eq!(adapter.request(&plain).unwrap().params, Some(json!({})));
        assert_eq!(requested_log_level(&plain).as_deref(), Some("info"));
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

    #[test]
    fn one_initialize_for_every_transport_offers_the_pin_or_the_newest_and_reads_the_answer() {
        let config = LegacyConfig {
            client_info: None,
            handler: None,
        };
        let newest = Initialize::new(None);
        let r = newest.request(RequestId::from(1), &config);
        assert_eq!(r.method, "initialize");
        let params = r.params.unwrap();
        assert_eq!(params["protocolVersion"], "2025-11-25");
        assert_eq!(params["capabilities"], json!({}));
        assert_eq!(params["clientInfo"]["name"], "smcp-client");
        let info = newest
            .accept(
                Era::HttpSse,
                &json!({"protocolVersion": "2025-03-26", "capabilities": {"logging": {}},
                        "serverInfo": {"name": "s"}, "instructions": "hi"}),
            )
            .unwrap();
        assert_eq!(info.protocol_version, "2025-03-26");
        assert_eq!(info.era, Era::HttpSse);
        assert_eq!(info.capabilities, json!({"logging": {}}));
        assert_eq!(info.instructions.as_deref(), Some("hi"));
        assert!(!Adapter::new(&info.protocol_version).sends_version_header());

        let pinned = Initialize::new(Some("2025-06-18"));
        let r = pinned.request(RequestId::from(2), &config);
        assert_eq!(r.params.unwrap()["protocolVersion"], "2025-06-18");
        let e = pinned
            .accept(Era::Session, &json!({"protocolVersion": "2025-11-25"}))
            .unwrap_err();
        assert!(e.is_version_mismatch(), "{e}");
        assert_eq!(initialized().method, "notifications/initialized");
    }
}
