//! One upstream server: its client (rebuilt when a stdio program is started again), its
//! health, its concurrency limit, and the call that runs in a task of its own.

use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use serde_json::{Map, Value};
use smcp_client::proto::basic::Implementation;
use smcp_client::{Client, ServerStderr, StdioCommand};
use smcp_proto::basic::LoggingLevel;
use smcp_server::core::metrics::{MetricsHandle, UpstreamOutcome};
use smcp_server::{HandlerError, RequestContext};
use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::bridge::{Bridge, BridgeHandler, CALL};
use crate::config::{Transport, UpstreamConfig};
use crate::error::{GatewayError, call_error, upstream_is_down};
use crate::held::{Event, HeldCalls};

/// Whether an upstream is serving.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Health {
    /// It answered its last request.
    Up,
    /// It is down, for this reason (shown by `/readyz`).
    Down(String),
}

/// One `[[upstream]]`, running.
#[derive(Debug)]
pub(crate) struct Upstream {
    pub(crate) config: UpstreamConfig,
    /// Its names' prefix with the separator.
    pub(crate) qualifier: String,
    client: RwLock<Client>,
    bridge: Arc<Bridge>,
    permits: Arc<Semaphore>,
    health: Mutex<Health>,
    /// Woken when the upstream comes back up.
    up: Notify,
    /// Set while a restart is under way, so that one failure starts one restart.
    restarting: std::sync::atomic::AtomicBool,
    /// How long a question of a held call waits for the client's answer.
    hold: Duration,
    /// Who handles SEP-2631 files of its tools.
    #[cfg(feature = "files")]
    pub(crate) files: FileSupport,
    /// The exchange of its clients' tokens for its own, when configured.
    exchange: Option<crate::exchange::TokenExchange>,
}

/// Who handles an upstream's files.
#[cfg(feature = "files")]
#[derive(Debug, Default)]
pub(crate) struct FileSupport {
    /// The upstream said `files` (SEP-2631) when it was last listed.
    pub(crate) upstream: std::sync::atomic::AtomicBool,
    /// The gateway stores its clients' files ([`crate::Gateway::serve_files`]).
    pub(crate) gateway: std::sync::atomic::AtomicBool,
}

