//! The client's wire events as the page's wire entries: headers with the mirrored MCP ones
//! marked and decoded, credentials redacted, bodies capped, the time since the exchange's
//! request, and each request also as a `smcp` command line and a curl command.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};
use smcp_client::wire::{WireEvent, WireKind, WireTap};

use super::feed::Feed;
use super::scope;

/// Largest body shown in an entry; the rest is cut (the entry says so and keeps the size).
const BODY_SHOWN: usize = 64 * 1024;
/// Request start times kept for the responses' elapsed time.
const EXCHANGES_KEPT: usize = 4_096;
/// Headers whose value is a credential: shown as their scheme only.
const SECRET_HEADERS: [&str; 5] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "dpop",
    "x-api-key",
];
/// Headers left out of the curl command (curl sets them itself).
const CURL_SKIPS: [&str; 4] = ["content-length", "host", "accept-encoding", "connection"];

/// How the server is reached, for the command lines.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// `smcp --url URL`.
    Http(String),
    /// `smcp --stdio … -- PROGRAM ARGS…` (the command line, shell-quoted).
    Stdio(String),
}

impl Target {
    /// The `smcp` command line running `command` (already quoted) against this server.
    pub(crate) fn smcp(&self, command: &str) -> String {
        match self {
            Self::Http(url) => format!("smcp --url {} {command}", quote(url)),
            Self::Stdio(program) => format!("smcp --stdio {command} -- {program}"),
        }
    }
}

/// Turns wire events into entries on the feed.
struct Recorder {
    feed: Feed,
    target: Target,
    seq: AtomicU64,
    started: Mutex<HashMap<u64, Instant>>,
}

/// The client's wire tap, publishing every event on `feed`.
pub(crate) fn tap(feed: Feed, target: Target) -> WireTap {
    let recorder = Arc::new(Recorder {
        feed,
        target,
        seq: AtomicU64::new(1),
        started: Mutex::new(HashMap::new()),
    });
    WireTap::new(move |event| recorder.record(&event))
}

impl Recorder {
    fn record(&self, event: &WireEvent) {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let mut entry = json!({
            "seq": seq,
            "at": self.feed.millis_since_start(event.at),
            "call": scope::current(),
            "method": null, "url": null, "status": null, "headers": [], "body": null,
            "bytes": 0, "truncated": false, "elapsedMs": null, "curl": null, "smcp": null,
        });
        match &event.kind {
            WireKind::HttpRequest {
                method,
                url,
                headers,
                body,
            } => {
                self.started_at(event.exchange, event.at);
                let text = String::from_utf8_lossy(body);
                entry["dir"] = json!("out");
                entry["kind"] = json!("http-request");
                entry["method"] = json!(rpc_method(&text).unwrap_or_else(|| method.clone()));
                entry["url"] = json!(url);
                entry["headers"] = header_rows(headers);
                entry["curl"] = json!(curl(method, url, headers, &text));
                entry["smcp"] = json!(self.smcp_line(&text));
                set_body(&mut entry, &text);
            }
            WireKind::HttpResponse {
                status,
                headers,
                body,
            } => {
                entry["dir"] = json!("in");
                entry["kind"] = json!("http-response");
                entry["status"] = json!(status);
                entry["headers"] = header_rows(headers);
                entry["elapsedMs"] = json!(self.elapsed(event.exchange, event.at));
                if let Some(body) = body {
                    let text = String::from_utf8_lossy(body);
                    entry["method"] = json!(rpc_method(&text));
                    set_body(&mut entry, &text);
                }
            }
            WireKind::SseEvent {
                id,
                event: name,
                data,
            } => {
                entry["dir"] = json!("in");
                entry["kind"] = json!("sse-event");
                entry["method"] = json!(rpc_method(data));
                entry["elapsedMs"] = json!(self.elapsed(event.exchange, event.at));
                let mut rows = Vec::new();
                if let Some(id) = id {
                    rows.push(("id".to_owned(), id.clone()));
                }
                if let Some(name) = name {
                    rows.push(("event".to_owned(), name.clone()));
                }
                entry["headers"] = header_rows(&rows);
                set_body(&mut entry, data);
            }
            WireKind::StdioOut(line) | WireKind::StdioIn(line) => {
                let out = matches!(event.kind, WireKind::StdioOut(_));
                let text = String::from_utf8_lossy(line);
                entry["dir"] = json!(if out { "out" } else { "in" });
                entry["kind"] = json!("stdio");
                entry["method"] = json!(rpc_method(&text));
                if out {
                    entry["smcp"] = json!(self.smcp_line(&text));
                }
                set_body(&mut entry, &text);
            }
            _ => return,
        }
        self.feed.publish(&json!({"type": "wire", "entry": entry}));
    }

