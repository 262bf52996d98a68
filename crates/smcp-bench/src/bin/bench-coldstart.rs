//! `bench-coldstart`: exec to the first answered echo, and resident memory once idle, of
//! `smcpd` on its embedded defaults against the raw axum baseline (`bench-baseline`).
//!
//! Each run starts a server on a free loopback port and, from the moment before `spawn`,
//! tries to connect every 100 µs; once connected it sends one 2026-07-28 echo `tools/call`
//! (`Connection: close`) and reads the answer to its end. That span is the cold start. One
//! second after the answer (`--settle`), the server's resident set is read from `/proc`
//! (`VmRSS`, and its anonymous and file-backed parts), then it is killed. Runs alternate the
//! servers so drift in the machine hits both alike. The table shows median, p90 and best of
//! each and the smcpd/baseline ratio of the medians; the JSON report goes to `--out`.
//!
//! The client polls with a sleeping thread, so it competes little with a starting server; no
//! server is pinned (a `taskset` in front would be part of the exec being timed).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a CLI binary reports on stdout/stderr"
)]

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use clap::Parser;
use serde::Serialize;
use smcp_bench::procstat::{RssParts, rss_parts};
use smcp_bench::stats::{LatencySummary, median};
use smcp_bench::wire;

#[derive(Debug, Parser)]
#[command(about = "Exec to first answered echo and idle RSS: smcpd against the raw baseline")]
struct Args {
    /// The smcpd binary (default: `smcpd` beside this program).
    #[arg(long)]
    smcpd: Option<PathBuf>,
    /// The baseline binary (default: `bench-baseline` beside this program).
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Runs of each server.
    #[arg(long, default_value_t = 50)]
    runs: usize,
    /// Seconds between the first answer and reading the server's RSS.
    #[arg(long, default_value_t = 1.0)]
    settle: f64,
    /// Extra arguments for smcpd (after `--listen`), e.g. `--tasks`.
    #[arg(long, allow_hyphen_values = true, num_args = 1..)]
    smcpd_args: Vec<String>,
    /// Where the JSON report goes.
    #[arg(long, default_value = "target/bench/coldstart.json")]
    out: PathBuf,
}

/// One server's figures over its runs.
#[derive(Debug, Serialize)]
struct ServerReport {
    name: &'static str,
    binary: String,
    runs: usize,
    /// Exec to the end of the first echo answer, in microseconds.
    first_echo: LatencySummary,
    /// Fastest run, in microseconds.
    best_us: f64,
    /// Median `VmRSS` `--settle` seconds after the first answer, in bytes.
    rss_bytes: f64,
    /// Median `RssAnon` then (heap, stacks, relocated data: this process's own memory).
    rss_anon_bytes: f64,
    /// Median `RssFile` then (pages of the binary and its libraries mapped in, shared with
    /// the page cache).
    rss_file_bytes: f64,
}

#[derive(Debug, Serialize)]
struct Report {
    settle_s: f64,
    servers: Vec<ServerReport>,
    /// smcpd's median cold start over the baseline's.
    first_echo_ratio: f64,
    /// smcpd's median RSS over the baseline's.
    rss_ratio: f64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let here = std::env::current_exe()?
        .parent()
        .context("this program has no directory")?
        .to_path_buf();
    let smcpd = args.smcpd.clone().unwrap_or_else(|| here.join("smcpd"));
    let baseline = args
        .baseline
        .clone()
        .unwrap_or_else(|| here.join("bench-baseline"));
    let servers: [(&'static str, &Path, &[String]); 2] = [
        ("baseline", &baseline, &[]),
        ("smcpd", &smcpd, &args.smcpd_args),
    ];
    let settle = Duration::from_secs_f64(args.settle);
    let mut starts: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    let mut rss: [Vec<RssParts>; 2] = [Vec::new(), Vec::new()];
    for run in 0..args.runs {
        for (i, (name, bin, extra)) in servers.iter().enumerate() {
            let (elapsed, resident) = measure(bin, extra, settle)
                .with_context(|| format!("run {run} of {name} ({})", bin.display()))?;
            starts[i].push(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX));
            rss[i].push(resident);
        }
    }
    let mut reports = Vec::new();
    for (i, (name, bin, _)) in servers.iter().enumerate() {
        let best_us = starts[i].iter().min().copied().unwrap_or_default() as f64 / 1_000.0;
        let first_echo =
            LatencySummary::from_nanos(&mut starts[i]).context("no runs were measured")?;
        reports.push(ServerReport {
            name,
            binary: bin.display().to_string(),
            runs: args.runs,
            first_echo,
            best_us,
            rss_bytes: median_of(&rss[i], |p| p.total),
            rss_anon_bytes: median_of(&rss[i], |p| p.anon),
            rss_file_bytes: median_of(&rss[i], |p| p.file),
        });
    }
    let report = Report {
        settle_s: args.settle,
        first_echo_ratio: reports[1].first_echo.p50_us / reports[0].first_echo.p50_us,
        rss_ratio: reports[1].rss_bytes / reports[0].rss_bytes,
        servers: reports,
    };
    print_table(&report);
    if let Some(dir) = args.out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&args.out, serde_json::to_vec_pretty(&report)?)
        .with_context(|| format!("writing {}", args.out.display()))?;
    println!("report: {}", args.out.display());
    Ok(())
}