#[cfg(feature = "files")]
impl FileSupport {
    /// Whether the upstream speaks SEP-2631.
    pub(crate) fn upstream(&self) -> bool {
        self.upstream.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether the gateway stores its clients' files.
    pub(crate) fn gateway(&self) -> bool {
        self.gateway.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Upstream {
    /// The upstream with its client built (nothing spawned or connected yet).
    pub(crate) fn new(
        config: UpstreamConfig,
        separator: &str,
        hold: Duration,
    ) -> Result<Arc<Self>, GatewayError> {
        let bridge = Arc::new(Bridge::new(&config.name, hold));
        let client = build_client(&config, &bridge)?;
        let exchange = config
            .token_exchange
            .as_ref()
            .map(|e| crate::exchange::TokenExchange::new(&config, e))
            .transpose()?;
        Ok(Arc::new(Self {
            qualifier: config.qualifier(separator),
            permits: Arc::new(Semaphore::new(config.max_concurrency)),
            config,
            client: RwLock::new(client),
            bridge,
            health: Mutex::new(Health::Up),
            up: Notify::new(),
            restarting: std::sync::atomic::AtomicBool::new(false),
            hold,
            #[cfg(feature = "files")]
            files: FileSupport::default(),
            exchange,
        }))
    }

    /// Whether the gateway stores files for its clients (and so moves them to and from this
    /// upstream).
    pub(crate) fn stores_files(&self) -> bool {
        #[cfg(feature = "files")]
        return self.files.gateway();
        #[cfg(not(feature = "files"))]
        false
    }

    /// Its name.
    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    /// The client of the moment.
    pub(crate) fn client(&self) -> Client {
        self.client
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Its health now.
    pub(crate) fn health(&self) -> Health {
        self.health
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set_health(&self, health: Health) {
        let up = health == Health::Up;
        *self.health.lock().unwrap_or_else(PoisonError::into_inner) = health;
        if up {
            self.up.notify_waiters();
        }
    }

    /// Records an answered request: an HTTP upstream marked down is up again.
    pub(crate) fn succeeded(&self) {
        if self.config.transport() == Transport::Http && self.health() != Health::Up {
            tracing::info!(upstream = %self.name(), "upstream answering again");
            self.set_health(Health::Up);
        }
    }

    /// Records a failed request: when the upstream itself is gone, marks it down and (stdio)
    /// starts it again in the background.
    pub(crate) fn failed(self: &Arc<Self>, error: &smcp_client::Error) {
        if !upstream_is_down(error) {
            return;
        }
        tracing::warn!(upstream = %self.name(), error = %error, "upstream down");
        self.mark_down(error.to_string());
    }

    /// Marks the upstream down for `reason`; a stdio program is started again (once, however
    /// many failures report it).
    pub(crate) fn mark_down(self: &Arc<Self>, reason: String) {
        self.set_health(Health::Down(reason));
        if self.config.transport() == Transport::Stdio
            && !self
                .restarting
                .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            tokio::spawn(Arc::clone(self).restart());
        }
    }

    /// Starts the program again, waiting the backoff between tries, until it answers a list
    /// of its tools.
    async fn restart(self: Arc<Self>) {
        let mut wait = self.config.restart.initial_backoff;
        loop {
            self.client().close().await;
            tokio::time::sleep(wait).await;
            match build_client(&self.config, &self.bridge) {
                Ok(client) => {
                    let probe =
                        tokio::time::timeout(self.config.timeout, client.list_tools()).await;
                    // Any answer, an error answer included, shows the program serving.
                    let probe = match probe {
                        Ok(Err(e)) if e.jsonrpc_error().is_some() => Ok(Ok(Vec::new())),
                        other => other,
                    };
                    match probe {
                        Ok(Ok(_)) => {
                            *self.client.write().unwrap_or_else(PoisonError::into_inner) = client;
                            self.restarting
                                .store(false, std::sync::atomic::Ordering::Release);
                            tracing::info!(upstream = %self.name(), "upstream started again");
                            self.set_health(Health::Up);
                            return;
                        }
                        Ok(Err(e)) => {
                            self.set_health(Health::Down(format!("restart failed: {e}")));
                        }
                        Err(_) => self.set_health(Health::Down(
                            "restart failed: no answer in time".to_owned(),
                        )),
                    }
                    client.close().await;
                }
                Err(e) => self.set_health(Health::Down(format!("restart failed: {e}"))),
            }
            wait = (wait * 2).min(self.config.restart.max_backoff);
        }
    }

    /// Waits until the upstream is up.
    pub(crate) async fn wait_up(&self) {
        loop {
            let notified = self.up.notified();
            if self.health() == Health::Up {
                return;
            }
            notified.await;
        }
    }

    /// Waits (within `limit`) for the upstream to be up.
    async fn ready(&self, limit: Duration) -> Result<(), HandlerError> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.up.notified();
            let Health::Down(reason) = self.health() else {
                return Ok(());
            };
            if self.config.transport() != Transport::Stdio
                || tokio::time::timeout_at(deadline, notified).await.is_err()
            {
                // An HTTP upstream is tried anyway: its next answer tells.
                if self.config.transport() == Transport::Http {
                    return Ok(());
                }
                return Err(HandlerError::internal(format!(
                    "upstream {:?} is down: {reason}",
                    self.name()
                )));
            }
        }
    }

    /// Calls the upstream tool `name` for a client request: the call runs in a task of its
    /// own (it may outlive this request, held for the client's answer); this request drives
    /// it until it ends or asks.
    pub(crate) async fn call_tool(
        self: &Arc<Self>,
        held: &HeldCalls,
        ctx: &RequestContext,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<smcp_proto::server::tools::CallToolResult, HandlerError> {
        if self.exchange.is_some() {
            // A session of an earlier revision has one token: no client's own can go up.
            return Err(HandlerError::Rpc(smcp_proto::error::ErrorObject::internal(
                format!(
                    "upstream {:?} negotiated a revision before 2026-07-28, where a token \
                 exchanged per request cannot be used; pin it with era = \"2026-07-28\"",
                    self.name()
                ),
            )));
        }
        let limit = self.config.timeout;
        self.ready(limit).await?;
        let permit = self.permit(limit).await?;
        let cancel = CancellationToken::new();
        let (link, call) = HeldCalls::open(self.name(), cancel.clone());
        // The upstream's own time, and the time a person takes to answer its question.
        let mut request = self
            .client()
            .tool_call(name)
            .arguments(Value::Object(arguments))
            .timeout(Some(limit + self.hold))
            .cancellation(cancel);
        if ctx.progress_token().is_some() {
            let progress = link.clone();
            request = request.on_progress(move |p| {
                let _ = progress.try_send(Event::Progress(p));
            });
        }
        let log = link.clone();
        request = request.on_log(LoggingLevel::Debug, move |line| {
            let _ = log.try_send(Event::Log(line));
        });
        let upstream = Arc::clone(self);
        let metrics = ctx_metrics(ctx);
        tokio::spawn(CALL.scope(link.clone(), async move {
            let _permit = permit;
            let _in_flight = upstream.bridge.enter(link.clone());
            let started = Instant::now();
            let result = request.send().await;
            upstream.record_to(metrics.as_ref(), outcome_of(&result), started);
            match &result {
                Ok(_) => upstream.succeeded(),
                Err(e) => upstream.failed(e),
            }
            let _ = link.send(Event::Done(result)).await;
        }));
        held.drive_here(call, ctx).await
    }
}

impl Upstream {
    /// A request other than a tool call (a prompt, a resource read, a completion) for a
    /// client request: within the concurrency limit and the timeout; a question the upstream
    /// asks meanwhile is refused (only tool calls are held for the client's answer).
    pub(crate) async fn request<T, F, Fut>(
        self: &Arc<Self>,
        ctx: &RequestContext,
        f: F,
    ) -> Result<T, HandlerError>
    where
        F: FnOnce(Client) -> Fut,
        Fut: std::future::Future<Output = Result<T, smcp_client::Error>>,
    {
        let limit = self.config.timeout;
        self.ready(limit).await?;
        let _permit = self.permit(limit).await?;
        // A link nobody reads: a question asked in this request's task is refused at once.
        let (refuse, _) = tokio::sync::mpsc::channel(1);
        let started = Instant::now();
        let result = CALL.scope(refuse, f(self.client())).await;
        self.record_to(ctx_metrics(ctx).as_ref(), outcome_of(&result), started);
        match result {
            Ok(value) => {
                self.succeeded();
                Ok(value)
            }
            Err(e) => {
                self.failed(&e);
                Err(call_error(self.name(), &e))
            }
        }
    }

    /// Whether the upstream speaks 2026-07-28 (its questions pass through, nothing held).
    pub(crate) fn stateless(&self) -> bool {
        self.client().era() == Some(smcp_client::Era::Stateless)
    }

    /// One round of `method` to a 2026-07-28 upstream for a client request, within the
    /// concurrency limit (`passthrough.rs`); the result decoded as `T`.
    pub(crate) async fn pass<T: crate::ours::Ours>(
        self: &Arc<Self>,
        ctx: &RequestContext,
        input: Option<&smcp_server::mrtr::Input>,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<T, HandlerError> {
        let passed = self.pass_raw(ctx, input, method, params, false).await?;
        let crate::passthrough::Passed::Complete(result) = passed else {
            return Err(HandlerError::internal(format!(
                "upstream {:?} answered {method} with a task it was not offered",
                self.name()
            )));
        };
        crate::ours::ours(&result).map_err(|e| {
            // Its position only: a serde message can quote the payload.
            HandlerError::internal(format!(
                "upstream {:?} sent a malformed {method} result (at line {} column {})",
                self.name(),
                e.line(),
                e.column()
            ))
        })
    }

    /// One round of `method` to a 2026-07-28 upstream, as it came back (`passthrough.rs`),
    /// within the concurrency limit; `tasks`: the client's tasks extension goes up with it.
    pub(crate) async fn pass_raw(
        self: &Arc<Self>,
        ctx: &RequestContext,
        input: Option<&smcp_server::mrtr::Input>,
        method: &str,
        params: Map<String, Value>,
        tasks: bool,
    ) -> Result<crate::passthrough::Passed, HandlerError> {
        let limit = self.config.timeout;
        self.ready(limit).await?;
        let bearer = match &self.exchange {
            Some(exchange) => Some(exchange.token_for(ctx).await?),
            None => None,
        };
        let _permit = self.permit(limit).await?;
        let started = Instant::now();
        let passed = crate::passthrough::round(
            self.client(),
            ctx,
            input,
            method,
            params,
            crate::passthrough::Offer {
                tasks,
                files: self.stores_files(),
                bearer,
            },
        )
        .await;
        self.record(ctx, outcome_of(&passed), started);
        match passed {
            Ok(result) => {
                self.succeeded();
                result
            }
            Err(e) => {
                self.failed(&e);
                Err(call_error(self.name(), &e))
            }
        }
    }

    /// Records one request to this upstream in the metrics of the server `ctx` belongs to.
    fn record(&self, ctx: &RequestContext, outcome: UpstreamOutcome, started: Instant) {
        self.record_to(ctx_metrics(ctx).as_ref(), outcome, started);
    }

    fn record_to(
        &self,
        metrics: Option<&MetricsHandle>,
        outcome: UpstreamOutcome,
        started: Instant,
    ) {
        if let Some(metrics) = metrics {
            metrics.upstream(self.name(), outcome, started.elapsed());
        }
    }

    /// A permit of the concurrency limit, waited for within `limit`.
    async fn permit(
        &self,
        limit: Duration,
    ) -> Result<tokio::sync::OwnedSemaphorePermit, HandlerError> {
        tokio::time::timeout(limit, Arc::clone(&self.permits).acquire_owned())
            .await
            .map_err(|_| {
                HandlerError::internal(format!(
                    "upstream {:?} is at its limit of {} requests in flight; none ended within {}s",
                    self.name(),
                    self.config.max_concurrency,
                    limit.as_secs()
                ))
            })?
            .map_err(|_| HandlerError::internal("the gateway is shutting down"))
    }
}

/// The metrics of the server a request belongs to.
fn ctx_metrics(ctx: &RequestContext) -> Option<MetricsHandle> {
    ctx.server().map(|server| server.metrics())
}

/// How a request to an upstream ended, for its metrics: answered with a result (a question
/// counts), with a JSON-RPC error, or not usably answered.
fn outcome_of<T>(result: &Result<T, smcp_client::Error>) -> UpstreamOutcome {
    match result {
        Ok(_) => UpstreamOutcome::Ok,
        Err(e) if e.jsonrpc_error().is_some() => UpstreamOutcome::Error,
        Err(_) => UpstreamOutcome::Failed,
    }
}

/// The upstream's client, from its configuration.
fn build_client(config: &UpstreamConfig, bridge: &Arc<Bridge>) -> Result<Client, GatewayError> {
    let failed = |source| GatewayError::Client {
        upstream: config.name.clone(),
        source,
    };
    let mut builder = match &config.url {
        Some(url) => {
            let mut builder = Client::builder(url.clone());
            if let Some(variable) = &config.bearer_token_env {
                let token = std::env::var(variable).map_err(|_| GatewayError::MissingEnv {
                    upstream: config.name.clone(),
                    variable: variable.clone(),
                })?;
                builder = builder.bearer_token(&token);
            }
            // Checked when the configuration was read.
            if let Some(version) = config.http.as_deref().and_then(|v| v.parse().ok()) {
                builder = builder.http_version(version);
            }
            builder
        }
        None => Client::stdio(stdio_command(config)?),
    };
    builder = builder
        .input_handler(BridgeHandler(Arc::clone(bridge)))
        .timeout(Some(config.timeout))
        .client_info(Implementation::new(
            "smcp-gateway",
            env!("CARGO_PKG_VERSION"),
        ));
    if let Some(era) = &config.era {
        builder = builder.protocol_version(era);
    }
    // The gateway moves its clients' files to and from the upstream itself. Plain-http data
    // plane URLs on loopback are accepted exactly when the upstream itself is reached there
    // (a stdio program, or a loopback URL): no less safe than the MCP connection.
    #[cfg(feature = "files")]
    {
        let loopback = config.url.as_deref().is_none_or(is_loopback_url);
        builder = builder.files(smcp_client::files::FileTransfer {
            inline_threshold: 0,
            allow_insecure_loopback: loopback,
            ..smcp_client::files::FileTransfer::default()
        });
    }
    builder.build().map_err(failed)
}

/// Whether `url`'s host is a loopback address or `localhost`.
#[cfg(feature = "files")]
fn is_loopback_url(url: &str) -> bool {
    let Some(rest) = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
    else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = match authority.rsplit_once('@') {
        Some((_, host)) => host,
        None => authority,
    };
    let host = if let Some(v6) = host.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        host.split(':').next().unwrap_or_default()
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.to_canonical().is_loopback())
}

/// The program of a stdio upstream: an empty environment but for `PATH`, `env` and
/// `env_from`; its stderr lines logged under its name.
fn stdio_command(config: &UpstreamConfig) -> Result<StdioCommand, GatewayError> {
    let (program, args) = config.command.split_first().ok_or_else(|| {
        crate::config::invalid(
            format!("upstream {:?}, command", config.name),
            "give `command` (stdio) or `url` (HTTP)",
        )
    })?;
    let mut command = StdioCommand::new(program).args(args).env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        command = command.env("PATH", path);
    }
    for (key, value) in &config.env {
        command = command.env(key, value);
    }
    for variable in &config.env_from {
        let value = std::env::var_os(variable).ok_or_else(|| GatewayError::MissingEnv {
            upstream: config.name.clone(),
            variable: variable.clone(),
        })?;
        command = command.env(variable, value);
    }
    if let Some(dir) = &config.cwd {
        command = command.current_dir(dir);
    }
    let name = config.name.clone();
    Ok(command.stderr(ServerStderr::lines(move |line| {
        tracing::info!(upstream = %name, "{line}");
    })))
}

#[cfg(all(test, feature = "files"))]
mod tests {
    use super::is_loopback_url;

    #[test]
    fn loopback_urls_are_told_from_others() {
        for url in [
            "http://127.0.0.1:8931/mcp",
            "http://localhost/mcp",
            "https://[::1]:9/mcp",
            "http://user@127.0.0.2/mcp",
        ] {
            assert!(is_loopback_url(url), "{url}");
        }
        for url in [
            "http://10.0.0.1/mcp",
            "https://mcp.example/mcp",
            "http://127.0.0.1.example/mcp",
            "ftp://127.0.0.1/",
        ] {
            assert!(!is_loopback_url(url), "{url}");
        }
    }
}