    fn started_at(&self, exchange: u64, at: Instant) {
        let mut started = self
            .started
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if started.len() >= EXCHANGES_KEPT {
            // Long streams (listen) keep theirs; the oldest half of the rest goes.
            let mut ids: Vec<u64> = started.keys().copied().collect();
            ids.sort_unstable();
            for id in &ids[..ids.len() / 2] {
                started.remove(id);
            }
        }
        started.insert(exchange, at);
    }

    fn elapsed(&self, exchange: u64, at: Instant) -> Option<f64> {
        let started = self
            .started
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        started
            .get(&exchange)
            .map(|s| at.saturating_duration_since(*s).as_secs_f64() * 1000.0)
    }

    /// The `smcp` command line doing what a request body does, when there is one.
    fn smcp_line(&self, body: &str) -> Option<String> {
        let message: Value = serde_json::from_str(body).ok()?;
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let name = || params.get("name").and_then(Value::as_str).map(quote);
        let command = match message.get("method")?.as_str()? {
            "server/discover" | "initialize" => "discover".to_owned(),
            "tools/list" => "tools".to_owned(),
            "resources/list" => "resources".to_owned(),
            "resources/templates/list" => "templates".to_owned(),
            "prompts/list" => "prompts".to_owned(),
            "tools/call" => {
                let mut line = format!("call {}", name()?);
                if let Some(args) = params
                    .get("arguments")
                    .filter(|a| a.as_object().is_some_and(|o| !o.is_empty()))
                {
                    line.push_str(&format!(" --json-args {}", quote(&args.to_string())));
                }
                line
            }
            "resources/read" => format!("read {}", quote(params.get("uri")?.as_str()?)),
            "prompts/get" => {
                let mut line = format!("prompt {}", name()?);
                for (k, v) in params
                    .get("arguments")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                    line.push_str(&format!(" --arg {}", quote(&format!("{k}={v}"))));
                }
                line
            }
            _ => return None,
        };
        Some(self.target.smcp(&command))
    }
}

/// The JSON-RPC method of a message body, or `response`/`error` for an answer.
fn rpc_method(body: &str) -> Option<String> {
    let message: Value = serde_json::from_str(body).ok()?;
    if let Some(m) = message.get("method").and_then(Value::as_str) {
        return Some(m.to_owned());
    }
    if message.get("error").is_some() {
        return Some("error".to_owned());
    }
    message.get("result").map(|r| {
        r.get("resultType")
            .and_then(Value::as_str)
            .map_or_else(|| "result".to_owned(), |t| format!("result ({t})"))
    })
}

fn set_body(entry: &mut Value, text: &str) {
    entry["bytes"] = json!(text.len());
    if text.len() > BODY_SHOWN {
        let mut end = BODY_SHOWN;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        entry["body"] = json!(&text[..end]);
        entry["truncated"] = json!(true);
    } else {
        entry["body"] = json!(text);
    }
}

/// A credential header's value as the page may show it: its scheme only.
fn redacted(value: &str) -> String {
    match value.split_once(' ') {
        Some((scheme, _)) => format!("{scheme} ‹redacted›"),
        None => "‹redacted›".to_owned(),
    }
}

fn is_secret(name: &str) -> bool {
    SECRET_HEADERS.iter().any(|s| name.eq_ignore_ascii_case(s))
}

