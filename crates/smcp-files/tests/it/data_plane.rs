//! The data plane end to end through the axum router (no sockets): every bad-input case
//! asserts the exact status and reason and that nothing became visible.

use std::sync::Arc;

use anyhow::{Context, Result};
use axum::body::Body;
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use smcp_files::{
    FileStore, Files, FilesConfig, LocalFileStore, ObjectStoreFileStore, UploadStyle,
};
use smcp_proto::ext::files::{AuthorizeUploadRequestParams, FileDigest, FileInputDescriptor};
use tower::ServiceExt;

/// A key ring whose one key is 32 copies of `byte`.
fn ring(byte: u8) -> smcp_server::KeyRing {
    match smcp_server::Key::new("k", [byte; 32]) {
        Ok(key) => smcp_server::KeyRing::new(key),
        Err(e) => panic!("a valid key id: {e}"),
    }
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

fn local(dir: &std::path::Path, style: UploadStyle) -> Result<(Files, LocalFileStore)> {
    let store = LocalFileStore::open(dir)?;
    let files = Files::new(Arc::new(store.clone()), ring(1), config(style))?;
    Ok((files, store))
}

fn tempdir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("smcp-files-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn path_of(url: &str) -> String {
    url.trim_start_matches("https://files.test").to_owned()
}

async fn send(
    files: &Files,
    req: Request<Body>,
) -> Result<(StatusCode, Value, http::HeaderMap, Bytes)> {
    let resp = files.router().oneshot(req).await?;
    let status = resp.status();
    let headers = resp.headers().clone();
    let body = resp.into_body().collect().await?.to_bytes();
    let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Ok((status, json, headers, body))
}

fn params(size: Option<u64>, digest: Option<FileDigest>) -> AuthorizeUploadRequestParams {
    AuthorizeUploadRequestParams {
        name: Some("hello.txt".into()),
        mime_type: Some("text/plain".into()),
        size,
        digest,
        ..Default::default()
    }
}

async fn put(files: &Files, url: &str, body: impl Into<Body>) -> Result<(StatusCode, Value)> {
    let req = Request::put(path_of(url)).body(body.into())?;
    let (s, j, _, _) = send(files, req).await?;
    Ok((s, j))
}

fn tmp_entries(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.join("tmp")).map_or(0, |d| d.count())
}

#[tokio::test]
async fn upload_then_download_round_trip() -> Result<()> {
    let dir = tempdir("roundtrip");
    let (files, _) = local(&dir, UploadStyle::Put)?;
    let auth = files.authorize_upload(
        &params(Some(5), Some(FileDigest::sha256(b"hello"))),
        Some("alice"),
    )?;
    assert!(auth.upload.expires_at.is_some());
    assert!(auth.file.uri.starts_with("mcp-file://test/file_"));
    let (status, body) = put(&files, &auth.upload.url, "hello").await?;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["file"]["digest"]["value"],
        json!(FileDigest::sha256(b"hello").value)
    );
    // Owner only.
    assert_eq!(
        files
            .lookup(&auth.file.uri, Some("bob"))
            .await
            .err()
            .map(|e| e.reason.as_str()),
        Some("fileUnavailable")
    );
    let dl = files
        .authorize_download(&auth.file.uri, Some("alice"))
        .await?;
    assert_eq!(dl.download.method, "GET");
    let (status, _, headers, bytes) = send(
        &files,
        Request::get(path_of(&dl.download.url)).body(Body::empty())?,
    )
    .await?;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(&bytes[..], b"hello");
    assert_eq!(
        headers.get("content-length").map(|v| v.as_bytes()),
        Some(&b"5"[..])
    );
    assert_eq!(
        headers
            .get("x-mcp-file-digest")
            .and_then(|v| v.to_str().ok()),
        Some(format!("sha-256={}", FileDigest::sha256(b"hello").value).as_str())
    );
    // The handle streams the same bytes.
    let handle = files
        .resolve(
            &auth.file.uri,
            &FileInputDescriptor::default(),
            Some("alice"),
        )
        .await?;
    assert_eq!(handle.read_to_vec(100).await?, b"hello");
    assert_eq!(handle.name(), Some("hello.txt"));
    assert_eq!(tmp_entries(&dir), 0);
    Ok(())
}

