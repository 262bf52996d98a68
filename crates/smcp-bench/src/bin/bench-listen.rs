//! `bench-listen`: opens N idle `subscriptions/listen` streams against one running
//! server, measures the server's memory per stream and its CPU while idle (keep-alives only),
//! then triggers one change (a `tools/call` of a tool that changes the tool list) and measures
//! how long each stream took to receive `notifications/tools/list_changed`.
//!
//! Each stream is its own HTTP/1.1 connection, or with `--http2 N` one of N streams sharing
//! an HTTP/2 connection (h2c: the server must take HTTP/2 with prior knowledge, `smcpd --h2c`),
//! which is how a proxy or a host multiplexing its sessions reaches a server, and how a
//! server holds far more streams than it has file descriptors.
//!
//! Driven by `scripts/bench-listen`, which starts `smcpd` and raises the fd limit. Server
//! figures come from `/proc/<pid>` (Linux only). Prints a JSON summary on stdout.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Parser;
use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::json;
use smcp_bench::listen::{h2_request, listen_body, meta, request, wait_for, wait_for_h2};
use smcp_bench::procstat;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{Semaphore, watch};

const CLIENT: &str = "bench-listen";

/// Resident set size of `pid`, in bytes.
fn rss(pid: u32) -> anyhow::Result<u64> {
    procstat::rss_bytes(pid).context("no VmRSS")
}

/// User + system CPU time of `pids`, summed, in microseconds.
fn cpu_us(pids: &[u32]) -> anyhow::Result<u64> {
    pids.iter()
        .map(|&pid| procstat::cpu_time_us(pid).context("no CPU time in /proc/<pid>/stat"))
        .sum()
}

/// Resident memory of `pids`, summed, in bytes.
fn rss_sum(pids: &[u32]) -> anyhow::Result<u64> {
    pids.iter().map(|&pid| rss(pid)).sum()
}

/// Listen-stream load generator.
#[derive(Debug, Parser)]
struct Args {
    /// Server address (the endpoint is `/mcp`). Repeat for several instances sharing a bus:
    /// the streams are spread over them in turn, and the change is made through the first.
    #[arg(long, required = true)]
    addr: Vec<SocketAddr>,
    /// Server process id, for RSS and CPU from /proc (repeat: the figures are summed).
    #[arg(long, required = true)]
    server_pid: Vec<u32>,
    /// Listen streams to open.
    #[arg(long, default_value_t = 10_000)]
    streams: usize,
    /// Connections being opened at once.
    #[arg(long, default_value_t = 200)]
    concurrency: usize,
    /// Seconds of idle measurement (keep-alives only) before the change.
    #[arg(long, default_value_t = 10)]
    idle_secs: u64,
    /// The tool whose call changes the tool list.
    #[arg(long, default_value = "toggle_extra")]
    trigger_tool: String,
    /// Loopback source addresses the streams are spread over (127.0.0.1, 127.0.0.2, …), each
    /// with its own range of ephemeral ports (about 28,000 each on Linux). 0: one per
    /// `STREAMS_PER_SOURCE` streams. Only for servers on an IPv4 loopback address.
    #[arg(long, default_value_t = 0)]
    sources: usize,
    /// Streams per HTTP/2 connection (h2c with prior knowledge); 0: HTTP/1.1, a connection
    /// per stream.
    #[arg(long, default_value_t = 0)]
    http2: usize,
}

/// An open listen stream, whatever carries it.
enum Listen {
    /// Its own HTTP/1.1 connection.
    H1(TcpStream),
    /// A stream of a shared HTTP/2 connection: its response body.
    H2(hyper::body::Incoming),
}

impl Listen {
    /// Waits for the next event naming `method` (see `smcp_bench::listen::wait_for`).
    async fn wait(&mut self, pending: &mut Vec<u8>, method: &str) -> anyhow::Result<Instant> {
        match self {
            Self::H1(stream) => wait_for(stream, pending, method).await,
            Self::H2(body) => wait_for_h2(body, pending, method).await,
        }
    }
}

