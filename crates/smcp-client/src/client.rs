//! [`Client`] and [`ClientBuilder`]: the request path shared by every method and by both
//! transports (Streamable HTTP and stdio).
//!
//! One logical call = one or more requests: a version renegotiation after −32022, a tool list
//! refresh after a −32020 caused by `Mcp-Param-*` headers (HTTP only: stdio has no headers),
//! and MRTR rounds each send a new request with a new id. A broken stream is never retried.

use std::process::ExitStatus;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http::header::{HeaderMap, HeaderName, HeaderValue};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use smcp_proto::basic::Implementation;
use smcp_proto::capabilities::ClientCapabilities;
use smcp_proto::error::{HEADER_MISMATCH, INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION};
use smcp_proto::ext::tasks::{self, CreateTaskResult};
use smcp_proto::jsonrpc::{Notification, Request, RequestId};
use smcp_proto::messages::method;
use smcp_proto::meta;
use smcp_proto::patterns::mrtr::InputRequiredResult;
use smcp_proto::x_mcp_header::HeaderParam;
use tracing::Instrument;

use crate::cache::Cache;
use crate::error::{Error, Kind, Result};
use crate::headers::{ToolCatalog, request_headers};
use crate::mrtr::{ElicitedFiles, HandlerBox, InputHandler, fulfil};
use crate::response::{Sink, read_response};
use crate::stdio::{StdioCommand, StdioTransport};
use crate::task_polling::TaskPolling;
use crate::transport::http::HttpTransport;
use crate::transport::{ResponseStream, Transport};

/// Default cap on MRTR rounds of one logical call (A6 item 63).
pub const DEFAULT_MAX_INPUT_ROUNDS: u32 = 8;
/// Default timeout of one logical call.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest number of pages one list call follows.
const MAX_PAGES: usize = 10_000;

/// Configures a [`Client`].
///
/// Made by [`Client::builder`] (HTTP) or [`Client::stdio`]; every option has a default.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use smcp_client::{Cache, Client};
///
/// let client = Client::builder("https://mcp.example.com/mcp")
///     .header("Authorization", "Bearer secret-token")
///     .timeout(Some(Duration::from_secs(30)))
///     .connect_timeout(Duration::from_secs(5))
///     .cache(Cache::new())
///     .build()?;
/// assert_eq!(client.url(), "https://mcp.example.com/mcp");
/// # Ok::<(), smcp_client::Error>(())
/// ```
#[derive(Debug)]
pub struct ClientBuilder {
    url: String,
    stdio: Option<StdioCommand>,
    headers: HeaderMap,
    header_error: Option<String>,
    timeout: Option<Duration>,
    connect_timeout: Option<Duration>,
    client_info: Option<Implementation>,
    handler: Option<HandlerBox>,
    max_rounds: u32,
    retry: crate::RetryPolicy,
    cache: Option<Cache>,
    roots: Vec<reqwest::Certificate>,
    files: Option<crate::files::FileTransfer>,
    tasks: bool,
    task_polling: TaskPolling,
    pin: Option<String>,
    probe_era: bool,
    era_hint: Option<crate::Era>,
    trace: Option<crate::trace::TraceSource>,
    #[cfg(feature = "oauth")]
    oauth: Option<crate::auth::OAuthConfig>,
}

