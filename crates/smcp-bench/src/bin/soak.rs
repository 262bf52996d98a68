//! `soak`: a long mixed load against one running `smcpd`, then a verdict on leaks and losses.
//!
//! Driven by `scripts/soak [MINUTES]`, which builds the release binaries, starts `smcpd`
//! with caps high enough for the streams and raises the fd limit. One process, one thread:
//!
//! 1. samples the server's RSS and open fds (the baseline), then opens `--streams`
//!    `subscriptions/listen` streams (tool list changes) over raw TCP;
//! 2. for `--duration-secs`, at the same time:
//!    * a rate-limited echo load (`--echo-rps` over `--echo-connections` keep-alive
//!      connections; every `--progress-every`-th call is `progress_echo` with a progress token,
//!      i.e. an SSE response with 10 progress notifications), every body checked;
//!    * multi round-trip rounds (`--mrtr-per-sec`): `confirm_action` (elicitation) and `ask_llm`
//!      (sampling) in turn, each answered and completed with the returned `requestState`;
//!    * catalog toggles: every `--toggle-secs`, `toggle_extra` adds or removes the tool
//!      `extra`, and the toggler waits until every stream has received that change's
//!      `notifications/tools/list_changed` (the server coalesces list changes a stream has not
//!      read yet, so changes are paced: each is counted per stream);
//!    * every `--sample-secs`, the server's RSS, open fds and CPU time from `/proc`;
//! 3. stops the load, closes every connection and stream, and waits (up to
//!    `--fd-settle-secs`) for the server's fd count to return to the baseline.
//!
//! Verdict (exit status 1 when any fails), figures in `--out` (JSON) and a summary on stdout:
//! * **RSS**: after the warm-up (`--warmup-fraction` of the run), the Theil–Sen slope of RSS
//!   over time (the median of the slopes between every pair of samples, robust to a sample
//!   that caught a burst) must be below `--max-rss-mib-per-10min`. Least squares and the
//!   growth between the medians of the first and last quarter of the window are reported
//!   beside it;
//! * **fds** back to the baseline once the load has stopped;
//! * **zero errors**: every response as expected, no stream refused or ended early;
//! * **full delivery**: every stream received every change exactly once.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::cast_precision_loss,
    reason = "a CLI binary reports on stdout/stderr; figures are converted to f64 for display"
)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use bytes::Bytes;
use clap::Parser;
use http::{HeaderValue, StatusCode};
use serde::Serialize;
use serde_json::{Value, json};
use smcp_bench::client::{self, Connection};
use smcp_bench::listen::{listen_body, meta, request, wait_for};
use smcp_bench::procstat;
use smcp_bench::stats::{least_squares_slope, median, theil_sen_slope};
use smcp_bench::target::{Target, parse_loopback_url};
use smcp_bench::wire::{self, BodyCheck, PROGRESS_EVENTS, PROGRESS_TOOL};
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

const CLIENT: &str = "soak";
/// Error messages kept verbatim in the report (all are counted).
const KEEP_ERRORS: usize = 20;

