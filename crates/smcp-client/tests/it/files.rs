//! SEP-2631 on the client against the conformance fixtures over HTTPS: mode selection,
//! streamed upload, verified download, descriptor policy, no `Authorization` on descriptors.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use serde_json::{Value, json};
use smcp_client::{Client, FileTransfer, TransferError};
use smcp_files::{Files, FilesConfig, LocalFileStore, UploadStyle};
use smcp_proto::ext::files::FileDigest;
use smcp_server::ServeOptions;
use smcp_server::http::tls;

struct Fixture {
    url: String,
    ca: Vec<u8>,
    dir: PathBuf,
    auth_seen_on_files: Arc<Mutex<Vec<bool>>>,
    /// The HTTP version of every request: (to a descriptor URL, version).
    versions: Arc<Mutex<Vec<(bool, http::Version)>>>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn start(tag: &str, tls_on: bool) -> Result<Fixture> {
    start_with(tag, tls_on, UploadStyle::Put).await
}

async fn start_with(tag: &str, tls_on: bool, upload_style: UploadStyle) -> Result<Fixture> {
    let dir = std::env::temp_dir().join(format!("smcp-client-files-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let certs = tls::write_dev_certificates(&dir.join("tls"), &["127.0.0.1"])?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let scheme = if tls_on { "https" } else { "http" };
    let files = Files::new(
        Arc::new(LocalFileStore::open(dir.join("store"))?),
        smcp_server::KeyRing::ephemeral()?,
        FilesConfig {
            allow_insecure_loopback: !tls_on,
            upload_style,
            ..FilesConfig::default()
        },
    )?;
    files.set_base_url(&format!("{scheme}://{addr}"))?;
    let data_plane = files.router();
    let server = smcp_conformance::server::server_with_files(Some(files))?;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let versions = Arc::new(Mutex::new(Vec::new()));
    let versions2 = versions.clone();
    let app = server
        .router("/mcp")
        .merge(data_plane)
        .layer(tower::util::MapRequestLayer::new(
            move |req: http::Request<axum::body::Body>| {
                let to_files = req.uri().path().starts_with("/files/");
                versions2.lock().unwrap().push((to_files, req.version()));
                if to_files {
                    seen2
                        .lock()
                        .unwrap()
                        .push(req.headers().contains_key("authorization"));
                }
                req
            },
        ));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let tls_config = if tls_on {
        Some(tls::config_from_files(&certs.cert, &certs.key)?)
    } else {
        None
    };
    tokio::spawn(smcp_server::serve(
        listener,
        app,
        ServeOptions {
            tls: tls_config,
            // Plain http also takes HTTP/2 with prior knowledge (h2c), for the version test.
            h2c: !tls_on,
            ..ServeOptions::default()
        },
        async move {
            let _ = stopped.await;
        },
    ));
    Ok(Fixture {
        url: format!("{scheme}://{addr}/mcp"),
        ca: std::fs::read(&certs.ca_cert)?,
        dir,
        auth_seen_on_files: seen,
        versions,
        _stop: stop,
    })
}

fn client(f: &Fixture, files: FileTransfer) -> Result<Client> {
    Ok(Client::builder(&f.url)
        .ca_cert_pem(&f.ca)
        .header("authorization", "Bearer mcp-secret")
        .files(files)
        .build()?)
}

#[tokio::test]
async fn modes_upload_download_and_no_authorization_on_descriptors() -> Result<()> {
    let f = start("e2e", true).await?;
    let c = client(
        &f,
        FileTransfer {
            inline_threshold: 16,
            ..FileTransfer::default()
        },
    )?;
    assert_eq!(
        c.capabilities().extra["files"],
        json!({"upload": true, "download": true, "transports": ["https"]})
    );
    let small = f.dir.join("note.txt");
    std::fs::write(&small, b"hello")?;
    let big = f.dir.join("big.bin");
    let big_bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 7) as u8).collect();
    std::fs::write(&big, &big_bytes)?;
    // Inline-only field: a data: URI.
    let r = c
        .call_tool_with_files(
            "files_inline_text",
            json!({}),
            &[("file".into(), small.clone())],
            None,
        )
        .await?;
    assert_eq!(r.structured_content.as_ref().unwrap()["size"], 5, "{r:?}");
    // Upload-only field: even a small file is uploaded; progress is reported.
    let calls = Arc::new(Mutex::new(0u64));
    let calls2 = calls.clone();
    let progress = move |done: u64, _total: Option<u64>| *calls2.lock().unwrap() = done;
    let r = c
        .call_tool_with_files(
            "files_upload_only",
            json!({}),
            &[("file".into(), big.clone())],
            Some(&progress),
        )
        .await?;
    let sc = r.structured_content.unwrap();
    assert_eq!(sc["digest"]["value"], FileDigest::sha256(&big_bytes).value);
    assert_eq!(*calls.lock().unwrap(), 200_000);
    // Array field with two files (one inline, one uploaded: above the threshold).
    let mid = f.dir.join("mid.csv");
    std::fs::write(&mid, vec![b'x'; 30_000])?;
    let r = c
        .call_tool_with_files(
            "files_many",
            json!({}),
            &[
                ("files".into(), small.clone()),
                ("files".into(), mid.clone()),
            ],
            None,
        )
        .await?;
    assert_eq!(
        r.structured_content.unwrap()["files"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    // Generated output → verified download into a folder under the server's name.
    let r = c
        .call_tool("files_generate", json!({"size": 70_000, "name": "gen.bin"}))
        .await?;
    let uri = r.structured_content.unwrap()["file"]["uri"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = f.dir.join("out");
    std::fs::create_dir_all(&out)?;
    let (path, file) = c.download_to(&uri, &out, None).await?;
    assert_eq!(path, out.join("gen.bin"));
    assert_eq!(file.size, Some(70_000));
    let got = std::fs::read(&path)?;
    assert!(got.iter().enumerate().all(|(i, b)| *b == (i % 251) as u8));
    assert_eq!(std::fs::read_dir(&out)?.count(), 1, "no temp file left");
    // The MCP Authorization header never reached a descriptor URL.
    let seen = f.auth_seen_on_files.lock().unwrap().clone();
    assert!(!seen.is_empty() && seen.iter().all(|s| !s), "{seen:?}");
    Ok(())
}

#[tokio::test]
async fn plain_http_descriptors_need_the_loopback_opt_in() -> Result<()> {
    let f = start("http", false).await?;
    let path = f.dir.join("a.bin");
    std::fs::write(&path, vec![1u8; 100])?;
    let strict = client(&f, FileTransfer::default())?;
    let err = strict.upload_path(&path, None, None).await.unwrap_err();
    assert_eq!(err.kind(), smcp_client::ErrorKind::FileTransfer, "{err}");
    assert!(
        matches!(
            err.transfer_error(),
            Some(TransferError::InsecureUrl {
                loopback_allowed: false,
                ..
            })
        ),
        "{err:?}"
    );
    let dev = client(
        &f,
        FileTransfer {
            allow_insecure_loopback: true,
            ..FileTransfer::default()
        },
    )?;
    let v = dev.upload_path(&path, None, None).await?;
    assert_eq!(v.size, Some(100));
    Ok(())
}

#[tokio::test]
async fn too_large_for_the_field_is_refused_locally() -> Result<()> {
    let f = start("local", true).await?;
    let c = client(&f, FileTransfer::default())?;
    let path = f.dir.join("big.txt");
    std::fs::write(&path, vec![b'a'; 65])?;
    let err = c
        .call_tool_with_files(
            "files_inline_text",
            json!({}),
            &[("file".into(), path)],
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), smcp_client::ErrorKind::FileTransfer, "{err}");
    let _: Value = json!(null);
    Ok(())
}

struct PathAnswer(PathBuf);

impl smcp_client::InputHandler for PathAnswer {
    fn kinds(&self) -> smcp_client::InputKinds {
        smcp_client::InputKinds {
            elicitation_form: true,
            ..Default::default()
        }
    }

    fn elicit(
        &self,
        _params: smcp_proto::client::elicitation::ElicitRequestParams,
    ) -> smcp_client::BoxFuture<
        '_,
        Result<smcp_proto::client::elicitation::ElicitResult, smcp_client::InputHandlerError>,
    > {
        let path = self.0.display().to_string();
        Box::pin(async move {
            let mut content = std::collections::BTreeMap::new();
            content.insert(
                "document".to_owned(),
                smcp_proto::client::elicitation::ElicitValue::String(path),
            );
            Ok(smcp_proto::client::elicitation::ElicitResult::accept(
                content,
            ))
        })
    }
}

#[tokio::test]
async fn elicited_file_field_answered_with_a_path_is_uploaded() -> Result<()> {
    let f = start("elicit", true).await?;
    let path = f.dir.join("pick.txt");
    std::fs::write(&path, b"picked by the user")?;
    let c = Client::builder(&f.url)
        .ca_cert_pem(&f.ca)
        .files(FileTransfer {
            inline_threshold: 4,
            ..FileTransfer::default()
        })
        .input_handler(PathAnswer(path))
        .build()?;
    let r = c.call_tool("files_elicit", json!({})).await?;
    let sc = r.structured_content.unwrap();
    assert_eq!(
        sc["digest"]["value"],
        FileDigest::sha256(b"picked by the user").value,
        "{sc}"
    );
    assert!(
        !f.auth_seen_on_files.lock().unwrap().is_empty(),
        "went through an upload"
    );
    Ok(())
}

#[tokio::test]
async fn multipart_descriptors_get_a_form_post_with_their_fields() -> Result<()> {
    let f = start_with("multipart", true, UploadStyle::Multipart).await?;
    let c = client(&f, FileTransfer::default())?;
    let path = f.dir.join("form.txt");
    std::fs::write(&path, b"sent as multipart/form-data")?;
    let v = c.upload_path(&path, Some("text/plain"), None).await?;
    assert_eq!(v.size, Some(27));
    let r = c
        .call_tool("files_upload_only", json!({"file": v.uri}))
        .await?;
    let sc = r.structured_content.unwrap();
    assert_eq!(
        sc["digest"]["value"],
        FileDigest::sha256(b"sent as multipart/form-data").value,
        "{sc}"
    );
    assert_eq!(sc["mimeType"], "text/plain", "{sc}");
    Ok(())
}

#[tokio::test]
async fn download_file_verifies_the_given_file_value_and_leaves_nothing_on_mismatch() -> Result<()>
{
    let f = start("verify", true).await?;
    let c = client(&f, FileTransfer::default())?;
    let r = c
        .call_tool("files_generate", json!({"size": 3000, "name": "out.bin"}))
        .await?;
    let outputs = smcp_client::files::output_files(&r);
    assert_eq!(outputs.len(), 1, "{r:?}");
    let good = outputs[0].clone();
    let out = f.dir.join("verify-out");
    std::fs::create_dir_all(&out)?;
    // A FileValue whose digest does not match the served bytes: refused, nothing kept.
    let mut tampered = good.clone();
    tampered.digest = Some(FileDigest::sha256(b"not these bytes"));
    let err = c.download_file(&tampered, &out, None).await.unwrap_err();
    assert!(
        matches!(
            err.transfer_error(),
            Some(TransferError::DigestMismatch { .. })
        ),
        "{err:?}"
    );
    assert_eq!(std::fs::read_dir(&out)?.count(), 0, "nothing left behind");
    // A wrong size is caught as well.
    let mut short = good.clone();
    short.size = Some(2999);
    let err = c.download_file(&short, &out, None).await.unwrap_err();
    assert!(
        err.transfer_error()
            .is_some_and(TransferError::is_integrity_failure),
        "{err:?}"
    );
    assert_eq!(std::fs::read_dir(&out)?.count(), 0, "nothing left behind");
    // The genuine one lands under its name.
    let (path, _) = c.download_file(&good, &out, None).await?;
    assert_eq!(path, out.join("out.bin"));
    assert_eq!(std::fs::read(&path)?.len(), 3000);
    assert_eq!(std::fs::read_dir(&out)?.count(), 1);
    Ok(())
}

/// Uploads from memory and from any `AsyncRead`, downloads into any `AsyncWrite`
/// (REQUIREMENTS A23.134), with the same integrity checks as the path APIs.
#[tokio::test]
async fn upload_from_bytes_and_readers_download_into_writers() -> Result<()> {
    use smcp_client::files::UploadMeta;
    let f = start("streams", true).await?;
    let c = client(&f, FileTransfer::default())?;
    let payload: Vec<u8> = (0..100_000u32).map(|i| (i % 13) as u8).collect();

    // From memory: size and digest are computed, the media type guessed from the name.
    let v = c
        .upload_bytes(
            bytes::Bytes::from(payload.clone()),
            UploadMeta::new(0).name("mem.csv"),
            None,
        )
        .await?;
    assert_eq!(v.size, Some(100_000));
    let sc = c
        .call_tool("files_upload_only", json!({"file": v.uri}))
        .await?
        .structured_content
        .unwrap();
    assert_eq!(
        sc["digest"]["value"],
        FileDigest::sha256(&payload).value,
        "{sc}"
    );
    assert_eq!(sc["mimeType"], "text/csv", "{sc}");

    // From a reader (one end of an in-memory pipe), with a declared size and digest.
    let (mut w, r) = tokio::io::duplex(4096);
    let data = payload.clone();
    let writer = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        w.write_all(&data).await.unwrap();
    });
    let meta = UploadMeta::new(100_000)
        .name("piped.bin")
        .digest(FileDigest::sha256(&payload));
    let v = c.upload_reader(r, meta, None).await?;
    writer.await?;
    let sc = c
        .call_tool("files_upload_only", json!({"file": v.uri}))
        .await?
        .structured_content
        .unwrap();
    assert_eq!(
        sc["digest"]["value"],
        FileDigest::sha256(&payload).value,
        "{sc}"
    );

    // A reader shorter than its declared size fails locally, naming both counts.
    let err = c
        .upload_reader(&b"short"[..], UploadMeta::new(10).name("short.bin"), None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.transfer_error(),
            Some(TransferError::SizeMismatch {
                expected: 10,
                received: 5
            })
        ),
        "{err:?}"
    );

