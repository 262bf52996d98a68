//! `bench-gateway`: what `smcpd gateway` costs. Echo through the gateway to an smcpd upstream
//! over HTTP and over stdio, against the same upstreams called directly, in interleaved
//! rounds of one run.
//!
//! Four targets, each round: the HTTP upstream directly (`smcp-load`), the gateway in front
//! of it, the gateway in front of `smcpd --stdio` (its own child), and an `smcpd --stdio`
//! called directly over its pipes (this binary writes the requests and times each answer).
//! The servers are pinned to one CPU, the load to the other. Each process's CPU time is sampled
//! around every run, so the gateway's own CPU per call is measured apart from its upstream's.
//! The figures the gateway is held to (informational, never an exit status): at most 30 µs of
//! its own CPU per call, and at most 0.2 ms added to the median latency at one call in flight.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a CLI binary reports on stdout/stderr"
)]

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use clap::Parser;
use serde_json::{Value, json};
use smcp_bench::pin::pinned;
use smcp_bench::procstat::cpu_time_us;
use smcp_bench::report::LoadReport;
use smcp_bench::stats::median;
use smcp_bench::wire;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

/// Command line of `bench-gateway`.
#[derive(Debug, Parser)]
#[command(
    version,
    about = "Benchmark smcpd gateway against its upstreams called directly"
)]
struct Args {
    /// One short round at one and 16 calls in flight (a smoke run).
    #[arg(long)]
    quick: bool,
    /// Rounds per target (interleaved).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Measured seconds per run.
    #[arg(long, default_value_t = 3.0)]
    duration: f64,
    /// Warm-up seconds per run.
    #[arg(long, default_value_t = 0.5)]
    warmup: f64,
    /// Calls in flight (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1,16")]
    concurrency: Vec<usize>,
    /// Path to smcpd (default: next to this binary).
    #[arg(long)]
    smcpd: Option<PathBuf>,
    /// Path to smcp-load (default: next to this binary).
    #[arg(long)]
    load: Option<PathBuf>,
    /// CPU the servers are pinned to.
    #[arg(long, default_value_t = 0)]
    server_cpu: usize,
    /// CPU the load is pinned to.
    #[arg(long, default_value_t = 1)]
    load_cpu: usize,
    /// Do not pin with taskset.
    #[arg(long)]
    no_pin: bool,
    /// Where to write the JSON report.
    #[arg(long, default_value = "target/bench/gateway.json")]
    out: PathBuf,
}

/// One measured run.
#[derive(Debug, Clone, Copy, Default)]
struct Run {
    rps: f64,
    p50_us: f64,
    /// The gateway's own CPU per call (none for a direct target).
    gateway_cpu_us: Option<f64>,
    /// The upstream's CPU per call.
    upstream_cpu_us: f64,
}

/// A server process, killed when dropped.
struct Proc {
    child: Child,
    url: String,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn next_to_me(name: &str) -> anyhow::Result<PathBuf> {
    let me = std::env::current_exe()?;
    Ok(me.with_file_name(name))
}

/// Starts `smcpd ARGS… --listen 127.0.0.1:0` and waits for its `listening on` line.
fn start(smcpd: &Path, cpu: Option<usize>, leading: &[&str], log: &Path) -> anyhow::Result<Proc> {
    let mut child = pinned(smcpd, cpu)
        .args(leading)
        .args(["--listen", "127.0.0.1:0", "--log", "warn", "--threads", "1"])
        .args(["--clock-secs", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log)?)
        .spawn()
        .with_context(|| format!("starting {}", smcpd.display()))?;
    let stdout = child.stdout.take().context("no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().transpose()?.unwrap_or_default();
    let Some(url) = first.strip_prefix("listening on ") else {
        let _ = child.kill();
        bail!(
            "{} did not start: {first:?}; see {}",
            smcpd.display(),
            log.display()
        );
    };
    let url = url.trim().to_owned();
    // Keep draining stdout so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Ok(Proc { child, url })
}

/// The processes `pid` started.
fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
                found.extend(
                    text.split_whitespace()
                        .filter_map(|p| p.parse::<u32>().ok()),
                );
            }
        }
    }
    found
}

fn cpu(pid: u32) -> anyhow::Result<u64> {
    cpu_time_us(pid).with_context(|| format!("process {pid} is gone"))
}

