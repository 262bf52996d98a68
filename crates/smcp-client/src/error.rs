//! The public error type: opaque, with predicates (hyper style).
//!
//! Callers ask [`Error::is_timeout`], [`Error::jsonrpc_code`], [`Error::status`] and friends
//! instead of matching on variants, so the private [`Kind`] can grow without breaking anyone.
//! The `Display` text is meant for people and is not a stable interface.

use std::fmt;

use smcp_proto::error::ErrorObject;

/// Everything that can go wrong talking to an MCP server.
///
/// Ask it what happened with its predicates rather than parsing its text:
///
/// | question | predicate |
/// |---|---|
/// | the server answered with a JSON-RPC error | [`Error::jsonrpc_code`], [`Error::jsonrpc_error`] |
/// | no server there, or the wrong scheme or path | [`Error::is_connection_refused`], [`Error::is_not_tls`], [`Error::is_not_http`], [`Error::is_wrong_endpoint`] |
/// | TLS | [`Error::is_tls`], [`Error::is_untrusted_certificate`] |
/// | time and cancellation | [`Error::is_timeout`], [`Error::is_connect_timeout`], [`Error::is_cancelled`] |
/// | the server broke the protocol | [`Error::is_protocol_violation`], [`Error::output_schema_path`] |
/// | tasks (SEP-2663) | [`Error::is_task_failed`], [`Error::is_task_cancelled`], [`Error::task_id`] |
/// | stdio | [`Error::is_server_exited`], [`Error::exit_status`], [`Error::is_closed`] |
/// | files (SEP-2631) | [`Error::is_file_transfer`], [`Error::transfer_error`] |
/// | configuration | [`Error::is_config`] |
/// | authorization (feature `oauth`) | `Error::is_auth`, `Error::auth_error`, [`Error::status`] 401/403 |
///
/// A tool that fails is not an `Err`: its result has `isError: true`
/// ([`CallToolResult::is_error`](smcp_proto::server::tools::CallToolResult::is_error)).
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
/// match client.call_tool("search", serde_json::json!({"q": "rust"})).await {
///     Ok(result) if result.is_error() => eprintln!("the tool failed: {}", result.text_content()),
///     Ok(result) => println!("{}", result.text_content()),
///     Err(e) if e.is_connection_refused() => eprintln!("no server at {}: is it running?", client.url()),
///     Err(e) if e.jsonrpc_code() == Some(-32602) => eprintln!("bad arguments: {e}"),
///     Err(e) if e.is_timeout() => eprintln!("timed out"),
///     Err(e) => return Err(e),
/// }
/// # Ok(()) }
/// ```
///
/// Configuration errors are found without any network:
///
/// ```
/// let err = smcp_client::Client::builder("ftp://example.com/mcp").build().unwrap_err();
/// assert!(err.is_config());
/// assert!(err.jsonrpc_code().is_none() && err.status().is_none());
/// ```
pub struct Error {
    inner: Box<Kind>,
}

