//! What `smcpd --stdio` is given as its standard streams decides how it reads and writes them:
//! pipes (what most hosts give) and a Unix socket (what libuv-based hosts such as Node give)
//! go through the runtime's reactor, a regular file through the blocking pool. Each is served
//! the same; the debug log says which path was taken, and a descriptor switched to
//! non-blocking mode is given back in the mode it was found in.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::os::fd::OwnedFd;
use std::process::{Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use smcp_test_support::jsonrpc::request;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::Command;

const WAIT: Duration = Duration::from_secs(10);

fn smcpd() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_smcpd"));
    command
        .arg("--stdio")
        .args(["--log", "smcpd=info,smcp_server=debug"])
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

fn echo(id: u64, text: &str) -> Value {
    request(
        json!(id),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": text}}),
    )
}

fn lines(requests: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in requests {
        serde_json::to_writer(&mut out, r).unwrap();
        out.push(b'\n');
    }
    out
}

/// The echo answers among `stdout`'s lines, by id.
fn echoed(stdout: &[u8]) -> Vec<(u64, String)> {
    let mut answers: Vec<(u64, String)> = stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice::<Value>(l).expect("stdout carries only MCP messages"))
        .map(|m| {
            let text = m["result"]["content"][0]["text"].as_str().unwrap_or("");
            (m["id"].as_u64().unwrap(), text.to_owned())
        })
        .collect();
    answers.sort();
    answers
}

fn paths(stderr: &str) -> (bool, bool) {
    let line = stderr
        .lines()
        .find(|l| l.contains("serving on stdio"))
        .unwrap_or_else(|| panic!("no `serving on stdio` debug line in:\n{stderr}"));
    (
        line.contains("nonblocking_input=true"),
        line.contains("nonblocking_output=true"),
    )
}

async fn finished(child: tokio::process::Child) -> Output {
    let output = tokio::time::timeout(WAIT, child.wait_with_output())
        .await
        .expect("smcpd exits once its input ends")
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    output
}

/// smcpd with `extra` flags on pipes, given `requests` and the end of its input.
async fn over_pipes(extra: &[&str], requests: &[Value]) -> Output {
    let mut child = smcpd()
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&lines(requests)).await.unwrap();
    drop(stdin);
    finished(child).await
}

/// The run answered each echo and took the (input, output) paths given (`true`: reactor).
fn answered(output: &Output, echoes: &[(u64, &str)], nonblocking: (bool, bool)) {
    let expected: Vec<(u64, String)> = echoes.iter().map(|(i, t)| (*i, (*t).to_owned())).collect();
    assert_eq!(echoed(&output.stdout), expected);
    assert_eq!(paths(&String::from_utf8_lossy(&output.stderr)), nonblocking);
}

#[tokio::test]
async fn pipes_go_through_the_reactor() {
    let output = over_pipes(&[], &[echo(1, "one"), echo(2, "two")]).await;
    answered(&output, &[(1, "one"), (2, "two")], (true, true));
}

#[tokio::test]
async fn a_unix_socket_on_both_streams_goes_through_the_reactor() {
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let theirs_out = theirs.try_clone().unwrap();
    // A third descriptor of smcpd's end, kept here: it shares the mode smcpd sets.
    let probe = theirs.try_clone().unwrap();
    let nonblocking = || {
        rustix::fs::fcntl_getfl(&probe)
            .unwrap()
            .contains(rustix::fs::OFlags::NONBLOCK)
    };
    assert!(!nonblocking());
    let child = smcpd()
        .stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::from(OwnedFd::from(theirs_out)))
        .spawn()
        .unwrap();
    ours.set_nonblocking(true).unwrap();
    let ours = tokio::net::UnixStream::from_std(ours).unwrap();
    let (read, mut write) = ours.into_split();
    let mut read = BufReader::new(read).lines();
    // One round trip at a time: each answer comes back on the same socket.
    for (id, text) in [(1, "alpha"), (2, "beta")] {
        write.write_all(&lines(&[echo(id, text)])).await.unwrap();
        let line = tokio::time::timeout(WAIT, read.next_line())
            .await
            .expect("an answer in time")
            .unwrap()
            .expect("the socket open");
        assert_eq!(echoed(line.as_bytes()), [(id, text.to_owned())]);
        assert!(nonblocking(), "smcpd serves its end through the event loop");
    }
    // Half-closing our side is the end of smcpd's input.
    drop(write);
    let output = finished(child).await;
    assert!(
        !nonblocking(),
        "smcpd gives the descriptor back in the mode it found it in"
    );
    assert_eq!(
        paths(&String::from_utf8_lossy(&output.stderr)),
        (true, true)
    );
}

#[tokio::test]
async fn a_regular_file_as_input_goes_through_the_blocking_pool() {
    let path = std::env::temp_dir().join(format!(
        "smcpd-stdio-file-{}-{}.jsonl",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(&lines(&[echo(7, "from a file"), echo(8, "and again")]))
        .unwrap();
    drop(file);
    let input = std::fs::File::open(&path).unwrap();
    let child = smcpd()
        .stdin(Stdio::from(input))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let output = finished(child).await;
    std::fs::remove_file(&path).unwrap();
    answered(
        &output,
        &[(7, "from a file"), (8, "and again")],
        (false, true),
    );
}

#[tokio::test]
async fn stdio_blocking_io_keeps_pipes_on_the_blocking_pool() {
    let output = over_pipes(&["--stdio-blocking-io"], &[echo(3, "pooled")]).await;
    answered(&output, &[(3, "pooled")], (false, false));
}
