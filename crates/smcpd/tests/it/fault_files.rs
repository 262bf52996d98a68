//! Faults of the SEP-2631 data plane on the real binary (issue #16): SIGKILL in the middle of
//! an upload then a restart on the same `--files-dir` (nothing of it visible, staging cleaned
//! at start, the descriptor still usable); a full store over HTTP/1.1 and HTTP/2 (507
//! `storeFull` with its documented body, nothing left behind), on a small tmpfs when this
//! process may mount one and always with the in-process store quota; and the amplification
//! reproduction of item 3 (one upload named 10 000 times) refused at once with bounded memory.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::needless_pass_by_value
)]

use crate::support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Smcpd, files_request, https_client, post_mcp, request_bytes, roundtrip, rpc_body};
use tokio::io::AsyncWriteExt;

fn tempdir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("smcpd-fault-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

async fn rpc(addr: std::net::SocketAddr, body: &Value) -> Value {
    rpc_body(&roundtrip(addr, &request_bytes(body, &[])).await)
}

/// The file URI and the upload path of an authorizeUpload result.
fn descriptor(auth: &Value) -> (String, String) {
    let uri = auth["result"]["file"]["uri"].as_str().unwrap().to_owned();
    let url = auth["result"]["upload"]["url"].as_str().unwrap();
    let path = url
        .split_once("/files/")
        .map(|(_, p)| format!("/files/{p}"))
        .unwrap();
    (uri, path)
}

fn key() -> String {
    // 32 bytes of 7, base64: a fixed files key so a restarted server verifies old descriptors.
    format!("kfault:{}", "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=")
}

#[tokio::test]
async fn sigkill_mid_upload_then_restart_leaves_nothing_visible() {
    let dir = tempdir("sigkill");
    let store = dir.join("store");
    let key = key();
    let flags = [
        "--insecure-http-files",
        "--files-dir",
        store.to_str().unwrap(),
        "--files-key",
        key.as_str(),
    ];
    let server = Smcpd::start_with(&flags);
    let total = 1_000_000usize;
    let auth = rpc(
        server.addr,
        &files_request(
            1,
            "files/authorizeUpload",
            json!({"name": "big.bin", "mimeType": "application/octet-stream", "size": total}),
        ),
    )
    .await;
    let (uri, path) = descriptor(&auth);
    // Half the body, then nothing.
    let mut sock = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "PUT {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n\
         Content-Length: {total}\r\n\r\n"
    );
    sock.write_all(head.as_bytes()).await.unwrap();
    sock.write_all(&vec![0x5a; total / 2]).await.unwrap();
    sock.flush().await.unwrap();
    // The upload is staged: a staged file and the upload's claim in tmp/.
    let deadline = Instant::now() + Duration::from_secs(10);
    while entries(&store.join("tmp")).len() < 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let staged = entries(&store.join("tmp"));
    assert_eq!(staged.len(), 2, "staged upload and claim: {staged:?}");
    assert!(staged.iter().any(|n| n.ends_with(".claim")), "{staged:?}");
    // SIGKILL: no chance to clean up.
    let mut server = server;
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    drop(sock);
    assert_eq!(
        entries(&store.join("tmp")),
        staged,
        "the killed upload's leftovers"
    );
    // Restart on the same directory and key.
    let server = Smcpd::start_with(&flags);
    assert!(
        entries(&store.join("tmp")).is_empty(),
        "staging cleaned at start: {:?}",
        entries(&store.join("tmp"))
    );
    assert!(entries(&store.join("files")).is_empty());
    assert!(entries(&store.join("blobs")).is_empty());
    // The file URI does not resolve: nothing partial is served.
    let dl = rpc(
        server.addr,
        &files_request(2, "files/authorizeDownload", json!({"uri": uri})),
    )
    .await;
    assert_eq!(dl["error"]["code"], -32602, "{dl}");
    assert_eq!(dl["error"]["data"]["reason"], "fileUnavailable", "{dl}");
    let call = rpc(
        server.addr,
        &files_request(
            3,
            "tools/call",
            json!({"name": "analyze_document", "arguments": {"document": uri}}),
        ),
    )
    .await;
    assert_eq!(call["result"]["isError"], true, "{call}");
    assert_eq!(
        call["result"]["structuredContent"]["reason"], "fileUnavailable",
        "{call}"
    );
    // The descriptor was never redeemed: the whole upload now succeeds, once.
    let mut raw = format!(
        "PUT {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n\
         Content-Length: {total}\r\n\r\n"
    )
    .into_bytes();
    raw.extend(std::iter::repeat_n(0x5a, total));
    let answer = roundtrip(server.addr, &raw).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let answer = roundtrip(server.addr, &raw).await;
    assert!(answer.starts_with("HTTP/1.1 410"), "{answer}");
    let dl = rpc(
        server.addr,
        &files_request(4, "files/authorizeDownload", json!({"uri": uri})),
    )
    .await;
    assert_eq!(dl["result"]["file"]["size"], total, "{dl}");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tmpfs of `size` bytes mounted on `dir`, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: u64) -> Result<Self, String> {
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if out.status.success() {
            Ok(Self(dir.to_path_buf()))
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Uploads `size` bytes to a store that cannot hold them, over HTTP/1.1 and over HTTP/2 (TLS
/// with ALPN): both must answer 507 with `{"reason": "storeFull", "message": …}` and leave
/// nothing behind.
async fn full_store_gives_507(store: &Path, extra: &[&str], size: usize) {
    let tls = store.parent().unwrap().join("tls");
    let mut flags = vec![
        "--tls-self-signed",
        tls.to_str().unwrap(),
        "--files-dir",
        store.to_str().unwrap(),
    ];
    flags.extend_from_slice(extra);
    let server = Smcpd::start_with(&flags);
    for h2 in [false, true] {
        let mut builder = https_client(&tls);
        if !h2 {
            builder = builder.http1_only();
        }
        let http = builder.build().unwrap();
        let body = files_request(
            1,
            "files/authorizeUpload",
            json!({"name": "huge.bin", "mimeType": "application/octet-stream", "size": size}),
        );
        let auth: Value = post_mcp(&http, server.addr, &body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let url = auth["result"]["upload"]["url"].as_str().unwrap().to_owned();
        let uri = auth["result"]["file"]["uri"].as_str().unwrap().to_owned();
        // A streamed body, as a real client sends a large file.
        let chunks = (0..size / 65_536).map(|_| Ok::<_, std::io::Error>(vec![0xa5u8; 65_536]));
        let resp = http
            .put(&url)
            .header("content-type", "application/octet-stream")
            .header("content-length", size)
            .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
                chunks,
            )))
            .send()
            .await
            .unwrap_or_else(|e| panic!("h2={h2}: the 507 must reach the client: {e:?}"));
        let expected = if h2 {
            reqwest::Version::HTTP_2
        } else {
            reqwest::Version::HTTP_11
        };
        assert_eq!(resp.version(), expected);
        assert_eq!(resp.status().as_u16(), 507, "h2={h2}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["reason"], "storeFull", "h2={h2}: {body}");
        assert!(body["message"].is_string(), "{body}");
        // Nothing of the upload is kept; the file URI does not resolve.
        let deadline = Instant::now() + Duration::from_secs(5);
        while !entries(&store.join("tmp")).is_empty() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            entries(&store.join("tmp")).is_empty(),
            "{:?}",
            entries(&store.join("tmp"))
        );
        assert!(entries(&store.join("files")).is_empty());
        assert!(entries(&store.join("blobs")).is_empty());
        let dl = files_request(2, "files/authorizeDownload", json!({"uri": uri}));
        let dl: Value = http
            .post(format!("https://{}/mcp", server.addr))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "files/authorizeDownload")
            .body(dl.to_string())
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(dl["error"]["data"]["reason"], "fileUnavailable", "{dl}");
    }
}