/// Soak driver: mixed load against one smcpd, then a verdict.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Server address (the endpoint is `/mcp`); must be loopback.
    #[arg(long)]
    addr: SocketAddr,
    /// Server process id, for RSS, fds and CPU from /proc.
    #[arg(long)]
    server_pid: u32,
    /// Seconds of load (after the streams are open).
    #[arg(long, default_value_t = 1800.0)]
    duration_secs: f64,
    /// Fraction of the load duration that is warm-up (excluded from the RSS fit).
    #[arg(long, default_value_t = 0.2)]
    warmup_fraction: f64,
    /// `subscriptions/listen` streams held open throughout.
    #[arg(long, default_value_t = 1000)]
    streams: usize,
    /// Streams being opened at once.
    #[arg(long, default_value_t = 100)]
    open_concurrency: usize,
    /// Echo requests per second, over all echo connections.
    #[arg(long, default_value_t = 300.0)]
    echo_rps: f64,
    /// Keep-alive connections carrying the echo load.
    #[arg(long, default_value_t = 8)]
    echo_connections: usize,
    /// Every Nth echo request is `progress_echo` with a progress token (SSE); 0 = never.
    #[arg(long, default_value_t = 10)]
    progress_every: u64,
    /// Multi round-trip rounds per second (two requests each).
    #[arg(long, default_value_t = 2.0)]
    mrtr_per_sec: f64,
    /// Seconds between catalog toggles.
    #[arg(long, default_value_t = 5.0)]
    toggle_secs: f64,
    /// Seconds a toggle's notification may take to reach every stream.
    #[arg(long, default_value_t = 10.0)]
    delivery_timeout_secs: f64,
    /// Seconds between samples of the server's RSS and fds.
    #[arg(long, default_value_t = 5.0)]
    sample_secs: f64,
    /// The RSS bound: growth after the warm-up, in MiB per 10 minutes.
    #[arg(long, default_value_t = 1.0)]
    max_rss_mib_per_10min: f64,
    /// Seconds to wait for the server's fds to return to the baseline after the load.
    #[arg(long, default_value_t = 30.0)]
    fd_settle_secs: f64,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    /// Where the JSON report goes.
    #[arg(long, default_value = "target/soak/soak.json")]
    out: PathBuf,
}

/// What every task shares.
struct Ctx {
    target: Target,
    timeout: Duration,
    stop: CancellationToken,
    next_id: AtomicU64,
    echo_ok: AtomicU64,
    progress_ok: AtomicU64,
    mrtr_rounds: AtomicU64,
    errors: AtomicU64,
    first_errors: Mutex<Vec<String>>,
    /// `notifications/tools/list_changed` received, per stream.
    received: Vec<AtomicU64>,
    /// Streams that were acknowledged.
    streams_open: AtomicUsize,
}

impl Ctx {
    fn error(&self, what: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let mut first = self
            .first_errors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if first.len() < KEEP_ERRORS {
            first.push(what);
        }
    }

    fn id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }
}

/// One reading of the server's /proc.
#[derive(Debug, Clone, Copy, Serialize)]
struct Sample {
    /// Seconds since the load started (negative before).
    t_s: f64,
    rss_kib: u64,
    fds: usize,
    cpu_s: f64,
}

fn sample(pid: u32, t0: Instant) -> anyhow::Result<Sample> {
    let now = Instant::now();
    let t_s = if now >= t0 {
        (now - t0).as_secs_f64()
    } else {
        -(t0 - now).as_secs_f64()
    };
    Ok(Sample {
        t_s,
        rss_kib: procstat::rss_bytes(pid).context("server RSS (is it running?)")? / 1024,
        fds: procstat::open_fds(pid).context("server fds")?,
        cpu_s: procstat::cpu_time_us(pid).context("server CPU")? as f64 / 1e6,
    })
}

/// Per toggle: how many streams had its notification by the deadline, and when the last did.
#[derive(Debug, Clone, Copy, Serialize)]
struct Delivery {
    delivered: usize,
    last_ms: f64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if !(args.duration_secs > 0.0 && args.sample_secs > 0.0 && args.toggle_secs > 0.0) {
        bail!("--duration-secs, --sample-secs and --toggle-secs must be positive");
    }
    if !(0.0..1.0).contains(&args.warmup_fraction) {
        bail!("--warmup-fraction must be in [0, 1)");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = rt.block_on(run(&args))?;
    if let Some(dir) = args.out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&args.out, serde_json::to_string_pretty(&report)? + "\n")
        .with_context(|| format!("writing {}", args.out.display()))?;
    print_summary(&report, &args);
    println!("report: {}", args.out.display());
    if report["pass"] != json!(true) {
        std::process::exit(1);
    }
    Ok(())
}

