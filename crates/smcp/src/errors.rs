//! What went wrong, said once and precisely: each failure is classified into a kind (what
//! happened), an exit code (documented in `--help` and `docs/cli.md`), a message with its cause
//! chain, and hints naming the flag that fixes it. Under `--json` the same report is one JSON
//! object on stdout.

use std::fmt;

use serde_json::{Value, json};
use smcp_client::ErrorKind;

/// The exit codes, one per class of failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// Anything else (a local file that cannot be written, …).
    Other = 1,
    /// Bad command line: unknown flag, a `--arg` that does not fit the schema, invalid
    /// `--json-args`.
    Usage = 2,
    /// No conversation with the server: refused, DNS, TLS, scheme mismatch, connect timeout, a
    /// stdio server that cannot start or exited.
    Connection = 3,
    /// The server answered with an error: JSON-RPC error, unexpected HTTP status, wrong path,
    /// protocol violation.
    Protocol = 4,
    /// The tool ran and reported a failure (`isError: true`).
    Tool = 5,
    /// The server refused the credentials (HTTP 401 or 403).
    Auth = 6,
    /// No answer within `--timeout`.
    Timeout = 7,
    /// Interrupted (Ctrl-C); the request was cancelled.
    Cancelled = 130,
}

/// The exit code table for `--help`.
pub(crate) const EXIT_CODES: &str = "\
Exit codes:
  0    success
  1    other failure (e.g. a local file cannot be written)
  2    usage: unknown flag, a --arg that does not fit the tool's schema, invalid --json-args
  3    connection: refused, unknown host, TLS (untrusted certificate, http/https mismatch),
       connect timeout, a stdio server that cannot start or exited
  4    protocol: the server answered with a JSON-RPC error or an unexpected HTTP status, the
       URL is not an MCP endpoint (404/405), or the server broke the protocol
  5    tool error: the tool ran and returned isError: true
  6    auth: the server refused the credentials (HTTP 401/403), or authorization failed
       (see smcp login, --token, --header)
  7    timeout: no answer within --timeout (the request was cancelled)
  130  cancelled with Ctrl-C";

/// A command-line mistake found before anything is sent (exit code 2).
#[derive(Debug)]
pub(crate) struct Usage(pub(crate) String);

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// The tool returned `isError: true` (exit code 5). Its result is already printed.
#[derive(Debug)]
pub(crate) struct ToolFailed;

impl fmt::Display for ToolFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the tool reported a failure (isError: true)")
    }
}

impl std::error::Error for ToolFailed {}

/// What the report needs to know about the invocation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Context {
    /// `--stdio`.
    pub(crate) stdio: bool,
    /// The endpoint URL (HTTP).
    pub(crate) url: String,
    /// `--non-interactive` was given.
    pub(crate) non_interactive: bool,
    /// stdin and stderr are a terminal.
    pub(crate) terminal: bool,
    /// `--sampling-cmd` was given.
    pub(crate) sampling_cmd: bool,
    /// `--ca-cert` was given.
    pub(crate) ca_cert: bool,
    /// The tool of a failed `smcp call`, when the server does not list it.
    pub(crate) unknown_tool: Option<String>,
    /// Tool names close to it.
    pub(crate) suggestions: Vec<String>,
}

/// One classified failure.
#[derive(Debug)]
pub(crate) struct Failure {
    /// A stable, machine-readable name of what happened.
    pub(crate) kind: &'static str,
    /// The exit code.
    pub(crate) exit: Exit,
    /// The one-line message.
    pub(crate) message: String,
    /// The causes, outermost first (without the message itself).
    pub(crate) causes: Vec<String>,
    /// Lines that say what to do.
    pub(crate) hints: Vec<String>,
    /// The JSON-RPC error code, if the server sent one.
    pub(crate) code: Option<i64>,
    /// The HTTP status, if there was one.
    pub(crate) status: Option<u16>,
    /// The JSON-RPC error's `data`.
    pub(crate) data: Option<Value>,
    /// The SEP-2663 task the error is about.
    pub(crate) task: Option<String>,
}

/// The causes below `err` (anyhow's chain without its head), without repeats.
fn chain(err: &anyhow::Error) -> Vec<String> {
    let head = err.to_string();
    let mut out: Vec<String> = Vec::new();
    for cause in err.chain().skip(1) {
        let text = cause.to_string();
        if text != head && !out.contains(&text) && !head.ends_with(&text) {
            out.push(text);
        }
    }
    out
}