#[tokio::test]
async fn replayed_upload_token_is_refused() -> Result<()> {
    let dir = tempdir("replay");
    let (files, _) = local(&dir, UploadStyle::Put)?;
    let auth = files.authorize_upload(&params(None, None), None)?;
    assert_eq!(
        put(&files, &auth.upload.url, "one").await?.0,
        StatusCode::OK
    );
    // docs/files/errors.md: 410 descriptorExpired, also for a redeemed descriptor.
    let (status, body) = put(&files, &auth.upload.url, "two").await?;
    assert_eq!(status, StatusCode::GONE);
    assert_eq!(body["reason"], "descriptorExpired");
    let h = files
        .resolve(&auth.file.uri, &FileInputDescriptor::default(), None)
        .await?;
    assert_eq!(
        h.read_to_vec(10).await?,
        b"one",
        "the first upload stays, immutable"
    );
    Ok(())
}

#[tokio::test]
async fn size_digest_and_limit_mismatches_leave_nothing() -> Result<()> {
    let dir = tempdir("mismatch");
    let (files, _) = local(&dir, UploadStyle::Put)?;
    // Digest mismatch → 422.
    let auth =
        files.authorize_upload(&params(Some(5), Some(FileDigest::sha256(b"world"))), None)?;
    let (status, body) = put(&files, &auth.upload.url, "hello").await?;
    assert_eq!(
        (status, body["reason"].clone()),
        (StatusCode::UNPROCESSABLE_ENTITY, json!("digestMismatch"))
    );
    assert_eq!(
        files
            .lookup(&auth.file.uri, None)
            .await
            .err()
            .map(|e| e.reason.as_str()),
        Some("fileUnavailable")
    );
    // One byte short → 413 sizeMismatch (docs/files/upload.md, Integrity).
    let auth = files.authorize_upload(&params(Some(6), None), None)?;
    let (status, body) = put(&files, &auth.upload.url, "hello").await?;
    assert_eq!(
        (status, body["reason"].clone()),
        (StatusCode::PAYLOAD_TOO_LARGE, json!("sizeMismatch"))
    );
    assert_eq!(
        (body["expectedSize"].clone(), body["actualSize"].clone()),
        (json!(6), json!(5))
    );
    assert!(files.lookup(&auth.file.uri, None).await.is_err());
    // One byte over the authorized size → 413 sizeMismatch too (the size is exact).
    let auth = files.authorize_upload(&params(Some(4), None), None)?;
    let (status, body) = put(&files, &auth.upload.url, "hello").await?;
    assert_eq!(
        (status, body["reason"].clone()),
        (StatusCode::PAYLOAD_TOO_LARGE, json!("sizeMismatch"))
    );
    assert!(files.lookup(&auth.file.uri, None).await.is_err());
    // Above the server limit without a declared size.
    let auth = files.authorize_upload(&params(None, None), None)?;
    let (status, _) = put(&files, &auth.upload.url, vec![0u8; (1 << 20) + 1]).await?;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    // Authorizing above the server limit fails at negotiation.
    let err = files
        .authorize_upload(&params(Some((1 << 20) + 1), None), None)
        .err();
    assert_eq!(err.map(|e| e.to_error_object().code), Some(-32602));
    assert_eq!(tmp_entries(&dir), 0, "no staged leftovers");
    assert_eq!(std::fs::read_dir(dir.join("blobs"))?.count(), 0);
    Ok(())
}

#[tokio::test]
async fn expired_and_forged_tokens() -> Result<()> {
    let dir = tempdir("tokens");
    let store = Arc::new(LocalFileStore::open(&dir)?);
    let cfg = FilesConfig {
        upload_ttl: 0,
        download_ttl: 0,
        ..config(UploadStyle::Put)
    };
    let files = Files::new(store.clone(), ring(1), cfg)?;
    let auth = files.authorize_upload(&params(None, None), None)?;
    let (status, body) = put(&files, &auth.upload.url, "x").await?;
    assert_eq!(
        (status, body["reason"].clone()),
        (StatusCode::GONE, json!("descriptorExpired"))
    );
    // Forged: a token signed with another key.
    let other = Files::new(store, ring(2), config(UploadStyle::Put))?;
    let forged = other.authorize_upload(&params(None, None), None)?;
    let (status, body) = put(&files, &forged.upload.url, "x").await?;
    assert_eq!(
        (status, body["reason"].clone()),
        (StatusCode::FORBIDDEN, json!("fileUnavailable"))
    );
    assert!(files.lookup(&forged.file.uri, None).await.is_err());
    // A garbage download token.
    let (status, _, _, _) = send(
        &files,
        Request::get("/files/download/garbage").body(Body::empty())?,
    )
    .await?;
    assert_eq!(status, StatusCode::FORBIDDEN);
    Ok(())
}

