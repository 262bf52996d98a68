//! The bytes on the wire: the `tools/call` requests the load generator sends and the
//! responses the baseline writes.
//!
//! Pure functions with no I/O, so the exact bytes can be unit-tested and diffed against
//! `smcpd` (see the crate docs, "Matching smcpd byte for byte").

use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// The protocol revision every request is sent under.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// The argument the load generator sends in `arguments.text`.
pub const ECHO_TEXT: &str = "hello";

/// Number of `notifications/progress` the progress case sends before its result.
pub const PROGRESS_EVENTS: u32 = 10;

/// Name of the tool that streams progress before its result.
pub const PROGRESS_TOOL: &str = "progress_echo";

/// The JSON body of a 2026-07-28 `tools/call` request with id `id`.
///
/// When `progress_token` is set, `_meta.progressToken` carries it, which asks the server to
/// stream `notifications/progress` over SSE before the result.
pub fn tools_call_body(id: u64, tool: &str, progress_token: Option<u64>) -> String {
    // serde_json::to_string on a &str cannot fail; fall back to a plain quote for safety.
    let tool_json = json_string(tool);
    let text_json = json_string(ECHO_TEXT);
    let token = match progress_token {
        Some(t) => format!(",\"progressToken\":{t}"),
        None => String::new(),
    };
    format!(
        concat!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{",
            "\"_meta\":{{\"io.modelcontextprotocol/protocolVersion\":\"{pv}\",",
            "\"io.modelcontextprotocol/clientCapabilities\":{{}},",
            "\"io.modelcontextprotocol/clientInfo\":{{\"name\":\"smcp-load\",\"version\":\"0.1.0\"}}",
            "{token}}},\"name\":{tool},\"arguments\":{{\"text\":{text}}}}}}}"
        ),
        id = id,
        pv = PROTOCOL_VERSION,
        token = token,
        tool = tool_json,
        text = text_json,
    )
}

/// The revision of the legacy echo case (`smcp-load --legacy`).
pub const LEGACY_VERSION: &str = "2025-11-25";

/// The request body of a `tools/call` in a 2025-11-25 session: no 2026-07-28 `_meta` (the
/// session carries the client's capabilities).
pub fn legacy_tools_call_body(id: u64, tool: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":{tool},\"arguments\":{{\"text\":{text}}}}}}}",
        tool = json_string(tool),
        text = json_string(ECHO_TEXT),
    )
}

/// The `initialize` of the legacy echo case.
pub fn legacy_initialize_body() -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"{LEGACY_VERSION}\",\"capabilities\":{{}},\"clientInfo\":{{\"name\":\"smcp-load\",\"version\":\"0.1.0\"}}}}}}"
    )
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// The parts of a `tools/call` request the baseline reads. Everything else is skipped
/// by serde (but still scanned, as any real server must).
#[derive(Debug, Deserialize)]
pub struct CallRequest<'a> {
    /// The JSON-RPC id, echoed back verbatim.
    #[serde(borrow)]
    pub id: &'a RawValue,
    /// The JSON-RPC method (not checked by the baseline).
    #[serde(borrow)]
    pub method: Cow<'a, str>,
    /// The `tools/call` params.
    #[serde(borrow)]
    pub params: CallParams<'a>,
}

/// `params` of a `tools/call` request.
#[derive(Debug, Deserialize)]
pub struct CallParams<'a> {
    /// The tool name.
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    /// The tool arguments; only `text` is read.
    #[serde(borrow, default)]
    pub arguments: Option<CallArguments<'a>>,
    /// The request `_meta`; only `progressToken` is read.
    #[serde(borrow, default, rename = "_meta")]
    pub meta: Option<CallMeta<'a>>,
}

/// `params.arguments` of an `echo`/`progress_echo` call.
#[derive(Debug, Deserialize)]
pub struct CallArguments<'a> {
    /// The text to echo back.
    #[serde(borrow, default)]
    pub text: Cow<'a, str>,
}

/// `params._meta` of a request.
#[derive(Debug, Deserialize)]
pub struct CallMeta<'a> {
    /// The progress token, echoed verbatim in each notification.
    #[serde(borrow, default, rename = "progressToken")]
    pub progress_token: Option<&'a RawValue>,
}

/// The `_meta` smcpd puts on every result: its serverInfo. smcpd's name and title are fixed
/// in `crates/smcpd/src/demo.rs`; its version is the workspace version, which this crate shares.
pub const SERVER_INFO_META: &str = concat!(
    "{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"smcpd\",\"title\":\"smcp reference server\",\"version\":\"",
    env!("CARGO_PKG_VERSION"),
    "\"}}"
);

/// Appends the JSON-RPC result of an echo call to `out`, byte for byte as smcpd writes it
/// (serde_json keeps members in insertion order):
/// `{"jsonrpc":"2.0","id":<id>,"result":{"resultType":"complete","content":[{"type":"text","text":<text>}],"_meta":<SERVER_INFO_META>}}`.
pub fn write_echo_result(out: &mut Vec<u8>, id: &RawValue, text: &str) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.get().as_bytes());
    out.extend_from_slice(
        b",\"result\":{\"resultType\":\"complete\",\"content\":[{\"type\":\"text\",\"text\":",
    );
    out.extend_from_slice(json_string(text).as_bytes());
    out.extend_from_slice(b"}],\"_meta\":");
    out.extend_from_slice(SERVER_INFO_META.as_bytes());
    out.extend_from_slice(b"}}");
}

