//! `FilesConfig::presign` in the file service: refused without a store that presigns, with
//! multipart descriptors and with a plain-http store origin (unless loopback development);
//! an upload declaring size and digest gets the store's presigned request, one without them
//! the data plane's descriptor. (The S3 store itself, against a real SeaweedFS, is tested in
//! smcpd's `files_presign`.)

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use smcp_files::direct::DirectFuture;
use smcp_files::{
    DirectTransfer, FileMeta, FileStoreError, Files, FilesConfig, LocalFileStore,
    ObjectStoreFileStore, PresignedRequest, SetupError, Unconfirmed, UploadIntent, UploadStyle,
};
use smcp_proto::ext::files::{AuthorizeUploadRequestParams, FileDigest};

/// A store seam that records what it was asked to presign and answers fixed URLs.
#[derive(Debug)]
struct Recorder {
    origin: String,
    intents: Mutex<Vec<(UploadIntent, Duration)>>,
}

impl DirectTransfer for Recorder {
    fn origin(&self) -> &str {
        &self.origin
    }

    fn max_upload(&self) -> u64 {
        100
    }

    fn authorize_upload<'a>(
        &'a self,
        intent: &'a UploadIntent,
        expires_in: Duration,
    ) -> DirectFuture<'a, Result<PresignedRequest, FileStoreError>> {
        Box::pin(async move {
            if let Ok(mut all) = self.intents.lock() {
                all.push((intent.clone(), expires_in));
            }
            Ok(PresignedRequest {
                method: "PUT".into(),
                url: format!("{}/bucket/blobs/{}?sig", self.origin, intent.meta.id),
                headers: BTreeMap::from([("x-amz-checksum-sha256".into(), "c".into())]),
            })
        })
    }

    fn authorize_download<'a>(
        &'a self,
        _meta: &'a FileMeta,
        _content_disposition: &'a str,
        _expires_in: Duration,
    ) -> DirectFuture<'a, Result<PresignedRequest, FileStoreError>> {
        Box::pin(async { Err(FileStoreError::NotFound) })
    }

    fn confirm<'a>(
        &'a self,
        _id: &'a str,
        _now: u64,
    ) -> DirectFuture<'a, Result<Result<FileMeta, Unconfirmed>, FileStoreError>> {
        Box::pin(async { Ok(Err(Unconfirmed::NotUploaded)) })
    }

    fn pending(&self) -> DirectFuture<'_, Result<Vec<UploadIntent>, FileStoreError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}

fn ring() -> smcp_server::KeyRing {
    match smcp_server::Key::new("k", [3; 32]) {
        Ok(key) => smcp_server::KeyRing::new(key),
        Err(e) => panic!("a valid key id: {e}"),
    }
}

fn config() -> FilesConfig {
    FilesConfig {
        authority: "test".into(),
        base_url: Some("https://files.test".into()),
        presign: true,
        upload_ttl: 120,
        ..FilesConfig::default()
    }
}

fn with_recorder(origin: &str) -> (Arc<ObjectStoreFileStore>, Arc<Recorder>) {
    let recorder = Arc::new(Recorder {
        origin: origin.to_owned(),
        intents: Mutex::new(Vec::new()),
    });
    let store = ObjectStoreFileStore::new(Arc::new(object_store::memory::InMemory::new()))
        .with_direct(recorder.clone());
    (Arc::new(store), recorder)
}

#[test]
fn presign_is_refused_where_it_cannot_hold() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("smcp-files-presign-{}", std::process::id()));
    let local = Arc::new(LocalFileStore::open(&dir)?);
    match Files::new(local, ring(), config()) {
        Err(e @ SetupError::PresignUnsupported { .. }) => {
            assert!(e.to_string().contains("an S3 store"), "{e}");
        }
        other => panic!("presign on local disk: {other:?}"),
    }
    let (store, _) = with_recorder("https://s3.test");
    let multipart = FilesConfig {
        upload_style: UploadStyle::Multipart,
        ..config()
    };
    assert_eq!(
        Files::new(store, ring(), multipart).err(),
        Some(SetupError::PresignMultipart)
    );
    // A plain-http store origin: only on loopback, only with the development opt-in.
    let (plain, _) = with_recorder("http://127.0.0.1:9000");
    assert!(matches!(
        Files::new(plain.clone(), ring(), config()),
        Err(SetupError::BaseUrl(_))
    ));
    let dev = FilesConfig {
        allow_insecure_loopback: true,
        ..config()
    };
    assert!(Files::new(plain, ring(), dev).is_ok());
    let (remote, _) = with_recorder("http://s3.test");
    let dev = FilesConfig {
        allow_insecure_loopback: true,
        ..config()
    };
    assert!(Files::new(remote, ring(), dev).is_err());
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

#[tokio::test]
async fn uploads_with_size_and_digest_are_presigned_others_relayed() -> Result<()> {
    let (store, recorder) = with_recorder("https://s3.test");
    let files = Files::new(store, ring(), config())?;
    let digest = FileDigest::sha256(b"hello");
    let params = AuthorizeUploadRequestParams {
        name: Some("h.txt".into()),
        mime_type: Some("text/plain".into()),
        size: Some(5),
        digest: Some(digest.clone()),
        ..Default::default()
    };
    let presigned = files.authorize(&params, Some("alice")).await?;
    let id = presigned.file.uri.rsplit('/').next().unwrap_or_default();
    assert_eq!(
        presigned.upload.url,
        format!("https://s3.test/bucket/blobs/{id}?sig")
    );
    assert_eq!(presigned.upload.method, "PUT");
    assert!(presigned.upload.expires_at.is_some());
    assert_eq!(
        presigned.upload.headers,
        Some(BTreeMap::from([(
            "x-amz-checksum-sha256".to_owned(),
            "c".to_owned()
        )]))
    );
    let intents = recorder
        .intents
        .lock()
        .map(|i| i.clone())
        .unwrap_or_default();
    assert_eq!(intents.len(), 1);
    let (intent, ttl) = &intents[0];
    assert_eq!(*ttl, Duration::from_secs(120));
    assert_eq!(intent.meta.id, id);
    assert_eq!(intent.meta.owner.as_deref(), Some("alice"));
    assert_eq!((intent.meta.size, &intent.meta.digest), (5, &digest));
    assert_eq!(intent.meta.mime_type, "text/plain");

    // No digest, no size, or more than one store request carries: the data plane.
    for params in [
        AuthorizeUploadRequestParams {
            size: Some(5),
            ..Default::default()
        },
        AuthorizeUploadRequestParams {
            digest: Some(digest.clone()),
            ..Default::default()
        },
        AuthorizeUploadRequestParams {
            size: Some(101),
            digest: Some(digest.clone()),
            ..Default::default()
        },
    ] {
        let relayed = files.authorize(&params, None).await?;
        assert!(
            relayed
                .upload
                .url
                .starts_with("https://files.test/files/upload/"),
            "{}",
            relayed.upload.url
        );
    }
    assert_eq!(recorder.intents.lock().map(|i| i.len()).unwrap_or(0), 1);
    // A bad request is refused before anything is recorded or presigned.
    let bad = AuthorizeUploadRequestParams {
        mime_type: Some("not a type".into()),
        size: Some(5),
        digest: Some(digest),
        ..Default::default()
    };
    assert!(files.authorize(&bad, None).await.is_err());
    assert_eq!(recorder.intents.lock().map(|i| i.len()).unwrap_or(0), 1);
    Ok(())
}