/// The private classification behind [`Error`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum Kind {
    /// The builder got an unusable URL, header or option.
    #[error("invalid client configuration: {0}")]
    Config(String),
    /// The HTTP request could not be sent or its body could not be read.
    #[error("HTTP transport error: {0}")]
    Transport(#[source] reqwest::Error),
    /// The request took longer than its timeout; its stream was closed.
    #[error("request timed out after {0:?}")]
    Timeout(std::time::Duration),
    /// The caller cancelled the request; its stream was closed.
    #[error("request cancelled")]
    Cancelled,
    /// A non-success HTTP status without a JSON-RPC error body.
    #[error("HTTP {status}{}", hint_for(*status, body))]
    HttpStatus {
        /// The status code.
        status: u16,
        /// The start of the body, for the message.
        body: String,
    },
    /// The server answered with a JSON-RPC error.
    #[error("{}JSON-RPC error {}: {}", status.map(|s| format!("HTTP {s}, ")).unwrap_or_default(), error.code, error.message)]
    Rpc {
        /// The HTTP status that carried it (200 for errors produced after dispatch).
        status: Option<u16>,
        /// The error object.
        error: ErrorObject,
    },
    /// 404/405 with nothing that looks like MCP in the body (empty, HTML, plain text): most
    /// likely the URL's path is not the MCP endpoint.
    #[error("HTTP {status}{}", wrong_endpoint_message(*status, body))]
    WrongEndpoint {
        /// The status code.
        status: u16,
        /// The start of the body, for the message.
        body: String,
    },
    /// 400/404/405 without a modern error body: the server predates 2026-07-28, and the
    /// fallback to the older revisions did not get through (or was ruled out by a pin).
    #[error(
        "HTTP {status} without an MCP 2026-07-28 error body: the server speaks an older MCP \
         revision; {detail}"
    )]
    OlderRevision {
        /// The status code.
        status: u16,
        /// What the fallback did (or why there was none).
        detail: String,
    },
    /// The two sides share no protocol version.
    #[error(
        "no common MCP protocol version: this client offered {} (it speaks {}); the server {}",
        offered.join(", "),
        speaks.join(", "),
        server
    )]
    NoCommonVersion {
        /// What this client put in its request.
        offered: Vec<String>,
        /// Every version this client speaks (or is pinned to).
        speaks: Vec<String>,
        /// What the server offered, in words ("answered initialize with 2024-10-07").
        server: String,
    },
    /// A 2026-07-28 feature asked of a server that negotiated an older revision.
    #[error(
        "{feature} exists only in MCP 2026-07-28; this server negotiated MCP {version} \
         (stateful session era)"
    )]
    NotInEra {
        /// The feature (a method name, SEP-2631 files, SEP-2663 tasks…).
        feature: String,
        /// The negotiated version.
        version: String,
    },
    /// The server broke the protocol (bad SSE, wrong id, a request on a stream, bad shapes…).
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// A SEP-2631 file transfer failed (descriptor refused, data-plane error, integrity
    /// mismatch, local I/O).
    #[error("file transfer: {0}")]
    File(crate::files::TransferError),
    /// Authorization failed (OAuth discovery, registration, the browser step, tokens).
    #[cfg(feature = "oauth")]
    #[error("authorization failed: {0}")]
    Auth(crate::auth::AuthError),
    /// The response stream ended before the response to the request arrived.
    #[error("the response stream ended before the response arrived (the request is lost)")]
    StreamBroken,
    /// The server kept asking for input past the client's round cap.
    #[error("the server asked for input {0} times in a row; giving up (MRTR round cap)")]
    MrtrLimit(u32),
    /// The stdio server could not be started.
    #[error("cannot start the stdio server {program:?}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The stdio server exited (or closed its stdout) while requests were in flight or before
    /// one could be sent.
    #[error("{}", exited_message(status.as_ref()))]
    ServerExited {
        /// Its exit status, when it was reaped.
        status: Option<std::process::ExitStatus>,
    },
    /// The client was closed ([`Client::close`](crate::Client::close)).
    #[error("the client was closed")]
    Closed,
    /// The input handler could not answer an input request.
    #[error("input handler failed for {method}: {message}")]
    InputHandler {
        /// The input request's method.
        method: String,
        /// What went wrong.
        message: String,
    },
    /// A SEP-2663 task ended `failed`: its JSON-RPC error, as if the request had answered it.
    #[error("the task failed: JSON-RPC error {}: {}", error.code, error.message)]
    TaskFailed {
        /// The task.
        task_id: String,
        /// The error the request ended with.
        error: ErrorObject,
    },
    /// A SEP-2663 task ended `cancelled` (by the server, or by another client's `tasks/cancel`).
    #[error("the task was cancelled{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    TaskCancelled {
        /// The task.
        task_id: String,
        /// Its `statusMessage`, if any.
        message: Option<String>,
    },
    /// The caller cancelled a call the server runs as a task; `tasks/cancel` was sent.
    #[error("request cancelled (tasks/cancel sent for its task)")]
    CancelledTask {
        /// The task.
        task_id: String,
    },
    /// A SEP-2663 task did not end within its TTL (or the client's bound on following it).
    #[error(
        "the task did not finish within {after:?} (its TTL or the client's bound); tasks/cancel sent"
    )]
    TaskExpired {
        /// The task.
        task_id: String,
        /// The bound that elapsed.
        after: std::time::Duration,
    },
    /// A tool result's `structuredContent` does not conform to the tool's `outputSchema` (or
    /// is missing from a successful result): the server broke the tool's contract.
    #[error(
        "protocol violation: the result of tool {tool:?} does not conform to its outputSchema at {path}: {problem}"
    )]
    OutputSchema {
        /// The tool.
        tool: String,
        /// JSON Pointer of the first failing member of `structuredContent` (`/` for the whole).
        path: String,
        /// What is wrong (never the value).
        problem: String,
    },
    /// The tool was dropped from the tool list because its `x-mcp-header` annotations are
    /// invalid, so the client refuses to call it.
    #[error("tool {name:?} is unusable: {reason}")]
    InvalidTool {
        /// The tool name.
        name: String,
        /// Why it was rejected.
        reason: String,
    },
}

