//! `smcp-load`: a load generator for MCP 2026-07-28 `tools/call` over Streamable HTTP.
//!
//! Opens `-c` HTTP/1.1 keep-alive connections to a loopback URL; each runs requests
//! back-to-back. After a warm-up it records every request's latency for `--duration` seconds
//! (or until `--requests` have completed), reads every body to the end, checks status 200 and
//! a final `"result"` (and, for the progress case, the number of progress notifications),
//! and prints one JSON line ([`smcp_bench::report::LoadReport`]). Any error makes the run
//! invalid: the line says `"valid":false` and the exit status is 1.
//!
//! With `--dpop-key` (and `--bearer`, a DPoP-bound token) every request carries
//! `Authorization: DPoP …` and a fresh DPoP proof, from a pool signed before the run starts
//! (see [`smcp_bench::dpop`]).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a CLI binary reports on stdout/stderr"
)]

use anyhow::{Context as _, bail};
use bytes::Bytes;
use clap::Parser;
use http::{HeaderValue, StatusCode};
use smcp_bench::client::{self, Connection};
use smcp_bench::dpop::{ProofPool, ProofSigner};
use smcp_bench::report::LoadReport;
use smcp_bench::stats::LatencySummary;
use smcp_bench::target::{Target, parse_loopback_url};
use smcp_bench::wire::{self, BodyCheck, PROGRESS_EVENTS, PROGRESS_TOOL};
use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Command line of `smcp-load`.
#[derive(Debug, Parser)]
#[command(
    version,
    about = "Load generator for MCP 2026-07-28 tools/call (loopback only)"
)]
struct Args {
    /// Target URL; must be http:// on a loopback address.
    #[arg(long, default_value = "http://127.0.0.1:8080/mcp")]
    url: String,
    /// Concurrent keep-alive connections, each running requests back-to-back (1..=1024).
    #[arg(short = 'c', long, default_value_t = 16)]
    connections: usize,
    /// Measured duration in seconds, after the warm-up (at most 600). With --requests, a cap.
    #[arg(short = 'd', long, default_value_t = 5.0)]
    duration: f64,
    /// Stop after this many measured requests instead (at most 100,000,000).
    #[arg(short = 'n', long)]
    requests: Option<u64>,
    /// Warm-up in seconds before measuring (at most 60); its requests are not recorded.
    #[arg(short = 'w', long, default_value_t = 1.0)]
    warmup: f64,
    /// Tool to call.
    #[arg(short = 't', long, default_value = "echo")]
    tool: String,
    /// Send a progressToken and expect 10 progress notifications (implied for progress_echo).
    #[arg(long)]
    progress: bool,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    /// Tokio worker threads; 0 = one per CPU this process may run on.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Send a single request and print the raw response body (for diffing servers).
    #[arg(long)]
    dump: bool,
    /// Speak MCP 2025-11-25: one session established up front (`initialize`,
    /// `notifications/initialized`), then every call with `Mcp-Session-Id` and
    /// `MCP-Protocol-Version: 2025-11-25` and no 2026-07-28 `_meta`.
    #[arg(long, conflicts_with = "progress")]
    legacy: bool,
    /// A bearer token sent on every request (`Authorization: Bearer …`, or `DPoP …` with
    /// --dpop-key).
    #[arg(long, env = "SMCP_LOAD_BEARER", hide_env_values = true)]
    bearer: Option<String>,
    /// The client's P-256 private key (PKCS#8 PEM file) the --bearer token is bound to
    /// (`cnf.jkt`): every request is sent with `Authorization: DPoP` and a DPoP proof of its
    /// own (ES256; a new `jti`, `iat`, `htm`, `htu` = --url, `ath`).
    #[arg(
        long,
        value_name = "FILE",
        env = "SMCP_LOAD_DPOP_KEY",
        requires = "bearer"
    )]
    dpop_key: Option<std::path::PathBuf>,
    /// DPoP proofs to sign before the run (default: enough for the warm-up and the measured
    /// time at 12,000 requests/s, or --requests plus the warm-up); the rest are signed
    /// during the run and counted in the report (`dpop_signed_inline`).
    #[arg(long, value_name = "N", requires = "dpop_key")]
    dpop_pool: Option<usize>,
    /// Once the pool is used up, send its proofs again instead of signing new ones: only
    /// against a server that does not check proofs (the baseline); one that does refuses a
    /// replayed `jti`.
    #[arg(long, requires = "dpop_key")]
    dpop_reuse: bool,
}