impl ClientBuilder {
    fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            stdio: None,
            headers: HeaderMap::new(),
            header_error: None,
            timeout: Some(DEFAULT_TIMEOUT),
            connect_timeout: Some(Duration::from_secs(10)),
            client_info: Some(Implementation::new(
                "smcp-client",
                env!("CARGO_PKG_VERSION"),
            )),
            handler: None,
            max_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            retry: crate::RetryPolicy::none(),
            cache: None,
            roots: Vec::new(),
            files: None,
            tasks: true,
            task_polling: TaskPolling::default(),
            pin: None,
            probe_era: true,
            era_hint: None,
            trace: None,
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }

    /// Sends the trace context `source` gives with every request: `traceparent` and
    /// `tracestate` in `params._meta` and, over HTTP, as headers (see [`crate::trace`]).
    ///
    /// ```
    /// use smcp_client::trace::{TraceHeaders, TraceSource};
    ///
    /// let client = smcp_client::Client::builder("http://127.0.0.1:8931/mcp")
    ///     .trace_source(TraceSource::new(|| {
    ///         Some(TraceHeaders {
    ///             traceparent: "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01".into(),
    ///             tracestate: None,
    ///         })
    ///     }))
    ///     .build();
    /// # let _ = client;
    /// ```
    #[must_use]
    pub fn trace_source(mut self, source: crate::trace::TraceSource) -> Self {
        self.trace = Some(source);
        self
    }

    /// Sends the OpenTelemetry context of the current `tracing` span with every request
    /// (feature `otel`; a handler of `smcp-server` calling out runs in its `mcp.handler` span,
    /// so its calls continue the incoming trace).
    #[cfg(feature = "otel")]
    #[must_use]
    pub fn propagate_otel(self) -> Self {
        self.trace_source(crate::trace::TraceSource::otel())
    }

    /// Sends `Authorization: Bearer <token>` on every request to the server (a token you
    /// already have; it is marked sensitive so it never shows in `Debug` output). For tokens
    /// obtained and refreshed by the client, see [`oauth`](Self::oauth).
    ///
    /// ```
    /// let client = smcp_client::Client::builder("https://mcp.example.com/mcp")
    ///     .bearer_token("secret-token")
    ///     .build()?;
    /// assert!(!format!("{client:?}").contains("secret-token"));
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    pub fn bearer_token(mut self, token: &str) -> Self {
        match HeaderValue::from_str(&format!("Bearer {token}")) {
            Ok(mut v) => {
                v.set_sensitive(true);
                self.headers.insert(http::header::AUTHORIZATION, v);
            }
            Err(_) => {
                self.header_error =
                    Some("the bearer token has characters a header cannot carry".into());
            }
        }
        self
    }

    /// OAuth 2.1 authorization (MCP "Authorization"): on a `401` the client discovers the
    /// server's authorization server, registers, runs the authorization code flow through
    /// the configured [`Authorizer`](crate::auth::Authorizer) (or the client credentials
    /// grant), then retries; tokens are refreshed and stepped up as needed and kept in the
    /// configured [`TokenStore`](crate::auth::TokenStore). HTTP only. See [`crate::auth`].
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, config: crate::auth::OAuthConfig) -> Self {
        self.oauth = Some(config);
        self
    }

    /// Assumes the HTTP endpoint speaks `era` (say, remembered from an earlier run, as the
    /// `smcp` CLI does in its cache file): an older era is tried first, without the 2026-07-28
    /// probe, and forgotten if it fails. The same as what a client of this process learns
    /// after a fallback. Ignored with a pinned [`protocol_version`](Self::protocol_version)
    /// and over stdio.
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_client::{Client, Era};
    ///
    /// let client = Client::builder("http://127.0.0.1:8000/mcp").era_hint(Era::Session).build()?;
    /// # let _ = client;
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    pub fn era_hint(mut self, era: crate::Era) -> Self {
        self.era_hint = Some(era);
        self
    }

    /// Stdio: find out the server's era before the first request (the 2026-07-28 stdio page,
    /// "Backward Compatibility"): `server/discover` is sent first; a `DiscoverResult` or a
    /// recognized 2026-07-28 error (−32022, −32021) means a 2026-07-28 server, any other error
    /// or no answer within 10 s an older one, which then gets `initialize` (2025-11-25) and
    /// a session. On by default (the page's SHOULD for a client that speaks both eras);
    /// `probe_era(false)` saves the round trip: the client then speaks 2026-07-28 straight
    /// away. A pinned [`protocol_version`](Self::protocol_version) skips the probe. Over HTTP
    /// the era is always detected (see [`Era`](crate::Era)), so this changes nothing there.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), smcp_client::Error> {
    /// use smcp_client::{Client, StdioCommand};
    /// // A server known to speak 2026-07-28: no server/discover before the first request.
    /// let client = Client::stdio(StdioCommand::new("some-mcp-server")).probe_era(false).build()?;
    /// let tools = client.list_tools().await?;
    /// # let _ = tools;
    /// # Ok(()) }
    /// ```
    pub fn probe_era(mut self, probe: bool) -> Self {
        self.probe_era = probe;
        self
    }

    /// Pins the protocol version instead of negotiating the era (HTTP only).
    ///
    /// Without a pin the client sends 2026-07-28 first and falls back to the older revisions
    /// when the server answers like one (see [`Era`](crate::Era)). `"2026-07-28"` disables that
    /// fallback; `"2025-11-25"`, `"2025-06-18"` or `"2025-03-26"` skip the probe and start a
    /// stateful session with `initialize` for exactly that version; `"2024-11-05"` uses the
    /// HTTP+SSE transport. Anything else is reported by [`build`](Self::build).
    ///
    /// # Examples
    ///
    /// ```
    /// let client = smcp_client::Client::builder("http://127.0.0.1:8000/mcp")
    ///     .protocol_version("2025-11-25")
    ///     .build()?;
    /// # let _ = client;
    /// let err = smcp_client::Client::builder("http://127.0.0.1:8000/mcp")
    ///     .protocol_version("2024-10-07")
    ///     .build()
    ///     .unwrap_err();
    /// assert!(err.is_config() && err.to_string().contains("2025-06-18"));
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    pub fn protocol_version(mut self, version: &str) -> Self {
        self.pin = Some(version.to_owned());
        self
    }

    /// Whether to declare the SEP-2663 tasks extension (`io.modelcontextprotocol/tasks`) on
    /// `tools/call`, the task methods and listen requests that ask for task notifications.
    /// On by default: a server may then answer a `tools/call` with a task, which
    /// [`ToolCall::send`](crate::ToolCall::send) follows to its end. `false` opts out: the
    /// server must answer inline (or refuse with −32021 if it can only run the call as a task).
    ///
    /// # Examples
    ///
    /// ```
    /// let client = smcp_client::Client::builder("http://127.0.0.1:8931/mcp").tasks(false).build()?;
    /// # let _ = client;
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    pub fn tasks(mut self, enabled: bool) -> Self {
        self.tasks = enabled;
        self
    }

    /// How tasks are polled: interval floor and cap, retries, overall bound (see
    /// [`TaskPolling`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use smcp_client::{Client, TaskPolling};
    ///
    /// let client = Client::builder("http://127.0.0.1:8931/mcp")
    ///     .task_polling(TaskPolling {
    ///         max_wait: Some(Duration::from_secs(600)),
    ///         ..TaskPolling::default()
    ///     })
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    pub fn task_polling(mut self, polling: TaskPolling) -> Self {
        self.task_polling = polling;
        self
    }

    /// Trusts an extra CA (PEM, one or more certificates) for the MCP endpoint and for
    /// SEP-2631 descriptor URLs.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ca = std::fs::read("dev-ca.pem")?;
    /// let client = smcp_client::Client::builder("https://localhost:8443/mcp")
    ///     .ca_cert_pem(&ca)
    ///     .build()?;
    /// # let _ = client;
    /// # Ok(()) }
    /// ```
    ///
    /// An unreadable bundle is reported by [`build`](Self::build):
    ///
    /// ```
    /// let err = smcp_client::Client::builder("https://localhost:8443/mcp")
    ///     .ca_cert_pem(b"not a certificate")
    ///     .build()
    ///     .unwrap_err();
    /// assert!(err.is_config());
    /// ```
    pub fn ca_cert_pem(mut self, pem: &[u8]) -> Self {
        match reqwest::Certificate::from_pem_bundle(pem) {
            Ok(certs) if !certs.is_empty() => self.roots.extend(certs),
            Ok(_) => self.header_error = Some("CA file holds no certificate".to_owned()),
            Err(e) => self.header_error = Some(format!("invalid CA certificate: {e}")),
        }
        self
    }

    /// Enables SEP-2631 file transfer: declares `files` on every request and allows the
    /// upload/download helpers (see [`crate::files`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_client::files::FileTransfer;
    ///
    /// let client = smcp_client::Client::builder("https://mcp.example.com/mcp")
    ///     .files(FileTransfer { inline_threshold: 64 * 1024, ..FileTransfer::default() })
    ///     .build()?;
    /// assert!(client.capabilities().extra.contains_key("files"));
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    pub fn files(mut self, files: crate::files::FileTransfer) -> Self {
        self.files = Some(files);
        self
    }

    /// Timeout of one logical call (all its rounds); `None` waits forever. Default 60 s.
    /// When it fires, the response stream is closed, which cancels the request server-side
    /// (over stdio: `notifications/cancelled` is sent).
    ///
    /// # Examples
    ///
    /// See [`ClientBuilder`]; per call, [`ToolCall::timeout`](crate::ToolCall::timeout).
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Timeout for establishing a connection (the MCP endpoint, and SEP-2631 descriptor URLs).
    /// Default 10 s.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Adds a header to every POST (e.g. `Authorization`). Invalid names or values are
    /// reported by [`build`](Self::build), and so is a header on a stdio client (stdio has
    /// no headers).
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_client::Client;
    ///
    /// let ok = Client::builder("https://mcp.example.com/mcp")
    ///     .header("Authorization", "Bearer secret-token")
    ///     .build();
    /// assert!(ok.is_ok());
    /// let bad = Client::builder("https://mcp.example.com/mcp").header("bad name", "x").build();
    /// assert!(bad.unwrap_err().is_config());
    /// ```
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(n), Ok(v)) => {
                self.headers.append(n, v);
            }
            _ => self.header_error = Some(format!("invalid header {name:?}")),
        }
        self
    }

    /// The `clientInfo` sent in every request's `_meta` (default: `smcp-client` and its version).
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_client::proto::basic::Implementation;
    ///
    /// let client = smcp_client::Client::builder("http://127.0.0.1:8931/mcp")
    ///     .client_info(Implementation::new("my-agent", "2.1.0"))
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    pub fn client_info(mut self, info: Implementation) -> Self {
        self.client_info = Some(info);
        self
    }

    /// Stops sending `clientInfo`.
    pub fn without_client_info(mut self) -> Self {
        self.client_info = None;
        self
    }

    /// Installs the handler that answers elicitation, sampling and roots input requests. The
    /// client declares exactly the kinds it names as capabilities.
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_client::proto::client::elicitation::ElicitResult;
    /// use smcp_client::{Client, FnInputHandler};
    ///
    /// let client = Client::builder("http://127.0.0.1:8931/mcp")
    ///     .input_handler(FnInputHandler::new().on_elicit(|_params| async { Ok(ElicitResult::decline()) }))
    ///     .build()?;
    /// assert!(client.capabilities().elicitation.is_some());
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    ///
    /// See [`InputHandler`] for a handler of your own type.
    pub fn input_handler(mut self, handler: impl InputHandler) -> Self {
        self.handler = Some(HandlerBox(Arc::new(handler)));
        self
    }

    /// Caps the MRTR rounds of one call (default 8).
    ///
    /// # Examples
    ///
    /// ```
    /// let client = smcp_client::Client::builder("http://127.0.0.1:8931/mcp").max_input_rounds(3).build()?;
    /// # let _ = client;
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    pub fn max_input_rounds(mut self, rounds: u32) -> Self {
        self.max_rounds = rounds;
        self
    }

    /// Resends a request that failed in transit, where that is safe: always when it never
    /// reached a server, otherwise only for requests without side effects (see
    /// [`crate::RetryPolicy`]). Default: never. Useful behind a load balancer, where another
    /// instance takes the resent request.
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_client::{Client, RetryPolicy};
    /// let client = Client::builder("http://127.0.0.1:8931/mcp").retry(RetryPolicy::retries(3)).build()?;
    /// # let _ = client;
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    pub fn retry(mut self, policy: crate::RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Enables result caching with `cache` (clone one [`Cache`] into several builders to share
    /// public entries).
    ///
    /// # Examples
    ///
    /// Two clients (say, for two servers of one user) sharing one cache:
    ///
    /// ```
    /// use smcp_client::{Cache, Client};
    ///
    /// let cache = Cache::new();
    /// let a = Client::builder("https://a.example.com/mcp").cache(cache.clone()).build()?;
    /// let b = Client::builder("https://b.example.com/mcp").cache(cache).build()?;
    /// # let _ = (a, b);
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    pub fn cache(mut self, cache: Cache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The authorization gate of the HTTP transport.
    fn gate(&self) -> Result<crate::transport::gate::Gate> {
        #[cfg(feature = "oauth")]
        if let Some(config) = &self.oauth {
            let url = reqwest::Url::parse(&self.url)
                .map_err(|e| Error::config(format!("invalid server URL {:?}: {e}", self.url)))?;
            let session = crate::auth::session::OAuthSession::new(
                config.clone(),
                &url,
                &self.url,
                &self.roots,
            )
            .map_err(|e| Error::config(e.to_string()))?;
            return Ok(crate::transport::gate::Gate::oauth(session));
        }
        Ok(crate::transport::gate::Gate::default())
    }

    /// Builds the client. Fails on an invalid URL or header. A stdio client launches its
    /// server here (inside a Tokio runtime); [`is_connect`](Error::is_connect) is true when
    /// the program cannot be started.
    ///
    /// # Errors
    ///
    /// An error for which [`Error::is_config`] is true for an invalid URL, header or CA bundle, or a
    /// header on a stdio client; [`Error::is_connect`] when a stdio server cannot be started.
    ///
    /// # Examples
    ///
    /// ```
    /// let err = smcp_client::Client::builder("not a url").build().unwrap_err();
    /// assert!(err.is_config(), "{err}");
    /// ```
    pub fn build(self) -> Result<Client> {
        if let Some(e) = self.header_error {
            return Err(Error::config(e));
        }
        if self.stdio.is_some() && !self.headers.is_empty() {
            return Err(Error::config(
                "HTTP headers cannot be sent to a stdio server: all metadata goes in _meta",
            ));
        }
        #[cfg(feature = "oauth")]
        if self.stdio.is_some() && self.oauth.is_some() {
            return Err(Error::config(
                "OAuth applies to HTTP servers, not to a stdio server",
            ));
        }
        // Private cache entries belong to the credentials in use (A11 item 77). Kept as a
        // digest: the credentials themselves must not sit in the client (or its `Debug`).
        #[cfg_attr(not(feature = "oauth"), allow(unused_mut))]
        let mut credentials = ["authorization", "cookie"]
            .iter()
            .flat_map(|h| self.headers.get_all(*h))
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect::<Vec<_>>()
            .join("\n");
        #[cfg(feature = "oauth")]
        if credentials.is_empty() && self.oauth.is_some() {
            // OAuth tokens change on refresh; the identity is the server's token store entry.
            credentials = format!("oauth\n{}", self.url);
        }
        let auth_context = if credentials.is_empty() {
            String::new()
        } else {
            use sha2::Digest as _;
            let digest = sha2::Sha256::digest(credentials.as_bytes());
            digest.iter().map(|b| format!("{b:02x}")).collect()
        };
        let data_plane = match &self.files {
            Some(files) => {
                // A stdio server runs on this machine; an HTTP one is at its endpoint's host.
                let server = self.stdio.is_none().then_some(self.url.as_str());
                let policy =
                    crate::files::AddressPolicy::for_server(server, files.allow_insecure_loopback);
                Some((
                    crate::files::data_plane_client(&self.roots, self.connect_timeout, &policy)?,
                    policy,
                ))
            }
            None => None,
        };
        if let Some(pin) = &self.pin {
            let known = crate::legacy::SUPPORTED_VERSIONS;
            if !known.contains(&pin.as_str()) {
                return Err(Error::config(format!(
                    "unsupported protocol version {pin:?} (this client speaks {})",
                    known.join(", ")
                )));
            }
            if self.stdio.is_some() && pin == "2024-11-05" {
                return Err(Error::config(
                    "2024-11-05 is spoken over HTTP+SSE; a stdio server speaks 2025-03-26 or later",
                ));
            }
        }
        if let Some(era) = self.era_hint
            && self.stdio.is_none()
            && self.pin.is_none()
        {
            crate::legacy::era::hint(&self.url, era);
        }
        let legacy = crate::legacy::session::LegacyConfig {
            client_info: self.client_info.clone(),
            handler: self.handler.clone(),
        };
        let gate = self.gate()?;
        let transport = match &self.stdio {
            None => Transport::Http(crate::legacy::era::Endpoint::new(
                HttpTransport::new(
                    &self.url,
                    self.headers,
                    self.connect_timeout,
                    &self.roots,
                    gate,
                )?,
                self.pin.clone(),
                legacy,
            )),
            Some(command) => Transport::Stdio(StdioTransport::start(
                command,
                self.pin.clone(),
                self.probe_era,
                legacy,
            )?),
        };
        Ok(Client {
            inner: Arc::new(Inner {
                transport,
                versions: vec![smcp_proto::PROTOCOL_VERSION.to_owned()],
                version: Mutex::new(smcp_proto::PROTOCOL_VERSION.to_owned()),
                client_info: self.client_info,
                handler: self.handler,
                timeout: self.timeout,
                max_rounds: self.max_rounds,
                retry: self.retry,
                next_id: AtomicI64::new(1),
                catalog: Mutex::new(ToolCatalog::default()),
                cache: self.cache,
                auth_context,
                files: self.files,
                data_plane,
                tasks: self.tasks,
                task_polling: self.task_polling,
                trace: self.trace,
            }),
        })
    }
}

/// A 2026-07-28 client for one MCP server, over Streamable HTTP ([`Client::builder`]) or stdio
/// ([`Client::stdio`]). Cheap to clone; clones share the connection, the tool catalog, the
/// negotiated version and the cache.
///
/// # Examples
///
/// ```no_run
/// use smcp_client::Client;
///
/// # async fn run() -> Result<(), smcp_client::Error> {
/// let client = Client::builder("http://127.0.0.1:8931/mcp").build()?;
/// for tool in client.list_tools().await? {
///     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
/// }
/// let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
/// println!("{}", result.text_content());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    transport: Transport,
    /// Versions this client speaks, preferred first.
    versions: Vec<String>,
    /// The version in use (changes after a −32022 negotiation).
    version: Mutex<String>,
    client_info: Option<Implementation>,
    handler: Option<HandlerBox>,
    pub(crate) timeout: Option<Duration>,
    max_rounds: u32,
    retry: crate::RetryPolicy,
    next_id: AtomicI64,
    catalog: Mutex<ToolCatalog>,
    pub(crate) cache: Option<Cache>,
    pub(crate) auth_context: String,
    pub(crate) files: Option<crate::files::FileTransfer>,
    /// A separate HTTP client for descriptor URLs: it never carries the MCP headers
    /// (`Authorization`, cookies) configured for the endpoint.
    /// The data-plane HTTP client and the address policy its resolver applies.
    pub(crate) data_plane: Option<(reqwest::Client, crate::files::AddressPolicy)>,
    /// Whether the tasks extension is declared (SEP-2663).
    pub(crate) tasks: bool,
    /// How tasks are polled.
    pub(crate) task_polling: TaskPolling,
    /// Where the trace context sent with each request comes from.
    trace: Option<crate::trace::TraceSource>,
}

/// How a result ended, from its `resultType` (A5 item 54; `"task"` from SEP-2663).
pub(crate) enum ResultKind {
    Complete,
    InputRequired,
    Task,
}

pub(crate) fn result_kind(result: &Value) -> Result<ResultKind> {
    if !result.is_object() {
        return Err(Error::protocol("the result is not a JSON object"));
    }
    match result.get("resultType") {
        None => Ok(ResultKind::Complete),
        Some(Value::String(s)) if s == "complete" => Ok(ResultKind::Complete),
        Some(Value::String(s)) if s == "input_required" => Ok(ResultKind::InputRequired),
        Some(Value::String(s)) if s == tasks::RESULT_TYPE_TASK => Ok(ResultKind::Task),
        Some(other) => Err(Error::protocol(format!(
            "unknown resultType {other} (this client understands \"complete\", \"input_required\" \
             and \"task\")"
        ))),
    }
}

/// The error for a `CreateTaskResult` where none may come (SEP-2663 §Capability Negotiation:
/// an invalid response).
fn unexpected_task(method_name: &str, declared: bool) -> Error {
    if declared {
        Error::protocol(format!(
            "{method_name} returned a CreateTaskResult (resultType \"task\"), but only tools/call \
             supports tasks: invalid response"
        ))
    } else {
        Error::protocol(format!(
            "{method_name} returned a CreateTaskResult (resultType \"task\") although this request \
             did not declare the {} extension: invalid response",
            tasks::EXTENSION_ID
        ))
    }
}

/// What a request that may need input ended with.
pub(crate) enum Reply {
    /// The method's own result.
    Complete(Value),
    /// A task to follow (`tools/call` with the tasks extension declared).
    Task(CreateTaskResult),
}

impl Reply {
    /// The result of a method that cannot return a task (already refused upstream).
    pub(crate) fn complete(self, method_name: &str) -> Result<Value> {
        match self {
            Self::Complete(v) => Ok(v),
            Self::Task(_) => Err(unexpected_task(method_name, true)),
        }
    }
}

/// Decodes a result into its typed form; a mismatch is the server's fault.
pub(crate) fn decode<T: DeserializeOwned>(method_name: &str, value: Value) -> Result<T> {
    serde_json::from_value(value)
        .map_err(|e| Error::protocol(format!("malformed {method_name} result: {e}")))
}

/// Runs `fut` under the call's timeout.
pub(crate) async fn with_timeout<T>(
    timeout: Option<Duration>,
    fut: impl Future<Output = Result<T>>,
) -> Result<T> {
    match timeout {
        None => fut.await,
        Some(d) => tokio::time::timeout(d, fut)
            .await
            .unwrap_or_else(|_| Err(Error::new(Kind::Timeout(d)))),
    }
}

impl Client {
    /// Starts configuring a client for the endpoint `url` (e.g. `http://127.0.0.1:8931/mcp`).
    ///
    /// # Examples
    ///
    /// ```
    /// let client = smcp_client::Client::builder("http://127.0.0.1:8931/mcp").build()?;
    /// assert_eq!(client.url(), "http://127.0.0.1:8931/mcp");
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    pub fn builder(url: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(url)
    }

    /// Starts configuring a client that launches `command` as a stdio server when built.
    /// Every other builder option applies as over HTTP, except [`header`](ClientBuilder::header).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use smcp_client::{Client, StdioCommand};
    ///
    /// # async fn run() -> Result<(), smcp_client::Error> {
    /// let client = Client::stdio(StdioCommand::new("smcpd").arg("--stdio")).build()?;
    /// let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
    /// println!("{}", result.text_content());
    /// let status = client.close().await; // the server's exit status
    /// # let _ = status;
    /// # Ok(()) }
    /// ```
    pub fn stdio(command: StdioCommand) -> ClientBuilder {
        let mut builder = ClientBuilder::new(String::new());
        builder.stdio = Some(command);
        builder
    }

    /// The endpoint URL; for a stdio server, `stdio:` followed by the command line.
    pub fn url(&self) -> &str {
        self.inner.transport.url()
    }

    /// Ends the connection. For a stdio server: fails the requests in flight (with an error for
    /// which [`Error::is_closed`] is true), closes the server's stdin, waits up to the shutdown
    /// timeout for it to exit, then sends SIGTERM, waits again, then SIGKILL; returns its exit
    /// status. Every clone of this client is closed. Dropping the last clone does the same in
    /// the background. Over HTTP a stateful session (older revisions) is ended with `DELETE`
    /// (a later request starts a new one); a 2026-07-28 server has nothing to close: `None`.
    ///
    /// # Examples
    ///
    /// See [`Client::stdio`].
    pub async fn close(&self) -> Option<ExitStatus> {
        self.inner.transport.close().await
    }

    /// The era this client speaks with its server, once a request got through (`None`
    /// before). A stdio server is [`Era::Stateless`](crate::Era::Stateless) until its probe
    /// finds an older one ([`Era::Session`](crate::Era::Session)).
    pub fn era(&self) -> Option<crate::Era> {
        match &self.inner.transport {
            Transport::Http(e) => e.known().map(|(era, _)| era),
            Transport::Stdio(t) => Some(match t.legacy_info() {
                Some(_) => crate::Era::Session,
                None => crate::Era::Stateless,
            }),
        }
    }

    /// What the server said in `initialize`, when the client fell back to (or was pinned to)
    /// an older revision; `None` for a 2026-07-28 server (ask [`discover`](Self::discover)).
    pub async fn session_info(&self) -> Option<crate::SessionInfo> {
        match &self.inner.transport {
            Transport::Http(e) => e.legacy().await.map(|l| l.info()),
            Transport::Stdio(t) => t.era().await.ok().and_then(|_| t.legacy_info()),
        }
    }

    /// The protocol version currently sent (after a fallback, the negotiated older one).
    pub fn protocol_version(&self) -> String {
        match &self.inner.transport {
            Transport::Http(e) => {
                if let Some((crate::Era::Session | crate::Era::HttpSse, v)) = e.known() {
                    return v;
                }
            }
            Transport::Stdio(t) => {
                if let Some(info) = t.legacy_info() {
                    return info.protocol_version;
                }
            }
        }
        self.inner
            .version
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The capabilities declared on every request (from the installed input handler, and
    /// SEP-2631 `files` when enabled). `tools/call` and the task methods also declare the
    /// SEP-2663 tasks extension unless it was turned off ([`ClientBuilder::tasks`]); see
    /// [`capabilities_for`](Self::capabilities_for).
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_client::{Client, FnInputHandler};
    /// use smcp_client::proto::client::roots::ListRootsResult;
    ///
    /// let client = Client::builder("http://127.0.0.1:8931/mcp")
    ///     .input_handler(FnInputHandler::new().on_roots(|_| async { Ok(ListRootsResult { roots: vec![] }) }))
    ///     .build()?;
    /// let caps = client.capabilities();
    /// assert!(caps.roots.is_some());
    /// assert!(caps.sampling.is_none());
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut caps: ClientCapabilities = self
            .inner
            .handler
            .as_ref()
            .map(|h| h.0.kinds().to_capabilities())
            .unwrap_or_default();
        if let Some(files) = &self.inner.files {
            caps.extra.insert("files".to_owned(), files.capability());
        }
        caps
    }

    /// The capabilities declared on a request of `method_name` (for `subscriptions/listen`,
    /// as if it asked for task notifications).
    pub fn capabilities_for(&self, method_name: &str) -> ClientCapabilities {
        let mut caps = self.capabilities();
        if self.declares_tasks(method_name, None) {
            caps.extensions
                .get_or_insert_with(Default::default)
                .insert(tasks::EXTENSION_ID.to_owned(), Map::new());
        }
        caps
    }

    /// Whether the tasks extension is declared on this request: `tools/call` (the one method
    /// that supports tasks), the task methods, and a listen request that asks for `taskIds`.
    fn declares_tasks(&self, method_name: &str, params: Option<&Map<String, Value>>) -> bool {
        self.inner.tasks
            && match method_name {
                method::TOOLS_CALL
                | tasks::METHOD_GET
                | tasks::METHOD_UPDATE
                | tasks::METHOD_CANCEL => true,
                method::SUBSCRIPTIONS_LISTEN => params.is_none_or(|p| {
                    p.get("notifications")
                        .and_then(|n| n.get("taskIds"))
                        .is_some_and(|t| !t.is_null())
                }),
                _ => false,
            }
    }

    /// The installed input handler, if any.
    pub(crate) fn inner_handler(&self) -> Option<&dyn InputHandler> {
        self.inner.handler.as_ref().map(|h| &*h.0)
    }

    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::from(self.inner.next_id.fetch_add(1, Ordering::Relaxed))
    }

    pub(crate) fn catalog(&self) -> std::sync::MutexGuard<'_, ToolCatalog> {
        self.inner
            .catalog
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds the required `_meta` members (A4 items 44–45), keeping any already there.
    fn stamp_meta(&self, method_name: &str, params: &mut Map<String, Value>) {
        let mut caps = self.capabilities();
        if self.declares_tasks(method_name, Some(params)) {
            caps.extensions
                .get_or_insert_with(Default::default)
                .insert(tasks::EXTENSION_ID.to_owned(), Map::new());
        }
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        if let Value::Object(m) = meta {
            m.insert(
                meta::PROTOCOL_VERSION.to_owned(),
                Value::String(self.protocol_version()),
            );
            m.insert(
                meta::CLIENT_CAPABILITIES.to_owned(),
                serde_json::to_value(caps).unwrap_or_else(|_| Value::Object(Map::new())),
            );
            if let Some(info) = &self.inner.client_info
                && let Ok(v) = serde_json::to_value(info)
            {
                m.insert(meta::CLIENT_INFO.to_owned(), v);
            }
            crate::trace::stamp(self.inner.trace.as_ref(), m);
        }
    }

    /// Sends one request with a fresh id and returns its id and response stream.
    pub(crate) async fn open(
        &self,
        method_name: &str,
        mut params: Map<String, Value>,
        header_params: &[HeaderParam],
    ) -> Result<(RequestId, ResponseStream)> {
        self.stamp_meta(method_name, &mut params);
        // Stdio has no headers: everything they would mirror is already in the body.
        let headers = if self.inner.transport.is_http() {
            let mut headers = request_headers(
                &self.protocol_version(),
                method_name,
                &params,
                header_params,
            )?;
            if self.inner.trace.is_some() {
                headers.extend(crate::trace::headers(params.get("_meta")));
            }
            headers
        } else {
            Vec::new()
        };
        let id = self.next_id();
        let request = Request {
            id: id.clone(),
            method: method_name.to_owned(),
            params: Some(Value::Object(params)),
        };
        let stream = self.inner.transport.send(&request, headers).await?;
        Ok((id, stream))
    }

    /// Switches to a version from `data.supported` after −32022 (A3 item 37). Returns false
    /// when none is mutually supported.
    fn negotiate(&self, error: &Error) -> bool {
        let Some(data) = error
            .jsonrpc_error()
            .and_then(|e| e.unsupported_version_data())
        else {
            return false;
        };
        let Some(choice) = self
            .inner
            .versions
            .iter()
            .find(|v| data.supported.iter().any(|s| s == *v))
        else {
            return false;
        };
        tracing::info!(version = %choice, rejected = %data.requested, "server asked for another protocol version; retrying");
        *self
            .inner
            .version
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = choice.clone();
        true
    }

    /// One request/response exchange, renegotiating the version once on −32022.
    pub(crate) async fn exchange(
        &self,
        method_name: &str,
        params: &Map<String, Value>,
        header_params: &[HeaderParam],
        sink: Sink<'_>,
    ) -> Result<Value> {
        let mut renegotiated = false;
        let mut resent = 0u32;
        loop {
            let attempt = async {
                let (id, mut stream) = self
                    .open(method_name, params.clone(), header_params)
                    .await?;
                tracing::Span::current().record("id", tracing::field::display(&id));
                read_response(&mut stream, &id, sink).await
            };
            let span = tracing::debug_span!("mcp_request", method = %method_name, id = tracing::field::Empty);
            match attempt.instrument(span).await {
                Err(e)
                    if !renegotiated
                        && e.jsonrpc_code() == Some(UNSUPPORTED_PROTOCOL_VERSION)
                        && self.negotiate(&e) =>
                {
                    renegotiated = true;
                }
                Err(e)
                    if resent < self.inner.retry.max_retries
                        && self.may_resend(method_name, params, &e) =>
                {
                    resent += 1;
                    let wait = self.inner.retry.delay(resent);
                    tracing::info!(method = %method_name, error = %e, attempt = resent, ?wait, "request failed in transit; resending");
                    tokio::time::sleep(wait).await;
                }
                other => return other,
            }
        }
    }

    /// Whether a request that failed with `e` may be sent again (`retry.rs`).
    fn may_resend(&self, method_name: &str, params: &Map<String, Value>, e: &Error) -> bool {
        if crate::retry::never_sent(e) {
            return true;
        }
        if !crate::retry::lost_in_transit(e) {
            return false;
        }
        if method_name == method::TOOLS_CALL {
            return params
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|name| self.catalog().repeatable(name));
        }
        crate::retry::side_effect_free(method_name)
    }

    /// A request whose method may never return `InputRequiredResult` (lists, discover,
    /// completion), with caching.
    pub(crate) async fn request(
        &self,
        method_name: &str,
        params: Map<String, Value>,
    ) -> Result<Value> {
        if let Some(cache) = &self.inner.cache
            && let Some(hit) = cache.get(method_name, &params, &self.inner.auth_context)
        {
            tracing::debug!(method = %method_name, "served from cache");
            return Ok(hit);
        }
        let mut sink = |n: Notification| tracing::debug!(method = %n.method, "notification");
        let result = self.exchange(method_name, &params, &[], &mut sink).await?;
        match result_kind(&result)? {
            ResultKind::Complete => {}
            ResultKind::InputRequired => {
                return Err(Error::protocol(format!(
                    "{method_name} returned an InputRequiredResult, which only tools/call, \
                     resources/read and prompts/get may return"
                )));
            }
            ResultKind::Task => {
                return Err(unexpected_task(
                    method_name,
                    self.declares_tasks(method_name, Some(&params)),
                ));
            }
        }
        if let Some(cache) = &self.inner.cache {
            cache.put(method_name, &params, &self.inner.auth_context, &result);
        }
        Ok(result)
    }

    /// A request that may need input (`tools/call`, `resources/read`, `prompts/get`): the MRTR
    /// loop (A6 items 59–60, 63) plus the one-time tool list refresh after −32020. A
    /// `tools/call` that declared the tasks extension may end with a task (SEP-2663: MRTR
    /// rounds first, then the `CreateTaskResult`); any other method that returns one is refused.
    pub(crate) async fn request_with_input(
        &self,
        method_name: &str,
        params: Map<String, Value>,
        tool: Option<&str>,
        sink: Sink<'_>,
    ) -> Result<Reply> {
        let cache = self.inner.cache.as_ref();
        if let Some(hit) = cache.and_then(|c| c.get(method_name, &params, &self.inner.auth_context))
        {
            return Ok(Reply::Complete(hit));
        }
        let mut header_params = match tool {
            Some(name) => self.catalog().params_for(name)?,
            None => Vec::new(),
        };
        let mut refreshed = false;
        let mut retry = params.clone();
        let mut rounds = 0u32;
        loop {
            let result = match self
                .exchange(method_name, &retry, &header_params, sink)
                .await
            {
                Err(e)
                    if e.jsonrpc_code() == Some(HEADER_MISMATCH)
                        && !refreshed
                        && self.inner.transport.is_http()
                        && let Some(name) = tool =>
                {
                    // The schema may have changed since we built the Mcp-Param-* headers.
                    tracing::info!(tool = %name, error = %e, "header mismatch; refreshing the tool list once");
                    refreshed = true;
                    self.list_tools().await?;
                    header_params = self.catalog().params_for(name)?;
                    continue;
                }
                other => other?,
            };
            match result_kind(&result)? {
                ResultKind::Complete => {
                    if rounds == 0
                        && let Some(c) = cache
                    {
                        c.put(method_name, &params, &self.inner.auth_context, &result);
                    }
                    return Ok(Reply::Complete(result));
                }
                ResultKind::Task => {
                    let declared = self.declares_tasks(method_name, Some(&retry));
                    if method_name != method::TOOLS_CALL || !declared {
                        return Err(unexpected_task(method_name, declared));
                    }
                    let created: CreateTaskResult =
                        serde_json::from_value(result).map_err(|e| {
                            Error::protocol(format!(
                                "malformed CreateTaskResult for {method_name}: {e}"
                            ))
                        })?;
                    return Ok(Reply::Task(created));
                }
                ResultKind::InputRequired => {}
            }
            if rounds >= self.inner.max_rounds {
                return Err(Error::new(Kind::MrtrLimit(rounds + 1)));
            }
            rounds += 1;
            let input: InputRequiredResult = decode(method_name, result)?;
            if input.input_requests.is_none() && input.request_state.is_none() {
                return Err(Error::protocol(
                    "an InputRequiredResult must carry inputRequests or requestState",
                ));
            }
            // Each retry starts from the original params: responses and state are used on
            // this retry only, never carried further (A6 item 60).
            retry = params.clone();
            if let Some(requests) = input.input_requests {
                let handler = self.inner.handler.as_ref().map(|h| &*h.0);
                let responses = fulfil(handler, requests, Some(self as &dyn ElicitedFiles)).await?;
                retry.insert("inputResponses".to_owned(), Value::Object(responses));
            }
            if let Some(state) = input.request_state {
                retry.insert("requestState".to_owned(), Value::String(state));
            }
            tracing::debug!(method = %method_name, round = rounds, "retrying with input");
        }
    }

    /// Follows `nextCursor` through every page of a list, collecting `key`.
    pub(crate) async fn list_all<T: DeserializeOwned>(
        &self,
        method_name: &str,
        key: &str,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let page = self
                .list_page::<T>(method_name, key, cursor.as_deref())
                .await?;
            out.extend(page.items);
            match page.next_cursor {
                Some(next) => {
                    if !seen.insert(next.clone()) {
                        return Err(Error::protocol(format!(
                            "{method_name} returned the cursor {next:?} twice (pagination loop)"
                        )));
                    }
                    cursor = Some(next);
                }
                None => return Ok(out),
            }
        }
        Err(Error::protocol(format!(
            "{method_name} has more than {MAX_PAGES} pages"
        )))
    }

    /// One page of a paginated list: the items under `key` and the next cursor.
    pub(crate) async fn list_page<T: DeserializeOwned>(
        &self,
        method_name: &str,
        key: &str,
        cursor: Option<&str>,
    ) -> Result<crate::page::Page<T>> {
        let mut params = Map::new();
        if let Some(c) = cursor {
            params.insert("cursor".to_owned(), Value::String(c.to_owned()));
        }
        let page = match self.request(method_name, params).await {
            Err(e) if cursor.is_some() && e.jsonrpc_code() == Some(INVALID_PARAMS) => {
                // An invalid cursor invalidates every cached page of this list (A11 item 78).
                if let Some(c) = &self.inner.cache {
                    c.invalidate_method(method_name);
                }
                return Err(e);
            }
            other => other?,
        };
        let Value::Object(mut page) = page else {
            return Err(Error::protocol(format!(
                "{method_name} result is not an object"
            )));
        };
        let items = page.remove(key).unwrap_or(Value::Array(Vec::new()));
        let items: Vec<T> = decode(method_name, items)?;
        let next_cursor = match page.remove("nextCursor") {
            Some(Value::String(next)) => Some(next),
            None | Some(Value::Null) => None,
            Some(other) => {
                return Err(Error::protocol(format!(
                    "{method_name} nextCursor must be a string, got {other}"
                )));
            }
        };
        Ok(crate::page::Page { items, next_cursor })
    }

    /// Whether a `tools/list` has been seen that names `tool`.
    pub fn knows_tool(&self, tool: &str) -> bool {
        self.catalog().knows(tool)
    }
}