#[tokio::test]
async fn truncated_upload_leaves_nothing_after_gc() -> Result<()> {
    let dir = tempdir("truncated");
    let (files, store) = local(&dir, UploadStyle::Put)?;
    let auth = files.authorize_upload(&params(Some(10), None), None)?;
    let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
        Ok(Bytes::from_static(b"hello")),
        Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "peer gone",
        )),
    ];
    let body = Body::from_stream(futures_util::stream::iter(chunks));
    let (status, body) = put(&files, &auth.upload.url, body).await?;
    assert_eq!(
        (status, body["reason"].clone()),
        (StatusCode::PAYLOAD_TOO_LARGE, json!("sizeMismatch"))
    );
    assert!(files.lookup(&auth.file.uri, None).await.is_err());
    assert_eq!(tmp_entries(&dir), 0);
    let report = store.collect_garbage(u64::MAX, 0).await?;
    assert_eq!(report.expired, 0);
    assert_eq!(std::fs::read_dir(dir.join("blobs"))?.count(), 0);
    Ok(())
}

#[tokio::test]
async fn multipart_upload_with_boundary() -> Result<()> {
    let dir = tempdir("multipart");
    let (files, _) = local(&dir, UploadStyle::Multipart)?;
    let auth =
        files.authorize_upload(&params(Some(5), Some(FileDigest::sha256(b"hello"))), None)?;
    let mp = auth.upload.multipart.clone().context("multipart")?;
    assert_eq!(auth.upload.method, "POST");
    let token = mp
        .fields
        .and_then(|f| f.get("token").cloned())
        .context("token")?;
    let boundary = "XyZ-boundary-123";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\n{token}\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"{}\"; filename=\"h.txt\"\r\n\
         Content-Type: text/plain\r\n\r\nhello\r\n--{boundary}--\r\n",
        mp.file_field
    );
    let req = Request::post(path_of(&auth.upload.url))
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(Body::from(body))?;
    let (status, json, _, _) = send(&files, req).await?;
    assert_eq!(status, StatusCode::OK, "{json}");
    assert!(files.lookup(&auth.file.uri, None).await.is_ok());
    // Without a boundary → 400.
    let req = Request::post("/files/upload")
        .header("content-type", "multipart/form-data")
        .body(Body::from("x"))?;
    assert_eq!(send(&files, req).await?.0, StatusCode::BAD_REQUEST);
    Ok(())
}

#[tokio::test]
async fn object_store_backend_commits_once_and_gcs() -> Result<()> {
    let store = Arc::new(ObjectStoreFileStore::new(Arc::new(
        object_store::memory::InMemory::new(),
    )));
    let files = Files::new(store.clone(), ring(3), config(UploadStyle::Put))?;
    let auth = files.authorize_upload(&params(Some(5), None), None)?;
    assert_eq!(
        put(&files, &auth.upload.url, "hello").await?.0,
        StatusCode::OK
    );
    assert_eq!(
        put(&files, &auth.upload.url, "hello").await?.0,
        StatusCode::GONE
    );
    let h = files
        .resolve(&auth.file.uri, &FileInputDescriptor::default(), None)
        .await?;
    assert_eq!(h.read_to_vec(10).await?, b"hello");
    let out = files
        .create_bytes(Some("r.csv".into()), "text/csv", "a,b\n", None)
        .await?;
    assert_eq!(out.size, Some(4));
    assert_eq!(store.list().await?.len(), 2);
    let report = store.collect_garbage(u64::MAX, 0).await?;
    assert_eq!((report.expired, report.blobs), (2, 2));
    assert!(files.lookup(&out.uri, None).await.is_err());
    Ok(())
}