/// The request rate the default DPoP proof pool is sized for (see `--dpop-pool`): about
/// twice what smcpd serves with `--auth-dpop-required` on the 2-core machine it was measured
/// on (signing the pool takes the load generator about 36 µs per proof).
const DPOP_POOL_RATE: f64 = 12_000.0;

/// The longest warm-up plus duration with DPoP proofs: they are signed before the run and
/// the server refuses proofs older than its max age (5 minutes by default).
const DPOP_MAX_RUN_S: f64 = 240.0;

/// Everything the connection tasks share.
#[derive(Debug)]
struct Plan {
    target: Target,
    tool: String,
    tool_header: HeaderValue,
    progress: bool,
    timeout: Duration,
    measure_start: Instant,
    deadline: Instant,
    /// Measured requests still to start in `--requests` mode (may go negative).
    budget: Option<AtomicI64>,
    next_id: AtomicU64,
    /// `--legacy`: speak 2025-11-25.
    legacy: bool,
    /// With `--legacy`, the session every call belongs to (`None` against a server without
    /// sessions, the baseline).
    session: Option<HeaderValue>,
    /// With `--dpop-key`, the proofs (one per request).
    dpop: Option<ProofPool>,
}

/// What one connection task measured.
#[derive(Debug, Default)]
struct Tally {
    latencies_ns: Vec<u64>,
    ok_total: u64,
    errors: u64,
    first_error: Option<String>,
    last_done: Option<Instant>,
}

/// Stop a connection after this many errors: the run is invalid anyway.
const MAX_ERRORS_PER_CONN: u64 = 100;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut target = parse_loopback_url(&args.url).map_err(anyhow::Error::msg)?;
    if let Some(token) = &args.bearer {
        let scheme = if args.dpop_key.is_some() {
            "DPoP"
        } else {
            "Bearer"
        };
        target.authorization = Some(
            HeaderValue::from_str(&format!("{scheme} {token}"))
                .context("--bearer is not a valid header value")?,
        );
    }
    if !(1..=1024).contains(&args.connections) {
        bail!("--connections must be in 1..=1024");
    }
    if !(args.duration > 0.0 && args.duration <= 600.0) {
        bail!("--duration must be in (0, 600] seconds");
    }
    if !(0.0..=60.0).contains(&args.warmup) {
        bail!("--warmup must be in [0, 60] seconds");
    }
    if args.requests.is_some_and(|n| n == 0 || n > 100_000_000) {
        bail!("--requests must be in 1..=100000000");
    }
    if !(args.timeout > 0.0 && args.timeout <= 600.0) {
        bail!("--timeout must be in (0, 600] seconds");
    }
    if args.dpop_key.is_some() && args.warmup + args.duration > DPOP_MAX_RUN_S {
        bail!(
            "with --dpop-key, --warmup + --duration must be at most {DPOP_MAX_RUN_S} s: the \
             proofs are signed before the run and a server refuses old ones"
        );
    }
    let threads = match args.threads {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    };
    let rt = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()?
    };
    if args.dump {
        return rt.block_on(dump(&args, target));
    }
    let report = rt.block_on(run(&args, target))?;
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &report)?;
    writeln!(out)?;
    out.flush()?;
    if !report.valid {
        if let Some(e) = &report.first_error {
            eprintln!("smcp-load: {} error(s); first: {e}", report.errors);
        } else {
            eprintln!("smcp-load: no request completed");
        }
        std::process::exit(1);
    }
    Ok(())
}