    // Download into memory, verified against the tool's FileValue.
    let r = c
        .call_tool("files_generate", json!({"size": 5000, "name": "gen.bin"}))
        .await?;
    let outputs = smcp_client::files::output_files(&r);
    let mut sink = Vec::new();
    let file = c.download_file_into(&outputs[0], &mut sink, None).await?;
    assert_eq!(file.size, Some(5000));
    assert_eq!(sink.len(), 5000);
    assert!(sink.iter().enumerate().all(|(i, b)| *b == (i % 251) as u8));
    let mut sink = Vec::new();
    c.download_into(&outputs[0].uri, &mut sink, None).await?;
    assert_eq!(sink.len(), 5000);
    // A tampered FileValue is an integrity error (the caller discards what was written).
    let mut tampered = outputs[0].clone();
    tampered.digest = Some(FileDigest::sha256(b"other"));
    let err = c
        .download_file_into(&tampered, &mut Vec::new(), None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.transfer_error(),
            Some(TransferError::DigestMismatch { .. })
        ),
        "{err:?}"
    );
    Ok(())
}

/// The HTTP version asked for is the one spoken, to the endpoint and to descriptor URLs alike:
/// over TLS, ALPN picks HTTP/2 unless the client asks for HTTP/1.1; over plain http, HTTP/1.1
/// unless the client asks for HTTP/2 (prior knowledge, which the server detects).
#[tokio::test]
async fn the_http_version_asked_for_is_spoken_to_endpoint_and_descriptors() -> Result<()> {
    use http::Version;
    use smcp_client::HttpVersion;
    let payload: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
    for (tls_on, asked, spoken) in [
        (true, HttpVersion::Auto, Version::HTTP_2),
        (true, HttpVersion::Http1, Version::HTTP_11),
        (true, HttpVersion::Http2, Version::HTTP_2),
        (false, HttpVersion::Auto, Version::HTTP_11),
        (false, HttpVersion::Http2, Version::HTTP_2),
    ] {
        let f = start(&format!("version-{tls_on}-{asked:?}"), tls_on).await?;
        let c = Client::builder(&f.url)
            .ca_cert_pem(&f.ca)
            .http_version(asked)
            .files(FileTransfer {
                inline_threshold: 16,
                allow_insecure_loopback: !tls_on,
                ..FileTransfer::default()
            })
            .build()?;
        let v = c
            .upload_bytes(
                bytes::Bytes::from(payload.clone()),
                smcp_client::files::UploadMeta::new(0).name("v.bin"),
                None,
            )
            .await?;
        let mut back = Vec::new();
        c.download_into(&v.uri, &mut back, None).await?;
        assert_eq!(back, payload);
        let seen = f.versions.lock().unwrap().clone();
        assert!(seen.iter().any(|(files, _)| *files), "{seen:?}");
        assert!(seen.iter().any(|(files, _)| !*files), "{seen:?}");
        assert!(
            seen.iter().all(|(_, v)| *v == spoken),
            "tls {tls_on}, {asked:?}: {seen:?}"
        );
    }
    // A server without HTTP/2 fails an HTTP/2-only client at connect, with a transport error.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            use tokio::io::AsyncWriteExt;
            let _ = s
                .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                .await;
        }
    });
    let err = Client::builder(format!("http://{addr}/mcp"))
        .http_version(HttpVersion::Http2)
        .build()?
        .list_tools()
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            smcp_client::ErrorKind::NotHttp | smcp_client::ErrorKind::Transport
        ),
        "{err:?}"
    );
    Ok(())
}
