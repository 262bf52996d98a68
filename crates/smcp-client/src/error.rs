//! The public error type: opaque, classified by [`Error::kind`] (an [`ErrorKind`]), with a few
//! predicates for the questions that span several kinds and accessors for the details.
//!
//! Callers match on [`Error::kind`] or ask [`Error::is_timeout`], [`Error::jsonrpc_code`],
//! [`Error::status`] and friends instead of matching on variants, so the private [`Kind`] can
//! grow without breaking anyone. The `Display` text is meant for people and is not a stable
//! interface.

use std::fmt;

use smcp_proto::error::ErrorObject;

use crate::error_kind::ErrorKind;

/// Everything that can go wrong talking to an MCP server.
///
/// Ask it what happened with [`Error::kind`] (an [`ErrorKind`]: one per way of failing) and its
/// accessors rather than parsing its text:
///
/// | question | ask |
/// |---|---|
/// | what happened | [`Error::kind`] |
/// | the server answered with a JSON-RPC error | [`Error::jsonrpc_code`], [`Error::jsonrpc_error`] |
/// | the HTTP status | [`Error::status`], [`Error::is_http_status`] |
/// | the server could not be reached (any connection or TLS failure, a stdio server that would not start) | [`Error::is_connect`] |
/// | time and cancellation | [`Error::is_timeout`], [`Error::is_cancelled`] |
/// | the server broke the protocol | [`Error::is_protocol_violation`], [`Error::output_schema_path`] |
/// | tasks (SEP-2663) | [`Error::task_id`] |
/// | stdio | [`Error::exit_status`] |
/// | files (SEP-2631) | [`Error::transfer_error`] |
/// | configuration | [`Error::is_config`] |
/// | authorization (feature `oauth`) | `Error::auth_error`, [`Error::status`] 401/403 |
/// | the version a server of an older revision negotiated | [`Error::negotiated_version`] |
///
/// A tool that fails is not an `Err`: its result has `isError: true`
/// ([`CallToolResult::is_error`](smcp_proto::server::tools::CallToolResult::is_error)).
///
/// # Examples
///
/// ```no_run
/// use smcp_client::ErrorKind;
///
/// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
/// match client.call_tool("search", serde_json::json!({"q": "rust"})).await {
///     Ok(result) if result.is_error() => eprintln!("the tool failed: {}", result.text_content()),
///     Ok(result) => println!("{}", result.text_content()),
///     Err(e) if e.kind() == ErrorKind::ConnectionRefused => eprintln!("no server at {}: is it running?", client.url()),
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
    /// The same, on the direct `http://` path (`transport::direct`).
    #[error("HTTP transport error: {0}")]
    Direct(#[source] crate::transport::direct_error::DirectError),
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

/// The kind of a transport error. The more specific diagnoses go first: a TLS failure is also
/// a connect error, and a refused or timed-out connection is not worth calling a TLS one.
fn transport_kind(e: &reqwest::Error) -> ErrorKind {
    let tls = tls_error(e);
    if matches!(
        tls,
        Some(rustls::Error::InvalidCertificate(
            rustls::CertificateError::UnknownIssuer | rustls::CertificateError::BadSignature
        ))
    ) {
        ErrorKind::UntrustedCertificate
    } else if matches!(tls, Some(rustls::Error::InvalidMessage(_))) {
        ErrorKind::NotTls
    } else if tls.is_some() {
        ErrorKind::Tls
    } else if causes(e).into_iter().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
    }) {
        ErrorKind::ConnectionRefused
    } else if e.is_connect() && e.is_timeout() {
        ErrorKind::ConnectTimeout
    } else if e.url().is_some_and(|u| u.scheme() == "http")
        && !e.is_connect()
        && !e.is_timeout()
        && e.status().is_none()
        && (e.is_request() || e.is_body() || e.is_decode())
    {
        ErrorKind::NotHttp
    } else if e.is_timeout() {
        ErrorKind::Timeout
    } else {
        ErrorKind::Transport
    }
}