#[tokio::test]
async fn failing_store_is_store_full_and_leaves_nothing() -> Result<()> {
    #[derive(Debug)]
    struct Full(LocalFileStore);
    struct FullStaged;
    impl smcp_files::StagedFile for FullStaged {
        fn write<'a>(
            &'a mut self,
            _: Bytes,
        ) -> smcp_files::store::BorrowedFuture<'a, Result<(), smcp_files::FileStoreError>> {
            Box::pin(async {
                Err(smcp_files::FileStoreError::Io(
                    "No space left on device".into(),
                ))
            })
        }
        fn commit(
            self: Box<Self>,
            _: smcp_files::FileMeta,
        ) -> smcp_files::store::BorrowedFuture<'static, Result<(), smcp_files::FileStoreError>>
        {
            Box::pin(async {
                Err(smcp_files::FileStoreError::Io(
                    "No space left on device".into(),
                ))
            })
        }
        fn abort(self: Box<Self>) -> smcp_files::store::BorrowedFuture<'static, ()> {
            Box::pin(async {})
        }
    }
    impl FileStore for Full {
        fn stage(
            &self,
        ) -> smcp_files::store::BorrowedFuture<
            '_,
            Result<Box<dyn smcp_files::StagedFile>, smcp_files::FileStoreError>,
        > {
            Box::pin(async { Ok(Box::new(FullStaged) as Box<dyn smcp_files::StagedFile>) })
        }
        fn meta<'a>(
            &'a self,
            id: &'a str,
        ) -> smcp_files::store::BorrowedFuture<
            'a,
            Result<Option<smcp_files::FileMeta>, smcp_files::FileStoreError>,
        > {
            self.0.meta(id)
        }
        fn open<'a>(
            &'a self,
            m: &'a smcp_files::FileMeta,
        ) -> smcp_files::store::BorrowedFuture<
            'a,
            Result<smcp_files::ByteStream, smcp_files::FileStoreError>,
        > {
            self.0.open(m)
        }
        fn delete<'a>(
            &'a self,
            id: &'a str,
        ) -> smcp_files::store::BorrowedFuture<'a, Result<(), smcp_files::FileStoreError>> {
            self.0.delete(id)
        }
        fn list(
            &self,
        ) -> smcp_files::store::BorrowedFuture<
            '_,
            Result<Vec<smcp_files::FileMeta>, smcp_files::FileStoreError>,
        > {
            self.0.list()
        }
        fn collect_garbage(
            &self,
            now: u64,
            grace: u64,
        ) -> smcp_files::store::BorrowedFuture<
            '_,
            Result<smcp_files::store::GcReport, smcp_files::FileStoreError>,
        > {
            self.0.collect_garbage(now, grace)
        }
    }
    let dir = tempdir("full");
    let files = Files::new(
        Arc::new(Full(LocalFileStore::open(&dir)?)),
        ring(3),
        config(UploadStyle::Put),
    )?;
    let auth = files.authorize_upload(&params(None, None), None)?;
    let (status, body) = put(&files, &auth.upload.url, "hello").await?;
    assert_eq!(
        (status.as_u16(), body["reason"].clone()),
        (507, json!("storeFull"))
    );
    let err = files
        .create_bytes(None, "text/plain", "x", None)
        .await
        .err()
        .context("must fail")?;
    assert_eq!(err.to_error_object().code, -32603);
    assert!(files.lookup(&auth.file.uri, None).await.is_err());
    Ok(())
}

#[tokio::test]
async fn expired_file_uris_are_unavailable_and_collected() -> Result<()> {
    let dir = tempdir("retention");
    let store = Arc::new(LocalFileStore::open(&dir)?);
    let cfg = FilesConfig {
        retention: 0,
        ..config(UploadStyle::Put)
    };
    let files = Files::new(store.clone(), ring(3), cfg)?;
    let out = files
        .create_bytes(Some("old.txt".into()), "text/plain", "bye", None)
        .await?;
    let err = files
        .resolve(&out.uri, &FileInputDescriptor::default(), None)
        .await
        .err()
        .context("expired must not resolve")?;
    assert_eq!(err.reason.as_str(), "fileUnavailable");
    assert!(files.authorize_download(&out.uri, None).await.is_err());
    let report = store.collect_garbage(files.now() + 1, 0).await?;
    assert_eq!((report.expired, report.blobs), (1, 1));
    assert_eq!(std::fs::read_dir(dir.join("files"))?.count(), 0);
    assert_eq!(std::fs::read_dir(dir.join("blobs"))?.count(), 0);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
