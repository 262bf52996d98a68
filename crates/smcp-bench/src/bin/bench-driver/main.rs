//! `bench-driver`: runs the smcpd benchmark and prints the report.
//!
//! Starts the baseline and the candidate server (smcpd, or a second baseline with
//! `--against baseline`) on free loopback ports pinned to one CPU, runs `smcp-load` pinned to
//! another for each case × concurrency in interleaved rounds (baseline, candidate, baseline,
//! candidate, …), samples each server's CPU time around every round, and prints a table of
//! medians, the candidate/baseline ratios and the targets. Writes the whole thing as JSON to
//! `--out`. Exits non-zero only when figures could not be produced (a server did not start or
//! died, a run had errors); never because of a ratio.
//!
//! A/B: `--smcpd-b PATH` adds a second smcpd. Every round then runs baseline, A (`--smcpd`),
//! B; each is reported against the baseline as above, plus a B/A table (req/s and p99 ratios,
//! server CPU µs per request of A and B and their ratio), also under `ab` in the JSON.
//! `--label-a` / `--label-b` name them (default `A` / `B`). `scripts/bench --ab REV` builds
//! REV's smcpd as A and the working tree's as B.
//!
//! Cases (`--cases`, see `Case`): `echo` and `progress` by default; `echo-2025`, and the
//! authorization cases `echo-jwt` and `echo-dpop`, whose candidates run with the `--auth-*`
//! flags and key material generated here (written next to `--out`).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a CLI binary reports on stdout/stderr"
)]

mod print;

use anyhow::{Context as _, bail};
use clap::{Parser, ValueEnum};
use serde_json::{Value, json};
use smcp_bench::pin::pinned;
use smcp_bench::procstat::{cpu_time_us, system_busy_us};
use smcp_bench::report::LoadReport;
use smcp_bench::stats::median;
use std::io::{BufRead as _, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Command line of `bench-driver`.
#[derive(Debug, Parser)]
#[command(version, about = "Benchmark smcpd against the physical-limit baseline")]
struct Args {
    /// One short round (~1 s) per case at concurrency 1 and 16 (a smoke run).
    #[arg(long)]
    quick: bool,
    /// Rounds per server for each case and concurrency (interleaved).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Measured seconds per round.
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Warm-up seconds per round (not measured).
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Concurrency levels (comma-separated connection counts).
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    concurrency: Vec<usize>,
    /// Cases to run (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "echo,progress")]
    cases: Vec<Case>,
    /// Which server to compare with the baseline.
    #[arg(long, value_enum, default_value = "smcpd")]
    against: Against,
    /// Path to smcpd (default: next to this binary); candidate A when --smcpd-b is given.
    #[arg(long)]
    smcpd: Option<PathBuf>,
    /// A second smcpd (candidate B): rounds run baseline, A, B, and a B/A table is added.
    #[arg(long)]
    smcpd_b: Option<PathBuf>,
    /// Label of candidate A (default: `A` with --smcpd-b, otherwise the candidate's name).
    #[arg(long)]
    label_a: Option<String>,
    /// Label of candidate B.
    #[arg(long, default_value = "B")]
    label_b: String,
    /// Path to bench-baseline (default: next to this binary).
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Path to smcp-load (default: next to this binary).
    #[arg(long)]
    load: Option<PathBuf>,
    /// CPU the servers are pinned to.
    #[arg(long, default_value_t = 0)]
    server_cpu: usize,
    /// CPU the load generator is pinned to.
    #[arg(long, default_value_t = 1)]
    load_cpu: usize,
    /// Repeat a round up to this many times when other work disturbed it (see --max-other).
    #[arg(long, default_value_t = 2)]
    retry_noisy: usize,
    /// A round is disturbed when anything but the server and the load generator used at least
    /// this many cores during it.
    #[arg(long, default_value_t = 0.1)]
    max_other: f64,
    /// Do not pin with taskset.
    #[arg(long)]
    no_pin: bool,
    /// Where to write the JSON report.
    #[arg(long, default_value = "target/bench/report.json")]
    out: PathBuf,
}

/// A benchmark case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Case {
    /// `echo`, JSON response.
    Echo,
    /// `progress_echo` with a progress token: 10 progress notifications over SSE, then the result.
    Progress,
    /// `echo` in a 2025-11-25 session established once (`smcp-load --legacy`), JSON response.
    #[value(name = "echo-2025")]
    EchoLegacy,
    /// `echo` with a valid JWT access token on every request; smcpd verifies it
    /// (`--auth-issuer` with a static `--auth-jwks`, validated tokens cached). The baseline
    /// ignores the header.
    #[value(name = "echo-jwt")]
    EchoJwt,
    /// `echo` with a DPoP-bound JWT (`cnf.jkt`) and a fresh DPoP proof on every request
    /// (ES256; new `jti`, `iat`, `htm`, `htu`, `ath`); smcpd runs with `--auth-dpop-required`
    /// (as `echo-jwt`, plus checking each proof and remembering its `jti`). smcp-load signs
    /// the proofs before the timed phase (`--dpop-key`; signing one costs it more than a
    /// request). The baseline ignores both headers, so its rounds reuse a small pool
    /// (`--dpop-reuse`). Every round gets a freshly started smcpd: its in-memory replay
    /// guard holds 100,000 live `jti` (each for 5 minutes, `--auth-dpop-replay-capacity`) and
    /// answers 503 to new proofs past that, which a few rounds at full speed reach.
    #[value(name = "echo-dpop")]
    EchoDpop,
}