async fn run(args: &Args) -> anyhow::Result<Value> {
    let target =
        parse_loopback_url(&format!("http://{}/mcp", args.addr)).map_err(anyhow::Error::msg)?;
    let pid = args.server_pid;
    let ctx = Arc::new(Ctx {
        target,
        timeout: Duration::from_secs_f64(args.timeout),
        stop: CancellationToken::new(),
        next_id: AtomicU64::new(1),
        echo_ok: AtomicU64::new(0),
        progress_ok: AtomicU64::new(0),
        mrtr_rounds: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        first_errors: Mutex::new(Vec::new()),
        received: (0..args.streams).map(|_| AtomicU64::new(0)).collect(),
        streams_open: AtomicUsize::new(0),
    });
    let start = Instant::now();
    let baseline = sample(pid, start)?;

    // 1. The listen streams.
    let close_streams = CancellationToken::new();
    let gate = Arc::new(Semaphore::new(args.open_concurrency.max(1)));
    let opened_or_failed = Arc::new(AtomicUsize::new(0));
    let mut stream_tasks = Vec::with_capacity(args.streams);
    for i in 0..args.streams {
        let (ctx, gate, done, close) = (
            ctx.clone(),
            gate.clone(),
            opened_or_failed.clone(),
            close_streams.clone(),
        );
        stream_tasks.push(tokio::spawn(async move {
            listen_stream(i, &ctx, gate, &done, close).await;
        }));
    }
    while opened_or_failed.load(Ordering::Relaxed) < args.streams {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let open_time = start.elapsed();
    let streams_open = ctx.streams_open.load(Ordering::Relaxed);
    eprintln!(
        "soak: {streams_open}/{} listen streams open in {:.1} s; load for {:.0} s",
        args.streams,
        open_time.as_secs_f64(),
        args.duration_secs
    );

    // 2. The load.
    let t0 = Instant::now();
    let opened = sample(pid, t0)?;
    let mut load_tasks = Vec::new();
    let connections = args.echo_connections.max(1);
    if args.echo_rps > 0.0 {
        let period = Duration::from_secs_f64(connections as f64 / args.echo_rps);
        for c in 0..connections {
            let ctx = ctx.clone();
            let offset = period.mul_f64(c as f64 / connections as f64);
            let every = args.progress_every;
            load_tasks.push(tokio::spawn(async move {
                echo_loop(&ctx, period, offset, every).await;
            }));
        }
    }
    if args.mrtr_per_sec > 0.0 {
        let ctx = ctx.clone();
        let period = Duration::from_secs_f64(1.0 / args.mrtr_per_sec);
        load_tasks.push(tokio::spawn(async move { mrtr_loop(&ctx, period).await }));
    }
    let toggler = {
        let ctx = ctx.clone();
        let period = Duration::from_secs_f64(args.toggle_secs);
        let deadline = Duration::from_secs_f64(args.delivery_timeout_secs);
        tokio::spawn(async move { toggle_loop(&ctx, period, deadline).await })
    };
    let sampler = {
        let stop = ctx.stop.clone();
        let period = Duration::from_secs_f64(args.sample_secs);
        tokio::spawn(async move {
            let mut samples = Vec::new();
            let mut tick = tokio::time::interval(period);
            tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    biased;
                    () = stop.cancelled() => break,
                    _ = tick.tick() => {}
                }
                match sample(pid, t0) {
                    Ok(s) => samples.push(s),
                    Err(e) => return Err(e),
                }
            }
            Ok(samples)
        })
    };
    let mut last_report = Instant::now();
    while t0.elapsed().as_secs_f64() < args.duration_secs {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if last_report.elapsed() >= Duration::from_secs(60) {
            last_report = Instant::now();
            eprintln!(
                "soak: {:.0} s: {} echo, {} MRTR rounds, {} errors",
                t0.elapsed().as_secs_f64(),
                ctx.echo_ok.load(Ordering::Relaxed) + ctx.progress_ok.load(Ordering::Relaxed),
                ctx.mrtr_rounds.load(Ordering::Relaxed),
                ctx.errors.load(Ordering::Relaxed)
            );
        }
    }
    let end = sample(pid, t0)?;
    ctx.stop.cancel();
    let load_secs = t0.elapsed().as_secs_f64();
    for task in load_tasks {
        task.await.context("a load task panicked")?;
    }
    let deliveries = toggler.await.context("the toggler panicked")?;
    let mut samples = sampler.await.context("the sampler panicked")??;
    samples.push(end);

    // 3. Close everything; the server's fds must come back to the baseline.
    close_streams.cancel();
    for task in stream_tasks {
        task.await.context("a stream task panicked")?;
    }
    let stopped = Instant::now();
    let settle = Duration::from_secs_f64(args.fd_settle_secs);
    let mut after = sample(pid, t0)?;
    while after.fds > baseline.fds && stopped.elapsed() < settle {
        tokio::time::sleep(Duration::from_millis(250)).await;
        after = sample(pid, t0)?;
    }
    let fd_settle_s = stopped.elapsed().as_secs_f64();

    Ok(verdict(
        args,
        &ctx,
        &Phases {
            baseline,
            opened,
            after,
            samples,
            deliveries,
            load_secs,
            open_secs: open_time.as_secs_f64(),
            fd_settle_s,
        },
    ))
}