/// Classifies `err`.
pub(crate) fn classify(err: &anyhow::Error, ctx: &Context) -> Failure {
    let mut f = Failure {
        kind: "other",
        exit: Exit::Other,
        message: err.to_string(),
        causes: chain(err),
        hints: Vec::new(),
        code: None,
        status: None,
        data: None,
        task: None,
    };
    if let Some(u) = err.downcast_ref::<Usage>() {
        f.kind = "usage";
        f.exit = Exit::Usage;
        f.message = u.0.clone();
        return f;
    }
    if err.downcast_ref::<ToolFailed>().is_some() {
        f.kind = "tool";
        f.exit = Exit::Tool;
        return f;
    }
    let Some(e) = err.downcast_ref::<smcp_client::Error>() else {
        return f;
    };
    f.code = e.jsonrpc_code();
    f.status = e.status();
    f.data = e.jsonrpc_error().and_then(|o| o.data.clone());
    f.task = e.task_id().map(str::to_owned);
    let url = &ctx.url;
    if e.is_cancelled() {
        f.kind = "cancelled";
        f.exit = Exit::Cancelled;
        if let Some(id) = &f.task {
            f.hints
                .push(format!("task {id} was cancelled (tasks/cancel sent)"));
        }
    } else if e.kind() == ErrorKind::UntrustedCertificate {
        f.kind = "untrusted-certificate";
        f.exit = Exit::Connection;
        f.message = format!("TLS: the certificate of {url} is not signed by a trusted CA");
        f.hints.push(if ctx.ca_cert {
            "the CA given with --ca-cert did not sign it either: is it the server's CA?".to_owned()
        } else {
            "trust the server's CA with --ca-cert FILE.pem (smcpd --tls-self-signed DIR writes \
             DIR/ca.pem)"
                .to_owned()
        });
    } else if e.kind() == ErrorKind::NotTls {
        f.kind = "scheme-mismatch";
        f.exit = Exit::Connection;
        f.message = format!(
            "TLS: the server at {url} did not answer in TLS: it speaks plain HTTP on this port"
        );
        f.hints.push(format!(
            "use http:// instead of https:// ({})",
            url.replacen("https://", "http://", 1)
        ));
    } else if e.kind() == ErrorKind::Tls {
        f.kind = "tls";
        f.exit = Exit::Connection;
        f.message = format!("TLS handshake with {url} failed");
    } else if e.kind() == ErrorKind::ConnectionRefused {
        f.kind = "connection-refused";
        f.exit = Exit::Connection;
        f.message = format!("connection refused: nothing listens at {url}");
        f.hints.push(format!(
            "is the server running, on this host and port? (smcpd listens on {} by default; \
             set the URL with --url or SMCP_URL)",
            crate::globals::DEFAULT_URL
        ));
    } else if e.kind() == ErrorKind::ConnectTimeout {
        f.kind = "connect-timeout";
        f.exit = Exit::Connection;
        f.message = format!("no connection to {url} within the connect timeout");
        f.hints.push(
            "the host did not answer: check the address, a firewall, or raise --connect-timeout"
                .to_owned(),
        );
    } else if e.kind() == ErrorKind::NotHttp {
        f.kind = "scheme-mismatch";
        f.exit = Exit::Connection;
        f.message = format!(
            "the server at {url} closed the connection without an HTTP answer: it probably \
             speaks TLS on this port"
        );
        f.hints.push(format!(
            "use https:// instead of http:// ({})",
            url.replacen("http://", "https://", 1)
        ));
    } else if e.is_timeout() {
        f.kind = "timeout";
        f.exit = Exit::Timeout;
        f.hints.push(
            "the server took longer than --timeout SECS (0 = no timeout); the request was \
             cancelled"
                .to_owned(),
        );
    } else if e.is_connect() || e.kind() == ErrorKind::ServerExited {
        f.kind = "connection";
        f.exit = Exit::Connection;
        if e.kind() == ErrorKind::ServerExited {
            f.hints
                .push("the server's stderr (shown unless --quiet-server) may say why".to_owned());
        } else if !ctx.stdio {
            f.hints.push(format!(
                "is the server running? (smcpd listens on {} by default)",
                crate::globals::DEFAULT_URL
            ));
        }
    } else if e.kind() == ErrorKind::Auth {
        f.kind = "auth";
        f.exit = Exit::Auth;
        f.hints.push(format!(
            "run `smcp login {url}` to authorize in the browser, or pass a token with --token"
        ));
    } else if matches!(e.status(), Some(401 | 403)) && e.jsonrpc_code().is_none() {
        f.kind = "auth";
        f.exit = Exit::Auth;
        f.hints.push(
            "the server refused the credentials: pass them with --header 'Authorization: Bearer …'"
                .to_owned(),
        );
        f.hints.push(format!(
            "or run `smcp login {url}` (OAuth in the browser), or pass a token with --token"
        ));
    } else if e.kind() == ErrorKind::WrongEndpoint {
        f.kind = "wrong-endpoint";
        f.exit = Exit::Protocol;
    } else if e.kind() == ErrorKind::VersionMismatch {
        f.kind = "version-mismatch";
        f.exit = Exit::Protocol;
        f.hints.push(
            "pin a version both sides speak with --protocol-version, or upgrade one side"
                .to_owned(),
        );
    } else if e.kind() == ErrorKind::UnsupportedInEra {
        f.kind = "unsupported-in-era";
        f.exit = Exit::Protocol;
    } else if e.jsonrpc_error().is_some() {
        f.kind = "rpc";
        f.exit = Exit::Protocol;
        rpc_hints(e, ctx, &mut f);
    } else {
        f.kind = if e.is_http_status() {
            "http-status"
        } else if e.kind() == ErrorKind::OlderRevision {
            "older-revision"
        } else {
            "protocol"
        };
        f.exit = Exit::Protocol;
    }
    if matches!(f.status, Some(401 | 403)) && f.kind == "rpc" {
        f.kind = "auth";
        f.exit = Exit::Auth;
    }
    if f.kind != "cancelled"
        && let Some(id) = &f.task
    {
        f.hints
            .push(format!("task: {id} (`smcp task get {id}` shows it)"));
    }
    f
}

