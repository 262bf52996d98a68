//! Where and how smcpd serves: `--stdio` or `--listen`, the Host/Origin allow-lists, the
//! `subscriptions/listen` limits, the connection cap and the deadlines for slow clients;
//! and the demo's `smcp://clock`.

use std::net::SocketAddr;
use std::time::Duration;

use smcp_server::{ListenConfig, SecurityPolicy, ServeOptions};

/// The transport and its limits.
#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// Serve MCP on standard input and output (the stdio transport) instead of HTTP; logs go
    /// to stderr. With TLS (or --insecure-http-files) the SEP-2631 data plane is also served
    /// over HTTP on --listen; without, file arguments are inline (`data:`) only.
    #[arg(long)]
    pub(crate) stdio: bool,
    /// With --stdio: read and write stdin and stdout on a thread pool even when they are pipes
    /// or a Unix socket (by default those go through the event loop, without the thread
    /// hand-offs). For a descriptor another process shares and expects to stay blocking.
    #[arg(long, requires = "stdio")]
    pub(crate) stdio_blocking_io: bool,
    /// Address to listen on. Keep it on loopback unless a proxy in front checks access.
    #[arg(long, env = "SMCPD_LISTEN", default_value = smcpd::DEFAULT_LISTEN)]
    pub(crate) listen: SocketAddr,
    /// Extra host names accepted in the Host header (loopback names always are).
    #[arg(long = "allow-host", value_name = "HOST")]
    allow_hosts: Vec<String>,
    /// Extra browser origins accepted in the Origin header (loopback origins always are).
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
    /// Seconds of silence on a `subscriptions/listen` stream before a keep-alive comment.
    #[arg(long, value_name = "SECS", default_value_t = 15)]
    keep_alive_secs: u64,
    /// Most `subscriptions/listen` streams open at once.
    #[arg(long, value_name = "N", default_value_t = ListenConfig::default().max_streams)]
    max_listen_streams: usize,
    /// Most `subscriptions/listen` streams open at once from one client IP address.
    #[arg(long, value_name = "N", default_value_t = ListenConfig::default().max_streams_per_address)]
    max_listen_per_address: usize,
    /// Seconds between updates of the `smcp://clock` resource (0 = never).
    #[arg(long, value_name = "SECS", default_value_t = 1)]
    pub(crate) clock_secs: u64,
    /// Most connections served at once.
    #[arg(long, value_name = "N", default_value_t = ServeOptions::default().max_connections)]
    max_connections: usize,
    /// On plain HTTP, also accept HTTP/2 with prior knowledge (h2c), told apart from HTTP/1.1
    /// by its preface: for a proxy or gateway in front that multiplexes its calls on one
    /// connection. Over TLS, HTTP/2 is chosen by ALPN whatever this says.
    #[arg(long)]
    h2c: bool,
    /// Deadlines for slow or stalled clients.
    #[command(flatten)]
    pub(crate) deadlines: Deadlines,
}

impl ServeArgs {
    /// The Host and Origin allow-lists: loopback, and the `--allow-*` names.
    pub(crate) fn security(&self) -> SecurityPolicy {
        let mut security = SecurityPolicy::loopback();
        for host in &self.allow_hosts {
            security = security.allow_host(host);
        }
        for origin in &self.allow_origins {
            security = security.allow_origin(origin);
        }
        security
    }

    /// The `subscriptions/listen` limits.
    pub(crate) fn listen_config(&self) -> ListenConfig {
        ListenConfig {
            keep_alive: Duration::from_secs(self.keep_alive_secs.max(1)),
            max_streams: self.max_listen_streams,
            max_streams_per_address: self.max_listen_per_address,
            ..ListenConfig::default()
        }
    }

    /// The options of an HTTP listener: the connection cap and the deadlines (TLS is
    /// `super::tls`'s).
    pub(crate) fn options(&self) -> ServeOptions {
        ServeOptions {
            h2c: self.h2c,
            ..self.deadlines.serve_options(self.max_connections)
        }
    }
}

/// How long a client may take, and how long shutdown waits.
#[derive(Debug, clap::Args)]
pub(crate) struct Deadlines {
    /// Longest TLS handshake (a client that connects and says nothing is closed then).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = smcpd::parse_duration)]
    handshake_timeout: Duration,
    /// Longest wait for a complete request head, on a new connection or between requests.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = smcpd::parse_duration)]
    header_timeout: Duration,
    /// Longest wait for the next byte of a request body (uploads included).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = smcpd::parse_duration)]
    body_idle_timeout: Duration,
    /// Lowest average rate of a request body, in bytes per second, once --body-grace has
    /// passed (0 = none).
    #[arg(long, value_name = "BYTES", default_value_t = 1024)]
    body_min_rate: u64,
    /// How long a request body may take before its average rate counts.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = smcpd::parse_duration)]
    body_grace: Duration,
    /// On SIGTERM or Ctrl-C, how long requests in flight get to finish; those still running
    /// then are cancelled and answered with an error, and smcpd exits with status 1.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = smcpd::parse_duration)]
    pub(crate) drain_timeout: Duration,
}

impl Deadlines {
    fn serve_options(&self, max_connections: usize) -> ServeOptions {
        ServeOptions {
            max_connections,
            handshake_timeout: self.handshake_timeout,
            header_read_timeout: self.header_timeout,
            body: smcp_server::BodyTimeouts {
                idle: self.body_idle_timeout,
                min_rate: self.body_min_rate,
                grace: self.body_grace,
            },
            shutdown_timeout: self.drain_timeout,
            ..ServeOptions::default()
        }
    }
}