/// One listen stream: opened under `gate`, then counting `tools/list_changed` until `close`.
async fn listen_stream(
    i: usize,
    ctx: &Ctx,
    gate: Arc<Semaphore>,
    done: &AtomicUsize,
    close: CancellationToken,
) {
    let addr = ctx.target.addr;
    let permit = gate.acquire_owned().await.ok();
    let opened = async {
        let mut stream = TcpStream::connect(addr).await?;
        let body = listen_body(CLIENT, i as u64, &json!({"toolsListChanged": true}));
        stream.write_all(&request(addr, &body, "")).await?;
        let mut pending = Vec::new();
        tokio::time::timeout(
            ctx.timeout,
            wait_for(
                &mut stream,
                &mut pending,
                "notifications/subscriptions/acknowledged",
            ),
        )
        .await
        .context("no acknowledgement in time")??;
        anyhow::Ok((stream, pending))
    }
    .await;
    drop(permit);
    let (mut stream, mut pending) = match opened {
        Ok(s) => {
            ctx.streams_open.fetch_add(1, Ordering::Relaxed);
            done.fetch_add(1, Ordering::Relaxed);
            s
        }
        Err(e) => {
            done.fetch_add(1, Ordering::Relaxed);
            ctx.error(format!("listen stream {i}: {e:#}"));
            return;
        }
    };
    loop {
        tokio::select! {
            biased;
            () = close.cancelled() => return,
            got = wait_for(&mut stream, &mut pending, "notifications/tools/list_changed") => match got {
                Ok(_) => {
                    ctx.received[i].fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => {
                    if !close.is_cancelled() {
                        ctx.error(format!("listen stream {i} ended early: {e:#}"));
                    }
                    return;
                }
            },
        }
    }
}

/// One echo connection: a call every `period`, starting after `offset`.
async fn echo_loop(ctx: &Ctx, period: Duration, offset: Duration, progress_every: u64) {
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + offset, period);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut conn: Option<Connection> = None;
    loop {
        tokio::select! {
            biased;
            () = ctx.stop.cancelled() => break,
            _ = tick.tick() => {}
        }
        let id = ctx.id();
        let progress = progress_every > 0 && id.is_multiple_of(progress_every);
        let tool = if progress { PROGRESS_TOOL } else { "echo" };
        let result = async {
            if conn.is_none() {
                conn = Some(client::connect(ctx.target.addr, ctx.timeout).await?);
            }
            let c = conn.as_mut().context("no connection")?;
            let body = Bytes::from(wire::tools_call_body(id, tool, progress.then_some(id)));
            let (status, body) = client::post_mcp(
                c,
                &ctx.target,
                "tools/call",
                Some(HeaderValue::from_static(tool)),
                None,
                body,
                ctx.timeout,
            )
            .await?;
            if status != StatusCode::OK {
                bail!("status {status}: {}", String::from_utf8_lossy(&body));
            }
            match wire::check_body(&body, progress.then_some(PROGRESS_EVENTS as usize)) {
                BodyCheck::Ok => Ok(()),
                bad => bail!("{bad:?}: {}", String::from_utf8_lossy(&body)),
            }
        }
        .await;
        match result {
            Ok(()) if progress => {
                ctx.progress_ok.fetch_add(1, Ordering::Relaxed);
            }
            Ok(()) => {
                ctx.echo_ok.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                ctx.error(format!("{tool}: {e:#}"));
                conn = None;
            }
        }
    }
}

