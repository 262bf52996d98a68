//! `bench-tasks`: SEP-2663 tasks under load, through one URL (nginx in front of a cluster in
//! `scripts/bench cluster`).
//!
//! `-c` workers, each on its own keep-alive connection, run tasks back to back for
//! `--duration` seconds: a `tools/call` of `long_job` (`seconds: 1`) declaring the tasks
//! extension, answered with a `CreateTaskResult`, then `tasks/get` every `--poll-ms` until
//! the task is `completed`. Every answer is checked (status 200, the JSON-RPC result, the
//! task's status); anything else is an error and makes the run invalid (exit status 1).
//! Prints one JSON object: tasks completed, tasks per second, the time from the call to the
//! completion seen by the client (so 1 s of work plus the overhead), the requests sent, and
//! the CPU time of the `--server-pid` processes (the smcpd instances) and of `--redis-pid`
//! per task.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a CLI binary reports on stdout/stderr"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use bytes::Bytes;
use clap::Parser;
use http::{HeaderValue, StatusCode};
use serde_json::{Value, json};
use smcp_bench::client::{self, Connection};
use smcp_bench::procstat;
use smcp_bench::stats::LatencySummary;
use smcp_bench::target::{Target, parse_loopback_url};

/// Command line of `bench-tasks`.
#[derive(Debug, Parser)]
#[command(version, about = "SEP-2663 tasks under load (loopback only)")]
struct Args {
    /// Target URL; must be http:// on a loopback address.
    #[arg(long)]
    url: String,
    /// Workers, each running one task at a time (1..=1024).
    #[arg(short = 'c', long, default_value_t = 32)]
    connections: usize,
    /// Seconds during which new tasks are started (at most 600); tasks started are followed
    /// to their end.
    #[arg(short = 'd', long, default_value_t = 5.0)]
    duration: f64,
    /// Seconds of work of each task (`long_job`'s `seconds`).
    #[arg(long, default_value_t = 1)]
    seconds: u64,
    /// Interval between two `tasks/get` of one task, in milliseconds (10..=5000).
    #[arg(long, default_value_t = 100)]
    poll_ms: u64,
    /// A server process whose CPU time is counted (repeat for every instance).
    #[arg(long = "server-pid")]
    server_pids: Vec<u32>,
    /// The Redis process, whose CPU time is reported apart.
    #[arg(long)]
    redis_pid: Option<u32>,
}

/// What one worker counted.
#[derive(Debug, Default)]
struct Tally {
    completions_ns: Vec<u64>,
    requests: u64,
    errors: u64,
    first_error: Option<String>,
}

fn body(id: u64, method: &str, params: Value) -> Bytes {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": smcp_bench::wire::PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "bench-tasks", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        }
    });
    let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    Bytes::from(message.to_string())
}

/// One request; the JSON-RPC `result`, or an error naming what was wrong.
async fn call(
    conn: &mut Connection,
    target: &Target,
    method: &'static str,
    name: &str,
    body: Bytes,
) -> anyhow::Result<Value> {
    let name = HeaderValue::from_str(name).context("name is not a header value")?;
    let (status, reply) = client::post_mcp(
        conn,
        target,
        method,
        Some(name),
        None,
        body,
        Duration::from_secs(10),
    )
    .await?;
    let text = String::from_utf8_lossy(&reply);
    if status != StatusCode::OK {
        bail!("{method}: status {status}: {text}");
    }
    // JSON, or the last event of an SSE stream.
    let json = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .next_back()
        .unwrap_or(&text);
    let message: Value =
        serde_json::from_str(json).with_context(|| format!("{method}: not JSON: {text}"))?;
    match message.get("result") {
        Some(result) => Ok(result.clone()),
        None => bail!("{method}: {message}"),
    }
}

/// Runs one task to completion; the time it took.
async fn one_task(
    conn: &mut Connection,
    target: &Target,
    args: &Args,
    next_id: &mut u64,
    requests: &mut u64,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    *next_id += 1;
    *requests += 1;
    let created = call(
        conn,
        target,
        "tools/call",
        "long_job",
        body(
            *next_id,
            "tools/call",
            json!({"name": "long_job", "arguments": {"seconds": args.seconds}}),
        ),
    )
    .await?;
    if created["resultType"] != "task" {
        bail!("long_job was not answered with a task: {created}");
    }
    let Some(task_id) = created["taskId"].as_str().map(str::to_owned) else {
        bail!("no taskId: {created}");
    };
    let deadline = started + Duration::from_secs(args.seconds + 30);
    loop {
        tokio::time::sleep(Duration::from_millis(args.poll_ms)).await;
        *next_id += 1;
        *requests += 1;
        let task = call(
            conn,
            target,
            "tasks/get",
            &task_id,
            body(*next_id, "tasks/get", json!({"taskId": task_id})),
        )
        .await?;
        match task["status"].as_str() {
            Some("completed") => return Ok(started.elapsed()),
            Some("working") if Instant::now() < deadline => {}
            _ => bail!("task {task_id}: {task}"),
        }
    }
}

