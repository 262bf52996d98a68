//! `smcpd --files-presign`: SEP-2631 descriptors that point straight at S3. A real SeaweedFS
//! checking SigV4 signatures (`SeaweedFs::start_signed`) and real smcpd processes sharing its
//! bucket: upload and download with smcp-client, bytes never through smcpd; the store itself
//! refuses other bytes, another length, a missing checksum header, a replay and an expired
//! descriptor; a file becomes visible only once the store confirmed it, never to another
//! principal, and never after an upload cut off mid-body. `SMCP_S3=skip` disables these tests.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::needless_pass_by_value
)]

use crate::seaweedfs;
use crate::support;

use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use seaweedfs::{SeaweedFs, skipped, smcpd_with_env};
use serde_json::{Value, json};
use smcp_client::files::{FileTransfer, UploadMeta};
use smcp_proto::ext::files::FileDigest;
use support::{Smcpd, files_request, request_bytes, roundtrip, rpc_body};
use tokio::io::AsyncWriteExt;

/// 32 bytes of 7, base64: the files key the instances share.
const KEY: &str = "kp:BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";

/// An smcpd on `s3://bucket/prefix` with presigned transfers and `extra` flags.
fn node(s3: &SeaweedFs, bucket: &str, prefix: &str, extra: &[&str]) -> Smcpd {
    let store = format!("s3://{bucket}/{prefix}");
    let mut flags = vec![
        "--insecure-http-files",
        "--files-store",
        store.as_str(),
        "--files-key",
        KEY,
        "--files-presign",
    ];
    flags.extend_from_slice(extra);
    smcpd_with_env(&flags, &s3.env())
}

async fn rpc(addr: SocketAddr, body: &Value, bearer: Option<&str>) -> Value {
    let auth = bearer.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", a.as_str())).collect();
    rpc_body(&roundtrip(addr, &request_bytes(body, &headers)).await)
}

/// `files/authorizeUpload` of `bytes` as text/plain: the whole result.
async fn authorize(addr: SocketAddr, bytes: &[u8], bearer: Option<&str>) -> Value {
    let params = json!({"name": "doc.txt", "mimeType": "text/plain", "size": bytes.len(),
                        "digest": {"algorithm": "sha-256", "value": FileDigest::sha256(bytes).value}});
    let answer = rpc(
        addr,
        &files_request(1, "files/authorizeUpload", params),
        bearer,
    )
    .await;
    assert!(answer["result"]["upload"].is_object(), "{answer}");
    answer["result"].clone()
}

/// `analyze_document` on `uri`: the tool result.
async fn analyze(addr: SocketAddr, uri: &str, bearer: Option<&str>) -> Value {
    let call = rpc(
        addr,
        &files_request(
            2,
            "tools/call",
            json!({"name": "analyze_document", "arguments": {"document": uri}}),
        ),
        bearer,
    )
    .await;
    call["result"].clone()
}

/// Asserts that `uri` does not resolve: `fileUnavailable` from the tool.
async fn assert_unavailable(addr: SocketAddr, uri: &str, bearer: Option<&str>) {
    let result = analyze(addr, uri, bearer).await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        result["structuredContent"]["reason"], "fileUnavailable",
        "{result}"
    );
}

/// Sends `body` to a presigned upload descriptor with its headers (all of them, or without
/// `skip`): the status and the store's answer.
async fn put(upload: &Value, body: Vec<u8>, skip: Option<&str>) -> (u16, String) {
    let mut request = reqwest::Client::new().put(upload["url"].as_str().unwrap());
    for (k, v) in upload["headers"].as_object().unwrap() {
        if Some(k.as_str()) != skip {
            request = request.header(k, v.as_str().unwrap());
        }
    }
    let res = request.body(body).send().await.unwrap();
    (res.status().as_u16(), res.text().await.unwrap())
}

fn file_id(uri: &str) -> &str {
    uri.rsplit('/').next().unwrap()
}

/// The sha-256 of `bytes` in standard base64, as S3 writes checksums.
fn std_b64(bytes: &[u8]) -> String {
    let url_safe = FileDigest::sha256(bytes).value;
    let std: String = url_safe
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    format!("{std}=")
}

/// A text file of about `len` bytes.
fn text(len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 64);
    let mut i = 0u64;
    while out.len() < len {
        out.extend_from_slice(format!("line {i} of a file uploaded straight to S3\n").as_bytes());
        i += 1;
    }
    out.truncate(len);
    out
}