fn exited_message(status: Option<&std::process::ExitStatus>) -> String {
    match status {
        Some(s) => format!("the stdio server exited ({s}); the request is lost"),
        None => "the stdio server closed its stdout; the request is lost".to_owned(),
    }
}

fn wrong_endpoint_message(status: u16, body: &str) -> String {
    let what = if status == 405 {
        " Method Not Allowed: this URL does not take POST requests"
    } else {
        " Not Found: nothing answers at this path"
    };
    let body = if body.is_empty() {
        String::new()
    } else {
        format!(" (body: {body})")
    };
    format!("{what}, so it is not an MCP endpoint; check the URL's path (smcpd serves /mcp){body}")
}

/// The causes of a transport error, outermost first. `std::io::Error::source` skips the error
/// it wraps, so that one is taken from `get_ref`.
fn causes(e: &reqwest::Error) -> Vec<&(dyn std::error::Error + 'static)> {
    let mut out: Vec<&(dyn std::error::Error + 'static)> = Vec::new();
    let mut next = std::error::Error::source(e);
    while let Some(err) = next {
        if out.len() >= 16 {
            break;
        }
        out.push(err);
        next = match err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => err.source(),
        };
    }
    out
}

/// The TLS error behind a transport error, if the handshake failed.
fn tls_error(e: &reqwest::Error) -> Option<&rustls::Error> {
    causes(e)
        .into_iter()
        .find_map(|c| c.downcast_ref::<rustls::Error>())
}

fn hint_for(status: u16, body: &str) -> String {
    let hint = match status {
        413 => " (payload too large: the server refused the request size)",
        431 => {
            " (request header fields too large: shorten the x-mcp-header values or the extra headers)"
        }
        _ => "",
    };
    if body.is_empty() {
        hint.to_owned()
    } else {
        format!("{hint}: {body}")
    }
}

impl Error {
    pub(crate) fn new(kind: Kind) -> Self {
        Self {
            inner: Box::new(kind),
        }
    }

    pub(crate) fn protocol(message: impl Into<String>) -> Self {
        Self::new(Kind::Protocol(message.into()))
    }

    /// Whether a SEP-2631 file transfer failed (refused descriptor, integrity mismatch,
    /// data-plane HTTP error, local I/O); [`Error::transfer_error`] says which.
    pub fn is_file_transfer(&self) -> bool {
        matches!(*self.inner, Kind::File(_))
    }

    /// The typed reason of a failed SEP-2631 file transfer.
    pub fn transfer_error(&self) -> Option<&crate::files::TransferError> {
        match &*self.inner {
            Kind::File(e) => Some(e),
            _ => None,
        }
    }