impl Case {
    fn name(self) -> &'static str {
        match self {
            Case::Echo => "echo",
            Case::Progress => "progress",
            Case::EchoLegacy => "echo-2025",
            Case::EchoJwt => "echo-jwt",
            Case::EchoDpop => "echo-dpop",
        }
    }
    fn tool(self) -> &'static str {
        match self {
            Case::Echo | Case::EchoLegacy | Case::EchoJwt | Case::EchoDpop => "echo",
            Case::Progress => smcp_bench::wire::PROGRESS_TOOL,
        }
    }
    /// Extra `smcp-load` arguments of the case; `baseline`: against the baseline.
    fn load_args(self, baseline: bool) -> &'static [&'static str] {
        match self {
            Case::EchoLegacy => &["--legacy"],
            // The baseline checks no proof: a small pool handed out again and again.
            Case::EchoDpop if baseline && BENCH_AUTH.get().is_some() => {
                &["--dpop-pool", "1000", "--dpop-reuse"]
            }
            Case::Echo | Case::Progress | Case::EchoJwt | Case::EchoDpop => &[],
        }
    }
    /// Whether every round needs a freshly started candidate (see [`Case::EchoDpop`]).
    fn fresh_server_each_round(self) -> bool {
        self == Case::EchoDpop && BENCH_AUTH.get().is_some()
    }
    /// Environment of `smcp-load` for the case (the bearer token of `echo-jwt`; the bound
    /// token and the client key of `echo-dpop`).
    fn load_env(self) -> Vec<(&'static str, String)> {
        match (self, BENCH_AUTH.get()) {
            (Case::EchoJwt, Some(auth)) => vec![("SMCP_LOAD_BEARER", auth.token.clone())],
            (Case::EchoDpop, Some(auth)) => vec![
                ("SMCP_LOAD_BEARER", auth.bound_token.clone()),
                ("SMCP_LOAD_DPOP_KEY", auth.client_key.display().to_string()),
            ],
            _ => Vec::new(),
        }
    }
    /// Extra arguments of the candidate server for the case (`echo-jwt`: authorization on;
    /// `echo-dpop`: DPoP-bound tokens required as well).
    fn server_args(self) -> Vec<String> {
        match (self, BENCH_AUTH.get()) {
            (Case::EchoJwt, Some(auth)) => auth.server_args.clone(),
            (Case::EchoDpop, Some(auth)) => {
                let mut args = auth.server_args.clone();
                args.push("--auth-dpop-required".to_owned());
                args
            }
            _ => Vec::new(),
        }
    }
}

