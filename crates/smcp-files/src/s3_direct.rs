//! Direct transfers on S3 (feature `s3`): presigned `PUT`s bound to the exact size, the
//! sha-256 (`x-amz-checksum-sha256`), the media type and `If-None-Match: *`, presigned `GET`s,
//! and the confirmation of an upload by a `HEAD` with `x-amz-checksum-mode: ENABLED`.
//!
//! Keys, under the store's prefix: the intent of an authorized upload is
//! `tmp/<id>.pending` (JSON [`UploadIntent`]), its bytes `blobs/<the id's 32 hex digits>`, and
//! once confirmed the record `files/<id>.json` names that object, as the relayed path's
//! records do. Presigned URLs are signed with [`crate::sigv4`] (object_store's signer cannot
//! bind `content-length`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use object_store::aws::AmazonS3;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt, PutMode, PutPayload};

use crate::direct::{DirectFuture, DirectTransfer, PresignedRequest, Unconfirmed, UploadIntent};
use crate::error::FileStoreError;
use crate::meta::FileMeta;
use crate::sigv4::{self, Credentials, Presign};
use crate::sniff;
use crate::store::{meta_json, os_path, parse_meta};

/// The largest object one S3 `PUT` may create (5 GiB).
const MAX_SINGLE_PUT: u64 = 5 << 30;

/// How long a confirmation's `HEAD` may take.
const HEAD_TIMEOUT: Duration = Duration::from_secs(20);

/// [`DirectTransfer`] on an S3 bucket.
#[derive(Debug)]
pub(crate) struct S3Direct {
    /// The bucket under the prefix (intents, records, sniffing reads).
    store: Arc<dyn ObjectStore>,
    /// The unprefixed client, for its credentials.
    s3: Arc<AmazonS3>,
    /// `scheme://authority` of the bucket's endpoint.
    origin: String,
    /// The endpoint's authority, the `Host` header signed.
    host: String,
    /// The bucket's path on the endpoint (`/bucket` path-style, empty virtual-hosted).
    base_path: String,
    /// The store's key prefix, with a trailing `/`, or empty.
    prefix: String,
    region: String,
    http: reqwest::Client,
}