/// Sends the listen request `body` on `conn` (HTTP/2) or on a new connection to `addr`
/// (HTTP/1.1) and waits for its acknowledgement.
async fn open(
    addr: SocketAddr,
    conn: Option<SendRequest<http_body_util::Full<bytes::Bytes>>>,
    body: &serde_json::Value,
    source: usize,
    sources: usize,
) -> anyhow::Result<(Listen, Vec<u8>)> {
    let mut listen = match conn {
        Some(mut send) => {
            send.ready().await?;
            let response = send.send_request(h2_request(addr, body)?).await?;
            anyhow::ensure!(
                response.status() == http::StatusCode::OK,
                "refused: {}",
                response.status()
            );
            Listen::H2(response.into_body())
        }
        None => {
            let mut stream = connect_from(addr, source, sources).await?;
            stream.write_all(&request(addr, body, "")).await?;
            Listen::H1(stream)
        }
    };
    let mut pending = Vec::new();
    listen
        .wait(&mut pending, "notifications/subscriptions/acknowledged")
        .await?;
    Ok((listen, pending))
}

/// `count` HTTP/2 connections (h2c, prior knowledge), the first to `addrs[0]`, the next to
/// `addrs[1]`, and so on in turn.
async fn h2_connections(
    addrs: &[SocketAddr],
    count: usize,
    sources: usize,
) -> anyhow::Result<Vec<SendRequest<http_body_util::Full<bytes::Bytes>>>> {
    let mut conns = Vec::with_capacity(count);
    for c in 0..count {
        let tcp = connect_from(addrs[c % addrs.len()], c % sources, sources).await?;
        let (send, conn) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
            .handshake(TokioIo::new(tcp))
            .await
            .context("HTTP/2 handshake (is the server taking h2c?)")?;
        tokio::spawn(conn);
        conns.push(send);
    }
    Ok(conns)
}

/// Streams per loopback source address when `--sources` is 0: under the 28,232 ephemeral
/// ports of Linux's default range, with room for the bench's other connections.
const STREAMS_PER_SOURCE: usize = 25_000;