    /// Whether authorization failed (feature `oauth`); [`Error::auth_error`] says why. A
    /// `401`/`403` the flow could not fix is an HTTP status error ([`Error::status`]).
    #[cfg(feature = "oauth")]
    pub fn is_auth(&self) -> bool {
        matches!(*self.inner, Kind::Auth(_))
    }

    /// The typed reason authorization failed.
    #[cfg(feature = "oauth")]
    pub fn auth_error(&self) -> Option<&crate::auth::AuthError> {
        match &*self.inner {
            Kind::Auth(e) => Some(e),
            _ => None,
        }
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        Self::new(Kind::Config(message.into()))
    }

    /// The request ran past its timeout (the stream was closed), or a SEP-2663 task did not end
    /// within its TTL (or the client's bound on following it).
    pub fn is_timeout(&self) -> bool {
        match &*self.inner {
            Kind::Timeout(_) | Kind::TaskExpired { .. } => true,
            Kind::Transport(e) => e.is_timeout(),
            _ => false,
        }
    }

    /// The request was cancelled by the caller (for a call the server runs as a task,
    /// `tasks/cancel` was sent; [`Error::task_id`] names the task).
    pub fn is_cancelled(&self) -> bool {
        matches!(*self.inner, Kind::Cancelled | Kind::CancelledTask { .. })
    }

    /// A SEP-2663 task ended `cancelled` without this caller asking (the server, or another
    /// client's `tasks/cancel`). Not [`Error::is_cancelled`].
    pub fn is_task_cancelled(&self) -> bool {
        matches!(*self.inner, Kind::TaskCancelled { .. })
    }

    /// A SEP-2663 task ended `failed`. Its JSON-RPC error is in [`Error::jsonrpc_error`], as
    /// for a request answered with that error.
    pub fn is_task_failed(&self) -> bool {
        matches!(*self.inner, Kind::TaskFailed { .. })
    }

    /// The SEP-2663 task this error is about, when the server ran the call as a task and it
    /// failed, was cancelled (by anyone) or outlived its TTL.
    pub fn task_id(&self) -> Option<&str> {
        match &*self.inner {
            Kind::TaskFailed { task_id, .. }
            | Kind::TaskCancelled { task_id, .. }
            | Kind::CancelledTask { task_id }
            | Kind::TaskExpired { task_id, .. } => Some(task_id),
            _ => None,
        }
    }

    /// The connection could not be made or broke at the HTTP level, or the stdio server could
    /// not be started.
    pub fn is_connect(&self) -> bool {
        matches!(&*self.inner, Kind::Transport(_) | Kind::Spawn { .. })
    }

    /// The connection to the server could not be made, so the request never reached it (a
    /// resend is safe whatever the method).
    pub fn is_connect_failure(&self) -> bool {
        match &*self.inner {
            Kind::Transport(e) => e.is_connect(),
            _ => false,
        }
    }

    /// The stdio server exited or closed its stdout: the request is lost (it is never retried).
    /// [`Error::exit_status`] tells how it exited, when known.
    pub fn is_server_exited(&self) -> bool {
        matches!(*self.inner, Kind::ServerExited { .. })
    }

    /// The exit status of a stdio server that exited ([`Error::is_server_exited`]).
    pub fn exit_status(&self) -> Option<std::process::ExitStatus> {
        match &*self.inner {
            Kind::ServerExited { status } => *status,
            _ => None,
        }
    }

    /// The client was closed with [`Client::close`](crate::Client::close) before the
    /// response arrived.
    pub fn is_closed(&self) -> bool {
        matches!(*self.inner, Kind::Closed)
    }

    /// The server answered with a non-success HTTP status.
    pub fn is_http_status(&self) -> bool {
        self.status().is_some_and(|s| !(200..300).contains(&s))
    }

    /// The HTTP status of the response that carried this error, if there was one.
    pub fn status(&self) -> Option<u16> {
        match &*self.inner {
            Kind::HttpStatus { status, .. }
            | Kind::WrongEndpoint { status, .. }
            | Kind::OlderRevision { status, .. } => Some(*status),
            Kind::Rpc { status, .. } => *status,
            Kind::Transport(e) => e.status().map(|s| s.as_u16()),
            _ => None,
        }
    }