/// What the connections share; `pool`, the DPoP proofs to sign now (with `--dpop-key`).
async fn plan(
    args: &Args,
    target: Target,
    warmup: Duration,
    duration: Duration,
    pool: usize,
) -> anyhow::Result<Plan> {
    let timeout = Duration::from_secs_f64(args.timeout);
    let session = if args.legacy {
        let mut sender = client::connect(target.addr, timeout).await?;
        client::open_session(&mut sender, &target, timeout).await?
    } else {
        None
    };
    let dpop = match (&args.dpop_key, &args.bearer) {
        (Some(path), Some(token)) => {
            let pem =
                std::fs::read(path).with_context(|| format!("--dpop-key {}", path.display()))?;
            let signer = ProofSigner::from_pem(&pem, &args.url, token)
                .with_context(|| format!("--dpop-key {}", path.display()))?;
            Some(ProofPool::new(signer, pool, args.dpop_reuse)?)
        }
        _ => None,
    };
    let now = Instant::now();
    Ok(Plan {
        legacy: args.legacy,
        session,
        target,
        tool_header: HeaderValue::from_str(&args.tool)
            .context("tool name is not a valid header value")?,
        tool: args.tool.clone(),
        progress: args.progress || args.tool == PROGRESS_TOOL,
        timeout: Duration::from_secs_f64(args.timeout),
        measure_start: now + warmup,
        deadline: now + warmup + duration,
        budget: args
            .requests
            .map(|n| AtomicI64::new(i64::try_from(n).unwrap_or(i64::MAX))),
        next_id: AtomicU64::new(1),
        dpop,
    })
}

/// The size of the DPoP proof pool of a run (`--dpop-pool`, else its default).
fn pool_size(args: &Args) -> usize {
    if let Some(n) = args.dpop_pool {
        return n;
    }
    let seconds = match args.requests {
        Some(_) => args.warmup,
        None => args.warmup + args.duration,
    };
    let requests = usize::try_from(args.requests.unwrap_or(0)).unwrap_or(usize::MAX);
    // Bounded: --warmup ≤ 60 and --duration ≤ 600 are checked before.
    ((seconds * DPOP_POOL_RATE).ceil() as usize).saturating_add(requests)
}

async fn dump(args: &Args, target: Target) -> anyhow::Result<()> {
    // One request: its proof is signed when it is sent.
    let plan = plan(args, target, Duration::ZERO, Duration::from_secs(1), 0).await?;
    let mut sender = connect(&plan).await?;
    let (status, body) = call(&plan, &mut sender).await?;
    let mut out = std::io::stdout().lock();
    out.write_all(&body)?;
    out.flush()?;
    if status != StatusCode::OK {
        bail!("status {status}");
    }
    Ok(())
}

async fn run(args: &Args, target: Target) -> anyhow::Result<LoadReport> {
    let warmup = Duration::from_secs_f64(args.warmup);
    let duration = Duration::from_secs_f64(args.duration);
    // The load's CPU as bench-driver sees it includes signing the DPoP proofs ahead.
    let cpu_start = smcp_bench::procstat::cpu_time_us(std::process::id());
    let plan = Arc::new(plan(args, target, warmup, duration, pool_size(args)).await?);
    let cpu0 = smcp_bench::procstat::cpu_time_us(std::process::id());
    let wall0 = Instant::now();
    let mut tasks = Vec::with_capacity(args.connections);
    for _ in 0..args.connections {
        let plan = Arc::clone(&plan);
        tasks.push(tokio::spawn(async move { connection(&plan).await }));
    }
    let mut all = Tally::default();
    for t in tasks {
        let tally = t.await.context("connection task panicked")?;
        all.latencies_ns.extend_from_slice(&tally.latencies_ns);
        all.ok_total += tally.ok_total;
        all.errors += tally.errors;
        if all.first_error.is_none() {
            all.first_error = tally.first_error;
        }
        all.last_done = all.last_done.max(tally.last_done);
    }
    let wall = wall0.elapsed().as_secs_f64();
    let cpu1 = smcp_bench::procstat::cpu_time_us(std::process::id());
    let cpu_us = |from: Option<u64>| match (from, cpu1) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => 0,
    };
    let load_cpu_us = cpu_us(cpu_start);
    let load_cpu_util = if wall > 0.0 {
        cpu_us(cpu0) as f64 / 1e6 / wall
    } else {
        0.0
    };
    let measured = if plan.budget.is_some() {
        all.last_done.map_or(0.0, |t| {
            t.saturating_duration_since(plan.measure_start)
                .as_secs_f64()
        })
    } else {
        duration.as_secs_f64()
    };
    let requests = all.latencies_ns.len() as u64;
    let lat = LatencySummary::from_nanos(&mut all.latencies_ns);
    let rps = if measured > 0.0 {
        requests as f64 / measured
    } else {
        0.0
    };
    Ok(LoadReport {
        url: args.url.clone(),
        tool: plan.tool.clone(),
        progress: plan.progress,
        connections: args.connections,
        duration_s: measured,
        requests,
        requests_total: all.ok_total,
        errors: all.errors,
        first_error: all.first_error,
        rps,
        p50_us: lat.map_or(0.0, |l| l.p50_us),
        p90_us: lat.map_or(0.0, |l| l.p90_us),
        p99_us: lat.map_or(0.0, |l| l.p99_us),
        max_us: lat.map_or(0.0, |l| l.max_us),
        mean_us: lat.map_or(0.0, |l| l.mean_us),
        load_cpu_util,
        load_cpu_us,
        dpop_signed_inline: plan.dpop.as_ref().map(ProofPool::inline),
        valid: all.errors == 0 && requests > 0,
    })
}