/// Connects to `addr` from loopback source number `source` (127.0.0.1 + source) when `addr`
/// is an IPv4 loopback address and there is more than one source, else as the OS picks.
async fn connect_from(
    addr: SocketAddr,
    source: usize,
    sources: usize,
) -> std::io::Result<TcpStream> {
    if sources <= 1 || !matches!(addr, SocketAddr::V4(a) if a.ip().is_loopback()) {
        return TcpStream::connect(addr).await;
    }
    let octets = u32::try_from(source + 1).unwrap_or(u32::MAX).to_be_bytes();
    let ip = std::net::Ipv4Addr::new(127, octets[1], octets[2], octets[3]);
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind(SocketAddr::from((ip, 0)))?;
    socket.connect(addr).await
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let rss_before = rss_sum(&args.server_pid)?;
    let sources = match args.sources {
        0 => args.streams.div_ceil(STREAMS_PER_SOURCE).max(1),
        n => n,
    };

    let opened = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(Semaphore::new(args.concurrency.max(1)));
    let (done_tx, done_rx) = watch::channel(false);
    // Each stream reports when its notification arrived, then holds its connection until every
    // stream has reported, so no connection teardown competes with the delivery being measured.
    let (at_tx, mut at_rx) = tokio::sync::mpsc::unbounded_channel::<Instant>();
    let open_start = Instant::now();
    let conns = if args.http2 > 0 {
        h2_connections(&args.addr, args.streams.div_ceil(args.http2), sources).await?
    } else {
        Vec::new()
    };
    let mut tasks = Vec::with_capacity(args.streams);
    for i in 0..args.streams {
        // Over HTTP/2, stream i is on connection i / N, whose server is conns' i / N-th.
        let (conn, addr) = match args.http2 {
            0 => (None, args.addr[i % args.addr.len()]),
            per => (
                Some(conns[i / per].clone()),
                args.addr[(i / per) % args.addr.len()],
            ),
        };
        let (gate, opened, failed) = (gate.clone(), opened.clone(), failed.clone());
        let mut done_rx = done_rx.clone();
        let at_tx = at_tx.clone();
        tasks.push(tokio::spawn(async move {
            let body = listen_body(CLIENT, i as u64, &json!({"toolsListChanged": true}));
            let permit = gate.acquire_owned().await.ok();
            let result = open(addr, conn, &body, i % sources, sources).await;
            drop(permit);
            let (mut stream, mut pending) = match result {
                Ok(s) => {
                    opened.fetch_add(1, Ordering::Relaxed);
                    s
                }
                Err(e) => {
                    failed.fetch_add(1, Ordering::Relaxed);
                    return Err(e);
                }
            };
            let at = stream
                .wait(&mut pending, "notifications/tools/list_changed")
                .await?;
            let _ = at_tx.send(at);
            // Hold the connection until every stream has reported.
            let _ = done_rx.wait_for(|d| *d).await;
            drop(stream);
            Ok(())
        }));
    }
    while opened.load(Ordering::Relaxed) + failed.load(Ordering::Relaxed) < args.streams {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let open_time = open_start.elapsed();
    let open = opened.load(Ordering::Relaxed);
    let failed_open = failed.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_open = rss_sum(&args.server_pid)?;

    // Idle: only keep-alive comments flow.
    let (t0, c0) = (Instant::now(), cpu_us(&args.server_pid)?);
    tokio::time::sleep(Duration::from_secs(args.idle_secs)).await;
    let (t1, c1) = (Instant::now(), cpu_us(&args.server_pid)?);
    #[allow(clippy::cast_precision_loss)]
    let idle_cpu = (c1 - c0) as f64 / 1e6 / (t1 - t0).as_secs_f64() * 100.0;
    let rss_idle = rss_sum(&args.server_pid)?;

    // One change.
    let call = json!({
        "jsonrpc": "2.0", "id": "trigger", "method": "tools/call",
        "params": {"_meta": meta(CLIENT), "name": args.trigger_tool, "arguments": {}}
    });
    let mut trigger = TcpStream::connect(args.addr[0]).await?;
    let extra = format!("Mcp-Name: {}\r\nConnection: close\r\n", args.trigger_tool);
    let sent = Instant::now();
    trigger
        .write_all(&request(args.addr[0], &call, &extra))
        .await?;
    let mut reply = Vec::new();
    trigger.read_to_end(&mut reply).await?;
    let call_time = sent.elapsed();

    drop(at_tx);
    let mut latencies = Vec::with_capacity(open);
    let collect_deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while latencies.len() < open {
        match tokio::time::timeout_at(collect_deadline, at_rx.recv()).await {
            Ok(Some(at)) => latencies.push(at.saturating_duration_since(sent)),
            Ok(None) | Err(_) => break,
        }
    }
    let missed = open - latencies.len();
    let _ = done_tx.send(true);
    for task in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
    }
    latencies.sort();
    let streams = open.max(1) as u64;
    let summary = json!({
        "streams_requested": args.streams,
        "instances": args.addr.len(),
        "http_version": if args.http2 > 0 { "2" } else { "1.1" },
        "streams_per_connection": args.http2.max(1),
        "connections": if args.http2 > 0 { conns.len() } else { open },
        "source_addresses": sources,
        "streams_open": open,
        "open_failures": failed_open,
        "open_time_s": open_time.as_secs_f64(),
        "server_rss_before_mib": rss_before as f64 / 1048576.0,
        "server_rss_open_mib": rss_open as f64 / 1048576.0,
        "server_rss_idle_mib": rss_idle as f64 / 1048576.0,
        "server_bytes_per_stream": rss_idle.saturating_sub(rss_before) / streams,
        "idle_secs": args.idle_secs,
        "server_idle_cpu_percent": idle_cpu,
        "trigger_call_ms": ms(call_time),
        "notified": latencies.len(),
        "not_notified": missed,
        "notify_p50_ms": ms(percentile(&latencies, 0.50)),
        "notify_p99_ms": ms(percentile(&latencies, 0.99)),
        "notify_max_ms": ms(latencies.last().copied().unwrap_or_default()),
    });
    #[allow(clippy::print_stdout)]
    {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    }
    Ok(())
}
