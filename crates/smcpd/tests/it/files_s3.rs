//! SEP-2631 files in S3, across instances: a real SeaweedFS (`scripts/seaweedfs`) on loopback
//! and three real smcpd processes sharing one bucket (`--files-store s3://BUCKET/PREFIX`) and
//! one `--files-key`. An upload through one instance is used by `tools/call` on a second and
//! downloaded through the third; a single-use descriptor redeemed on three instances at once
//! is accepted exactly once; an upload cut off (its instance killed with SIGKILL, or its
//! client gone) never becomes visible. `SMCP_S3=skip` disables these tests.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::needless_pass_by_value
)]

use crate::seaweedfs;
use crate::support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use seaweedfs::{SeaweedFs, skipped, smcpd_with_env};
use serde_json::{Value, json};
use smcp_proto::ext::files::FileDigest;
use support::{Smcpd, files_request, request_bytes, roundtrip, rpc_body};
use tokio::io::AsyncWriteExt;

/// 32 bytes of 9, base64: the files key every instance shares.
const KEY: &str = "ks3:CQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQk=";

async fn rpc(addr: SocketAddr, body: &Value) -> Value {
    rpc_body(&roundtrip(addr, &request_bytes(body, &[])).await)
}

/// Three smcpd sharing `s3://bucket/prefix` and the files key.
fn cluster(s3: &SeaweedFs, bucket: &str, prefix: &str) -> Vec<Smcpd> {
    let store = format!("s3://{bucket}/{prefix}");
    let flags = [
        "--insecure-http-files",
        "--files-store",
        store.as_str(),
        "--files-key",
        KEY,
    ];
    (0..3).map(|_| smcpd_with_env(&flags, &s3.env())).collect()
}

/// `files/authorizeUpload` on `addr`: the file URI and the upload URL.
async fn authorize(addr: SocketAddr, name: &str, mime: &str, bytes: &[u8]) -> (String, String) {
    let auth = rpc(
        addr,
        &files_request(
            1,
            "files/authorizeUpload",
            json!({"name": name, "mimeType": mime, "size": bytes.len(),
                   "digest": {"algorithm": "sha-256", "value": FileDigest::sha256(bytes).value}}),
        ),
    )
    .await;
    let uri = auth["result"]["file"]["uri"].as_str().unwrap().to_owned();
    let url = auth["result"]["upload"]["url"]
        .as_str()
        .unwrap_or_else(|| panic!("no upload descriptor: {auth}"))
        .to_owned();
    (uri, url)
}

/// The same upload URL on another instance (the token is the capability, not the host).
fn on(url: &str, addr: SocketAddr) -> String {
    let path = url.split_once("/files/").map(|(_, p)| p).unwrap();
    format!("http://{addr}/files/{path}")
}

/// The path part of a data-plane URL.
fn path_of(url: &str) -> String {
    format!("/files/{}", url.split_once("/files/").unwrap().1)
}

fn file_id(uri: &str) -> &str {
    uri.rsplit('/').next().unwrap()
}

/// Waits up to 20 s for `check` to hold.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A text file of about `len` bytes.
fn text(len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 64);
    let mut i = 0u64;
    while out.len() < len {
        out.extend_from_slice(format!("line {i} of a file shared by three instances\n").as_bytes());
        i += 1;
    }
    out
}