fn tool_call(id: u64, tool: &str, arguments: &Value, capabilities: &Value) -> Value {
    let mut meta = meta(CLIENT);
    meta["io.modelcontextprotocol/clientCapabilities"] = capabilities.clone();
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"_meta": meta, "name": tool, "arguments": arguments}
    })
}

/// Multi round-trip rounds every `period`: `confirm_action` and `ask_llm` in turn.
async fn mrtr_loop(ctx: &Ctx, period: Duration) {
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut conn: Option<Connection> = None;
    for round in 0u64.. {
        tokio::select! {
            biased;
            () = ctx.stop.cancelled() => break,
            _ = tick.tick() => {}
        }
        let result = async {
            if conn.is_none() {
                conn = Some(client::connect(ctx.target.addr, ctx.timeout).await?);
            }
            let c = conn.as_mut().context("no connection")?;
            if round % 2 == 0 {
                confirm_round(ctx, c, round).await
            } else {
                sampling_round(ctx, c, round).await
            }
        }
        .await;
        match result {
            Ok(()) => {
                ctx.mrtr_rounds.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                ctx.error(format!("MRTR round {round}: {e:#}"));
                conn = None;
            }
        }
    }
}

/// The first request of a round: must ask for input `key` with `method`; returns the
/// `requestState` to send back.
async fn first_leg(
    ctx: &Ctx,
    c: &mut Connection,
    request: &Value,
    key: &str,
    method: &str,
) -> anyhow::Result<Value> {
    let tool = request["params"]["name"].as_str().unwrap_or_default();
    let r1 = client::call_json(c, &ctx.target, tool, request, ctx.timeout).await?;
    let result = &r1["result"];
    if result["resultType"] != "input_required" || result["inputRequests"][key]["method"] != method
    {
        bail!("{tool}: expected an {method} input request, got {r1}");
    }
    let state = result["requestState"].clone();
    if !state.is_string() {
        bail!("{tool}: no requestState in {r1}");
    }
    Ok(state)
}

async fn confirm_round(ctx: &Ctx, c: &mut Connection, round: u64) -> anyhow::Result<()> {
    let action = format!("soak step {round}");
    let caps = json!({"elicitation": {}});
    let mut request = tool_call(
        ctx.id(),
        "confirm_action",
        &json!({"action": action}),
        &caps,
    );
    let state = first_leg(ctx, c, &request, "confirm", "elicitation/create").await?;
    request["id"] = json!(ctx.id());
    request["params"]["inputResponses"] =
        json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    request["params"]["requestState"] = state;
    let r2 = client::call_json(c, &ctx.target, "confirm_action", &request, ctx.timeout).await?;
    let want = format!("done: {action}");
    if r2["result"]["content"][0]["text"] != want.as_str() {
        bail!("confirm_action: expected {want:?}, got {r2}");
    }
    Ok(())
}