/// The key material of `echo-jwt` and `echo-dpop`: a JWKS file for smcpd, a token for
/// smcp-load, and for DPoP a client key (PKCS#8 PEM file) and a token bound to it.
struct BenchAuth {
    token: String,
    bound_token: String,
    client_key: PathBuf,
    server_args: Vec<String>,
}

static BENCH_AUTH: std::sync::OnceLock<BenchAuth> = std::sync::OnceLock::new();

/// Generates a P-256 key, writes its JWKS into `dir` and signs a day-long token; and a
/// client key (into `dir`) with a day-long token bound to it (`cnf.jkt`).
fn bench_auth(dir: &Path) -> anyhow::Result<BenchAuth> {
    use jsonwebtoken::jwk::{Jwk, JwkSet};
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    const ISSUER: &str = "https://bench.invalid";
    const AUDIENCE: &str = "urn:smcp:bench";
    let pair = rcgen::KeyPair::generate()?;
    let key = EncodingKey::from_ec_der(&pair.serialize_der());
    let mut jwk = Jwk::from_encoding_key(&key, Algorithm::ES256)?;
    jwk.common.key_id = Some("bench".to_owned());
    let path = dir.join("bench-jwks.json");
    std::fs::write(&path, serde_json::to_vec(&JwkSet { keys: vec![jwk] })?)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("bench".to_owned());
    let claims = json!({"sub": "bench", "iss": ISSUER, "aud": AUDIENCE, "scope": "mcp", "exp": now + 86_400});
    let token = jsonwebtoken::encode(&header, &claims, &key)?;
    let client = rcgen::KeyPair::generate()?;
    let client_key = dir.join("bench-dpop-key.pem");
    std::fs::write(&client_key, client.serialize_pem())?;
    let client_jwk =
        smcp_bench::dpop::public_jwk(&EncodingKey::from_ec_der(&client.serialize_der()))?;
    let jkt = smcp_bench::dpop::thumbprint(&client_jwk)?;
    let claims = json!({"sub": "bench", "iss": ISSUER, "aud": AUDIENCE, "scope": "mcp",
                        "exp": now + 86_400, "cnf": {"jkt": jkt}});
    let bound_token = jsonwebtoken::encode(&header, &claims, &key)?;
    Ok(BenchAuth {
        token,
        bound_token,
        client_key,
        server_args: [
            "--auth-issuer",
            ISSUER,
            "--auth-audience",
            AUDIENCE,
            "--auth-scope",
            "mcp",
            "--auth-jwks",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([path.display().to_string()])
        .collect(),
    })
}

/// The candidate server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Against {
    /// The real server, `smcpd`.
    Smcpd,
    /// A second `bench-baseline` (to validate the harness; ratios should be ~1.0).
    Baseline,
}

/// A running server, killed on drop.
#[derive(Debug)]
struct Server {
    name: String,
    url: String,
    child: Child,
    /// How it was started (for [`Server::restart`]): binary, CPU, log directory, flags.
    bin: PathBuf,
    cpu: Option<usize>,
    log_dir: PathBuf,
    extra: Vec<String>,
}

impl Server {
    /// Whether this is the baseline (candidate labels are never `baseline`).
    fn is_baseline(&self) -> bool {
        self.name == "baseline"
    }