impl Client {
    /// The fresh entries of this client's [`Cache`] (its private ones and the public ones) as
    /// JSON, each with the wall-clock time it expires, for a host that keeps cached results
    /// across processes (the `smcp` CLI keeps one file per endpoint and credentials). No
    /// credential is in it. `None` without a cache.
    ///
    /// # Examples
    ///
    /// Keeping the cache across restarts:
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// if let Some(snapshot) = client.cache_snapshot() {
    ///     std::fs::write("cache.json", serde_json::to_vec(&snapshot)?)?;
    /// }
    /// // … in the next run, with a client built with a cache:
    /// let snapshot: serde_json::Value = serde_json::from_slice(&std::fs::read("cache.json")?)?;
    /// let restored = client.restore_cache(&snapshot);
    /// println!("{restored} entries restored");
    /// # Ok(()) }
    /// ```
    pub fn cache_snapshot(&self) -> Option<Value> {
        let cache = self.inner.cache.as_ref()?;
        Some(cache.snapshot(&self.inner.auth_context))
    }

    /// Restores a [`cache_snapshot`](Self::cache_snapshot) into this client's cache, private
    /// entries under this client's credentials; entries expired since are skipped. Restore
    /// only a snapshot taken for the same endpoint and credentials. Returns how many entries
    /// were restored (0 without a cache).
    pub fn restore_cache(&self, snapshot: &Value) -> usize {
        match &self.inner.cache {
            Some(cache) => cache.restore(&self.inner.auth_context, snapshot),
            None => 0,
        }
    }
}

/// Makes a JSON object of `value`: an object as is, `null` as empty, anything else an error.
pub(crate) fn object_arg(what: &str, value: Value) -> Result<Map<String, Value>> {
    match value {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(Map::new()),
        other => Err(Error::config(format!(
            "{what} must be a JSON object, got {other}"
        ))),
    }
}
