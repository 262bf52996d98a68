//! Issue #16, the SEP-2631 items: amplification caps per `tools/call` (item 3), inert
//! downloads and content sniffing against `accept` (item 6), route-bound tokens, racing
//! uploads, staged files of killed uploads (item 7), documented statuses and reasons
//! (item 8), and the store quota that stands in for a full disk.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use axum::body::Body;
use bytes::Bytes;
use common::*;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use smcp_files::{
    FileStore, Files, FilesConfig, FilesExtension, FilesToolCall as _, LocalFileStore, UploadStyle,
};
use smcp_proto::ext::files::{AuthorizeUploadRequestParams, FileInputDescriptor};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, Server, tool};
use tower::ServiceExt;

const CAPS: &str = r#"{"files": {"upload": true, "download": true, "transports": ["https"]}}"#;
/// The start of a PE executable (`MZ`, DOS header).
const PE: &[u8] = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00\xb8\x00\x00\x00";

fn tempdir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("smcp-hardening-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn config(style: UploadStyle) -> FilesConfig {
    FilesConfig {
        authority: "test".into(),
        base_url: Some("https://files.test".into()),
        upload_style: style,
        max_size: 1 << 20,
        ..FilesConfig::default()
    }
}

fn service(dir: &std::path::Path, cfg: FilesConfig) -> Files {
    Files::new(
        Arc::new(LocalFileStore::open(dir).unwrap()),
        smcp_server::KeyRing::ephemeral().unwrap(),
        cfg,
    )
    .unwrap()
}

fn params(mime: &str, size: Option<u64>) -> AuthorizeUploadRequestParams {
    AuthorizeUploadRequestParams {
        name: Some("upload.bin".into()),
        mime_type: Some(mime.into()),
        size,
        ..Default::default()
    }
}

fn path_of(url: &str) -> String {
    url.trim_start_matches("https://files.test").to_owned()
}

async fn send_plane(files: &Files, req: Request<Body>) -> (StatusCode, http::HeaderMap, Bytes) {
    let resp = files.router().oneshot(req).await.unwrap();
    let status = resp.status();
    let headers = resp.headers().clone();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, headers, body)
}