fn median_of(parts: &[RssParts], field: impl Fn(&RssParts) -> u64) -> f64 {
    let values: Vec<f64> = parts.iter().map(|p| field(p) as f64).collect();
    median(&values).unwrap_or_default()
}

fn print_table(report: &Report) {
    println!(
        "{:<9} {:>5} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9}",
        "server", "runs", "p50 ms", "p90 ms", "best ms", "RSS MB", "anon MB", "file MB"
    );
    for s in &report.servers {
        println!(
            "{:<9} {:>5} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>9.2} {:>9.2}",
            s.name,
            s.runs,
            s.first_echo.p50_us / 1_000.0,
            s.first_echo.p90_us / 1_000.0,
            s.best_us / 1_000.0,
            s.rss_bytes / 1e6,
            s.rss_anon_bytes / 1e6,
            s.rss_file_bytes / 1e6,
        );
    }
    println!(
        "smcpd/baseline: first echo {:.2}x, RSS {:.2}x",
        report.first_echo_ratio, report.rss_ratio
    );
}

/// Kills the server when dropped, whatever happened.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One cold start of `bin`: exec to the first echo answered, and the RSS `settle` later.
fn measure(bin: &Path, extra: &[String], settle: Duration) -> anyhow::Result<(Duration, RssParts)> {
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let request = echo_request(port);
    let start = Instant::now();
    let mut child = Running(
        Command::new(bin)
            .arg("--listen")
            .arg(addr.to_string())
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?,
    );
    let deadline = start + Duration::from_secs(15);
    let mut stream = loop {
        match TcpStream::connect(addr) {
            Ok(s) => break s,
            Err(_) if Instant::now() < deadline => {
                if let Some(status) = child.0.try_wait()? {
                    bail!("exited with {status} before it listened");
                }
                std::thread::sleep(Duration::from_micros(100));
            }
            Err(e) => bail!("no listener on {addr} within 15 s: {e}"),
        }
    };
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(Duration::from_secs(15)))?;
    stream.write_all(&request)?;
    let mut response = Vec::with_capacity(2048);
    stream.read_to_end(&mut response)?;
    let elapsed = start.elapsed();
    check_answer(&response)?;
    std::thread::sleep(settle);
    let resident = rss_parts(child.0.id()).context("reading the server's resident set")?;
    drop(child);
    Ok((elapsed, resident))
}

/// The echo `tools/call` with every 2026-07-28 header, closing the connection after it.
fn echo_request(port: u16) -> Vec<u8> {
    let body = wire::tools_call_body(1, "echo", None);
    format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: {pv}\r\n\
         mcp-method: tools/call\r\nmcp-name: echo\r\nconnection: close\r\n\
         content-length: {len}\r\n\r\n{body}",
        pv = wire::PROTOCOL_VERSION,
        len = body.len(),
    )
    .into_bytes()
}

/// The answer must be a 200 carrying the echoed text.
fn check_answer(response: &[u8]) -> anyhow::Result<()> {
    let text = String::from_utf8_lossy(response);
    if !text.starts_with("HTTP/1.1 200") {
        bail!(
            "the echo was not answered 200: {}",
            text.lines().next().unwrap_or("(nothing)")
        );
    }
    let needle = format!("\"text\":\"{}\"", wire::ECHO_TEXT);
    if !text.contains(&needle) {
        bail!("the answer does not carry the echoed text");
    }
    Ok(())
}