async fn sampling_round(ctx: &Ctx, c: &mut Connection, round: u64) -> anyhow::Result<()> {
    let caps = json!({"sampling": {}});
    let mut request = tool_call(
        ctx.id(),
        "ask_llm",
        &json!({"text": format!("soak text {round}")}),
        &caps,
    );
    let state = first_leg(ctx, c, &request, "summary", "sampling/createMessage").await?;
    let summary = format!("summary {round}");
    request["id"] = json!(ctx.id());
    request["params"]["inputResponses"] = json!({"summary": {
        "role": "assistant", "content": {"type": "text", "text": summary},
        "model": "soak-model", "stopReason": "endTurn"}});
    request["params"]["requestState"] = state;
    let r2 = client::call_json(c, &ctx.target, "ask_llm", &request, ctx.timeout).await?;
    let want = format!("{summary} (model: soak-model)");
    if r2["result"]["content"][0]["text"] != want.as_str() {
        bail!("ask_llm: expected {want:?}, got {r2}");
    }
    Ok(())
}

/// A toggle every `period` until stop; after each, waits (up to `deadline`) until every
/// stream has received it. Returns one [`Delivery`] per toggle.
async fn toggle_loop(ctx: &Ctx, period: Duration, deadline: Duration) -> Vec<Delivery> {
    let mut deliveries = Vec::new();
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    // The first tick is immediate: start one period in.
    tick.tick().await;
    let mut conn: Option<Connection> = None;
    let mut present = false;
    loop {
        tokio::select! {
            biased;
            () = ctx.stop.cancelled() => break,
            _ = tick.tick() => {}
        }
        let request = tool_call(ctx.id(), "toggle_extra", &json!({}), &json!({}));
        let sent = Instant::now();
        let result = async {
            if conn.is_none() {
                conn = Some(client::connect(ctx.target.addr, ctx.timeout).await?);
            }
            let c = conn.as_mut().context("no connection")?;
            let r =
                client::call_json(c, &ctx.target, "toggle_extra", &request, ctx.timeout).await?;
            let want = if present {
                "removed the extra tool"
            } else {
                "added the extra tool"
            };
            if r["result"]["content"][0]["text"] != want {
                bail!("toggle_extra: expected {want:?}, got {r}");
            }
            Ok(())
        }
        .await;
        if let Err(e) = result {
            // The catalog is in an unknown state: later toggles would be misjudged.
            ctx.error(format!("toggle {}: {e:#}", deliveries.len() + 1));
            break;
        }
        present = !present;
        let k = deliveries.len() as u64 + 1;
        let count = || {
            ctx.received
                .iter()
                .filter(|r| r.load(Ordering::Relaxed) >= k)
                .count()
        };
        let mut delivered = count();
        while delivered < ctx.received.len() && sent.elapsed() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
            delivered = count();
        }
        deliveries.push(Delivery {
            delivered,
            last_ms: sent.elapsed().as_secs_f64() * 1000.0,
        });
    }
    deliveries
}