/// The kind of a failure on the direct `http://` path, diagnosed as [`transport_kind`] does
/// reqwest's (no TLS there).
fn direct_kind(e: &crate::transport::direct_error::DirectError) -> ErrorKind {
    if e.is_refused() {
        ErrorKind::ConnectionRefused
    } else if e.is_timeout() {
        ErrorKind::ConnectTimeout
    } else if e.is_not_http() {
        ErrorKind::NotHttp
    } else {
        ErrorKind::Transport
    }
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

    /// What went wrong, one [`ErrorKind`] per way of failing: match on it instead of asking
    /// predicate after predicate. The details stay on the accessors ([`Error::jsonrpc_error`],
    /// [`Error::status`], [`Error::task_id`], [`Error::transfer_error`], …).
    ///
    /// ```
    /// use smcp_client::ErrorKind;
    ///
    /// let err = smcp_client::Client::builder("not a url").build().unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::Config);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match &*self.inner {
            Kind::Config(_) => ErrorKind::Config,
            Kind::Transport(e) => transport_kind(e),
            Kind::Direct(e) => direct_kind(e),
            Kind::Timeout(_) => ErrorKind::Timeout,
            Kind::Cancelled | Kind::CancelledTask { .. } => ErrorKind::Cancelled,
            Kind::HttpStatus { .. } => ErrorKind::HttpStatus,
            Kind::Rpc { .. } => ErrorKind::JsonRpc,
            Kind::WrongEndpoint { .. } => ErrorKind::WrongEndpoint,
            Kind::OlderRevision { .. } => ErrorKind::OlderRevision,
            Kind::NoCommonVersion { .. } => ErrorKind::VersionMismatch,
            Kind::NotInEra { .. } => ErrorKind::UnsupportedInEra,
            Kind::Protocol(_) => ErrorKind::ProtocolViolation,
            Kind::File(_) => ErrorKind::FileTransfer,
            #[cfg(feature = "oauth")]
            Kind::Auth(_) => ErrorKind::Auth,
            Kind::StreamBroken => ErrorKind::StreamBroken,
            Kind::MrtrLimit(_) => ErrorKind::InputRoundLimit,
            Kind::Spawn { .. } => ErrorKind::Spawn,
            Kind::ServerExited { .. } => ErrorKind::ServerExited,
            Kind::Closed => ErrorKind::Closed,
            Kind::InputHandler { .. } => ErrorKind::InputHandler,
            Kind::TaskFailed { .. } => ErrorKind::TaskFailed,
            Kind::TaskCancelled { .. } => ErrorKind::TaskCancelled,
            Kind::TaskExpired { .. } => ErrorKind::TaskExpired,
            Kind::OutputSchema { .. } => ErrorKind::OutputSchema,
            Kind::InvalidTool { .. } => ErrorKind::InvalidTool,
        }
    }

    /// The typed reason of a failed SEP-2631 file transfer ([`ErrorKind::FileTransfer`]).
    pub fn transfer_error(&self) -> Option<&crate::files::TransferError> {
        match &*self.inner {
            Kind::File(e) => Some(e),
            _ => None,
        }
    }

    /// The typed reason authorization failed ([`ErrorKind::Auth`]). A `401`/`403` the flow
    /// could not fix is an HTTP status error ([`Error::status`]).
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
            Kind::Direct(e) => e.is_timeout(),
            _ => false,
        }
    }

    /// The request was cancelled by the caller (for a call the server runs as a task,
    /// `tasks/cancel` was sent; [`Error::task_id`] names the task): [`ErrorKind::Cancelled`].
    /// Not a task that ended `cancelled` on its own ([`ErrorKind::TaskCancelled`]).
    pub fn is_cancelled(&self) -> bool {
        matches!(*self.inner, Kind::Cancelled | Kind::CancelledTask { .. })
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
    /// not be started: the kinds [`ErrorKind::ConnectionRefused`],
    /// [`ErrorKind::ConnectTimeout`], [`ErrorKind::UntrustedCertificate`], [`ErrorKind::NotTls`],
    /// [`ErrorKind::Tls`], [`ErrorKind::NotHttp`], [`ErrorKind::Transport`] and
    /// [`ErrorKind::Spawn`], and an HTTP read timeout.
    pub fn is_connect(&self) -> bool {
        matches!(
            &*self.inner,
            Kind::Transport(_) | Kind::Direct(_) | Kind::Spawn { .. }
        )
    }

    /// The connection to the server could not be made, so the request never reached it (a
    /// resend is safe whatever the method).
    pub(crate) fn is_connect_failure(&self) -> bool {
        match &*self.inner {
            Kind::Transport(e) => e.is_connect(),
            Kind::Direct(e) => e.is_connect(),
            _ => false,
        }
    }

    /// The exit status of a stdio server that exited ([`ErrorKind::ServerExited`]), when it
    /// was reaped.
    pub fn exit_status(&self) -> Option<std::process::ExitStatus> {
        match &*self.inner {
            Kind::ServerExited { status } => *status,
            _ => None,
        }
    }

    /// The server answered with a non-success HTTP status (whatever the body: the kinds
    /// [`ErrorKind::HttpStatus`], [`ErrorKind::WrongEndpoint`], [`ErrorKind::OlderRevision`],
    /// and a [`ErrorKind::JsonRpc`] error carried by one).
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
    /// ([`Error::output_schema_path`]). The kinds [`ErrorKind::ProtocolViolation`] and
    /// [`ErrorKind::OutputSchema`].
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
    pub(crate) fn is_stream_broken(&self) -> bool {
        matches!(*self.inner, Kind::StreamBroken)
    }

    /// The server answered like a pre-2026-07-28 server (400/404/405 without a modern error).
    #[cfg(test)]
    pub(crate) fn is_older_revision(&self) -> bool {
        matches!(*self.inner, Kind::OlderRevision { .. })
    }

    /// Client and server share no protocol version: the text names what each side offered.
    pub(crate) fn is_version_mismatch(&self) -> bool {
        matches!(*self.inner, Kind::NoCommonVersion { .. })
    }

    /// A feature that exists only in MCP 2026-07-28 (`server/discover`, `subscriptions/listen`
    /// filters it cannot map, SEP-2631 files, SEP-2663 tasks, `requestState`) was asked of a
    /// server that negotiated an older revision; [`Error::negotiated_version`] names it.
    #[cfg(test)]
    pub(crate) fn is_unsupported_in_era(&self) -> bool {
        matches!(*self.inner, Kind::NotInEra { .. })
    }

    /// For [`ErrorKind::UnsupportedInEra`]: the protocol version the server negotiated.
    pub fn negotiated_version(&self) -> Option<&str> {
        match &*self.inner {
            Kind::NotInEra { version, .. } => Some(version),
            _ => None,
        }
    }

    /// The server answered 404 or 405 with a body that shows no sign of MCP (empty, HTML, plain
    /// text): the URL's path is most likely not the MCP endpoint.
    pub(crate) fn is_wrong_endpoint(&self) -> bool {
        matches!(*self.inner, Kind::WrongEndpoint { .. })
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

    /// The client was configured with an unusable option (URL, header, …), or a call got
    /// unusable arguments: [`ErrorKind::Config`].
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

#[cfg(test)]
mod tests {
    //! `Error::kind` for every `ErrorKind`: each test makes the error (the transport kinds
    //! from real sockets) and asserts its kind. Only this module's names are used, so the
    //! tests add no edge from `error.rs` to the modules that build errors.

    use std::time::Duration;

    use smcp_proto::error::ErrorObject;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    fn kind_of(kind: Kind) -> ErrorKind {
        Error::new(kind).kind()
    }

    /// The transport error of a GET with `client`.
    async fn get_error(client: &reqwest::Client, url: &str) -> Error {
        match client.get(url).send().await {
            Ok(r) => panic!("{url} answered {}", r.status()),
            Err(e) => Error::new(Kind::Transport(e)),
        }
    }

    /// A TCP server that runs `answer` on every connection.
    async fn tcp_server<F, Fut>(answer: F) -> std::net::SocketAddr
    where
        F: Fn(tokio::net::TcpStream) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(answer(socket));
            }
        });
        addr
    }

    /// An HTTPS server with a throwaway CA's certificate for 127.0.0.1; returns its address
    /// and the CA (PEM).
    async fn tls_server(tag: &str) -> (std::net::SocketAddr, Vec<u8>) {
        let dir = std::env::temp_dir().join(format!(
            "smcp-client-error-kind-{tag}-{}",
            std::process::id()
        ));
        let certs = smcp_server::http::tls::write_dev_certificates(&dir, &["127.0.0.1"]).unwrap();
        let config = smcp_server::http::tls::config_from_files(&certs.cert, &certs.key).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(smcp_server::serve(
            listener,
            axum::Router::new().route("/", axum::routing::get(|| async { "ok" })),
            smcp_server::ServeOptions {
                tls: Some(config),
                ..smcp_server::ServeOptions::default()
            },
            std::future::pending::<()>(),
        ));
        (addr, std::fs::read(&certs.ca_cert).unwrap())
    }

    #[test]
    fn config() {
        let e = Error::config("invalid server URL \"not a url\"");
        assert_eq!(e.kind(), ErrorKind::Config, "{e}");
        assert!(e.is_config());
    }

    #[tokio::test]
    async fn connection_refused() {
        let port = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let e = get_error(
            &reqwest::Client::new(),
            &format!("http://127.0.0.1:{port}/"),
        )
        .await;
        assert_eq!(e.kind(), ErrorKind::ConnectionRefused, "{e}");
        assert!(e.is_connect() && e.is_connect_failure());
    }

    #[tokio::test]
    async fn connect_timeout() {
        // The TCP connection is accepted, the TLS handshake never answered.
        let addr = tcp_server(|socket| async move {
            tokio::time::sleep(Duration::from_secs(30)).await;
            drop(socket);
        })
        .await;
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_millis(200))
            .build()
            .unwrap();
        let e = get_error(&client, &format!("https://{addr}/")).await;
        assert_eq!(e.kind(), ErrorKind::ConnectTimeout, "{e}");
        assert!(e.is_connect() && e.is_timeout());
    }

    #[tokio::test]
    async fn untrusted_certificate() {
        let (addr, _ca) = tls_server("untrusted").await;
        let e = get_error(&reqwest::Client::new(), &format!("https://{addr}/")).await;
        assert_eq!(e.kind(), ErrorKind::UntrustedCertificate, "{e}");
    }

    #[tokio::test]
    async fn tls_failure_of_another_kind() {
        // The CA is trusted, but the certificate is for 127.0.0.1, not for this name.
        let (addr, ca) = tls_server("name").await;
        let client = reqwest::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
            .resolve("other.test", addr)
            .build()
            .unwrap();
        let e = get_error(&client, &format!("https://other.test:{}/", addr.port())).await;
        assert_eq!(e.kind(), ErrorKind::Tls, "{e}");
        assert!(e.is_connect());
    }

    #[tokio::test]
    async fn not_tls() {
        // A plain HTTP server on the port an https URL names.
        let addr = tcp_server(|mut socket| async move {
            let mut buf = [0u8; 1024];
            let _ = socket.read(&mut buf).await;
            let _ = socket
                .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                .await;
        })
        .await;
        let e = get_error(&reqwest::Client::new(), &format!("https://{addr}/")).await;
        assert_eq!(e.kind(), ErrorKind::NotTls, "{e}");
    }

    #[tokio::test]
    async fn not_http() {
        // The connection closes without an HTTP answer, as a TLS port does to plain HTTP.
        let addr = tcp_server(|mut socket| async move {
            let mut buf = [0u8; 1024];
            let _ = socket.read(&mut buf).await;
        })
        .await;
        let e = get_error(&reqwest::Client::new(), &format!("http://{addr}/")).await;
        assert_eq!(e.kind(), ErrorKind::NotHttp, "{e}");
    }

    #[tokio::test]
    async fn transport_failure_of_another_kind() {
        // A redirect loop: an HTTP failure that is none of the diagnosed ones.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route(
            "/",
            axum::routing::get(|| async { axum::response::Redirect::temporary("/") }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        let e = get_error(&reqwest::Client::new(), &format!("http://{addr}/")).await;
        assert_eq!(e.kind(), ErrorKind::Transport, "{e}");
        assert!(e.is_connect());
    }

    #[test]
    fn spawn() {
        let program = "/nonexistent/smcp-error-kind-test";
        let source = std::process::Command::new(program).spawn().unwrap_err();
        let e = Error::new(Kind::Spawn {
            program: program.into(),
            source,
        });
        assert_eq!(e.kind(), ErrorKind::Spawn, "{e}");
        assert!(e.is_connect());
    }

    #[test]
    fn timeout() {
        let e = Error::new(Kind::Timeout(Duration::from_secs(60)));
        assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
        assert!(e.is_timeout());
    }

    #[tokio::test]
    async fn timeout_reading_the_response() {
        let addr = tcp_server(|mut socket| async move {
            let mut buf = [0u8; 1024];
            let _ = socket.read(&mut buf).await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        })
        .await;
        let client = reqwest::Client::builder()
            .timeout(Duration::from_millis(200))
            .build()
            .unwrap();
        let e = get_error(&client, &format!("http://{addr}/")).await;
        assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
        assert!(e.is_timeout());
    }

    #[test]
    fn cancelled() {
        assert_eq!(kind_of(Kind::Cancelled), ErrorKind::Cancelled);
        let e = Error::new(Kind::CancelledTask {
            task_id: "t1".into(),
        });
        assert_eq!(e.kind(), ErrorKind::Cancelled);
        assert!(e.is_cancelled() && e.task_id() == Some("t1"));
    }

    #[test]
    fn http_status() {
        let e = Error::new(Kind::HttpStatus {
            status: 502,
            body: String::new(),
        });
        assert_eq!(e.kind(), ErrorKind::HttpStatus);
        assert!(e.is_http_status());
    }

    #[test]
    fn wrong_endpoint() {
        let e = Error::new(Kind::WrongEndpoint {
            status: 404,
            body: "<html>".into(),
        });
        assert_eq!(e.kind(), ErrorKind::WrongEndpoint);
        assert!(e.is_http_status() && e.is_wrong_endpoint());
    }

    #[test]
    fn json_rpc() {
        let e = Error::new(Kind::Rpc {
            status: Some(200),
            error: ErrorObject::new(-32602, "bad arguments"),
        });
        assert_eq!(e.kind(), ErrorKind::JsonRpc);
        assert_eq!(e.jsonrpc_code(), Some(-32602));
    }

    #[test]
    fn older_revision() {
        let e = Error::new(Kind::OlderRevision {
            status: 400,
            detail: "pinned".into(),
        });
        assert_eq!(e.kind(), ErrorKind::OlderRevision);
        assert!(e.is_older_revision());
    }

    #[test]
    fn version_mismatch() {
        let e = Error::new(Kind::NoCommonVersion {
            offered: vec!["2026-07-28".into()],
            speaks: vec!["2026-07-28".into()],
            server: "answered with 2024-10-07".into(),
        });
        assert_eq!(e.kind(), ErrorKind::VersionMismatch);
        assert!(e.is_version_mismatch());
    }

    #[test]
    fn unsupported_in_era() {
        let e = Error::new(Kind::NotInEra {
            feature: "server/discover".into(),
            version: "2025-11-25".into(),
        });
        assert_eq!(e.kind(), ErrorKind::UnsupportedInEra);
        assert_eq!(e.negotiated_version(), Some("2025-11-25"));
    }

    #[test]
    fn protocol_violation() {
        let e = Error::protocol("unknown resultType \"later\"");
        assert_eq!(e.kind(), ErrorKind::ProtocolViolation, "{e}");
        assert!(e.is_protocol_violation());
    }

    #[test]
    fn output_schema() {
        let e = Error::new(Kind::OutputSchema {
            tool: "t".into(),
            path: "/n".into(),
            problem: "not a number".into(),
        });
        assert_eq!(e.kind(), ErrorKind::OutputSchema);
        assert!(e.is_protocol_violation() && e.output_schema_path() == Some("/n"));
    }

    #[test]
    fn file_transfer() {
        let e = Error::from(crate::files::TransferError::InvalidMimeType {
            mime_type: "nope".into(),
        });
        assert_eq!(e.kind(), ErrorKind::FileTransfer);
        assert!(e.transfer_error().is_some());
    }

    #[cfg(feature = "oauth")]
    #[test]
    fn auth() {
        let e = Error::new(Kind::Auth(crate::auth::AuthError::Authorizer(
            "the user closed the browser".into(),
        )));
        assert_eq!(e.kind(), ErrorKind::Auth);
        assert!(e.auth_error().is_some());
    }

    #[test]
    fn stream_broken() {
        let e = Error::new(Kind::StreamBroken);
        assert_eq!(e.kind(), ErrorKind::StreamBroken);
        assert!(e.is_stream_broken());
    }

    #[test]
    fn input_round_limit() {
        assert_eq!(kind_of(Kind::MrtrLimit(9)), ErrorKind::InputRoundLimit);
    }

    #[test]
    fn server_exited() {
        let e = Error::new(Kind::ServerExited { status: None });
        assert_eq!(e.kind(), ErrorKind::ServerExited);
        assert_eq!(e.exit_status(), None);
    }

    #[test]
    fn closed() {
        assert_eq!(kind_of(Kind::Closed), ErrorKind::Closed);
    }

    #[test]
    fn input_handler() {
        let e = Error::new(Kind::InputHandler {
            method: "elicitation/create".into(),
            message: "no terminal".into(),
        });
        assert_eq!(e.kind(), ErrorKind::InputHandler);
    }

    #[test]
    fn task_failed() {
        let e = Error::new(Kind::TaskFailed {
            task_id: "t1".into(),
            error: ErrorObject::new(-32603, "boom"),
        });
        assert_eq!(e.kind(), ErrorKind::TaskFailed);
        assert_eq!(e.jsonrpc_code(), Some(-32603));
        assert_eq!(e.task_id(), Some("t1"));
    }

    #[test]
    fn task_cancelled() {
        let e = Error::new(Kind::TaskCancelled {
            task_id: "t1".into(),
            message: None,
        });
        assert_eq!(e.kind(), ErrorKind::TaskCancelled);
        assert!(!e.is_cancelled(), "not cancelled by this caller");
    }

    #[test]
    fn task_expired() {
        let e = Error::new(Kind::TaskExpired {
            task_id: "t1".into(),
            after: Duration::from_secs(60),
        });
        assert_eq!(e.kind(), ErrorKind::TaskExpired);
        assert!(e.is_timeout());
    }

    #[test]
    fn invalid_tool() {
        let e = Error::new(Kind::InvalidTool {
            name: "t".into(),
            reason: "bad x-mcp-header".into(),
        });
        assert_eq!(e.kind(), ErrorKind::InvalidTool);
    }
}