/// One keep-alive connection running requests back-to-back until the plan says stop.
async fn connection(plan: &Plan) -> Tally {
    let mut tally = Tally::default();
    let mut sender: Option<Connection> = None;
    loop {
        let t0 = Instant::now();
        if t0 >= plan.deadline || tally.errors >= MAX_ERRORS_PER_CONN {
            break;
        }
        let measuring = t0 >= plan.measure_start;
        if measuring
            && let Some(budget) = &plan.budget
            && budget.fetch_sub(1, Ordering::Relaxed) <= 0
        {
            break;
        }
        let result = async {
            if sender.is_none() {
                sender = Some(connect(plan).await?);
            }
            match sender.as_mut() {
                Some(s) => call(plan, s).await,
                None => bail!("no connection"),
            }
        }
        .await;
        let t1 = Instant::now();
        let outcome = result.and_then(|(status, body)| {
            if status != StatusCode::OK {
                bail!("status {status}: {}", String::from_utf8_lossy(&body));
            }
            let expect = plan.progress.then_some(PROGRESS_EVENTS as usize);
            match wire::check_body(&body, expect) {
                BodyCheck::Ok => Ok(()),
                bad => bail!("{bad:?}: {}", String::from_utf8_lossy(&body)),
            }
        });
        match outcome {
            Ok(()) => {
                tally.ok_total += 1;
                if measuring && (plan.budget.is_some() || t1 <= plan.deadline) {
                    tally
                        .latencies_ns
                        .push(u64::try_from((t1 - t0).as_nanos()).unwrap_or(u64::MAX));
                    tally.last_done = Some(t1);
                }
            }
            Err(e) => {
                tally.errors += 1;
                if tally.first_error.is_none() {
                    tally.first_error = Some(format!("{e:#}"));
                }
                // Start over on a fresh connection; pause so a dead server is not hammered.
                sender = None;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    tally
}

async fn connect(plan: &Plan) -> anyhow::Result<Connection> {
    client::connect(plan.target.addr, plan.timeout).await
}

/// Sends one `tools/call` and reads the whole response body.
async fn call(plan: &Plan, sender: &mut Connection) -> anyhow::Result<(StatusCode, Bytes)> {
    let id = plan.next_id.fetch_add(1, Ordering::Relaxed);
    if plan.legacy {
        let body = wire::legacy_tools_call_body(id, &plan.tool);
        let (status, body, _) = client::post_legacy(
            sender,
            &plan.target,
            plan.session.as_ref(),
            Bytes::from(body),
            plan.timeout,
        )
        .await?;
        return Ok((status, body));
    }
    let body = wire::tools_call_body(id, &plan.tool, plan.progress.then_some(id));
    let proof = plan.dpop.as_ref().map(ProofPool::take).transpose()?;
    client::post_mcp(
        sender,
        &plan.target,
        "tools/call",
        Some(plan.tool_header.clone()),
        proof,
        Bytes::from(body),
        plan.timeout,
    )
    .await
}