/// The headers as the page's rows: `Mcp-*` headers (which mirror the body) marked, with
/// their Base64 form decoded.
fn header_rows(headers: &[(String, String)]) -> Value {
    headers
        .iter()
        .map(|(name, value)| {
            let mirrored = name.len() > 4 && name[..4].eq_ignore_ascii_case("mcp-");
            let decoded = mirrored
                .then(|| smcp_client::proto::header::decode_header_value(value).ok())
                .flatten()
                .filter(|d| d != value)
                .map(|d| d.into_owned());
            let value = if is_secret(name) {
                redacted(value)
            } else {
                value.clone()
            };
            json!({"name": name, "value": value, "mirrored": mirrored, "decoded": decoded})
        })
        .collect()
}

/// A curl command sending the same request (credentials as `$SMCP_TOKEN`).
fn curl(method: &str, url: &str, headers: &[(String, String)], body: &str) -> String {
    let mut line = format!("curl -sS -N -X {method} {}", quote(url));
    for (name, value) in headers {
        if CURL_SKIPS.iter().any(|s| name.eq_ignore_ascii_case(s)) {
            continue;
        }
        if is_secret(name) {
            let scheme = value.split_once(' ').map_or("", |(s, _)| s);
            let value = if scheme.is_empty() {
                "$SMCP_TOKEN".to_owned()
            } else {
                format!("{scheme} $SMCP_TOKEN")
            };
            line.push_str(&format!(" -H \"{name}: {value}\""));
        } else {
            line.push_str(&format!(" -H {}", quote(&format!("{name}: {value}"))));
        }
    }
    if !body.is_empty() {
        line.push_str(&format!(" --data-raw {}", quote(body)));
    }
    line
}

/// `text` as one POSIX shell word.
pub(crate) fn quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+%".contains(c))
    {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn mirrored_headers_are_marked_and_decoded_and_credentials_redacted() {
        let rows = header_rows(&[
            ("mcp-method".into(), "tools/call".into()),
            ("mcp-name".into(), "=?base64?aMOpbGxv?=".into()),
            ("authorization".into(), "Bearer s3cr3t".into()),
            ("accept".into(), "application/json".into()),
        ]);
        assert_eq!(rows[0]["mirrored"], true);
        assert_eq!(
            rows[0]["decoded"],
            Value::Null,
            "plain values need no decoding"
        );
        assert_eq!(rows[1]["decoded"], "héllo");
        assert_eq!(rows[2]["value"], "Bearer ‹redacted›");
        assert!(!rows.to_string().contains("s3cr3t"));
        assert_eq!(rows[3]["mirrored"], false);
    }

    #[test]
    fn a_request_is_also_a_curl_command_without_its_token() {
        let line = curl(
            "POST",
            "http://127.0.0.1:1/mcp",
            &[
                ("authorization".into(), "Bearer s3cr3t".into()),
                ("content-length".into(), "9".into()),
                ("mcp-method".into(), "tools/call".into()),
            ],
            r#"{"a":"it's"}"#,
        );
        assert_eq!(
            line,
            "curl -sS -N -X POST http://127.0.0.1:1/mcp -H \"authorization: Bearer $SMCP_TOKEN\" \
             -H 'mcp-method: tools/call' --data-raw '{\"a\":\"it'\\''s\"}'"
        );
    }

    #[test]
    fn requests_become_smcp_command_lines() {
        let recorder = Recorder {
            feed: Feed::new(),
            target: Target::Http("http://h/mcp".into()),
            seq: AtomicU64::new(1),
            started: Mutex::new(HashMap::new()),
        };
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1}}}"#;
        assert_eq!(
            recorder.smcp_line(call).unwrap(),
            r#"smcp --url http://h/mcp call add --json-args '{"a":1}'"#
        );
        let stdio = Target::Stdio("smcpd --stdio".into());
        assert_eq!(stdio.smcp("tools"), "smcp --stdio tools -- smcpd --stdio");
        assert_eq!(
            recorder.smcp_line(r#"{"jsonrpc":"2.0","method":"x"}"#),
            None
        );
    }

    #[test]
    fn a_long_body_is_cut_on_a_character_boundary() {
        let mut entry = json!({});
        let text = "é".repeat(BODY_SHOWN);
        set_body(&mut entry, &text);
        assert_eq!(entry["truncated"], true);
        assert_eq!(entry["bytes"], text.len());
        assert!(entry["body"].as_str().unwrap().len() <= BODY_SHOWN);
    }
}