fn client(addr: SocketAddr) -> smcp_client::Client {
    smcp_client::Client::builder(format!("http://{addr}/mcp"))
        .files(FileTransfer {
            allow_insecure_loopback: true,
            ..FileTransfer::default()
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn presigned_upload_and_download_through_the_client_bypass_smcpd() {
    if skipped() {
        return;
    }
    let bucket = "smcp-presign";
    let s3 = SeaweedFs::start_signed("presign-e2e", bucket).await;
    let (a, b) = (node(&s3, bucket, "p", &[]), node(&s3, bucket, "p", &[]));
    let bytes = text(3 << 20);

    // The descriptor: a presigned PUT to the bucket binding size, digest, media type and
    // If-None-Match; the intent recorded, no record yet.
    let auth = authorize(a.addr, &bytes, None).await;
    let upload = &auth["upload"];
    let id = file_id(auth["file"]["uri"].as_str().unwrap()).to_owned();
    let hex = id.strip_prefix("file_").unwrap();
    let url = upload["url"].as_str().unwrap();
    assert_eq!(upload["method"], "PUT");
    assert!(
        url.starts_with(&format!("{}/{bucket}/p/blobs/{hex}?", s3.endpoint)),
        "{url}"
    );
    assert!(
        url.contains(
            "X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost%3Bif-none-match%3Bx-amz-checksum-sha256"
        ),
        "{url}"
    );
    assert_eq!(
        upload["headers"],
        json!({"Content-Type": "text/plain", "If-None-Match": "*",
               "x-amz-checksum-sha256": std_b64(&bytes)})
    );
    assert_eq!(
        s3.keys(bucket, "p/tmp/").await,
        vec![format!("p/tmp/{id}.pending")]
    );

    // Without a digest, the upload still goes through smcpd's data plane.
    let relayed = rpc(
        a.addr,
        &files_request(3, "files/authorizeUpload", json!({"size": 5})),
        None,
    )
    .await;
    let relayed_url = relayed["result"]["upload"]["url"].as_str().unwrap();
    assert!(
        relayed_url.starts_with(&format!("http://{}/files/upload/", a.addr)),
        "{relayed}"
    );

    // smcp-client uploads to S3 with the descriptor's headers.
    let file = client(a.addr)
        .upload_bytes(
            bytes.clone().into(),
            UploadMeta::new(0).name("e2e.txt").mime_type("text/plain"),
            None,
        )
        .await
        .unwrap();
    let uri = file.uri.clone();
    let id = file_id(&uri).to_owned();
    let blob = format!("p/blobs/{}", id.strip_prefix("file_").unwrap());
    assert!(s3.keys(bucket, "p/blobs/").await.contains(&blob));
    // In the bucket, not yet a file: the record is written when the store confirmed it.
    assert_eq!(s3.status(bucket, &format!("p/files/{id}.json")).await, 404);

    // The first tools/call naming it, on another instance, confirms it.
    let result = analyze(b.addr, &uri, None).await;
    assert_ne!(result["isError"], true, "{result}");
    let out = &result["structuredContent"];
    assert_eq!(
        out["digest"]["value"],
        FileDigest::sha256(&bytes).value.as_str()
    );
    assert_eq!(out["size"], bytes.len());
    let record: Value = reqwest::get(format!("{}/{bucket}/p/files/{id}.json", s3.endpoint))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(record["blob"], blob.strip_prefix("p/").unwrap(), "{record}");
    assert!(
        !s3.keys(bucket, "p/tmp/")
            .await
            .contains(&format!("p/tmp/{id}.pending"))
    );

    // The download descriptor is a presigned GET answered as an inert attachment.
    let dl = rpc(
        a.addr,
        &files_request(4, "files/authorizeDownload", json!({"uri": uri})),
        None,
    )
    .await;
    let dl_url = dl["result"]["download"]["url"].as_str().unwrap();
    assert!(
        dl_url.starts_with(&format!("{}/{bucket}/{blob}?", s3.endpoint)),
        "{dl}"
    );
    let res = reqwest::get(dl_url).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["cache-control"], "no-store");
    assert_eq!(res.headers()["content-type"], "text/plain");
    assert!(
        res.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .starts_with("attachment; filename=\"e2e.txt\""),
        "{:?}",
        res.headers()
    );
    // smcp-client downloads it (verifying size and digest) through the other instance.
    let dir = std::env::temp_dir().join(format!("smcp-presign-dl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (path, _) = client(b.addr).download_to(&uri, &dir, None).await.unwrap();
    assert!(
        std::fs::read(&path).unwrap() == bytes,
        "downloaded bytes differ"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A key pair signing access tokens, and its JWKS.
struct Issuer {
    url: String,
    encoding: EncodingKey,
}

impl Issuer {
    async fn start() -> Self {
        let pair = rcgen::KeyPair::generate().unwrap();
        let encoding = EncodingKey::from_ec_der(&pair.serialize_der());
        let mut jwk = Jwk::from_encoding_key(&encoding, Algorithm::ES256).unwrap();
        jwk.common.key_id = Some("k1".to_owned());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let metadata = json!({"issuer": url, "authorization_endpoint": format!("{url}/authorize"),
            "token_endpoint": format!("{url}/token"), "jwks_uri": format!("{url}/jwks"),
            "response_types_supported": ["code"]});
        let jwks = serde_json::to_value(JwkSet { keys: vec![jwk] }).unwrap();
        let app = axum::Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                axum::routing::get(move || async move { axum::Json(metadata) }),
            )
            .route(
                "/jwks",
                axum::routing::get(move || async move { axum::Json(jwks) }),
            );
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { url, encoding }
    }

    /// An access token of `sub` for the smcpd at `addr`.
    fn token(&self, sub: &str, addr: SocketAddr) -> String {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some("k1".to_owned());
        let claims = json!({"sub": sub, "iss": self.url, "aud": format!("http://{addr}/mcp"),
                            "scope": "mcp", "exp": now + 600});
        jsonwebtoken::encode(&header, &claims, &self.encoding).unwrap()
    }
}

// Multi-threaded: the test issuer answers smcpd's JWKS requests while the test waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_refuses_other_bytes_and_replays_and_the_file_stays_its_owners() {
    if skipped() {
        return;
    }
    let bucket = "smcp-presign-refuse";
    let s3 = SeaweedFs::start_signed("presign-refuse", bucket).await;
    let issuer = Issuer::start().await;
    let smcpd = node(&s3, bucket, "r", &["--auth-issuer", &issuer.url]);
    let alice = issuer.token("alice", smcpd.addr);
    let mallory = issuer.token("mallory", smcpd.addr);
    let good = text(1 << 20);
    let mut bad = good.clone();
    bad[4096] ^= 1;

    let auth = authorize(smcpd.addr, &good, Some(&alice)).await;
    let upload = &auth["upload"];
    let uri = auth["file"]["uri"].as_str().unwrap();
    let blob_prefix = "r/blobs/";

    // Other bytes of the same length: the store's checksum check refuses them.
    let (status, body) = put(upload, bad.clone(), None).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("<Code>BadDigest</Code>"), "{body}");
    // Another length: the signature covers content-length.
    let mut longer = good.clone();
    longer.push(b'\n');
    let (status, body) = put(upload, longer, None).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains("<Code>SignatureDoesNotMatch</Code>"),
        "{body}"
    );
    // The checksum header left out: the signature covers it too.
    let (status, body) = put(upload, bad.clone(), Some("x-amz-checksum-sha256")).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains("<Code>SignatureDoesNotMatch</Code>"),
        "{body}"
    );
    assert!(s3.keys(bucket, blob_prefix).await.is_empty());
    assert_unavailable(smcpd.addr, uri, Some(&alice)).await;

    // The right bytes are accepted.
    let (status, body) = put(upload, good.clone(), None).await;
    assert_eq!(status, 200, "{body}");

    // Another principal cannot use the file, even as the first to name it.
    assert_unavailable(smcpd.addr, uri, Some(&mallory)).await;
    let dl = rpc(
        smcpd.addr,
        &files_request(5, "files/authorizeDownload", json!({"uri": uri})),
        Some(&mallory),
    )
    .await;
    assert_eq!(dl["error"]["code"], -32602, "{dl}");
    assert_eq!(dl["error"]["data"]["reason"], "fileUnavailable", "{dl}");
    // Its owner can.
    let result = analyze(smcpd.addr, uri, Some(&alice)).await;
    assert_eq!(
        result["structuredContent"]["digest"]["value"],
        FileDigest::sha256(&good).value.as_str(),
        "{result}"
    );

    // Replays after confirmation do not change the file: the object exists, so the signed
    // If-None-Match refuses them, whatever the bytes.
    for body in [good.clone(), bad] {
        let (status, body) = put(upload, body, None).await;
        assert_eq!(status, 412, "{body}");
        assert!(body.contains("<Code>PreconditionFailed</Code>"), "{body}");
    }
    assert_eq!(s3.keys(bucket, blob_prefix).await.len(), 1);
    let dl = rpc(
        smcpd.addr,
        &files_request(6, "files/authorizeDownload", json!({"uri": uri})),
        Some(&alice),
    )
    .await;
    let got = reqwest::get(dl["result"]["download"]["url"].as_str().unwrap())
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert!(got == good, "the file changed");
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

#[tokio::test]
async fn expired_and_interrupted_uploads_never_become_visible() {
    if skipped() {
        return;
    }
    let bucket = "smcp-presign-cut";
    let s3 = SeaweedFs::start_signed("presign-cut", bucket).await;
    let a = node(&s3, bucket, "c", &[]);
    let short = node(&s3, bucket, "c", &["--files-descriptor-ttl", "1"]);
    let bytes = text(8 << 20);

    // A descriptor used after its expiresAt: the store refuses it.
    let auth = authorize(short.addr, &bytes, None).await;
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let (status, body) = put(&auth["upload"], bytes.clone(), None).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("<Code>AccessDenied</Code>"), "{body}");
    assert!(body.contains("expired"), "{body}");
    assert_unavailable(a.addr, auth["file"]["uri"].as_str().unwrap(), None).await;
    assert!(s3.keys(bucket, "c/blobs/").await.is_empty());

    // An upload cut off mid-body: no object, so nothing to confirm.
    let auth = authorize(a.addr, &bytes, None).await;
    let upload = &auth["upload"];
    let uri = auth["file"]["uri"].as_str().unwrap();
    let url = upload["url"].as_str().unwrap();
    let authority = s3.endpoint.strip_prefix("http://").unwrap();
    let target = url.strip_prefix(&s3.endpoint).unwrap();
    let mut head = format!(
        "PUT {target} HTTP/1.1\r\nHost: {authority}\r\nContent-Length: {}\r\n",
        bytes.len()
    );
    for (k, v) in upload["headers"].as_object().unwrap() {
        head.push_str(&format!("{k}: {}\r\n", v.as_str().unwrap()));
    }
    head.push_str("\r\n");
    let mut sock = tokio::net::TcpStream::connect(authority).await.unwrap();
    sock.write_all(head.as_bytes()).await.unwrap();
    sock.write_all(&bytes[..bytes.len() / 2]).await.unwrap();
    sock.flush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(sock);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(s3.keys(bucket, "c/blobs/").await.is_empty());
    assert!(s3.pending_multipart(bucket).await.is_empty());
    assert_unavailable(a.addr, uri, None).await;
    assert!(s3.keys(bucket, "c/files/").await.is_empty());
    let dl = rpc(
        a.addr,
        &files_request(7, "files/authorizeDownload", json!({"uri": uri})),
        None,
    )
    .await;
    assert_eq!(dl["error"]["data"]["reason"], "fileUnavailable", "{dl}");

    // The descriptor was not spent: the whole body, sent again before it expires, is the file.
    let (status, body) = put(upload, bytes.clone(), None).await;
    assert_eq!(status, 200, "{body}");
    let result = analyze(a.addr, uri, None).await;
    assert_eq!(result["structuredContent"]["size"], bytes.len(), "{result}");
    eventually("the intent removed", || async {
        s3.keys(bucket, "c/tmp/")
            .await
            .iter()
            .all(|k| !k.ends_with(".pending") || !k.contains(file_id(uri)))
    })
    .await;
}

#[test]
fn the_flag_needs_an_s3_store_and_raw_put_descriptors() {
    let refused = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_smcpd"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = refused(&["--files-presign"]);
    assert!(
        err.contains("the following required arguments were not provided")
            && err.contains("--files-store"),
        "{err}"
    );
    let err = refused(&["--files-presign", "--files-dir", "/tmp/smcp-never-created"]);
    assert!(err.contains("cannot be used with '--files-dir"), "{err}");
    let err = refused(&[
        "--files-presign",
        "--files-store",
        "s3://bucket",
        "--files-multipart",
    ]);
    assert!(err.contains("cannot be used with"), "{err}");
    assert!(!std::path::Path::new("/tmp/smcp-never-created").exists());
}
