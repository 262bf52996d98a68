//! `bench-stdio`: echo round trips over stdio, `smcpd --stdio` against `stdio-baseline`.
//!
//! For each round and each number of requests in flight, each server is launched as a child
//! process (pinned to `--server-cpu` with taskset when it can be), sent echo `tools/call`s on
//! its stdin with `--inflight` of them outstanding at all times, and timed: round trips per
//! second, latency percentiles, and the server's CPU time per request (from
//! `/proc/PID/stat`). Every response must be the exact echo result bytes. Rounds interleave
//! the servers; the table shows medians and smcpd/baseline ratios, and the JSON report goes
//! to `--out`. `--io` picks how the servers do their stdio: through the runtime's reactor
//! (their default), tokio's blocking pool, or both (an A/B of the two in one run). Run it pinned to the load CPU (`scripts/bench stdio` does).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a CLI binary reports on stdout/stderr"
)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use clap::Parser;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use smcp_bench::procstat::cpu_time_us;
use smcp_bench::stats::{LatencySummary, median};
use smcp_bench::wire;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

#[derive(Debug, Parser)]
#[command(about = "Echo round trips over stdio: smcpd --stdio against stdio-baseline")]
struct Args {
    /// The smcpd binary (default: `smcpd` beside this program).
    #[arg(long)]
    smcpd: Option<PathBuf>,
    /// The baseline binary (default: `stdio-baseline` beside this program).
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// How the servers do their stdio, comma-separated: `reactor` (pipes through the runtime's
    /// reactor, their default) and `blocking` (tokio's blocking pool: `smcpd
    /// --stdio-blocking-io`, `stdio-baseline --blocking-io`). Each server is compared with the
    /// baseline doing the same; with both, a table of reactor over blocking follows.
    #[arg(long, value_delimiter = ',', default_value = "reactor")]
    io: Vec<Io>,
    /// Requests in flight, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16")]
    inflight: Vec<usize>,
    /// Rounds (each runs every server at every in-flight count).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Seconds measured per run.
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Seconds of warm-up per run, not measured.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// CPU the servers are pinned to (taskset), if it works.
    #[arg(long, default_value_t = 0)]
    server_cpu: usize,
    /// Do not pin the servers.
    #[arg(long)]
    no_pin: bool,
    /// Where the JSON report goes.
    #[arg(long, default_value = "target/bench/stdio.json")]
    out: PathBuf,
}

/// How a server reads and writes its stdio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
enum Io {
    Reactor,
    Blocking,
}

impl Io {
    fn name(self) -> &'static str {
        match self {
            Self::Reactor => "reactor",
            Self::Blocking => "blocking",
        }
    }
}

/// One measured run.
#[derive(Debug, Clone, Copy)]
struct Run {
    rps: f64,
    cpu_us_per_req: f64,
    p50_us: f64,
    p99_us: f64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(run(args))
}

