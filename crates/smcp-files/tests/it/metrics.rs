//! The data plane counts its bytes through the server's metrics handle.

use std::sync::{Arc, Mutex};

use anyhow::Result;
use axum::body::Body;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use smcp_files::{Files, FilesConfig, LocalFileStore, UploadStyle};
use smcp_proto::ext::files::{AuthorizeUploadRequestParams, FileDigest};
use smcp_server::core::metrics::{FileDirection, Metrics, MetricsHandle};
use tower::ServiceExt;

/// Every `file_bytes` report, in order.
#[derive(Debug, Default)]
struct Recorded(Mutex<Vec<(FileDirection, u64)>>);

impl Metrics for Recorded {
    fn file_bytes(&self, direction: FileDirection, bytes: u64) {
        if let Ok(mut seen) = self.0.lock() {
            seen.push((direction, bytes));
        }
    }
}

fn ring() -> Result<smcp_server::KeyRing> {
    Ok(smcp_server::KeyRing::new(smcp_server::Key::new(
        "k", [3; 32],
    )?))
}

#[tokio::test]
async fn uploads_and_downloads_are_counted() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("smcp-files-metrics-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = LocalFileStore::open(&dir)?;
    let config = FilesConfig {
        authority: "test".into(),
        base_url: Some("https://files.test".into()),
        upload_style: UploadStyle::Put,
        max_size: 1 << 20,
        ..FilesConfig::default()
    };
    let files = Files::new(Arc::new(store), ring()?, config)?;
    let recorded = Arc::new(Recorded::default());
    files.set_metrics(MetricsHandle::new(recorded.clone()));

    let payload = vec![7u8; 70_000];
    let params = AuthorizeUploadRequestParams {
        name: Some("blob.bin".into()),
        size: Some(payload.len() as u64),
        digest: Some(FileDigest::sha256(&payload)),
        ..Default::default()
    };
    let auth = files.authorize_upload(&params, Some("alice"))?;
    let path = auth.upload.url.trim_start_matches("https://files.test");
    let response = files
        .router()
        .oneshot(Request::put(path).body(Body::from(payload.clone()))?)
        .await?;
    assert_eq!(response.status(), StatusCode::OK);

    let dl = files
        .authorize_download(&auth.file.uri, Some("alice"))
        .await?;
    let path = dl.download.url.trim_start_matches("https://files.test");
    let response = files
        .router()
        .oneshot(Request::get(path).body(Body::empty())?)
        .await?;
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.into_body().collect().await?.to_bytes();
    assert_eq!(body.len(), payload.len());

    let seen = recorded.0.lock().map(|s| s.clone()).unwrap_or_default();
    let total =
        |d: FileDirection| -> u64 { seen.iter().filter(|(x, _)| *x == d).map(|(_, n)| n).sum() };
    assert_eq!(total(FileDirection::In), payload.len() as u64, "{seen:?}");
    assert_eq!(total(FileDirection::Out), payload.len() as u64, "{seen:?}");
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