async fn worker(target: Arc<Target>, args: Arc<Args>, until: Instant) -> Tally {
    let mut tally = Tally::default();
    let mut next_id = 0;
    let mut conn = match client::connect(target.addr, Duration::from_secs(5)).await {
        Ok(conn) => conn,
        Err(e) => {
            tally.errors += 1;
            tally.first_error = Some(e.to_string());
            return tally;
        }
    };
    while Instant::now() < until {
        match one_task(&mut conn, &target, &args, &mut next_id, &mut tally.requests).await {
            Ok(took) => tally
                .completions_ns
                .push(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX)),
            Err(e) => {
                tally.errors += 1;
                tally.first_error.get_or_insert(format!("{e:#}"));
                match client::connect(target.addr, Duration::from_secs(5)).await {
                    Ok(fresh) => conn = fresh,
                    Err(_) => return tally,
                }
            }
        }
    }
    tally
}

/// The CPU time of `pids`, summed: an error when one of them is not running (a figure
/// measured on the wrong processes would read as zero).
fn cpu_us(pids: &[u32]) -> anyhow::Result<u64> {
    pids.iter()
        .map(|&p| {
            procstat::cpu_time_us(p).ok_or_else(|| anyhow::anyhow!("process {p} is not running"))
        })
        .sum()
}

#[allow(
    clippy::cast_precision_loss,
    reason = "counts and microseconds far below 2^52"
)]
fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if !(1..=1024).contains(&args.connections) {
        bail!("--connections must be from 1 to 1024");
    }
    if !(args.duration > 0.0 && args.duration <= 600.0) {
        bail!("--duration must be in (0, 600] seconds");
    }
    if !(10..=5000).contains(&args.poll_ms) {
        bail!("--poll-ms must be from 10 to 5000");
    }
    let target = Arc::new(parse_loopback_url(&args.url).map_err(anyhow::Error::msg)?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let args = Arc::new(args);
    let redis: Vec<u32> = args.redis_pid.into_iter().collect();
    let (server_before, redis_before) = (cpu_us(&args.server_pids)?, cpu_us(&redis)?);
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(args.duration);
    let tallies = runtime.block_on(async {
        let workers: Vec<_> = (0..args.connections)
            .map(|_| tokio::spawn(worker(target.clone(), args.clone(), until)))
            .collect();
        let mut tallies = Vec::new();
        for w in workers {
            tallies.push(w.await.unwrap_or_default());
        }
        tallies
    });
    let elapsed = started.elapsed().as_secs_f64();
    let server_cpu = cpu_us(&args.server_pids)?.saturating_sub(server_before);
    let redis_cpu = cpu_us(&redis)?.saturating_sub(redis_before);
    let mut completions: Vec<u64> = tallies
        .iter()
        .flat_map(|t| t.completions_ns.iter().copied())
        .collect();
    let tasks = completions.len() as f64;
    let requests: u64 = tallies.iter().map(|t| t.requests).sum();
    let errors: u64 = tallies.iter().map(|t| t.errors).sum();
    let first_error = tallies.iter().find_map(|t| t.first_error.clone());
    let per_task = |us: u64| if tasks > 0.0 { us as f64 / tasks } else { 0.0 };
    let report = json!({
        "connections": args.connections,
        "duration_s": args.duration,
        "elapsed_s": elapsed,
        "task_seconds": args.seconds,
        "poll_ms": args.poll_ms,
        "tasks": tasks,
        "tasks_per_s": tasks / elapsed,
        "requests": requests,
        "requests_per_task": if tasks > 0.0 { requests as f64 / tasks } else { 0.0 },
        "completion": LatencySummary::from_nanos(&mut completions),
        "smcpd_cpu_us_per_task": per_task(server_cpu),
        "redis_cpu_us_per_task": args.redis_pid.map(|_| per_task(redis_cpu)),
        "errors": errors,
        "first_error": first_error,
        "valid": errors == 0 && tasks > 0.0,
    });
    println!("{report}");
    if errors > 0 || tasks == 0.0 {
        eprintln!("bench-tasks: {errors} errors, {tasks} tasks");
        std::process::exit(1);
    }
    Ok(())
}