/// One `smcp-load` run against `url`, with the CPU of `gateway` and `upstream` sampled around it.
fn http_run(
    args: &Args,
    load: &Path,
    url: &str,
    conc: usize,
    gateway: Option<u32>,
    upstream: u32,
) -> anyhow::Result<Run> {
    let g0 = gateway.map(cpu).transpose()?;
    let u0 = cpu(upstream)?;
    let out = pinned(load, (!args.no_pin).then_some(args.load_cpu))
        .args(["--url", url, "--tool", "echo", "--threads", "1"])
        .args(["-c", &conc.to_string()])
        .args(["--duration", &args.duration.to_string()])
        .args(["--warmup", &args.warmup.to_string()])
        .stderr(Stdio::piped())
        .output()
        .context("running smcp-load")?;
    let g1 = gateway.map(cpu).transpose()?;
    let u1 = cpu(upstream)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: LoadReport = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .with_context(|| {
            format!(
                "smcp-load printed no report: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )
        })?;
    if !out.status.success() || !report.valid || report.requests_total == 0 {
        bail!(
            "invalid run against {url}: {} error(s), first: {}",
            report.errors,
            report.first_error.unwrap_or_default()
        );
    }
    let calls = report.requests_total as f64;
    Ok(Run {
        rps: report.rps,
        p50_us: report.p50_us,
        gateway_cpu_us: g0.zip(g1).map(|(a, b)| b.saturating_sub(a) as f64 / calls),
        upstream_cpu_us: u1.saturating_sub(u0) as f64 / calls,
    })
}

/// `smcpd --stdio` called directly: `conc` echo calls in flight over its pipes for the
/// duration (after the warm-up), each answer checked and timed.
async fn stdio_run(args: &Args, smcpd: &Path, conc: usize) -> anyhow::Result<Run> {
    let cpu_pin = (!args.no_pin).then_some(args.server_cpu);
    let mut command = tokio::process::Command::from(pinned(smcpd, cpu_pin));
    let mut child = command
        .args(["--stdio", "--log", "warn", "--threads", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().context("no pid")?;
    let mut stdin = child.stdin.take().context("no stdin")?;
    let mut lines = tokio::io::BufReader::new(child.stdout.take().context("no stdout")?).lines();
    let sent: Arc<std::sync::Mutex<HashMap<u64, Instant>>> = Arc::default();
    let permits = Arc::new(tokio::sync::Semaphore::new(conc));
    let warm_until = Instant::now() + Duration::from_secs_f64(args.warmup);
    let end = warm_until + Duration::from_secs_f64(args.duration);
    let writer = {
        let sent = Arc::clone(&sent);
        let permits = Arc::clone(&permits);
        tokio::spawn(async move {
            let mut id = 0u64;
            while Instant::now() < end {
                let Ok(permit) = permits.acquire().await else {
                    break;
                };
                permit.forget();
                id += 1;
                let mut body = wire::tools_call_body(id, "echo", None).into_bytes();
                body.push(b'\n');
                sent.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(id, Instant::now());
                if stdin.write_all(&body).await.is_err() {
                    break;
                }
            }
            stdin
        })
    };
    let mut latencies = Vec::new();
    let mut measured_calls = 0u64;
    let mut cpu0 = None;
    let mut measure_start = None;
    loop {
        let pending = sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len();
        if Instant::now() >= end && pending == 0 {
            break;
        }
        let Some(line) = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .context("smcpd --stdio stopped answering")??
        else {
            bail!("smcpd --stdio closed its output");
        };
        let answer: Value = serde_json::from_str(&line)?;
        let id = answer["id"]
            .as_u64()
            .context("an answer without a numeric id")?;
        if answer["result"]["content"][0]["text"] != wire::ECHO_TEXT {
            bail!("not the echo result: {line}");
        }
        let started = sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&id)
            .context("an answer to no request")?;
        let now = Instant::now();
        if now >= warm_until && started >= warm_until {
            if cpu0.is_none() {
                cpu0 = Some(cpu(pid)?);
                measure_start = Some(now);
            }
            if now < end {
                latencies.push(now.duration_since(started).as_secs_f64() * 1e6);
                measured_calls += 1;
            }
        }
        permits.add_permits(1);
    }
    let cpu1 = cpu(pid)?;
    drop(writer.await?);
    let _ = child.wait().await;
    let window = measure_start.map_or(0.0, |s| end.saturating_duration_since(s).as_secs_f64());
    if measured_calls == 0 || window <= 0.0 {
        bail!("no calls measured over stdio");
    }
    latencies.sort_by(f64::total_cmp);
    Ok(Run {
        rps: measured_calls as f64 / window,
        p50_us: latencies[latencies.len() / 2],
        gateway_cpu_us: None,
        upstream_cpu_us: cpu1.saturating_sub(cpu0.unwrap_or(cpu1)) as f64 / measured_calls as f64,
    })
}

const TARGETS: [&str; 4] = [
    "http direct",
    "http via gateway",
    "stdio direct",
    "stdio via gateway",
];

fn main() -> anyhow::Result<()> {
    let mut args = Args::parse();
    if args.quick {
        args.rounds = 1;
        args.duration = 1.0;
        args.warmup = 0.2;
    }
    let smcpd = match &args.smcpd {
        Some(p) => p.clone(),
        None => next_to_me("smcpd")?,
    };
    let load = match &args.load {
        Some(p) => p.clone(),
        None => next_to_me("smcp-load")?,
    };
    let dir = args
        .out
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join("gateway-bench");
    std::fs::create_dir_all(&dir)?;
    let cpu_pin = (!args.no_pin).then_some(args.server_cpu);
    let upstream = start(&smcpd, cpu_pin, &[], &dir.join("upstream.log"))?;
    let http_config = dir.join("gateway-http.toml");
    std::fs::write(
        &http_config,
        format!(
            "[[upstream]]\nname = \"up\"\nprefix = \"\"\nurl = \"{}\"\n",
            upstream.url
        ),
    )?;
    let stdio_config = dir.join("gateway-stdio.toml");
    std::fs::write(
        &stdio_config,
        format!(
            "[[upstream]]\nname = \"up\"\nprefix = \"\"\ncommand = [{:?}, \"--stdio\", \"--log\", \"warn\", \"--threads\", \"1\"]\n",
            smcpd.display().to_string()
        ),
    )?;
    let as_str = |p: &Path| p.display().to_string();
    let http_config_s = as_str(&http_config);
    let stdio_config_s = as_str(&stdio_config);
    let gw_http = start(
        &smcpd,
        cpu_pin,
        &["gateway", "--config", &http_config_s],
        &dir.join("gateway-http.log"),
    )?;
    let gw_stdio = start(
        &smcpd,
        cpu_pin,
        &["gateway", "--config", &stdio_config_s],
        &dir.join("gateway-stdio.log"),
    )?;
    let gw_stdio_child = match children(gw_stdio.child.id())[..] {
        [pid] => pid,
        ref found => bail!("the stdio gateway should have one upstream process, has {found:?}"),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut runs: HashMap<(&str, usize), Vec<Run>> = HashMap::new();
    for round in 1..=args.rounds {
        for &conc in &args.concurrency {
            eprintln!("bench-gateway: round {round}, {conc} in flight");
            let up = upstream.child.id();
            let measured = [
                (
                    "http direct",
                    http_run(&args, &load, &upstream.url, conc, None, up)?,
                ),
                (
                    "http via gateway",
                    http_run(
                        &args,
                        &load,
                        &gw_http.url,
                        conc,
                        Some(gw_http.child.id()),
                        up,
                    )?,
                ),
                (
                    "stdio direct",
                    runtime.block_on(stdio_run(&args, &smcpd, conc))?,
                ),
                (
                    "stdio via gateway",
                    http_run(
                        &args,
                        &load,
                        &gw_stdio.url,
                        conc,
                        Some(gw_stdio.child.id()),
                        gw_stdio_child,
                    )?,
                ),
            ];
            for (target, run) in measured {
                runs.entry((target, conc)).or_default().push(run);
            }
        }
    }
    let med = |target: &str, conc: usize, f: fn(&Run) -> Option<f64>| -> Option<f64> {
        let values: Vec<f64> = runs.get(&(target, conc))?.iter().filter_map(f).collect();
        median(&values)
    };
    let mut table = Vec::new();
    println!(
        "{:<20} {:>4} {:>10} {:>9} {:>13} {:>14}",
        "target", "c", "req/s", "p50 µs", "gateway µs/call", "upstream µs/call"
    );
    for &conc in &args.concurrency {
        for target in TARGETS {
            let rps = med(target, conc, |r| Some(r.rps)).unwrap_or_default();
            let p50 = med(target, conc, |r| Some(r.p50_us)).unwrap_or_default();
            let gw = med(target, conc, |r| r.gateway_cpu_us);
            let up = med(target, conc, |r| Some(r.upstream_cpu_us)).unwrap_or_default();
            println!(
                "{target:<20} {conc:>4} {rps:>10.0} {p50:>9.1} {:>13} {up:>14.1}",
                gw.map_or_else(|| "-".to_owned(), |g| format!("{g:.1}"))
            );
            table.push(json!({
                "target": target, "concurrency": conc, "rps": rps, "p50_us": p50,
                "gateway_cpu_us_per_call": gw, "upstream_cpu_us_per_call": up,
            }));
        }
    }
    let mut verdicts = Vec::new();
    println!();
    for (via, direct) in [
        ("http via gateway", "http direct"),
        ("stdio via gateway", "stdio direct"),
    ] {
        let Some(&conc) = args.concurrency.first() else {
            break;
        };
        let gw_cpu = args
            .concurrency
            .iter()
            .filter_map(|&c| med(via, c, |r| r.gateway_cpu_us))
            .fold(0.0_f64, f64::max);
        let added = med(via, conc, |r| Some(r.p50_us)).unwrap_or_default()
            - med(direct, conc, |r| Some(r.p50_us)).unwrap_or_default();
        println!(
            "{via}: the gateway's own CPU per call at most {gw_cpu:.1} µs (bound 30), median \
             latency {added:+.1} µs at {conc} in flight (bound +200)"
        );
        verdicts.push(json!({
            "target": via, "gateway_cpu_us_per_call_max": gw_cpu,
            "added_p50_us": added, "at_concurrency": conc,
            "within_bounds": gw_cpu <= 30.0 && added <= 200.0,
        }));
    }
    let report = json!({
        "rounds": args.rounds, "duration_s": args.duration, "table": table, "verdicts": verdicts,
    });
    std::fs::write(&args.out, serde_json::to_string_pretty(&report)?)?;
    eprintln!("bench-gateway: report in {}", args.out.display());
    Ok(())
}
