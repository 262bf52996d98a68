//! [`ErrorKind`]: what [`Error::kind`](crate::Error::kind) answers, one variant per way a call
//! can fail, so a caller can `match` on it instead of asking predicate after predicate.

/// What went wrong, as [`Error::kind`](crate::Error::kind) classifies it. Every error has
/// exactly one kind; the details (codes, statuses, task ids, typed causes) stay on
/// [`Error`](crate::Error)'s accessors.
///
/// New kinds may be added (so a `match` needs a `_` arm): a new way of failing is then told
/// apart instead of landing in a broader kind.
///
/// # Examples
///
/// ```no_run
/// use smcp_client::ErrorKind;
///
/// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
/// match client.list_tools().await {
///     Ok(tools) => println!("{} tools", tools.len()),
///     Err(e) => match e.kind() {
///         ErrorKind::ConnectionRefused => eprintln!("no server at {}: is it running?", client.url()),
///         ErrorKind::UntrustedCertificate => eprintln!("add the server's CA (ClientBuilder::ca_cert_pem)"),
///         ErrorKind::JsonRpc => eprintln!("the server refused: {:?}", e.jsonrpc_error()),
///         _ => return Err(e),
///     },
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The client was configured with an unusable option (URL, header, CA bundle, protocol
    /// version, a header on a stdio client), or a call got unusable arguments (not a JSON
    /// object, an unknown tool for a file argument, file transfer not enabled). Nothing was
    /// sent; fix the configuration or the call: retrying cannot help.
    Config,
    /// The server refused the TCP connection: nothing listens at that address and port. Check
    /// the URL and that the server runs. The request never reached a server, so resending is
    /// safe.
    ConnectionRefused,
    /// The connection (TCP, then the TLS handshake) was not established within the connect
    /// timeout ([`ClientBuilder::connect_timeout`](crate::ClientBuilder::connect_timeout)):
    /// the host did not answer. Check the address and firewalls, or allow more time.
    ConnectTimeout,
    /// The server's certificate does not chain to a trusted root (e.g. a development CA).
    /// Trust its CA with [`ClientBuilder::ca_cert_pem`](crate::ClientBuilder::ca_cert_pem).
    UntrustedCertificate,
    /// The URL is `https` but the server answered in something that is not TLS (most likely
    /// plain HTTP): use `http`.
    NotTls,
    /// The TLS handshake failed otherwise (a certificate for another name, an expired one, no
    /// common parameters). [`std::error::Error::source`] has the details.
    Tls,
    /// The URL is `http` but the connection closed, or the answer was not HTTP, before any
    /// response: typical of a TLS port. Use `https`.
    NotHttp,
    /// Any other failure of the HTTP exchange below MCP (name resolution, a connection reset,
    /// a body that could not be read). The request may or may not have reached the server;
    /// [`std::error::Error::source`] says what happened.
    Transport,
    /// The stdio server could not be started (program not found, not executable). Check the
    /// command.
    Spawn,
    /// The call ran past its timeout (the client's, [`ClientBuilder::timeout`](crate::ClientBuilder::timeout)
    /// or [`ToolCall::timeout`](crate::ToolCall::timeout), or the HTTP read timeout); its stream
    /// was closed, which cancels it server-side. Retry with more time if the server is just
    /// slow.
    Timeout,
    /// The caller cancelled the call (a [`CancellationToken`](crate::CancellationToken)); for a
    /// call the server runs as a task, `tasks/cancel` was sent and
    /// [`Error::task_id`](crate::Error::task_id) names the task.
    Cancelled,
    /// The server answered with a non-success HTTP status and no JSON-RPC error body
    /// ([`Error::status`](crate::Error::status)); `401`/`403` mean missing or refused
    /// credentials.
    HttpStatus,
    /// The server answered `404` or `405` with a body that shows no sign of MCP: the URL's path
    /// is most likely not the MCP endpoint. Check the path (`smcpd` serves `/mcp`).
    WrongEndpoint,
    /// The server answered with a JSON-RPC error:
    /// [`Error::jsonrpc_code`](crate::Error::jsonrpc_code) and
    /// [`Error::jsonrpc_error`](crate::Error::jsonrpc_error) say which (e.g. −32602 for
    /// invalid arguments).
    JsonRpc,
    /// The server answered like a pre-2026-07-28 server (400/404/405 without a modern error)
    /// and the fallback to the older revisions did not get through (or a pin ruled it out).
    OlderRevision,
    /// Client and server share no protocol version; the message names what each side offered.
    /// Pin a version both speak, or upgrade one side.
    VersionMismatch,
    /// A feature that exists only in MCP 2026-07-28 (`server/discover`, SEP-2631 files,
    /// SEP-2663 tasks, some listen filters) was asked of a server that negotiated an older
    /// revision; [`Error::negotiated_version`](crate::Error::negotiated_version) names it. Use
    /// what the older revision offers ([`Client::session_info`](crate::Client::session_info)).
    UnsupportedInEra,
    /// The server broke the protocol: malformed SSE or JSON, a response with the wrong id, an
    /// unknown `resultType`, a result of the wrong shape, a stdio line over the length cap… A
    /// server bug: report it; retrying the same call will most likely fail the same way.
    ProtocolViolation,
    /// A tool result's `structuredContent` does not conform to the tool's `outputSchema` (or
    /// is missing): the server broke the tool's contract.
    /// [`Error::output_schema_path`](crate::Error::output_schema_path) points at the first
    /// failing member. Also a protocol violation
    /// ([`Error::is_protocol_violation`](crate::Error::is_protocol_violation)).
    OutputSchema,
    /// A SEP-2631 file transfer failed (descriptor refused, data-plane error, integrity
    /// mismatch, local I/O); [`Error::transfer_error`](crate::Error::transfer_error) says which.
    FileTransfer,
    /// Authorization failed (feature `oauth`: discovery, registration, the browser step,
    /// tokens); `Error::auth_error` says why. Log in again, or fix the OAuth configuration.
    Auth,
    /// The response stream ended before the response arrived. The request is lost and never
    /// resent automatically (a `tools/call` may have had effects); resend it yourself if that
    /// is safe.
    StreamBroken,
    /// The server asked for input more times in a row than the round cap allows
    /// ([`ClientBuilder::max_input_rounds`](crate::ClientBuilder::max_input_rounds)).
    InputRoundLimit,
    /// The stdio server exited or closed its stdout: the request is lost.
    /// [`Error::exit_status`](crate::Error::exit_status) tells how it exited, when known; its
    /// stderr may say why.
    ServerExited,
    /// The client was closed ([`Client::close`](crate::Client::close)) before the response
    /// arrived. Build a new client to go on.
    Closed,
    /// The installed [`InputHandler`](crate::InputHandler) failed or does not handle the kind
    /// of input the server asked for.
    InputHandler,
    /// A SEP-2663 task ended `failed`: its JSON-RPC error is in
    /// [`Error::jsonrpc_error`](crate::Error::jsonrpc_error), as if the request had answered
    /// with it; [`Error::task_id`](crate::Error::task_id) names the task.
    TaskFailed,
    /// A SEP-2663 task ended `cancelled` without this caller asking (the server, or another
    /// client's `tasks/cancel`); [`Error::task_id`](crate::Error::task_id) names it.
    TaskCancelled,
    /// A SEP-2663 task did not end within its TTL (or the client's bound on following it,
    /// [`TaskPolling`](crate::TaskPolling)); `tasks/cancel` was sent. Also a timeout
    /// ([`Error::is_timeout`](crate::Error::is_timeout)).
    TaskExpired,
    /// The client refused to call a tool whose `x-mcp-header` annotations are invalid (it was
    /// dropped from the tool list): the server's tool definition needs fixing.
    InvalidTool,
}