async fn put(files: &Files, url: &str, body: impl Into<Body>) -> (StatusCode, Value) {
    let req = Request::put(path_of(url)).body(body.into()).unwrap();
    let (s, _, b) = send_plane(files, req).await;
    (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

fn multipart(token: &str, bytes: &[u8]) -> (String, Vec<u8>) {
    let boundary = "b0undary-xyz";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\n{token}\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

fn entries(dir: &std::path::Path, sub: &str) -> usize {
    std::fs::read_dir(dir.join(sub)).map_or(0, |d| d.count())
}

// ---- item 7: tokens are bound to their route ----

#[tokio::test]
async fn put_tokens_are_refused_in_forms_and_form_tokens_on_put() {
    let dir = tempdir("route");
    let put_files = service(&dir, config(UploadStyle::Put));
    let auth = put_files
        .authorize_upload(&params("text/plain", Some(5)), None)
        .unwrap();
    let token = auth.upload.url.rsplit('/').next().unwrap().to_owned();
    let (ct, body) = multipart(&token, b"hello");
    let req = Request::post("/files/upload")
        .header("content-type", ct)
        .body(Body::from(body))
        .unwrap();
    let (status, _, body) = send_plane(&put_files, req).await;
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (status, body["reason"].clone()),
        (StatusCode::FORBIDDEN, json!("fileUnavailable"))
    );
    assert!(put_files.lookup(&auth.file.uri, None).await.is_err());
    // The PUT descriptor itself still works: the refused attempt stored nothing.
    assert_eq!(
        put(&put_files, &auth.upload.url, "hello").await.0,
        StatusCode::OK
    );

    // The reverse, with the same key ring so only the route differs.
    let form_files = Files::new(
        put_files.store().clone(),
        smcp_server::KeyRing::ephemeral().unwrap(),
        config(UploadStyle::Multipart),
    )
    .unwrap();
    let auth = form_files
        .authorize_upload(&params("text/plain", Some(5)), None)
        .unwrap();
    let token = auth.upload.multipart.unwrap().fields.unwrap()["token"].clone();
    let (status, body) = put(
        &form_files,
        &format!("https://files.test/files/upload/{token}"),
        "hello",
    )
    .await;
    assert_eq!(
        (status, body["reason"].clone()),
        (StatusCode::FORBIDDEN, json!("fileUnavailable"))
    );
    assert!(form_files.lookup(&auth.file.uri, None).await.is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- item 7: racing uploads to one descriptor ----

/// Two uploads with one descriptor, the second racing the first while it is half sent:
/// exactly one commits, the other is refused with 410 before it stores anything.
async fn race(files: &Files, staged: impl AsyncFn() -> usize) {
    let auth = files
        .authorize_upload(&params("application/octet-stream", None), None)
        .unwrap();
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(2);
    let slow_body = Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|c| (c, rx))
    }));
    tx.send(Ok(Bytes::from(vec![1u8; 4000]))).await.unwrap();
    let first = {
        let files = files.clone();
        let url = auth.upload.url.clone();
        tokio::spawn(async move { put(&files, &url, slow_body).await })
    };
    // Wait until the first upload is staged.
    let deadline = Instant::now() + Duration::from_secs(5);
    while staged().await == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(staged().await > 0, "the first upload is under way");
    // The second, complete and with other bytes, races it.
    let (status, body) = put(files, &auth.upload.url, vec![2u8; 3000]).await;
    assert_eq!(
        (status, body["reason"].clone()),
        (StatusCode::GONE, json!("descriptorExpired")),
        "{body}"
    );
    tx.send(Ok(Bytes::from(vec![1u8; 4000]))).await.unwrap();
    drop(tx);
    let (status, body) = first.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    let h = files
        .resolve(&auth.file.uri, &FileInputDescriptor::default(), None)
        .await
        .unwrap();
    assert_eq!(h.read_to_vec(1 << 20).await.unwrap(), vec![1u8; 8000]);
    // And the descriptor stays redeemed.
    assert_eq!(put(files, &auth.upload.url, "x").await.0, StatusCode::GONE);
}

#[tokio::test]
async fn racing_uploads_to_one_descriptor_leave_one_file_and_no_orphans() {
    let dir = tempdir("race");
    let files = service(&dir, config(UploadStyle::Put));
    race(&files, async || entries(&dir, "tmp")).await;
    // Exactly one file, one blob, nothing staged.
    assert_eq!(entries(&dir, "blobs"), 1);
    assert_eq!(entries(&dir, "files"), 1);
    assert_eq!(entries(&dir, "tmp"), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn racing_uploads_on_an_object_store_leave_no_orphans_either() {
    use futures_util::TryStreamExt as _;
    use object_store::ObjectStore as _;
    let memory = Arc::new(object_store::memory::InMemory::new());
    let files = Files::new(
        Arc::new(smcp_files::ObjectStoreFileStore::new(memory.clone())),
        smcp_server::KeyRing::ephemeral().unwrap(),
        config(UploadStyle::Put),
    )
    .unwrap();
    let count = async |prefix: &str| {
        let prefix = object_store::path::Path::from(prefix);
        memory
            .list(Some(&prefix))
            .try_collect::<Vec<_>>()
            .await
            .unwrap()
            .len()
    };
    race(&files, async || count("tmp").await).await;
    // Claims are released in the background when a staged write is dropped.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        (
            count("blobs").await,
            count("files").await,
            count("tmp").await
        ),
        (1, 1, 0)
    );
}

// ---- item 8: a redeemed descriptor is 410 whatever the body ----

