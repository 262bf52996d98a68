//! Fault test on the real `smcpd` (issue #16): file-descriptor exhaustion and recovery.
//!
//! smcpd's soft fd limit is lowered to 64 while it runs (`prlimit --pid`), then the test opens
//! connections until `accept` fails with EMFILE. The server must survive it: keep running,
//! keep serving the connections it already has, and back off instead of spinning on the
//! failing `accept` (CPU and the rate of `accept failed` warnings stay low). Once the
//! connections are closed, the connection that waited in the accept queue and new ones are
//! served again, and the fd count returns to where it was.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value
)]

use crate::support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::{Smcpd, mcp, request_bytes, roundtrip};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const FD_LIMIT: usize = 64;

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// User + system CPU time of `pid` (in clock ticks of 10 ms: USER_HZ is 100 on Linux).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn echo(id: u64, text: &str) -> Vec<u8> {
    request_bytes(
        &mcp(
            json!(id),
            "tools/call",
            json!({"name": "echo", "arguments": {"text": text}}),
        ),
        &[],
    )
}

/// Reads one response with a `Content-Length` body from a keep-alive connection.
async fn read_response(stream: &mut TcpStream, timeout: Duration) -> Option<String> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        loop {
            let text = String::from_utf8_lossy(&got).to_string();
            if let Some(head_end) = text.find("\r\n\r\n") {
                let len = text[..head_end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap())
                    })
                    .expect("a content-length");
                if got.len() >= head_end + 4 + len {
                    return text;
                }
            }
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "connection closed: {text}");
            got.extend_from_slice(&buf[..n]);
        }
    };
    tokio::time::timeout(timeout, read).await.ok()
}

#[tokio::test]
async fn fd_exhaustion_is_survived_and_recovered_from() {
    let mut server = Smcpd::start();
    let log = server.follow_log();
    let pid = server.child.id();
    let status = std::process::Command::new("prlimit")
        .arg(format!("--pid={pid}"))
        .arg(format!("--nofile={FD_LIMIT}:"))
        .status()
        .expect("prlimit (util-linux) runs");
    assert!(status.success(), "prlimit failed: {status:?}");
    let baseline = open_fds(pid);
    assert!(baseline < FD_LIMIT / 2, "smcpd starts with {baseline} fds");

    // More connections than the server has fds left: the kernel completes them all (they
    // queue in the listen backlog), the server accepts until EMFILE.
    let mut held = Vec::new();
    for _ in 0..FD_LIMIT + 16 {
        held.push(TcpStream::connect(server.addr).await.unwrap());
    }
    assert!(
        log.wait_for("accept failed", Duration::from_secs(10))
            .is_some(),
        "accept never failed; smcpd holds {} fds:\n{}",
        open_fds(pid),
        log.lines().join("\n")
    );
    assert!(
        open_fds(pid) >= FD_LIMIT - 2,
        "exhausted at {} fds",
        open_fds(pid)
    );

    // A request on a connection waiting in the accept queue gets no answer for now…
    let mut queued = TcpStream::connect(server.addr).await.unwrap();
    queued.write_all(&echo(1, "queued")).await.unwrap();
    assert!(
        read_response(&mut queued, Duration::from_millis(500))
            .await
            .is_none(),
        "answered although every fd is in use"
    );
    // …while a connection accepted before the exhaustion is still served.
    held[0].write_all(&echo(2, "accepted")).await.unwrap();
    let resp = read_response(&mut held[0], Duration::from_secs(10))
        .await
        .expect("an accepted connection is still served");
    assert!(
        resp.starts_with("HTTP/1.1 200") && resp.contains("accepted"),
        "{resp}"
    );

    // Exhausted, the accept loop must back off, not spin: little CPU, few warnings.
    let (lines0, ticks0, t0) = (log.lines().len(), cpu_ticks(pid), Instant::now());
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (lines1, ticks1, elapsed) = (log.lines().len(), cpu_ticks(pid), t0.elapsed());
    let cpu = Duration::from_millis((ticks1 - ticks0) * 10);
    assert!(
        cpu < elapsed / 5,
        "smcpd used {cpu:?} of CPU in {elapsed:?} while out of fds"
    );
    // The loop waits 50 ms after a failure, and says so at most once every 5 s (with the
    // count), not on every retry.
    let warnings = lines1 - lines0;
    assert!(
        warnings <= 1,
        "{warnings} accept failure warnings logged in {elapsed:?}"
    );
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "smcpd exited while out of fds"
    );

    // Free the fds: the queued request is answered, and new connections are served.
    held.clear();
    let resp = read_response(&mut queued, Duration::from_secs(10))
        .await
        .expect("the queued connection is served once fds are free");
    assert!(
        resp.starts_with("HTTP/1.1 200") && resp.contains("queued"),
        "{resp}"
    );
    drop(queued);
    let resp = roundtrip(server.addr, &echo(3, "recovered")).await;
    assert!(
        resp.starts_with("HTTP/1.1 200") && resp.contains("recovered"),
        "{resp}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while open_fds(pid) > baseline && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(open_fds(pid), baseline, "fds back to the baseline");
    assert!(server.terminate().success());
}