    /// Replaces the process with a freshly started one (another port, the same flags).
    fn restart(&mut self) -> anyhow::Result<()> {
        let fresh = start_server(&self.name, &self.bin, self.cpu, &self.log_dir, &self.extra)?;
        *self = fresh;
        Ok(())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One measured round.
#[derive(Debug)]
struct Round {
    report: LoadReport,
    cpu_us_per_req: Option<f64>,
    /// CPU used on the machine by anything but the server under test and the load generator
    /// during the round, in cores (0.25 = a quarter of a core). Approximate (tick-based).
    other_cores: Option<f64>,
}

/// Targets: (case, concurrency, metric, bound). Ratios are candidate / baseline.
const TARGETS: &[(Case, usize, Metric, f64)] = &[
    (Case::Echo, 16, Metric::RpsAtLeast, 0.80),
    (Case::Echo, 16, Metric::P99AtMost, 1.5),
    (Case::Echo, 64, Metric::RpsAtLeast, 0.80),
    (Case::Echo, 64, Metric::P99AtMost, 1.5),
    (Case::Progress, 16, Metric::RpsAtLeast, 0.60),
    (Case::Progress, 64, Metric::RpsAtLeast, 0.60),
];

#[derive(Debug, Clone, Copy)]
enum Metric {
    RpsAtLeast,
    P99AtMost,
}

fn main() {
    match run() {
        Ok(()) => {}
        Err(e) => {
            eprintln!("bench-driver: FAILED: {e:#}");
            std::process::exit(1);
        }
    }
}

fn run() -> anyhow::Result<()> {
    let mut args = Args::parse();
    if args.quick {
        args.rounds = 1;
        args.duration = 1.0;
        args.warmup = 0.25;
        args.concurrency = vec![1, 16];
    }
    if args.rounds == 0 || args.concurrency.is_empty() || args.cases.is_empty() {
        bail!("nothing to run: need --rounds ≥ 1, a concurrency and a case");
    }
    let dir = std::env::current_exe()?
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let baseline_bin = args
        .baseline
        .clone()
        .unwrap_or_else(|| dir.join("bench-baseline"));
    let load_bin = args.load.clone().unwrap_or_else(|| dir.join("smcp-load"));
    let smcpd_bin = args.smcpd.clone().unwrap_or_else(|| dir.join("smcpd"));
    let mut candidates: Vec<(String, PathBuf)> = match (args.against, &args.smcpd_b) {
        (Against::Smcpd, None) => vec![(
            args.label_a.clone().unwrap_or_else(|| "smcpd".to_owned()),
            smcpd_bin,
        )],
        (Against::Smcpd, Some(b)) => vec![
            (
                args.label_a.clone().unwrap_or_else(|| "A".to_owned()),
                smcpd_bin,
            ),
            (args.label_b.clone(), b.clone()),
        ],
        (Against::Baseline, None) => vec![(
            args.label_a
                .clone()
                .unwrap_or_else(|| "baseline-b".to_owned()),
            baseline_bin.clone(),
        )],
        (Against::Baseline, Some(_)) => {
            bail!("--smcpd-b compares two smcpd builds: it needs --against smcpd")
        }
    };
    for (name, _) in &mut candidates {
        *name = name.trim().to_owned();
    }
    let names: Vec<&str> = candidates.iter().map(|(n, _)| n.as_str()).collect();
    for (i, name) in names.iter().enumerate() {
        if name.is_empty() || *name == "baseline" || names[..i].contains(name) {
            bail!("candidate labels must be non-empty, distinct and not `baseline`: {names:?}");
        }
    }
    for bin in [&baseline_bin, &load_bin]
        .into_iter()
        .chain(candidates.iter().map(|(_, b)| b))
    {
        if !bin.is_file() {
            bail!("{} not found (build it first)", bin.display());
        }
    }

    let pin = !args.no_pin && pinning_works(args.server_cpu, args.load_cpu);
    let server_pin = pin.then_some(args.server_cpu);
    let load_pin = pin.then_some(args.load_cpu);
    if !pin && !args.no_pin {
        eprintln!("bench-driver: taskset unavailable or fewer than 2 CPUs: running unpinned");
    }
    let log_dir = args.out.parent().map(Path::to_path_buf).unwrap_or_default();
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;

    let auth_cases = [Case::EchoJwt, Case::EchoDpop];
    if args.cases.iter().any(|c| auth_cases.contains(c)) && args.against == Against::Smcpd {
        let auth = bench_auth(&log_dir)?;
        let _ = BENCH_AUTH.set(auth);
    }
    let mut servers = vec![start_server(
        "baseline",
        &baseline_bin,
        server_pin,
        &log_dir,
        &[],
    )?];
    for (name, bin) in &candidates {
        servers.push(start_server(name, bin, server_pin, &log_dir, &[])?);
    }
    eprintln!(
        "bench-driver: {}; pinned: {pin}; {} round(s) × {} s (+{} s warm-up)",
        servers
            .iter()
            .map(|s| format!("{} at {}", s.name, s.url))
            .collect::<Vec<_>>()
            .join(", "),
        args.rounds,
        args.duration,
        args.warmup
    );

    // Same request to the baseline and each candidate: do they write the same bytes?
    let mut bytes_match = Vec::new();
    for candidate in &servers[1..] {
        let mut per_case = serde_json::Map::new();
        for &case in &args.cases {
            let a = dump(&load_bin, &servers[0].url, case)?;
            let b = dump(&load_bin, &candidate.url, case)?;
            let diff = first_difference(&a, &b);
            if let Some(d) = &diff {
                eprintln!(
                    "bench-driver: {} bodies differ ({} vs {}): {d}",
                    case.name(),
                    servers[0].name,
                    candidate.name
                );
            }
            per_case.insert(
                case.name().to_owned(),
                json!({"match": diff.is_none(), "first_difference": diff,
                       "baseline_len": a.len(), "candidate_len": b.len()}),
            );
        }
        bytes_match.push(per_case);
    }

    let mut results = Vec::new(); // (case, conc, rounds per server)
    let mut failures = Vec::new();
    let mut running_args: Vec<String> = Vec::new();
    for &case in &args.cases {
        // A case whose candidate runs with other flags (echo-jwt, echo-dpop) gets fresh
        // candidates.
        let wanted = case.server_args();
        if wanted != running_args {
            for (i, (name, bin)) in candidates.iter().enumerate() {
                servers[i + 1] = start_server(name, bin, server_pin, &log_dir, &wanted)?;
            }
            running_args = wanted;
        }
        for &conc in &args.concurrency {
            let mut rounds: Vec<Vec<Round>> = servers.iter().map(|_| Vec::new()).collect();
            for r in 0..args.rounds {
                for (i, server) in servers.iter_mut().enumerate() {
                    eprintln!(
                        "bench-driver: {} c={conc} round {}/{} {}",
                        case.name(),
                        r + 1,
                        args.rounds,
                        server.name
                    );
                    match measure_quietly(&args, &load_bin, load_pin, server, case, conc) {
                        Ok(round) => rounds[i].push(round),
                        Err(e) => {
                            eprintln!("bench-driver: run failed: {e:#}");
                            failures.push(format!(
                                "{} c={conc} {} round {}: {e:#}",
                                case.name(),
                                server.name,
                                r + 1
                            ));
                        }
                    }
                }
            }
            results.push((case, conc, rounds));
        }
    }
    drop(servers);

    let names: Vec<&str> = candidates.iter().map(|(n, _)| n.as_str()).collect();
    let report = summarise(&args, &names, pin, bytes_match, &results, &failures);
    print::print_table(&report);
    std::fs::write(&args.out, serde_json::to_vec_pretty(&report)?)
        .with_context(|| format!("writing {}", args.out.display()))?;
    println!("report: {}", args.out.display());
    if !failures.is_empty() {
        bail!("{} run(s) failed: {}", failures.len(), failures.join("; "));
    }
    Ok(())
}

/// Whether `taskset` can pin to both CPUs (and there are two distinct CPUs to use).
fn pinning_works(server_cpu: usize, load_cpu: usize) -> bool {
    if server_cpu == load_cpu {
        return false;
    }
    [server_cpu, load_cpu].iter().all(|cpu| {
        Command::new("taskset")
            .args(["-c", &cpu.to_string(), "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// A loopback port that was free a moment ago.
fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Starts a server with `--listen 127.0.0.1:PORT` and waits for its
/// `listening on http://…/mcp` line. Its stderr goes to `<log_dir>/<name>.log`.
fn start_server(
    name: &str,
    bin: &Path,
    cpu: Option<usize>,
    log_dir: &Path,
    extra: &[String],
) -> anyhow::Result<Server> {
    let port = free_port()?;
    let file_name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let log_path = log_dir.join(format!("{file_name}.log"));
    let log = std::fs::File::create(&log_path)?;
    let mut child = pinned(bin, cpu)
        .arg("--listen")
        .arg(format!("127.0.0.1:{port}"))
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    let stdout = child.stdout.take().context("no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        // Forward the ready line, then keep draining so the server never blocks on a full pipe.
        let mut sent = false;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if !sent && let Some(pos) = line.find("listening on http://") {
                let url = line[pos + "listening on ".len()..].trim().to_owned();
                sent = tx.send(url).is_ok();
            }
        }
    });
    let mut server = Server {
        name: name.to_owned(),
        url: String::new(),
        child,
        bin: bin.to_path_buf(),
        cpu,
        log_dir: log_dir.to_path_buf(),
        extra: extra.to_vec(),
    };
    match rx.recv_timeout(Duration::from_secs(15)) {
        Ok(url) => {
            server.url = url;
            Ok(server)
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => bail!(
            "{name} ({}) closed its stdout (exited?) without printing `listening on http://…`; see {}",
            bin.display(),
            log_path.display()
        ),
        Err(mpsc::RecvTimeoutError::Timeout) => bail!(
            "{name} ({}) did not print `listening on http://…` within 15 s; see {}",
            bin.display(),
            log_path.display()
        ),
    }
}

/// One request to `url`, returning the raw response body.
fn dump(load_bin: &Path, url: &str, case: Case) -> anyhow::Result<Vec<u8>> {
    let out = Command::new(load_bin)
        .args([
            "--url",
            url,
            "--dump",
            "--threads",
            "1",
            "--tool",
            case.tool(),
        ])
        .args(case.load_args(false))
        .envs(case.load_env())
        .stderr(Stdio::piped())
        .output()
        .context("running smcp-load --dump")?;
    if !out.status.success() {
        bail!(
            "{} request to {url} failed: {}",
            case.name(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out.stdout)
}

fn first_difference(a: &[u8], b: &[u8]) -> Option<String> {
    let at = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .or_else(|| (a.len() != b.len()).then_some(a.len().min(b.len())))?;
    let ctx = |s: &[u8]| {
        let start = at.saturating_sub(30);
        let end = (at + 50).min(s.len());
        String::from_utf8_lossy(&s[start.min(end)..end]).into_owned()
    };
    Some(format!(
        "at byte {at}: baseline …{:?}… vs candidate …{:?}…",
        ctx(a),
        ctx(b)
    ))
}

/// Runs [`measure`], repeating a round up to `--retry-noisy` times while other work on the
/// machine used ≥ `--max-other` cores during it, and keeps the least disturbed attempt.
fn measure_quietly(
    args: &Args,
    load_bin: &Path,
    load_cpu: Option<usize>,
    server: &mut Server,
    case: Case,
    conc: usize,
) -> anyhow::Result<Round> {
    let mut best = measure(args, load_bin, load_cpu, server, case, conc)?;
    for _ in 0..args.retry_noisy {
        let other = best.other_cores.unwrap_or(0.0);
        if other < args.max_other {
            break;
        }
        eprintln!("bench-driver:   other work used {other:.2} cores: repeating the round");
        let again = measure(args, load_bin, load_cpu, server, case, conc)?;
        if again.other_cores.unwrap_or(0.0) < other {
            best = again;
        }
    }
    Ok(best)
}

/// Runs one round of load against `server`, sampling its CPU time around the run (on a
/// freshly started candidate when the case needs one).
fn measure(
    args: &Args,
    load_bin: &Path,
    load_cpu: Option<usize>,
    server: &mut Server,
    case: Case,
    conc: usize,
) -> anyhow::Result<Round> {
    if case.fresh_server_each_round() && !server.is_baseline() {
        server.restart()?;
    }
    let pid = server.child.id();
    let cpu0 = cpu_time_us(pid).with_context(|| format!("{} is not running", server.name))?;
    let busy0 = system_busy_us();
    let wall0 = Instant::now();
    let out = pinned(load_bin, load_cpu)
        .args(["--url", &server.url, "--tool", case.tool()])
        .args(case.load_args(server.is_baseline()))
        .envs(case.load_env())
        .args(["-c", &conc.to_string()])
        .args(["--duration", &args.duration.to_string()])
        .args(["--warmup", &args.warmup.to_string()])
        .stderr(Stdio::piped())
        .output()
        .context("running smcp-load")?;
    let cpu1 = cpu_time_us(pid).with_context(|| format!("{} died during the run", server.name))?;
    let busy1 = system_busy_us();
    let wall = wall0.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    let report: LoadReport = serde_json::from_str(line).with_context(|| {
        format!(
            "smcp-load printed no report (exit {}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })?;
    if !out.status.success() || !report.valid {
        bail!(
            "invalid run: {} error(s), first: {}",
            report.errors,
            report.first_error.as_deref().unwrap_or("none")
        );
    }
    if let Some(inline) = report.dpop_signed_inline.filter(|n| *n > 0) {
        eprintln!(
            "bench-driver:   {inline} DPoP proofs signed during the round (the pool ran dry; \
             the load generator's figures include them)"
        );
    }
    let cpu_us_per_req =
        (report.requests_total > 0).then(|| (cpu1 - cpu0) as f64 / report.requests_total as f64);
    let other_cores = match (busy0, busy1) {
        (Some(a), Some(b)) if wall > 0.0 => {
            let other =
                b.saturating_sub(a) as f64 - (cpu1 - cpu0) as f64 - report.load_cpu_us as f64;
            Some((other / 1e6 / wall).max(0.0))
        }
        _ => None,
    };
    Ok(Round {
        report,
        cpu_us_per_req,
        other_cores,
    })
}

fn med(rounds: &[Round], f: impl Fn(&Round) -> Option<f64>) -> Option<f64> {
    median(&rounds.iter().filter_map(f).collect::<Vec<_>>())
}

fn summarise(
    args: &Args,
    candidates: &[&str],
    pinned: bool,
    bytes_match: Vec<serde_json::Map<String, Value>>,
    results: &[(Case, usize, Vec<Vec<Round>>)],
    failures: &[String],
) -> Value {
    let names: Vec<&str> = std::iter::once("baseline")
        .chain(candidates.iter().copied())
        .collect();
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    let mut ab = Vec::new();
    for (case, conc, rounds) in results {
        let mut medians = Vec::new();
        for (i, rs) in rounds.iter().enumerate() {
            let m = json!({
                "rps": med(rs, |r| Some(r.report.rps)),
                "p50_us": med(rs, |r| Some(r.report.p50_us)),
                "p99_us": med(rs, |r| Some(r.report.p99_us)),
                "max_us": med(rs, |r| Some(r.report.max_us)),
                "cpu_us_per_req": med(rs, |r| r.cpu_us_per_req),
                "load_cpu_util": med(rs, |r| Some(r.report.load_cpu_util)),
                "other_cores": med(rs, |r| r.other_cores),
                "other_cores_max": rs.iter().filter_map(|r| r.other_cores).reduce(f64::max),
            });
            rows.push(json!({
                "case": case.name(), "concurrency": conc, "server": names[i],
                "median": m.clone(),
                "rounds": rs.iter().map(|r| json!({
                    "load": r.report, "cpu_us_per_req": r.cpu_us_per_req,
                    "other_cores": r.other_cores,
                })).collect::<Vec<_>>(),
            }));
            medians.push(m);
        }
        // medians[j] / medians[i] for one key.
        let ratio = |i: usize, j: usize, key: &str| -> Option<f64> {
            let b = medians.get(i)?.get(key)?.as_f64()?;
            let c = medians.get(j)?.get(key)?.as_f64()?;
            (b > 0.0).then_some(c / b)
        };
        for (j, name) in names.iter().enumerate().skip(1) {
            // The same ratios round by round (each round ran the baseline and this server
            // back to back): how far one round's figure can be from another's.
            let per_round = |f: fn(&Round) -> Option<f64>| -> Vec<f64> {
                rounds[0]
                    .iter()
                    .zip(rounds.get(j).into_iter().flatten())
                    .filter_map(|(b, c)| {
                        let (b, c) = (f(b)?, f(c)?);
                        (b > 0.0).then_some(c / b)
                    })
                    .collect()
            };
            let rps_rounds = per_round(|r| Some(r.report.rps));
            let cpu_rounds = per_round(|r| r.cpu_us_per_req);
            ratios.push(json!({
                "case": case.name(), "concurrency": conc, "server": name,
                "rps": ratio(0, j, "rps"), "p99": ratio(0, j, "p99_us"),
                "cpu_us_per_req": ratio(0, j, "cpu_us_per_req"),
                "rps_rounds": rps_rounds,
                "rps_min": rps_rounds.iter().copied().reduce(f64::min),
                "rps_max": rps_rounds.iter().copied().reduce(f64::max),
                "cpu_us_per_req_rounds": cpu_rounds,
            }));
        }
        if names.len() == 3 {
            let value =
                |i: usize, key: &str| medians.get(i).map_or(Value::Null, |m| m[key].clone());
            ab.push(json!({
                "case": case.name(), "concurrency": conc,
                "rps_a": value(1, "rps"), "rps_b": value(2, "rps"), "rps": ratio(1, 2, "rps"),
                "p99_us_a": value(1, "p99_us"), "p99_us_b": value(2, "p99_us"),
                "p99": ratio(1, 2, "p99_us"),
                "cpu_us_per_req_a": value(1, "cpu_us_per_req"),
                "cpu_us_per_req_b": value(2, "cpu_us_per_req"),
                "cpu_us_per_req": ratio(1, 2, "cpu_us_per_req"),
            }));
        }
    }
    let mut targets = Vec::new();
    for &server in candidates {
        for &(case, conc, metric, bound) in TARGETS {
            let (key, what) = match metric {
                Metric::RpsAtLeast => ("rps", format!("req/s ratio ≥ {bound:.2}")),
                Metric::P99AtMost => ("p99", format!("p99 ratio ≤ {bound:.2}")),
            };
            let value = ratios
                .iter()
                .find(|r| {
                    r["case"] == case.name() && r["concurrency"] == conc && r["server"] == server
                })
                .and_then(|r| r[key].as_f64());
            let verdict = match (value, metric) {
                (None, _) => "not measured",
                (Some(v), Metric::RpsAtLeast) if v >= bound => "PASS",
                (Some(v), Metric::P99AtMost) if v <= bound => "PASS",
                (Some(_), _) => "MISS",
            };
            targets.push(
                json!({"case": case.name(), "concurrency": conc, "server": server,
                                "target": what, "value": value, "verdict": verdict}),
            );
        }
    }
    let mut bytes_match = bytes_match.into_iter().map(Value::Object);
    let ab = match candidates {
        [a, b] => json!({
            "a": a, "b": b,
            "note": "ratios are B/A: req/s > 1 and p99, CPU µs/req < 1 mean B is better",
            "rows": ab,
        }),
        _ => Value::Null,
    };
    json!({
        "candidate": candidates.first(),
        "candidates": candidates,
        "settings": {
            "quick": args.quick, "rounds": args.rounds, "duration_s": args.duration,
            "warmup_s": args.warmup, "concurrency": args.concurrency,
            "retry_noisy": args.retry_noisy, "max_other_cores": args.max_other,
            "pinned": pinned, "server_cpu": args.server_cpu, "load_cpu": args.load_cpu,
        },
        "bytes_match": bytes_match.next(),
        "bytes_match_b": bytes_match.next(),
        "results": rows,
        "ratios": ratios,
        "targets": targets,
        "ab": ab,
        "failures": failures,
        "valid": failures.is_empty(),
    })
}