async fn run(args: Args) -> anyhow::Result<()> {
    let pin = !args.no_pin && taskset_works(args.server_cpu).await;
    if !pin {
        eprintln!("bench-stdio: running the servers unpinned");
    }
    let dir = std::env::current_exe()?
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let baseline = args
        .baseline
        .clone()
        .unwrap_or_else(|| dir.join("stdio-baseline"));
    let smcpd = args.smcpd.clone().unwrap_or_else(|| dir.join("smcpd"));
    let smcpd_cmd = vec![
        smcpd.display().to_string(),
        "--stdio".into(),
        // As in the HTTP bench (no TLS there): no SEP-2631 extension wrapping calls.
        "--no-files".into(),
        "--threads".into(),
        "1".into(),
        "--log".into(),
        "warn".into(),
    ];
    let mut servers: Vec<(&str, Io, Vec<String>)> = Vec::new();
    for &io in &args.io {
        let mut base = vec![baseline.display().to_string()];
        let mut own = smcpd_cmd.clone();
        if io == Io::Blocking {
            base.push("--blocking-io".into());
            own.push("--stdio-blocking-io".into());
        }
        servers.push(("baseline", io, base));
        servers.push(("smcpd", io, own));
    }
    let mut runs: HashMap<(usize, &str, Io), Vec<Run>> = HashMap::new();
    for round in 0..args.rounds {
        for &inflight in &args.inflight {
            for (name, io, cmd) in &servers {
                let run = measure(cmd, pin.then_some(args.server_cpu), inflight, &args)
                    .await
                    .with_context(|| format!("{name} ({}) with {inflight} in flight", io.name()))?;
                eprintln!(
                    "round {} {name:8} {:8} inflight {inflight:2}: {:>9.0} req/s {:>6.2} µs CPU/req",
                    round + 1,
                    io.name(),
                    run.rps,
                    run.cpu_us_per_req
                );
                runs.entry((inflight, name, *io)).or_default().push(run);
            }
        }
    }
    let stat = |inflight: usize, name: &str, io: Io, f: fn(&Run) -> f64| {
        let values: Vec<f64> = runs
            .get(&(inflight, name, io))
            .map(|r| r.iter().map(f).collect())
            .unwrap_or_default();
        median(&values).unwrap_or(f64::NAN)
    };
    let mut report = Vec::new();
    println!(
        "{:8} {:8} {:>3} {:>10} {:>8} {:>8} {:>9} {:>8} {:>8}",
        "server", "io", "c", "req/s", "p50 µs", "p99 µs", "CPU µs/req", "×req/s", "×CPU"
    );
    for &inflight in &args.inflight {
        for (name, io, _) in &servers {
            let io = *io;
            let base_rps = stat(inflight, "baseline", io, |r| r.rps);
            let base_cpu = stat(inflight, "baseline", io, |r| r.cpu_us_per_req);
            let rps = stat(inflight, name, io, |r| r.rps);
            let cpu = stat(inflight, name, io, |r| r.cpu_us_per_req);
            let p50 = stat(inflight, name, io, |r| r.p50_us);
            let p99 = stat(inflight, name, io, |r| r.p99_us);
            println!(
                "{name:8} {:8} {inflight:>3} {rps:>10.0} {p50:>8.1} {p99:>8.1} {cpu:>9.2} {:>8.3} {:>8.3}",
                io.name(),
                rps / base_rps,
                cpu / base_cpu
            );
            report.push(json!({
                "server": name, "io": io.name(), "inflight": inflight, "rps": rps,
                "p50_us": p50, "p99_us": p99, "cpu_us_per_req": cpu,
                "rps_ratio": rps / base_rps, "cpu_ratio": cpu / base_cpu,
            }));
        }
    }
    if args.io.contains(&Io::Reactor) && args.io.contains(&Io::Blocking) {
        println!("reactor over blocking, each server against itself:");
        println!(
            "{:8} {:>3} {:>8} {:>8} {:>8}",
            "server", "c", "×req/s", "×p50", "×CPU"
        );
        for &inflight in &args.inflight {
            for name in ["baseline", "smcpd"] {
                let ratio = |f: fn(&Run) -> f64| {
                    stat(inflight, name, Io::Reactor, f) / stat(inflight, name, Io::Blocking, f)
                };
                println!(
                    "{name:8} {inflight:>3} {:>8.3} {:>8.3} {:>8.3}",
                    ratio(|r| r.rps),
                    ratio(|r| r.p50_us),
                    ratio(|r| r.cpu_us_per_req)
                );
            }
        }
    }
    if let Some(dir) = args.out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&args.out, serde_json::to_vec_pretty(&Value::from(report))?)?;
    Ok(())
}