/// What the run measured, phase by phase.
struct Phases {
    baseline: Sample,
    opened: Sample,
    after: Sample,
    samples: Vec<Sample>,
    deliveries: Vec<Delivery>,
    load_secs: f64,
    open_secs: f64,
    fd_settle_s: f64,
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn verdict(args: &Args, ctx: &Ctx, p: &Phases) -> Value {
    let streams = args.streams;
    let warmup_s = p.load_secs * args.warmup_fraction;
    // RSS after the warm-up, in MiB against minutes.
    let window: Vec<(f64, f64)> = p
        .samples
        .iter()
        .filter(|s| s.t_s >= warmup_s)
        .map(|s| (s.t_s / 60.0, mib(s.rss_kib)))
        .collect();
    let per_10min = |slope_per_min: Option<f64>| slope_per_min.map(|s| s * 10.0);
    let slope = per_10min(theil_sen_slope(&window));
    let ols = per_10min(least_squares_slope(&window));
    // Windowed medians: the first and last quarter of the window.
    let quarter = (window.len() / 4).max(1);
    let (first_q, last_q) = (
        &window[..quarter.min(window.len())],
        &window[window.len().saturating_sub(quarter)..],
    );
    let med = |pts: &[(f64, f64)], f: fn(&(f64, f64)) -> f64| {
        median(&pts.iter().map(f).collect::<Vec<_>>())
    };
    let windowed = match (
        med(first_q, |p| p.0),
        med(first_q, |p| p.1),
        med(last_q, |p| p.0),
        med(last_q, |p| p.1),
    ) {
        (Some(t1), Some(m1), Some(t2), Some(m2)) if t2 > t1 => {
            Some((m1, m2, (m2 - m1) / (t2 - t1) * 10.0))
        }
        _ => None,
    };
    let rss_ok = window.len() >= 3 && slope.is_some_and(|s| s < args.max_rss_mib_per_10min);

    let fds_ok = p.after.fds <= p.baseline.fds;
    let max_fds = p.samples.iter().map(|s| s.fds).max().unwrap_or_default();
    let toggles = p.deliveries.len();
    let expected = toggles * streams;
    let delivered: usize = p.deliveries.iter().map(|d| d.delivered).sum();
    let counts: Vec<u64> = ctx
        .received
        .iter()
        .map(|r| r.load(Ordering::Relaxed))
        .collect();
    let extra: u64 = counts
        .iter()
        .map(|&c| c.saturating_sub(toggles as u64))
        .sum();
    let mut last_ms: Vec<f64> = p.deliveries.iter().map(|d| d.last_ms).collect();
    last_ms.sort_by(f64::total_cmp);
    let delivery_ok = toggles > 0 && delivered == expected && extra == 0;
    let errors = ctx.errors.load(Ordering::Relaxed);
    let errors_ok = errors == 0;
    let echo = ctx.echo_ok.load(Ordering::Relaxed);
    let progress = ctx.progress_ok.load(Ordering::Relaxed);
    let rounds = ctx.mrtr_rounds.load(Ordering::Relaxed);
    let first_errors = ctx
        .first_errors
        .lock()
        .map(|v| v.clone())
        .unwrap_or_default();
    let last = p.samples.last().copied().unwrap_or(p.opened);
    json!({
        "pass": rss_ok && fds_ok && errors_ok && delivery_ok,
        "checks": {"rss": rss_ok, "fds": fds_ok, "errors": errors_ok, "delivery": delivery_ok},
        "duration_s": p.load_secs,
        "warmup_s": warmup_s,
        "streams": {
            "requested": streams,
            "open": ctx.streams_open.load(Ordering::Relaxed),
            "open_time_s": p.open_secs,
        },
        "requests": {
            "echo": echo,
            "progress_echo": progress,
            "mrtr_rounds": rounds,
            "toggles": toggles,
            "total_http_requests": echo + progress + 2 * rounds + toggles as u64 + streams as u64,
            "echo_rps_target": args.echo_rps,
            "echo_rps": (echo + progress) as f64 / p.load_secs,
        },
        "notifications": {
            "expected": expected,
            "delivered": delivered,
            "missed": expected - delivered.min(expected),
            "duplicates": extra,
            "fanout_last_p50_ms": median(&last_ms),
            "fanout_last_max_ms": last_ms.last(),
        },
        "errors": errors,
        "first_errors": first_errors,
        "rss": {
            "method": "Theil-Sen slope (median of pairwise slopes) of the samples after the warm-up",
            "limit_mib_per_10min": args.max_rss_mib_per_10min,
            "slope_mib_per_10min": slope,
            "least_squares_mib_per_10min": ols,
            "window_samples": window.len(),
            "window_first_quarter_median_mib": windowed.map(|w| w.0),
            "window_last_quarter_median_mib": windowed.map(|w| w.1),
            "window_medians_growth_mib_per_10min": windowed.map(|w| w.2),
            "baseline_mib": mib(p.baseline.rss_kib),
            "streams_open_mib": mib(p.opened.rss_kib),
            "start_mib": window.first().map(|w| w.1),
            "end_mib": mib(last.rss_kib),
            "max_mib": p.samples.iter().map(|s| mib(s.rss_kib)).fold(0.0, f64::max),
            "after_load_mib": mib(p.after.rss_kib),
        },
        "fds": {
            "baseline": p.baseline.fds,
            "streams_open": p.opened.fds,
            "max_under_load": max_fds,
            "after_load": p.after.fds,
            "settle_s": p.fd_settle_s,
        },
        "server_cpu_s": last.cpu_s - p.opened.cpu_s,
        "samples": p.samples,
    })
}

fn print_summary(r: &Value, args: &Args) {
    let f = |v: &Value| {
        v.as_f64()
            .map_or_else(|| "-".to_owned(), |x| format!("{x:.3}"))
    };
    let ok = |v: &Value| if v == &json!(true) { "ok" } else { "FAIL" };
    println!(
        "soak: {:.0} s of load (warm-up {:.0} s), {} of {} listen streams",
        r["duration_s"].as_f64().unwrap_or_default(),
        r["warmup_s"].as_f64().unwrap_or_default(),
        r["streams"]["open"],
        r["streams"]["requested"]
    );
    println!(
        "  requests: {} echo + {} progress_echo ({} req/s, target {}), {} MRTR rounds, {} toggles",
        r["requests"]["echo"],
        r["requests"]["progress_echo"],
        f(&r["requests"]["echo_rps"]),
        args.echo_rps,
        r["requests"]["mrtr_rounds"],
        r["requests"]["toggles"]
    );
    println!(
        "  [{}] RSS: baseline {} MiB, streams open {} MiB, post-warm-up start {} MiB, end {} MiB; \
         slope {} MiB/10 min (limit {}; least squares {}, quarter medians {})",
        ok(&r["checks"]["rss"]),
        f(&r["rss"]["baseline_mib"]),
        f(&r["rss"]["streams_open_mib"]),
        f(&r["rss"]["start_mib"]),
        f(&r["rss"]["end_mib"]),
        f(&r["rss"]["slope_mib_per_10min"]),
        args.max_rss_mib_per_10min,
        f(&r["rss"]["least_squares_mib_per_10min"]),
        f(&r["rss"]["window_medians_growth_mib_per_10min"]),
    );
    println!(
        "  [{}] fds: baseline {}, with streams {}, max under load {}, after load {} ({} s to settle)",
        ok(&r["checks"]["fds"]),
        r["fds"]["baseline"],
        r["fds"]["streams_open"],
        r["fds"]["max_under_load"],
        r["fds"]["after_load"],
        f(&r["fds"]["settle_s"]),
    );
    println!(
        "  [{}] notifications: {} of {} delivered, {} duplicates; fan-out to the last stream p50 {} ms, max {} ms",
        ok(&r["checks"]["delivery"]),
        r["notifications"]["delivered"],
        r["notifications"]["expected"],
        r["notifications"]["duplicates"],
        f(&r["notifications"]["fanout_last_p50_ms"]),
        f(&r["notifications"]["fanout_last_max_ms"]),
    );
    println!("  [{}] errors: {}", ok(&r["checks"]["errors"]), r["errors"]);
    if let Some(errors) = r["first_errors"].as_array() {
        for e in errors {
            println!("    {}", e.as_str().unwrap_or_default());
        }
    }
    println!(
        "  verdict: {}",
        if r["pass"] == json!(true) {
            "PASS"
        } else {
            "FAIL"
        }
    );
}