#[tokio::test]
async fn upload_on_a_tool_call_on_b_download_on_c() {
    if skipped() {
        return;
    }
    let bucket = "smcp-shared";
    let s3 = SeaweedFs::start("shared", bucket).await;
    let nodes = cluster(&s3, bucket, "e2e/files");
    let (a, b, c) = (nodes[0].addr, nodes[1].addr, nodes[2].addr);
    let bytes = text(9 << 20);
    let digest = FileDigest::sha256(&bytes).value;

    // Upload through A.
    let (uri, url) = authorize(a, "shared.txt", "text/plain", &bytes).await;
    assert!(
        url.starts_with(&format!("http://{a}/files/upload/")),
        "{url}"
    );
    let http = reqwest::Client::new();
    let res = http
        .put(&url)
        .header("content-type", "text/plain")
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let uploaded: Value = res.json().await.unwrap();
    assert_eq!(uploaded["file"]["digest"]["value"], digest.as_str());
    // What the bucket holds, under the prefix: the record, naming the one object of bytes.
    let id = file_id(&uri);
    let record: Value = reqwest::get(format!(
        "{}/{bucket}/e2e/files/files/{id}.json",
        s3.endpoint
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(record["digest"]["value"], digest.as_str(), "{record}");
    assert_eq!(record["size"], bytes.len(), "{record}");
    let blob = record["blob"].as_str().unwrap();
    assert_eq!(
        s3.keys(bucket, "e2e/files/blobs/").await,
        vec![format!("e2e/files/{blob}")]
    );
    // The upload's claim and staging object are gone once it is committed.
    eventually("an empty tmp/", || async {
        s3.keys(bucket, "e2e/files/tmp/").await.is_empty()
    })
    .await;

    // tools/call through B reads the same bytes.
    let call = rpc(
        b,
        &files_request(
            2,
            "tools/call",
            json!({"name": "analyze_document", "arguments": {"document": uri}}),
        ),
    )
    .await;
    assert_ne!(call["result"]["isError"], true, "{call}");
    let out = &call["result"]["structuredContent"];
    assert_eq!(out["digest"]["value"], digest.as_str(), "{call}");
    assert_eq!(out["size"], bytes.len(), "{call}");
    assert_eq!(out["transfer"], "upload", "{call}");

    // Download through C.
    let dl = rpc(
        c,
        &files_request(3, "files/authorizeDownload", json!({"uri": uri})),
    )
    .await;
    let url = dl["result"]["download"]["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("http://{c}/files/download/")),
        "{url}"
    );
    let res = http.get(url).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.headers()["x-mcp-file-digest"],
        format!("sha-256={digest}").as_str()
    );
    let got = res.bytes().await.unwrap();
    assert_eq!(got.len(), bytes.len());
    assert!(got == bytes, "downloaded bytes differ");
    assert_eq!(FileDigest::sha256(&got).value, digest);
}

#[tokio::test]
async fn a_descriptor_redeemed_on_three_instances_at_once_is_accepted_once() {
    if skipped() {
        return;
    }
    let bucket = "smcp-race";
    let s3 = SeaweedFs::start("race", bucket).await;
    let nodes = cluster(&s3, bucket, "race");
    let addrs: Vec<SocketAddr> = nodes.iter().map(|n| n.addr).collect();
    let http = reqwest::Client::new();
    for round in 0..5 {
        let bytes = text(64 << 10 | round);
        let (uri, url) = authorize(addrs[round % 3], "race.txt", "text/plain", &bytes).await;
        let puts = addrs.iter().map(|&addr| {
            let (http, url, body) = (http.clone(), on(&url, addr), bytes.clone());
            async move {
                let res = http
                    .put(url)
                    .header("content-type", "text/plain")
                    .body(body)
                    .send()
                    .await
                    .unwrap();
                let status = res.status().as_u16();
                let body: Value = res.json().await.unwrap();
                (status, body)
            }
        });
        let mut answers = futures_util::future::join_all(puts).await;
        answers.sort_by_key(|(status, _)| *status);
        let statuses: Vec<u16> = answers.iter().map(|(s, _)| *s).collect();
        assert_eq!(statuses, [200, 410, 410], "round {round}: {answers:?}");
        for (_, body) in &answers[1..] {
            assert_eq!(body["reason"], "descriptorExpired", "{body}");
        }
        // The one accepted upload is the file, on every instance.
        for (i, &addr) in addrs.iter().enumerate() {
            let call = rpc(
                addr,
                &files_request(
                    10 + i64::try_from(i).unwrap(),
                    "tools/call",
                    json!({"name": "analyze_document", "arguments": {"document": uri}}),
                ),
            )
            .await;
            assert_eq!(
                call["result"]["structuredContent"]["digest"]["value"],
                FileDigest::sha256(&bytes).value.as_str(),
                "{call}"
            );
        }
    }
}

/// Starts a raw PUT of `total` bytes to `addr` and sends the first `sent` of them.
async fn partial_put(
    addr: SocketAddr,
    url: &str,
    total: usize,
    sent: usize,
) -> tokio::net::TcpStream {
    let mut sock = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "PUT {} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n\
         Content-Length: {total}\r\n\r\n",
        path_of(url)
    );
    sock.write_all(head.as_bytes()).await.unwrap();
    sock.write_all(&text(sent)[..sent]).await.unwrap();
    sock.flush().await.unwrap();
    sock
}