#[tokio::test]
async fn a_redeemed_sized_descriptor_is_410_before_any_size_check() {
    let dir = tempdir("redeemed");
    let files = service(&dir, config(UploadStyle::Put));
    let auth = files
        .authorize_upload(&params("text/plain", Some(5)), None)
        .unwrap();
    assert_eq!(
        put(&files, &auth.upload.url, "hello").await.0,
        StatusCode::OK
    );
    // A replay with another length: the descriptor is spent, not the size wrong.
    let (status, body) = put(&files, &auth.upload.url, "different bytes").await;
    assert_eq!(
        (status, body["reason"].clone()),
        (StatusCode::GONE, json!("descriptorExpired")),
        "{body}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- item 7: staged files of a killed upload are gone when the store opens ----

#[tokio::test]
async fn opening_the_store_removes_what_killed_uploads_left() {
    let dir = tempdir("reopen");
    let store = LocalFileStore::open(&dir).unwrap();
    // What a SIGKILL mid-upload leaves: a staged file and an upload claim nobody holds.
    std::fs::write(
        dir.join("tmp").join("0123456789abcdef0123456789abcdef"),
        vec![7u8; 1000],
    )
    .unwrap();
    std::fs::write(
        dir.join("tmp")
            .join("file_0123456789abcdef0123456789abcdef.claim"),
        b"",
    )
    .unwrap();
    // An upload in progress in a live process (this one) sharing the directory.
    let mut live = store.stage().await.unwrap();
    live.write(Bytes::from_static(b"in progress"))
        .await
        .unwrap();
    assert_eq!(entries(&dir, "tmp"), 3);
    let _reopened = LocalFileStore::open(&dir).unwrap();
    assert_eq!(
        entries(&dir, "tmp"),
        1,
        "only the live upload's staged file is left"
    );
    live.abort().await;
    assert_eq!(entries(&dir, "tmp"), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- item 6: downloads are inert attachments ----

#[tokio::test]
async fn downloads_are_attachments_that_are_never_sniffed_or_rendered() {
    let dir = tempdir("download");
    let files = service(&dir, config(UploadStyle::Put));
    let html = b"<!DOCTYPE html><script>alert(document.domain)</script>";
    let mut p = params("text/html", Some(html.len() as u64));
    p.name = Some("../evil\".html".into());
    let auth = files.authorize_upload(&p, None).unwrap();
    assert_eq!(
        put(&files, &auth.upload.url, &html[..]).await.0,
        StatusCode::OK
    );
    let dl = files
        .authorize_download(&auth.file.uri, None)
        .await
        .unwrap();
    let (status, headers, bytes) = send_plane(
        &files,
        Request::get(path_of(&dl.download.url))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(&bytes[..], html);
    let h = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(h("x-content-type-options"), "nosniff");
    assert_eq!(
        h("content-disposition"),
        "attachment; filename=\"evil.html\"; filename*=UTF-8''evil.html"
    );
    assert!(
        h("content-security-policy").starts_with("sandbox"),
        "{headers:?}"
    );
    assert_eq!(h("cache-control"), "no-store");
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- item 6: magic bytes against accept ----

#[tokio::test]
async fn an_executable_declared_as_pdf_is_refused_and_text_passes() {
    let dir = tempdir("sniff");
    let files = service(&dir, config(UploadStyle::Put));
    let pdf_only = FileInputDescriptor {
        accept: Some(vec!["application/pdf".into()]),
        ..FileInputDescriptor::default()
    };
    // Uploaded.
    let auth = files
        .authorize_upload(&params("application/pdf", Some(PE.len() as u64)), None)
        .unwrap();
    assert_eq!(put(&files, &auth.upload.url, PE).await.0, StatusCode::OK);
    let e = files
        .resolve(&auth.file.uri, &pdf_only, None)
        .await
        .unwrap_err();
    assert_eq!(e.reason.as_str(), "mimeTypeNotAccepted");
    assert_eq!(
        e.details["detectedMimeType"],
        "application/vnd.microsoft.portable-executable"
    );
    // Inline.
    use base64::Engine as _;
    let inline = format!(
        "data:application/pdf;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(PE)
    );
    let e = files.resolve(&inline, &pdf_only, None).await.unwrap_err();
    assert_eq!(e.reason.as_str(), "mimeTypeNotAccepted");
    assert!(
        !e.message.contains("TVq"),
        "no payload in the message: {}",
        e.message
    );
    // A real PDF head passes; text without magic passes a text field.
    let pdf = b"%PDF-1.7\n1 0 obj\n<<>>\nendobj\n";
    let auth = files
        .authorize_upload(&params("application/pdf", Some(pdf.len() as u64)), None)
        .unwrap();
    assert_eq!(
        put(&files, &auth.upload.url, &pdf[..]).await.0,
        StatusCode::OK
    );
    assert!(files.resolve(&auth.file.uri, &pdf_only, None).await.is_ok());
    let csv = FileInputDescriptor {
        accept: Some(vec!["text/csv".into()]),
        ..FileInputDescriptor::default()
    };
    assert!(
        files
            .resolve("data:text/csv,a%2Cb%0A1%2C2", &csv, None)
            .await
            .is_ok()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- the store quota: a full store is 507 storeFull and leaves nothing ----

#[tokio::test]
async fn a_full_store_answers_507_and_gives_the_space_back() {
    let dir = tempdir("quota");
    let store = LocalFileStore::open(&dir)
        .unwrap()
        .with_quota(10_000)
        .unwrap();
    let files = Files::new(
        Arc::new(store),
        smcp_server::KeyRing::ephemeral().unwrap(),
        config(UploadStyle::Put),
    )
    .unwrap();
    let auth = files
        .authorize_upload(&params("application/octet-stream", Some(20_000)), None)
        .unwrap();
    let (status, body) = put(&files, &auth.upload.url, vec![0u8; 20_000]).await;
    assert_eq!(
        (status.as_u16(), body["reason"].clone()),
        (507, json!("storeFull")),
        "{body}"
    );
    assert_eq!(entries(&dir, "tmp"), 0);
    assert_eq!(entries(&dir, "blobs"), 0);
    // The refused upload's bytes no longer count, and the descriptor was not consumed.
    let auth2 = files
        .authorize_upload(&params("application/octet-stream", Some(6_000)), None)
        .unwrap();
    assert_eq!(
        put(&files, &auth2.upload.url, vec![1u8; 6_000]).await.0,
        StatusCode::OK
    );
    // 6 000 stored + 6 000 more would pass 10 000.
    let auth3 = files
        .authorize_upload(&params("application/octet-stream", Some(6_000)), None)
        .unwrap();
    assert_eq!(
        put(&files, &auth3.upload.url, vec![2u8; 6_000])
            .await
            .0
            .as_u16(),
        507
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- item 3: what one tools/call may pull in ----

fn as_caller(b: &Value) -> http::Request<http_body_util::Full<Bytes>> {
    let mut b = b.clone();
    b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        serde_json::from_str(CAPS).unwrap();
    request(&b).body(full(&b)).unwrap()
}

fn compare_server(files: &Files) -> smcp_server::McpService {
    Server::builder("t", "1")
        .extension(FilesExtension::new(files.clone()))
        .tool(
            tool("compare_documents")
                .input_schema(json!({"type": "object", "properties": {"documents": {"type": "array",
                    "items": {"type": "string", "format": "uri", "x-mcp-file": {"transferModes": ["upload", "inline"]}}}}}))
                .handler(|call| async move {
                    let mut total = 0u64;
                    for h in call.files().all("documents") {
                        total += h.read_to_vec(1 << 20).await.map_err(|e| HandlerError::failed(e.to_string()))?.len() as u64;
                    }
                    Ok::<_, HandlerError>(CallToolResult::structured(json!({"read": total})))
                }),
        )
        .build()
        .unwrap()
        .service()
}

async fn upload_one(files: &Files, bytes: Vec<u8>) -> String {
    let auth = files
        .authorize_upload(
            &params("application/octet-stream", Some(bytes.len() as u64)),
            None,
        )
        .unwrap();
    assert_eq!(put(files, &auth.upload.url, bytes).await.0, StatusCode::OK);
    auth.file.uri
}

#[tokio::test]
async fn one_upload_named_ten_thousand_times_is_refused_at_once() {
    let dir = tempdir("amplify");
    let files = service(&dir, config(UploadStyle::Put));
    let uri = upload_one(&files, vec![b'x'; 256 * 1024]).await;
    let svc = compare_server(&files);
    // The reproduction of issue #16 item 3: one 256 KiB file, named 10 000 times.
    let docs: Vec<Value> = (0..10_000).map(|_| json!(uri)).collect();
    let b = body(
        json!(1),
        "tools/call",
        json!({"name": "compare_documents", "arguments": {"documents": docs}}),
    );
    let started = Instant::now();
    let v = send(&svc, as_caller(&b)).await.json();
    let took = started.elapsed();
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert_eq!(
        v["result"]["structuredContent"],
        json!({"argument": "documents", "reason": "tooManyFiles", "maxFiles": 32, "actualFiles": 10_000})
    );
    assert!(took < Duration::from_secs(2), "refused in {took:?}");
    // At the limit, the call runs.
    let docs: Vec<Value> = (0..32).map(|_| json!(uri)).collect();
    let b = body(
        json!(2),
        "tools/call",
        json!({"name": "compare_documents", "arguments": {"documents": docs}}),
    );
    let v = send(&svc, as_caller(&b)).await.json();
    assert_eq!(
        v["result"]["structuredContent"]["read"],
        32 * 256 * 1024,
        "{v}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_bytes_of_one_call_are_capped_counting_repeats() {
    let dir = tempdir("callbytes");
    let files = service(
        &dir,
        FilesConfig {
            max_call_bytes: 100_000,
            ..config(UploadStyle::Put)
        },
    );
    let uri = upload_one(&files, vec![b'y'; 40_000]).await;
    let svc = compare_server(&files);
    let call_with = |id: i64, n: usize| {
        let docs: Vec<Value> = (0..n).map(|_| json!(uri)).collect();
        body(
            json!(id),
            "tools/call",
            json!({"name": "compare_documents", "arguments": {"documents": docs}}),
        )
    };
    let v = send(&svc, as_caller(&call_with(1, 2))).await.json();
    assert_eq!(v["result"]["structuredContent"]["read"], 80_000, "{v}");
    // The same file a third time passes 100 000 bytes.
    let v = send(&svc, as_caller(&call_with(2, 3))).await.json();
    assert_eq!(
        v["result"]["structuredContent"],
        json!({"argument": "documents", "reason": "maxSizeExceeded", "maxCallBytes": 100_000}),
        "{v}"
    );
    // Inline values count too.
    let inline = format!(
        "data:application/octet-stream;base64,{}",
        "AAAA".repeat(20_000)
    );
    let docs = json!([uri, uri, inline]);
    let b = body(
        json!(3),
        "tools/call",
        json!({"name": "compare_documents", "arguments": {"documents": docs}}),
    );
    let v = send(&svc, as_caller(&b)).await.json();
    assert_eq!(
        v["result"]["structuredContent"]["reason"], "maxSizeExceeded",
        "{v}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- item 8: malformed authorizeUpload members carry data.reason ----

#[tokio::test]
async fn malformed_authorize_upload_members_name_their_reason() {
    let dir = tempdir("params");
    let files = service(&dir, config(UploadStyle::Put));
    let svc = compare_server(&files);
    for (params, reason) in [
        (json!({"size": -1}), "invalidSize"),
        (json!({"size": 1.5}), "invalidSize"),
        (json!({"size": "12"}), "invalidSize"),
        (json!({"name": 7}), "invalidName"),
        (json!({"name": "n".repeat(1025)}), "invalidName"),
        (json!({"mimeType": ["text/plain"]}), "invalidMimeType"),
        // Long parameters would sign a token the data plane refuses as malformed.
        (
            json!({"mimeType": format!("text/plain; charset={}", "u".repeat(20_000))}),
            "invalidMimeType",
        ),
        (json!({"digest": "abc"}), "invalidDigest"),
    ] {
        let b = body(json!(1), "files/authorizeUpload", params.clone());
        let v = send(&svc, as_caller(&b)).await.json();
        assert_eq!(v["error"]["code"], -32602, "{params}: {v}");
        assert_eq!(v["error"]["data"]["reason"], reason, "{params}: {v}");
    }
    let b = body(json!(2), "files/authorizeDownload", json!({"uri": 5}));
    let v = send(&svc, as_caller(&b)).await.json();
    assert_eq!(v["error"]["data"]["reason"], "malformedFileUri", "{v}");
    // A valid request still works.
    let b = body(json!(3), "files/authorizeUpload", json!({"size": 0}));
    let v = send(&svc, as_caller(&b)).await.json();
    assert!(v["result"]["upload"]["url"].is_string(), "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}