impl S3Direct {
    /// Direct transfers on `s3`'s bucket under `prefix`; `store` is the same bucket under the
    /// prefix. The endpoint is the one object_store itself addresses (learnt from a URL it
    /// signs).
    pub(crate) async fn new(
        s3: Arc<AmazonS3>,
        store: Arc<dyn ObjectStore>,
        prefix: Option<&str>,
        region: String,
    ) -> Result<Self, String> {
        use object_store::signer::Signer as _;
        let probe = s3
            .signed_url(
                http::Method::GET,
                &Path::from("smcp-probe"),
                Duration::from_secs(60),
            )
            .await
            .map_err(|e| format!("cannot presign on this store: {e}"))?;
        let host = match probe.port() {
            Some(port) => format!("{}:{port}", probe.host_str().unwrap_or_default()),
            None => probe.host_str().unwrap_or_default().to_owned(),
        };
        let base_path = probe
            .path()
            .strip_suffix("/smcp-probe")
            .ok_or("unexpected presigned URL shape")?
            .to_owned();
        let http = reqwest::Client::builder()
            .timeout(HEAD_TIMEOUT)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self {
            store,
            s3,
            origin: format!("{}://{host}", probe.scheme()),
            host,
            base_path,
            prefix: prefix.map(|p| format!("{p}/")).unwrap_or_default(),
            region,
            http,
        })
    }

    async fn credentials(&self) -> Result<Credentials, FileStoreError> {
        let c = self
            .s3
            .credentials()
            .get_credential()
            .await
            .map_err(|e| FileStoreError::Io(format!("S3 credentials: {e}")))?;
        Ok(Credentials {
            key_id: c.key_id.clone(),
            secret: c.secret_key.clone(),
            token: c.token.clone(),
        })
    }

    /// The URI path of `key` (under the prefix).
    fn path(&self, key: &str) -> String {
        format!(
            "{}{}",
            self.base_path,
            sigv4::encode_path(&format!("{}{key}", self.prefix))
        )
    }

    async fn presign(
        &self,
        method: &str,
        key: &str,
        query: &[(&str, &str)],
        headers: &[(&str, &str)],
        expires_in: Duration,
    ) -> Result<String, FileStoreError> {
        let credentials = self.credentials().await?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let path = self.path(key);
        Ok(sigv4::presign(
            &credentials,
            &Presign {
                method,
                origin: &self.origin,
                host: &self.host,
                path: &path,
                query,
                headers,
                region: &self.region,
                now,
                expires: expires_in.as_secs().max(1),
            },
        ))
    }

    /// `HEAD` of `key` with checksum mode: `None` when there is no object; else its length
    /// and the sha-256 checksum the store reports (standard base64), if any.
    async fn head(&self, key: &str) -> Result<Option<(u64, Option<String>)>, FileStoreError> {
        let mode = [("x-amz-checksum-mode", "ENABLED")];
        let url = self
            .presign("HEAD", key, &[], &mode, Duration::from_secs(60))
            .await?;
        let res = self
            .http
            .head(url)
            .header("x-amz-checksum-mode", "ENABLED")
            .send()
            .await
            .map_err(|e| FileStoreError::Io(format!("S3 HEAD: {}", e.without_url())))?;
        match res.status().as_u16() {
            404 => return Ok(None),
            s if !(200..300).contains(&s) => {
                return Err(FileStoreError::Io(format!("S3 HEAD answered {s}")));
            }
            _ => {}
        }
        let header = |name: &str| {
            res.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let len = header("content-length")
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| FileStoreError::Io("S3 HEAD without a content length".into()))?;
        Ok(Some((len, header("x-amz-checksum-sha256"))))
    }

    /// The media type the object's first bytes show.
    async fn sniff(&self, key: &str, size: u64) -> Result<Option<String>, FileStoreError> {
        if size == 0 {
            return Ok(None);
        }
        let len = size.min(sniff::SNIFF_LEN as u64);
        let opts = GetOptions {
            range: Some(GetRange::Bounded(0..len)),
            ..GetOptions::default()
        };
        let head = self
            .store
            .get_opts(&Path::from(key), opts)
            .await?
            .bytes()
            .await?;
        Ok(sniff::detect(&head).map(str::to_owned))
    }

    async fn read_intent(&self, id: &str) -> Result<Option<UploadIntent>, FileStoreError> {
        match self.store.get(&intent_path(id)).await {
            Ok(got) => {
                let bytes = got.bytes().await?;
                serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|e| FileStoreError::Io(format!("corrupt upload intent: {e}")))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    async fn confirm_now(
        &self,
        id: &str,
        now: u64,
    ) -> Result<Result<FileMeta, Unconfirmed>, FileStoreError> {
        let record = os_path("files", &format!("{id}.json"));
        let Some(intent) = self.read_intent(id).await? else {
            return Ok(Err(Unconfirmed::NoIntent));
        };
        let key = blob_key(id)?;
        let Some((len, checksum)) = self.head(&key).await? else {
            return Ok(Err(Unconfirmed::NotUploaded));
        };
        let expected = std_base64(&intent.meta.digest.value);
        if len != intent.meta.size || checksum.as_deref() != Some(expected.as_str()) {
            tracing::warn!(
                file = %id,
                len,
                authorized = intent.meta.size,
                checksum_reported = checksum.is_some(),
                "direct upload does not match its authorization (or the store reports no \
                 sha-256): deleted, the file stays invisible"
            );
            self.store.delete(&Path::from(key.as_str())).await?;
            return Ok(Err(Unconfirmed::Mismatch));
        }
        let mut meta = intent.meta;
        meta.created_at = now;
        meta.detected_type = self.sniff(&key, len).await?;
        meta.blob = Some(key);
        let created = self
            .store
            .put_opts(
                &record,
                PutPayload::from(meta_json(&meta)?),
                PutMode::Create.into(),
            )
            .await;
        let meta = match created {
            Ok(_) => meta,
            // Another instance confirmed it first: its record is the file.
            Err(object_store::Error::AlreadyExists { .. }) => {
                parse_meta(&self.store.get(&record).await?.bytes().await?)?
            }
            Err(e) => return Err(e.into()),
        };
        let _ = self.store.delete(&intent_path(id)).await;
        tracing::debug!(file = %id, size = meta.size, "direct upload confirmed");
        Ok(Ok(meta))
    }
}

fn intent_path(id: &str) -> Path {
    os_path("tmp", &format!("{id}.pending"))
}

/// `blobs/<the id's 32 hex digits>`: the object a direct upload of `id` creates.
fn blob_key(id: &str) -> Result<String, FileStoreError> {
    match id.strip_prefix("file_") {
        Some(hex) if FileMeta::valid_id(id) => Ok(format!("blobs/{hex}")),
        _ => Err(FileStoreError::NotFound),
    }
}

/// The standard base64 of a base64url (unpadded) sha-256, as S3 writes checksums.
fn std_base64(url_safe: &str) -> String {
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(url_safe)
        .unwrap_or_default();
    base64::engine::general_purpose::STANDARD.encode(raw)
}

impl DirectTransfer for S3Direct {
    fn origin(&self) -> &str {
        &self.origin
    }

    fn max_upload(&self) -> u64 {
        MAX_SINGLE_PUT
    }

    fn authorize_upload<'a>(
        &'a self,
        intent: &'a UploadIntent,
        expires_in: Duration,
    ) -> DirectFuture<'a, Result<PresignedRequest, FileStoreError>> {
        Box::pin(async move {
            let meta = &intent.meta;
            let key = blob_key(&meta.id)?;
            self.store
                .put_opts(
                    &intent_path(&meta.id),
                    PutPayload::from(
                        serde_json::to_vec(intent)
                            .map_err(|e| FileStoreError::Io(e.to_string()))?,
                    ),
                    PutMode::Create.into(),
                )
                .await?;
            let size = meta.size.to_string();
            let checksum = std_base64(&meta.digest.value);
            let headers = [
                ("content-type", meta.mime_type.as_str()),
                ("if-none-match", "*"),
                ("x-amz-checksum-sha256", checksum.as_str()),
            ];
            let mut signed = headers.to_vec();
            signed.push(("content-length", size.as_str()));
            let url = self.presign("PUT", &key, &[], &signed, expires_in).await?;
            Ok(PresignedRequest {
                method: "PUT".into(),
                url,
                headers: BTreeMap::from([
                    ("Content-Type".to_owned(), meta.mime_type.clone()),
                    ("If-None-Match".to_owned(), "*".to_owned()),
                    ("x-amz-checksum-sha256".to_owned(), checksum),
                ]),
            })
        })
    }

    fn authorize_download<'a>(
        &'a self,
        meta: &'a FileMeta,
        content_disposition: &'a str,
        expires_in: Duration,
    ) -> DirectFuture<'a, Result<PresignedRequest, FileStoreError>> {
        Box::pin(async move {
            let key = match &meta.blob {
                Some(key) if key.starts_with("blobs/") => key.clone(),
                _ => format!("blobs/{}", meta.digest.value),
            };
            let query = [
                ("response-cache-control", "no-store"),
                ("response-content-disposition", content_disposition),
                ("response-content-type", meta.mime_type.as_str()),
            ];
            let url = self.presign("GET", &key, &query, &[], expires_in).await?;
            Ok(PresignedRequest {
                method: "GET".into(),
                url,
                headers: BTreeMap::new(),
            })
        })
    }

    fn confirm<'a>(
        &'a self,
        id: &'a str,
        now: u64,
    ) -> DirectFuture<'a, Result<Result<FileMeta, Unconfirmed>, FileStoreError>> {
        Box::pin(self.confirm_now(id, now))
    }

    fn pending(&self) -> DirectFuture<'_, Result<Vec<UploadIntent>, FileStoreError>> {
        Box::pin(async move {
            use futures_util::TryStreamExt as _;
            let listing: Vec<_> = self
                .store
                .list(Some(&Path::from("tmp")))
                .try_collect()
                .await?;
            let mut out = Vec::new();
            for object in listing {
                let Some(id) = object
                    .location
                    .filename()
                    .and_then(|n| n.strip_suffix(".pending"))
                else {
                    continue;
                };
                if let Some(intent) = self.read_intent(id).await? {
                    out.push(intent);
                }
            }
            Ok(out)
        })
    }
}