/// One SSE event carrying `notifications/progress` number `progress` of `total`, as smcpd
/// writes it: `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":<token>,"progress":i,"total":10}}\n\n`.
pub fn progress_event(token: &RawValue, progress: u32, total: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(
        b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":",
    );
    out.extend_from_slice(token.get().as_bytes());
    out.extend_from_slice(format!(",\"progress\":{progress},\"total\":{total}}}}}\n\n").as_bytes());
    out
}

/// The final SSE event carrying the echo result.
pub fn result_event(id: &RawValue, text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(b"data: ");
    write_echo_result(&mut out, id, text);
    out.extend_from_slice(b"\n\n");
    out
}

/// What the load generator checks in a response body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyCheck {
    /// The body holds a final `"result"`.
    Ok,
    /// No `"result"` member in the (last) message: the call failed.
    NoResult,
    /// An SSE body that does not end with a complete event.
    Truncated,
    /// The stream carried the wrong number of progress notifications.
    WrongProgress {
        /// How many `notifications/progress` were seen.
        seen: usize,
    },
}

/// Checks a response body: it must contain `"result"` (in the last SSE event for a stream)
/// and, when `expect_progress` is set, exactly that many `notifications/progress`.
pub fn check_body(body: &[u8], expect_progress: Option<usize>) -> BodyCheck {
    let last = match find_last(body, b"data: ") {
        Some(pos) => {
            if !body.ends_with(b"\n\n") {
                return BodyCheck::Truncated;
            }
            &body[pos..]
        }
        None => body,
    };
    if find(last, b"\"result\"").is_none() {
        return BodyCheck::NoResult;
    }
    if let Some(want) = expect_progress {
        let seen = count(body, b"\"notifications/progress\"");
        if seen != want {
            return BodyCheck::WrongProgress { seen };
        }
    }
    BodyCheck::Ok
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn find_last(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_bodies_are_valid_json() {
        let v: serde_json::Value =
            serde_json::from_str(&legacy_tools_call_body(3, "echo")).unwrap();
        assert_eq!(v["params"]["arguments"]["text"], ECHO_TEXT);
        assert!(v["params"].get("_meta").is_none());
        let v: serde_json::Value = serde_json::from_str(&legacy_initialize_body()).unwrap();
        assert_eq!(v["params"]["protocolVersion"], LEGACY_VERSION);
    }

    #[test]
    fn request_body_is_valid_json_with_expected_members() {
        let body = tools_call_body(7, "progress_echo", Some(7));
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["method"], "tools/call");
        assert_eq!(v["params"]["name"], "progress_echo");
        assert_eq!(v["params"]["arguments"]["text"], "hello");
        assert_eq!(v["params"]["_meta"]["progressToken"], 7);
        assert_eq!(
            v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        let plain = tools_call_body(1, "echo", None);
        let v: serde_json::Value = serde_json::from_str(&plain).unwrap();
        assert!(v["params"]["_meta"].get("progressToken").is_none());
    }

    #[test]
    fn baseline_parses_request_and_writes_exact_result() {
        let body = tools_call_body(42, "echo", None);
        let req: CallRequest<'_> = serde_json::from_str(&body).unwrap();
        let mut out = Vec::new();
        let text = req
            .params
            .arguments
            .as_ref()
            .map(|a| a.text.as_ref())
            .unwrap();
        write_echo_result(&mut out, req.id, text);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"jsonrpc":"2.0","id":42,"result":{"resultType":"complete","content":[{"type":"text","text":"hello"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"smcpd","title":"smcp reference server","version":"0.1.0"}}}}"#
        );
    }

    #[test]
    fn progress_event_bytes() {
        let token = RawValue::from_string("\"t\"".to_owned()).unwrap();
        assert_eq!(
            std::str::from_utf8(&progress_event(&token, 3, 10)).unwrap(),
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":3,\"total\":10}}\n\n"
        );
    }

    #[test]
    fn body_checks() {
        let id = RawValue::from_string("1".to_owned()).unwrap();
        let mut sse = Vec::new();
        for i in 1..=2 {
            sse.extend(progress_event(&id, i, 2));
        }
        sse.extend(result_event(&id, "x"));
        assert_eq!(check_body(&sse, Some(2)), BodyCheck::Ok);
        assert_eq!(
            check_body(&sse, Some(10)),
            BodyCheck::WrongProgress { seen: 2 }
        );
        let cut = &sse[..sse.len() - 20];
        assert_eq!(check_body(cut, Some(2)), BodyCheck::Truncated);
        assert_eq!(
            check_body(br#"{"jsonrpc":"2.0","id":1,"error":{}}"#, None),
            BodyCheck::NoResult
        );
    }
}