#[tokio::test]
async fn a_full_store_quota_is_507_over_http1_and_http2() {
    let dir = tempdir("quota");
    full_store_gives_507(
        &dir.join("store"),
        &["--files-store-quota", "1048576"],
        4 << 20,
    )
    .await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_full_tmpfs_is_507_over_http1_and_http2() {
    let dir = tempdir("tmpfs");
    let store = dir.join("store");
    std::fs::create_dir_all(&store).unwrap();
    let _mount = match Tmpfs::mount(&store, 1 << 20) {
        Ok(m) => m,
        Err(reason) => {
            // Not root (CI): the quota test above covers the same path in-process.
            eprintln!(
                "SKIPPED a_full_tmpfs_is_507_over_http1_and_http2: cannot mount tmpfs: {reason}"
            );
            return;
        }
    };
    full_store_gives_507(&store, &[], 4 << 20).await;
    drop(_mount);
    let _ = std::fs::remove_dir_all(&dir);
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn one_upload_named_ten_thousand_times_is_refused_quickly_with_bounded_memory() {
    let dir = tempdir("amplify");
    let store = dir.join("store");
    let server = Smcpd::start_with(&[
        "--insecure-http-files",
        "--files-dir",
        store.to_str().unwrap(),
    ]);
    let size = 256 * 1024;
    let auth = rpc(
        server.addr,
        &files_request(
            1,
            "files/authorizeUpload",
            json!({"name": "a.txt", "mimeType": "text/plain", "size": size}),
        ),
    )
    .await;
    let (uri, path) = descriptor(&auth);
    let mut raw = format!(
        "PUT {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: {size}\r\n\r\n"
    )
    .into_bytes();
    raw.extend(std::iter::repeat_n(b'a', size));
    assert!(
        roundtrip(server.addr, &raw)
            .await
            .starts_with("HTTP/1.1 200")
    );
    let before = rss_kib(server.child.id());
    // The reproduction: compare_documents naming the same 256 KiB upload 10 000 times
    // (a 566 KiB request; before the fix, ~2.5 GB of memory and an out-of-memory abort).
    let docs: Vec<Value> = (0..10_000).map(|_| json!(uri)).collect();
    let body = files_request(
        2,
        "tools/call",
        json!({"name": "compare_documents", "arguments": {"documents": docs}}),
    );
    let started = Instant::now();
    let v = rpc(server.addr, &body).await;
    let took = started.elapsed();
    let after = rss_kib(server.child.id());
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert_eq!(
        v["result"]["structuredContent"]["reason"], "tooManyFiles",
        "{v}"
    );
    assert_eq!(v["result"]["structuredContent"]["maxFiles"], 32, "{v}");
    assert!(took < Duration::from_secs(5), "refused in {took:?}");
    eprintln!("amplification refused in {took:?}; RSS {before} KiB -> {after} KiB");
    assert!(
        after.saturating_sub(before) < 64 * 1024,
        "RSS grew from {before} KiB to {after} KiB"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