/// Reads a response from `sock` until its head and some of its body are in (or it closes).
async fn read_head(sock: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt as _;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, sock.read(&mut buf)).await {
            Ok(Ok(0)) | Err(_) => break,
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
            Ok(Err(e)) => panic!("reading the response: {e}"),
        }
        let text = String::from_utf8_lossy(&out);
        if let Some((_, body)) = text.split_once("\r\n\r\n")
            && body.contains('}')
        {
            break;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn an_upload_cut_off_never_becomes_visible() {
    if skipped() {
        return;
    }
    let bucket = "smcp-cut";
    let s3 = SeaweedFs::start("cut", bucket).await;
    let mut nodes = cluster(&s3, bucket, "cut");
    let (a, c) = (nodes[0].addr, nodes[2].addr);
    let total = 30 << 20;
    let bytes = text(total);
    let bytes = &bytes[..total];

    // 1. The instance receiving the upload is killed (SIGKILL) once a multipart upload of it
    //    is under way: no chance to abort or clean up.
    let (uri, url) = authorize(a, "killed.txt", "text/plain", bytes).await;
    let id = file_id(&uri).to_owned();
    let b = nodes[1].addr;
    let sock = partial_put(b, &url, total, 20 << 20).await;
    eventually("the killed upload's claim and multipart upload", || async {
        s3.keys(bucket, "cut/tmp/")
            .await
            .contains(&format!("cut/tmp/{id}.claim"))
            && !s3.pending_multipart(bucket).await.is_empty()
    })
    .await;
    nodes[1].child.kill().unwrap();
    nodes[1].child.wait().unwrap();
    drop(sock);
    // Nothing of it is visible: no record, no object (only the claim and the uncompleted
    // multipart upload, which no reader sees; GC and a lifecycle rule remove those).
    assert_eq!(
        s3.status(bucket, &format!("cut/files/{id}.json")).await,
        404
    );
    assert!(s3.keys(bucket, "cut/files/").await.is_empty());
    assert!(s3.keys(bucket, "cut/blobs/").await.is_empty());
    assert_eq!(
        s3.keys(bucket, "cut/tmp/").await,
        vec![format!("cut/tmp/{id}.claim")]
    );
    let pending = s3.pending_multipart(bucket).await;
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert!(pending[0].starts_with("cut/blobs/"), "{pending:?}");
    // A later tools/call using it fails with the precise error, on any instance.
    for (id_n, addr) in [(20, a), (21, c)] {
        let call = rpc(
            addr,
            &files_request(
                id_n,
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
    }
    let dl = rpc(
        c,
        &files_request(22, "files/authorizeDownload", json!({"uri": uri})),
    )
    .await;
    assert_eq!(dl["error"]["code"], -32602, "{dl}");
    assert_eq!(dl["error"]["data"]["reason"], "fileUnavailable", "{dl}");
    // The dead instance's claim still holds the descriptor: redeeming it elsewhere is refused
    // (the client asks for a new descriptor) before the body is read, and nothing is written.
    // Only the head is sent: the answer must come from it alone (an instance that waited for
    // the body would time out here), and an instance that refuses closes the connection with
    // nothing of ours unread, so no reset can cut the 410 off or break our write.
    let mut sock = partial_put(c, &url, total, 0).await;
    let answer = read_head(&mut sock).await;
    assert!(answer.starts_with("HTTP/1.1 410"), "{answer}");
    assert!(answer.contains("descriptorExpired"), "{answer}");
    assert!(s3.keys(bucket, "cut/files/").await.is_empty());

    // 2. The client goes away mid-body: the instance aborts the multipart upload and releases
    //    the claim; the file stays invisible and the descriptor can be redeemed in full later.
    let before = s3.pending_multipart(bucket).await;
    let (uri, url) = authorize(a, "dropped.txt", "text/plain", bytes).await;
    let id = file_id(&uri).to_owned();
    let sock = partial_put(a, &url, total, 20 << 20).await;
    eventually("the dropped upload's multipart upload", || async {
        s3.pending_multipart(bucket).await.len() > before.len()
    })
    .await;
    drop(sock);
    eventually(
        "the multipart upload aborted and the claim released",
        || async {
            s3.pending_multipart(bucket).await == before
                && !s3
                    .keys(bucket, "cut/tmp/")
                    .await
                    .contains(&format!("cut/tmp/{id}.claim"))
        },
    )
    .await;
    assert_eq!(
        s3.status(bucket, &format!("cut/files/{id}.json")).await,
        404
    );
    assert!(s3.keys(bucket, "cut/blobs/").await.is_empty());
    let res = reqwest::Client::new()
        .put(on(&url, c))
        .header("content-type", "text/plain")
        .body(bytes.to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(
        s3.status(bucket, &format!("cut/files/{id}.json")).await,
        200
    );
}