async fn taskset_works(cpu: usize) -> bool {
    Command::new("taskset")
        .args(["-c", &cpu.to_string(), "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .is_ok_and(|s| s.success())
}

/// Launches the server, drives it for warm-up plus the measured time, and stops it.
async fn measure(
    cmd: &[String],
    cpu: Option<usize>,
    inflight: usize,
    args: &Args,
) -> anyhow::Result<Run> {
    let mut command = match cpu {
        Some(cpu) => {
            let mut c = Command::new("taskset");
            c.arg("-c").arg(cpu.to_string()).args(cmd);
            c
        }
        None => {
            let mut c = Command::new(&cmd[0]);
            c.args(&cmd[1..]);
            c
        }
    };
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot start {}", cmd[0]))?;
    let pid = child.id().context("the server has no pid")?;
    let stdin = child.stdin.take().context("no stdin")?;
    let stdout = child.stdout.take().context("no stdout")?;
    let mut load = Load::new(stdin, stdout);
    let warmup = Duration::from_secs_f64(args.warmup);
    load.drive(inflight, warmup, false).await?;
    let cpu_before = cpu_time_us(pid).context("cannot read the server's CPU time")?;
    let measured = load
        .drive(inflight, Duration::from_secs_f64(args.duration), true)
        .await?;
    let cpu_after = cpu_time_us(pid).context("cannot read the server's CPU time")?;
    load.finish(&mut child).await?;
    let mut latencies = measured.latencies_ns;
    let summary = LatencySummary::from_nanos(&mut latencies).context("no requests completed")?;
    let done = measured.completed as f64;
    Ok(Run {
        rps: done / measured.elapsed.as_secs_f64(),
        cpu_us_per_req: (cpu_after.saturating_sub(cpu_before)) as f64 / done,
        p50_us: summary.p50_us,
        p99_us: summary.p99_us,
    })
}

struct Measured {
    completed: u64,
    elapsed: Duration,
    latencies_ns: Vec<u64>,
}

/// The client side: requests out with their send times, responses checked and timed.
struct Load {
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
    next_id: u64,
    sent_at: HashMap<u64, Instant>,
    line: Vec<u8>,
    expected: Vec<u8>,
}

impl Load {
    fn new(stdin: ChildStdin, stdout: ChildStdout) -> Self {
        Self {
            input: BufWriter::with_capacity(64 * 1024, stdin),
            output: BufReader::with_capacity(64 * 1024, stdout),
            next_id: 1,
            sent_at: HashMap::new(),
            line: Vec::with_capacity(1024),
            expected: Vec::with_capacity(1024),
        }
    }

    async fn send(&mut self) -> anyhow::Result<()> {
        let id = self.next_id;
        self.next_id += 1;
        let mut body = wire::tools_call_body(id, "echo", None).into_bytes();
        body.push(b'\n');
        self.sent_at.insert(id, Instant::now());
        self.input.write_all(&body).await?;
        Ok(())
    }

    /// Keeps `inflight` requests outstanding for `time`, then lets the outstanding ones finish.
    async fn drive(
        &mut self,
        inflight: usize,
        time: Duration,
        record: bool,
    ) -> anyhow::Result<Measured> {
        let start = Instant::now();
        let mut measured = Measured {
            completed: 0,
            elapsed: Duration::ZERO,
            latencies_ns: Vec::new(),
        };
        while self.sent_at.len() < inflight {
            self.send().await?;
        }
        self.input.flush().await?;
        while !self.sent_at.is_empty() {
            let latency = self.receive().await?;
            if record {
                measured.completed += 1;
                measured.latencies_ns.push(latency);
            }
            if start.elapsed() < time {
                self.send().await?;
            }
            if self.output.buffer().is_empty() {
                self.input.flush().await?;
            }
        }
        measured.elapsed = start.elapsed();
        Ok(measured)
    }

    /// Reads one response, checks it is the exact echo result, returns its latency (ns).
    async fn receive(&mut self) -> anyhow::Result<u64> {
        self.line.clear();
        if self.output.read_until(b'\n', &mut self.line).await? == 0 {
            bail!("the server closed its output");
        }
        let response: Value = serde_json::from_slice(&self.line)
            .with_context(|| format!("not JSON: {}", String::from_utf8_lossy(&self.line)))?;
        let id = response["id"]
            .as_u64()
            .with_context(|| format!("no id: {response}"))?;
        let sent = self
            .sent_at
            .remove(&id)
            .with_context(|| format!("unexpected id {id}"))?;
        let latency = u64::try_from(sent.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let raw_id = RawValue::from_string(id.to_string())?;
        self.expected.clear();
        wire::write_echo_result(&mut self.expected, &raw_id, wire::ECHO_TEXT);
        self.expected.push(b'\n');
        if self.line != self.expected {
            bail!(
                "response differs from the echo result:\n  got      {}\n  expected {}",
                String::from_utf8_lossy(&self.line).trim_end(),
                String::from_utf8_lossy(&self.expected).trim_end()
            );
        }
        Ok(latency)
    }

    /// Closes the server's stdin and waits for it to exit.
    async fn finish(self, child: &mut Child) -> anyhow::Result<()> {
        drop(self.input);
        match tokio::time::timeout(Duration::from_secs(10), child.wait()).await {
            Ok(status) => {
                let status = status?;
                if !status.success() {
                    bail!("the server exited with {status}");
                }
                Ok(())
            }
            Err(_) => bail!("the server did not exit within 10 s of its stdin closing"),
        }
    }
}