/// Hints for a JSON-RPC error.
fn rpc_hints(e: &smcp_client::Error, ctx: &Context, f: &mut Failure) {
    let required = f
        .data
        .as_ref()
        .and_then(|d| d.get("requiredCapabilities"))
        .cloned()
        .unwrap_or(Value::Null);
    if e.jsonrpc_code() == Some(-32021) {
        if required
            .pointer("/extensions/io.modelcontextprotocol~1tasks")
            .is_some()
        {
            f.hints
                .push("the server runs this only as a task; drop --no-tasks".to_owned());
        } else if required.get("sampling").is_some() {
            f.hints.push(if ctx.non_interactive && !ctx.sampling_cmd {
                "the server needs the client's model (sampling): pass --sampling-cmd CMD, or drop \
                 --non-interactive and answer on the terminal"
                    .to_owned()
            } else {
                "the server needs the client's model (sampling): pass --sampling-cmd CMD, or run \
                 smcp on a terminal to answer it yourself"
                    .to_owned()
            });
        } else if ctx.non_interactive {
            f.hints.push(
                "the server needs input from you (e.g. elicitation): drop --non-interactive"
                    .to_owned(),
            );
        } else if !ctx.terminal {
            f.hints.push(
                "the server needs input from you (e.g. elicitation): run smcp on a terminal"
                    .to_owned(),
            );
        } else {
            f.hints
                .push("the server needs input this client cannot give".to_owned());
        }
    }
    if let Some(name) = &ctx.unknown_tool {
        f.kind = "unknown-tool";
        f.hints.push(if ctx.suggestions.is_empty() {
            format!("the server lists no tool {name:?}: `smcp tools` shows the tools it has")
        } else {
            format!("did you mean: {}?", ctx.suggestions.join(", "))
        });
    }
}

impl Failure {
    /// The human-readable report for stderr.
    pub(crate) fn text(&self) -> String {
        let mut out = format!("error: {}\n", self.message);
        for cause in &self.causes {
            out.push_str(&format!("  caused by: {cause}\n"));
        }
        if let Some(data) = &self.data {
            out.push_str(&format!("  data: {data}\n"));
        }
        for hint in &self.hints {
            out.push_str(&format!("  hint: {hint}\n"));
        }
        out
    }

    /// The `--json` report: `{"error": {kind, message, code, exitCode, …}}`.
    pub(crate) fn json(&self) -> Value {
        let mut e = json!({
            "kind": self.kind,
            "message": self.message,
            "code": self.code,
            "exitCode": self.exit as i32,
        });
        if let Value::Object(m) = &mut e {
            if let Some(s) = self.status {
                m.insert("httpStatus".to_owned(), json!(s));
            }
            if !self.causes.is_empty() {
                m.insert("causes".to_owned(), json!(self.causes));
            }
            if !self.hints.is_empty() {
                m.insert("hints".to_owned(), json!(self.hints));
            }
            if let Some(d) = &self.data {
                m.insert("data".to_owned(), d.clone());
            }
            if let Some(t) = &self.task {
                m.insert("taskId".to_owned(), json!(t));
            }
        }
        json!({ "error": e })
    }
}

/// The names in `names` closest to `wanted` (edit distance at most a third of its length, at
/// least 2; or a prefix/substring match), best first, at most three.
pub(crate) fn closest(wanted: &str, names: &[String]) -> Vec<String> {
    let limit = (wanted.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &String)> = names
        .iter()
        .filter_map(|n| {
            let d = distance(&wanted.to_lowercase(), &n.to_lowercase());
            let related = n.contains(wanted) || wanted.contains(n.as_str());
            (d <= limit || related).then_some((d, n))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, n)| n.clone()).collect()
}

/// Levenshtein distance (characters).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut row = Vec::with_capacity(b.len() + 1);
        row.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            row.push((prev[j] + cost).min(prev[j + 1] + 1).min(row[j] + 1));
        }
        prev = row;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_names_only() {
        let names: Vec<String> = ["echo", "progress_echo", "add", "count", "confirm_action"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(closest("ecko", &names), vec!["echo"]);
        assert_eq!(closest("confirm_acton", &names), vec!["confirm_action"]);
        assert!(closest("zzzzzzzz", &names).is_empty());
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