    /// The JSON-RPC error code, when the server answered with a JSON-RPC error.
    pub fn jsonrpc_code(&self) -> Option<i64> {
        self.jsonrpc_error().map(|e| e.code)
    }

    /// The whole JSON-RPC error object (code, message, data), when there is one: the server's
    /// answer, or the error a `failed` task ended with.
    pub fn jsonrpc_error(&self) -> Option<&ErrorObject> {
        match &*self.inner {
            Kind::Rpc { error, .. } | Kind::TaskFailed { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The server broke the protocol: malformed SSE or JSON, a response with the wrong id, a
    /// JSON-RPC request on a response stream, an unknown `resultType`, an `InputRequiredResult`
    /// from a method that may not return one, a `CreateTaskResult` (`resultType: "task"`) from a
    /// method that does not support tasks or to a request that did not declare the tasks
    /// extension, a `tasks/get` answer that does not fit its status or names another task, a
    /// result of the wrong shape, or (stdio) a stdout line over the length cap, which fails
    /// every request in flight.
    /// A tool result whose `structuredContent` breaks the tool's `outputSchema` is one too
    /// ([`Error::output_schema_path`]).
    pub fn is_protocol_violation(&self) -> bool {
        matches!(*self.inner, Kind::Protocol(_) | Kind::OutputSchema { .. })
    }

    /// For a tool result that does not conform to the tool's `outputSchema` (REQUIREMENTS
    /// A13.81): the JSON Pointer of the first failing member of `structuredContent` (`/` for
    /// the whole, e.g. when it is missing).
    pub fn output_schema_path(&self) -> Option<&str> {
        match &*self.inner {
            Kind::OutputSchema { path, .. } => Some(path),
            _ => None,
        }
    }

    /// The response stream ended before the response arrived. The request is lost; it is
    /// never retried automatically (a `tools/call` may have had effects).
    pub fn is_stream_broken(&self) -> bool {
        matches!(*self.inner, Kind::StreamBroken)
    }

    /// The server answered like a pre-2026-07-28 server (400/404/405 without a modern error).
    pub fn is_older_revision(&self) -> bool {
        matches!(*self.inner, Kind::OlderRevision { .. })
    }

    /// Client and server share no protocol version: the text names what each side offered.
    pub fn is_version_mismatch(&self) -> bool {
        matches!(*self.inner, Kind::NoCommonVersion { .. })
    }

    /// A feature that exists only in MCP 2026-07-28 (`server/discover`, `subscriptions/listen`
    /// filters it cannot map, SEP-2631 files, SEP-2663 tasks, `requestState`) was asked of a
    /// server that negotiated an older revision; [`Error::negotiated_version`] names it.
    pub fn is_unsupported_in_era(&self) -> bool {
        matches!(*self.inner, Kind::NotInEra { .. })
    }

    /// For [`Error::is_unsupported_in_era`]: the protocol version the server negotiated.
    pub fn negotiated_version(&self) -> Option<&str> {
        match &*self.inner {
            Kind::NotInEra { version, .. } => Some(version),
            _ => None,
        }
    }

    /// The server answered 404 or 405 with a body that shows no sign of MCP (empty, HTML, plain
    /// text): the URL's path is most likely not the MCP endpoint.
    pub fn is_wrong_endpoint(&self) -> bool {
        matches!(*self.inner, Kind::WrongEndpoint { .. })
    }

    /// The server refused the TCP connection (nothing listens at that address and port).
    pub fn is_connection_refused(&self) -> bool {
        match &*self.inner {
            Kind::Transport(e) => causes(e).into_iter().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
            }),
            _ => false,
        }
    }

    /// The connection (TCP, then the TLS handshake) was not established within the connect
    /// timeout ([`ClientBuilder::connect_timeout`](crate::ClientBuilder::connect_timeout)).
    pub fn is_connect_timeout(&self) -> bool {
        match &*self.inner {
            Kind::Transport(e) => e.is_connect() && e.is_timeout(),
            _ => false,
        }
    }

    /// The TLS handshake failed (an untrusted or invalid certificate, a peer that does not
    /// speak TLS, no common parameters).
    pub fn is_tls(&self) -> bool {
        match &*self.inner {
            Kind::Transport(e) => tls_error(e).is_some(),
            _ => false,
        }
    }

    /// The server's certificate does not chain to a trusted root (e.g. a development CA that
    /// was not added with [`ClientBuilder::ca_cert_pem`](crate::ClientBuilder::ca_cert_pem)).
    pub fn is_untrusted_certificate(&self) -> bool {
        match &*self.inner {
            Kind::Transport(e) => matches!(
                tls_error(e),
                Some(rustls::Error::InvalidCertificate(
                    rustls::CertificateError::UnknownIssuer
                        | rustls::CertificateError::BadSignature
                ))
            ),
            _ => false,
        }
    }

    /// The URL is `https` but the server answered in something that is not TLS (most likely
    /// plain HTTP: the URL should be `http`).
    pub fn is_not_tls(&self) -> bool {
        match &*self.inner {
            Kind::Transport(e) => matches!(tls_error(e), Some(rustls::Error::InvalidMessage(_))),
            _ => false,
        }
    }

    /// The URL is `http` but the connection closed, or the answer was not HTTP, before any
    /// response: typical of a TLS port (the URL should be `https`).
    pub fn is_not_http(&self) -> bool {
        match &*self.inner {
            Kind::Transport(e) => {
                e.url().is_some_and(|u| u.scheme() == "http")
                    && !e.is_connect()
                    && !e.is_timeout()
                    && e.status().is_none()
                    && (e.is_request() || e.is_body() || e.is_decode())
            }
            _ => false,
        }
    }

    /// The MRTR round cap was reached.
    pub fn is_mrtr_limit(&self) -> bool {
        matches!(*self.inner, Kind::MrtrLimit(_))
    }

    /// The installed input handler failed or does not handle the requested kind.
    pub fn is_input_handler(&self) -> bool {
        matches!(*self.inner, Kind::InputHandler { .. })
    }

    /// The client refused to call a tool whose `x-mcp-header` annotations are invalid.
    pub fn is_invalid_tool(&self) -> bool {
        matches!(*self.inner, Kind::InvalidTool { .. })
    }

    /// Whether a refusal of a 2026-07-28 request means "this server speaks an older revision"
    /// (A14): 400/404/405 whose body is not a recognized 2026-07-28 error. Recognized: −32020,
    /// −32021, −32022 (any status), −32602 with 400 and −32601 with 404.
    pub(crate) fn is_fallback_signal(&self) -> bool {
        match &*self.inner {
            Kind::OlderRevision { .. } | Kind::WrongEndpoint { .. } => true,
            Kind::Rpc {
                status: Some(status @ (400 | 404 | 405)),
                error,
            } => {
                use smcp_proto::error as code;
                let modern = matches!(
                    error.code,
                    code::HEADER_MISMATCH
                        | code::UNSUPPORTED_PROTOCOL_VERSION
                        | code::MISSING_REQUIRED_CLIENT_CAPABILITY
                ) || (*status == 400 && error.code == code::INVALID_PARAMS)
                    || (*status == 404 && error.code == code::METHOD_NOT_FOUND);
                !modern
            }
            _ => false,
        }
    }

    /// The client was configured with an unusable option (URL, header, …).
    pub fn is_config(&self) -> bool {
        matches!(*self.inner, Kind::Config(_))
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("smcp_client::Error")
            .field(&self.inner)
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.inner, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&*self.inner)
    }
}

impl From<crate::files::TransferError> for Error {
    fn from(e: crate::files::TransferError) -> Self {
        Self::new(Kind::File(e))
    }
}

impl From<Kind> for Error {
    fn from(kind: Kind) -> Self {
        Self::new(kind)
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
