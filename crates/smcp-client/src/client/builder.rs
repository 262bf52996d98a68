//! [`ClientBuilder`]: every option of a [`Client`] and `build`, which makes the transport
//! (HTTP with its authorization gate, or a launched stdio server) and the file transfer client.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};
use smcp_proto::basic::Implementation;

use super::handle::{Client, Inner};
use crate::cache::Cache;
use crate::connection::Transport;
use crate::error::{Error, Result};
use crate::headers::ToolCatalog;
use crate::mrtr::{HandlerBox, InputHandler};
use crate::stdio::{StdioCommand, StdioTransport};
use crate::task_polling::TaskPolling;
use crate::transport::http::HttpTransport;
use crate::transport::http_client::{HttpSettings, HttpVersion};

/// Default cap on MRTR rounds of one logical call (A6 item 63).
pub const DEFAULT_MAX_INPUT_ROUNDS: u32 = 8;
/// Default timeout of one logical call.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

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
    http: HttpSettings,
    client_info: Option<Implementation>,
    handler: Option<HandlerBox>,
    max_rounds: u32,
    retry: crate::RetryPolicy,
    cache: Option<Cache>,
    files: Option<crate::files::FileTransfer>,
    tasks: bool,
    task_polling: TaskPolling,
    extensions: BTreeMap<String, Map<String, Value>>,
    pin: Option<String>,
    probe_era: bool,
    era_hint: Option<crate::Era>,
    trace: Option<crate::trace::TraceSource>,
    tap: Option<crate::wire::WireTap>,
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
            http: HttpSettings {
                connect_timeout: Some(Duration::from_secs(10)),
                ..HttpSettings::default()
            },
            client_info: Some(Implementation::new(
                "smcp-client",
                env!("CARGO_PKG_VERSION"),
            )),
            handler: None,
            max_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            retry: crate::RetryPolicy::none(),
            cache: None,
            files: None,
            tasks: true,
            task_polling: TaskPolling::default(),
            extensions: BTreeMap::new(),
            pin: None,
            probe_era: true,
            era_hint: None,
            trace: None,
            tap: None,
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }

    /// Hands every HTTP request to the endpoint, its response and each message of the body,
    /// and every line to and from a stdio server, to `tap` as it happens (see [`crate::wire`]).
    ///
    /// ```
    /// use smcp_client::wire::{WireKind, WireTap};
    ///
    /// let client = smcp_client::Client::builder("http://127.0.0.1:8931/mcp")
    ///     .wire_tap(WireTap::new(|event| {
    ///         if let WireKind::HttpRequest { url, .. } = &event.kind {
    ///             eprintln!("-> {url}");
    ///         }
    ///     }))
    ///     .build();
    /// # let _ = client;
    /// ```
    #[must_use]
    pub fn wire_tap(mut self, tap: crate::wire::WireTap) -> Self {
        self.tap = Some(tap);
        self
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

    /// Declares the extension `id` with `settings` on every request (under
    /// `capabilities.extensions`), for an extension the application itself handles. Repeated,
    /// the last settings of an id win. The tasks and files extensions have their own switches
    /// ([`Self::tasks`], [`Self::files`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let client = smcp_client::Client::builder("http://127.0.0.1:8931/mcp")
    ///     .extension("com.example/feature", serde_json::Map::new())
    ///     .build()?;
    /// # let _ = client;
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    pub fn extension(mut self, id: impl Into<String>, settings: Map<String, Value>) -> Self {
        self.extensions.insert(id.into(), settings);
        self
    }

    /// Declares MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`) for HTML views: for a host
    /// that renders a tool's `ui://` view (read the tool's link with
    /// [`UiToolMeta::from_meta`](smcp_proto::ext::ui::UiToolMeta::from_meta)).
    pub fn ui_apps(self) -> Self {
        let settings = match serde_json::to_value(smcp_proto::ext::ui::UiClientCapability::html()) {
            Ok(Value::Object(settings)) => settings,
            _ => Map::new(),
        };
        self.extension(smcp_proto::ext::ui::EXTENSION_ID, settings)
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
            Ok(certs) if !certs.is_empty() => self.http.roots.extend(certs),
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
        self.http.connect_timeout = Some(timeout);
        self
    }

    /// The HTTP version spoken to the server and to SEP-2631 descriptor URLs. Default
    /// [`HttpVersion::Auto`]: HTTP/2 over `https://` when the server offers it, else HTTP/1.1.
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_client::{Client, HttpVersion};
    ///
    /// let client = Client::builder("https://mcp.example.com/mcp")
    ///     .http_version(HttpVersion::Http1)
    ///     .build()?;
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    pub fn http_version(mut self, version: HttpVersion) -> Self {
        self.http.version = version;
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
                &self.http.roots,
            )
            .map_err(|e| Error::config(e.to_string()))?;
            return Ok(crate::transport::gate::Gate::oauth(session).tapped(self.tap.clone()));
        }
        Ok(crate::transport::gate::Gate::default().tapped(self.tap.clone()))
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
                    crate::files::data_plane_client(&self.http, &policy)?,
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
        let legacy = crate::legacy::LegacyConfig {
            client_info: self.client_info.clone(),
            handler: self.handler.clone(),
        };
        let gate = self.gate()?;
        let transport = match &self.stdio {
            None => Transport::Http(crate::legacy::era::Endpoint::new(
                HttpTransport::new(&self.url, self.headers, &self.http, gate)?,
                self.pin.clone(),
                legacy,
            )),
            Some(command) => Transport::Stdio(StdioTransport::start(
                command,
                self.tap.clone(),
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
                client_info: self
                    .client_info
                    .as_ref()
                    .and_then(|info| serde_json::to_value(info).ok()),
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
                extensions: self.extensions,
                trace: self.trace,
            }),
        })
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
}
