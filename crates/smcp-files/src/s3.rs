//! The S3 backend of [`ObjectStoreFileStore`] (feature `s3`): `s3://bucket[/prefix]`, with the
//! endpoint, region and credentials from the usual `AWS_*` environment variables, checked by
//! a startup probe.
//!
//! Every instance given the same bucket, prefix and files key serves every other one's files:
//! the file records (`files/<id>.json`), the upload claims (`tmp/<id>.claim`) and the bytes
//! (`blobs/<random>`, named by the record) are objects in the bucket, and the record and the claim are written
//! with a conditional put (`If-None-Match: *`, [`object_store::PutMode::Create`]), so exactly
//! one instance wins a race for a descriptor. The probe checks that the endpoint honours that
//! precondition and refuses to start on one that does not.
//!
//! The store also presigns (`crate::s3_direct`): with `FilesConfig::presign`, upload and
//! download descriptors point straight at the bucket.

use std::sync::Arc;
use std::time::Duration;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::prefix::PrefixStore;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutPayload, RetryConfig};

use crate::s3_direct::S3Direct;
use crate::store::ObjectStoreFileStore;

/// The longest prefix accepted, bytes.
const MAX_PREFIX: usize = 512;

/// Where an S3 file store lives: `s3://bucket[/prefix]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Location {
    /// The bucket name.
    pub bucket: String,
    /// The key prefix every object of the store is under (without slashes at either end);
    /// `None` for the bucket's root.
    pub prefix: Option<String>,
}

/// Why an S3 store could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum S3Error {
    /// The `s3://` URL is malformed; the message names the part.
    #[error("file store URL: {0}")]
    Url(String),
    /// The client could not be configured from the environment (for example a malformed
    /// `AWS_ENDPOINT_URL`).
    #[error("S3 client configuration: {0}")]
    Config(String),
    /// The bucket does not exist at the endpoint.
    #[error("S3 bucket {bucket:?} does not exist at the configured endpoint")]
    NoSuchBucket {
        /// The bucket.
        bucket: String,
    },
    /// The endpoint refused the credentials (or they lack write access to the bucket).
    #[error("S3 bucket {bucket:?}: access refused (check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)")]
    AccessDenied {
        /// The bucket.
        bucket: String,
    },
    /// The endpoint could not be reached, or answered with an error, within the probe.
    #[error("S3 bucket {bucket:?} unreachable: {message}")]
    Unreachable {
        /// The bucket.
        bucket: String,
        /// What failed.
        message: String,
    },
    /// The endpoint accepted a second create of an existing object: it ignores
    /// `If-None-Match`, so single-use descriptors could be redeemed twice.
    #[error(
        "S3 bucket {bucket:?}: the endpoint does not honour conditional puts (If-None-Match: *), \
         which single-use upload descriptors need across instances"
    )]
    NoConditionalPut {
        /// The bucket.
        bucket: String,
    },
}

impl S3Location {
    /// Parses `s3://bucket[/prefix]`. The bucket follows S3's naming rules (3 to 63 of
    /// lowercase letters, digits, `.` and `-`, starting and ending with a letter or digit);
    /// the prefix is `/`-separated segments of printable ASCII other than `\`, none empty,
    /// `.` or `..`.
    pub fn parse(url: &str) -> Result<Self, S3Error> {
        let Some(rest) = url.strip_prefix("s3://") else {
            return Err(S3Error::Url("expected s3://bucket[/prefix]".into()));
        };
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        check_bucket(bucket)?;
        let prefix = prefix.trim_end_matches('/');
        if prefix.len() > MAX_PREFIX {
            return Err(S3Error::Url(format!(
                "prefix longer than {MAX_PREFIX} bytes"
            )));
        }
        if !prefix.is_empty() {
            for segment in prefix.split('/') {
                if segment.is_empty() || segment == "." || segment == ".." {
                    return Err(S3Error::Url(
                        "prefix has an empty, \".\" or \"..\" segment".into(),
                    ));
                }
                if !segment.bytes().all(|b| b.is_ascii_graphic() && b != b'\\') {
                    return Err(S3Error::Url(
                        "prefix must be printable ASCII without spaces or backslashes".into(),
                    ));
                }
            }
        }
        Ok(Self {
            bucket: bucket.to_owned(),
            prefix: (!prefix.is_empty()).then(|| prefix.to_owned()),
        })
    }
}

impl std::fmt::Display for S3Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.prefix {
            Some(p) => write!(f, "s3://{}/{p}", self.bucket),
            None => write!(f, "s3://{}", self.bucket),
        }
    }
}

fn check_bucket(bucket: &str) -> Result<(), S3Error> {
    if bucket.is_empty() {
        return Err(S3Error::Url("no bucket name after s3://".into()));
    }
    if !(3..=63).contains(&bucket.len()) {
        return Err(S3Error::Url(
            "bucket name must be 3 to 63 characters".into(),
        ));
    }
    let bytes = bucket.as_bytes();
    let edge_ok = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if !bytes.iter().all(|&b| edge_ok(b) || b == b'.' || b == b'-')
        || !bytes.first().copied().is_some_and(edge_ok)
        || !bytes.last().copied().is_some_and(edge_ok)
    {
        return Err(S3Error::Url(
            "bucket name must be lowercase letters, digits, '.' and '-', starting and ending \
             with a letter or digit"
                .into(),
        ));
    }
    Ok(())
}

/// Builds an S3 [`ObjectStoreFileStore`]: [`S3StoreBuilder::from_env`], then
/// [`S3StoreBuilder::build`] (which probes the bucket).
#[derive(Debug)]
pub struct S3StoreBuilder {
    location: S3Location,
    builder: AmazonS3Builder,
    probe_timeout: Duration,
}

impl S3StoreBuilder {
    /// A store at `url` (`s3://bucket[/prefix]`), configured from the environment:
    /// `AWS_ENDPOINT_URL` (or `AWS_ENDPOINT`), `AWS_REGION` / `AWS_DEFAULT_REGION`,
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_ALLOW_HTTP=true`
    /// for a plain-http endpoint, and the other variables `object_store` reads
    /// (`AmazonS3Builder::from_env`).
    pub fn from_env(url: &str) -> Result<Self, S3Error> {
        let location = S3Location::parse(url)?;
        let builder = AmazonS3Builder::from_env().with_bucket_name(&location.bucket);
        Ok(Self {
            location,
            builder,
            probe_timeout: Duration::from_secs(20),
        })
    }

    /// How long the startup probe may take in all (default 20 s).
    #[must_use]
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    /// Where the store lives.
    pub fn location(&self) -> &S3Location {
        &self.location
    }

    /// Builds the store and probes the bucket: a listing, a conditional create of a probe object, a
    /// second one that must be refused, and its deletion. A missing bucket, refused
    /// credentials, an unreachable endpoint and an endpoint ignoring `If-None-Match` are each
    /// their own [`S3Error`].
    pub async fn build(self) -> Result<ObjectStoreFileStore, S3Error> {
        let bucket = self.location.bucket.clone();
        // The probe fails fast (no retries); the store itself retries with backoff.
        let probe = self
            .builder
            .clone()
            .with_retry(RetryConfig {
                max_retries: 0,
                ..RetryConfig::default()
            })
            .build()
            .map_err(|e| S3Error::Config(e.to_string()))?;
        let store = self
            .builder
            .clone()
            .build()
            .map_err(|e| S3Error::Config(e.to_string()))?;
        let probe = self.wrap(Arc::new(probe));
        match tokio::time::timeout(self.probe_timeout, run_probe(probe.as_ref(), &bucket)).await {
            Ok(result) => result?,
            Err(_) => {
                return Err(S3Error::Unreachable {
                    bucket,
                    message: format!("no answer within {:?}", self.probe_timeout),
                });
            }
        }
        let s3 = Arc::new(store);
        let prefixed = self.wrap(s3.clone());
        let region = self
            .builder
            .get_config_value(&AmazonS3ConfigKey::Region)
            .unwrap_or_else(|| "us-east-1".to_owned());
        let files = ObjectStoreFileStore::new(prefixed.clone());
        // Presigned (direct) transfers, used when the file service is configured for them.
        match S3Direct::new(s3, prefixed, self.location.prefix.as_deref(), region).await {
            Ok(direct) => Ok(files.with_direct(Arc::new(direct))),
            Err(e) => {
                tracing::info!(bucket = %bucket, error = %e, "no presigned transfers on this store");
                Ok(files)
            }
        }
    }

    fn wrap(&self, store: Arc<dyn ObjectStore>) -> Arc<dyn ObjectStore> {
        match &self.location.prefix {
            Some(prefix) => Arc::new(PrefixStore::new(store, prefix.as_str())),
            None => store,
        }
    }
}

async fn run_probe(store: &dyn ObjectStore, bucket: &str) -> Result<(), S3Error> {
    let name = smcp_server::keys::random_hex::<8>().map_err(|e| S3Error::Unreachable {
        bucket: bucket.to_owned(),
        message: e.to_string(),
    })?;
    // A listing first: a missing bucket is a 404 there on every S3 (some refuse a PUT into
    // one with 403 instead).
    store
        .list_with_delimiter(Some(&object_store::path::Path::from("tmp")))
        .await
        .map_err(|e| probe_error(e, bucket))?;
    let path = object_store::path::Path::from(format!("tmp/probe-{name}"));
    let create = || {
        store.put_opts(
            &path,
            PutPayload::from_static(b"smcp probe"),
            PutMode::Create.into(),
        )
    };
    create().await.map_err(|e| probe_error(e, bucket))?;
    let second = create().await;
    let _ = store.delete(&path).await;
    match second {
        Err(object_store::Error::AlreadyExists { .. }) => Ok(()),
        Ok(_) | Err(object_store::Error::NotImplemented { .. }) => Err(S3Error::NoConditionalPut {
            bucket: bucket.to_owned(),
        }),
        Err(e) => Err(probe_error(e, bucket)),
    }
}

fn probe_error(e: object_store::Error, bucket: &str) -> S3Error {
    let bucket = bucket.to_owned();
    // A listing's 404 comes back as a generic error carrying S3's error code.
    if e.to_string().contains("<Code>NoSuchBucket</Code>") {
        return S3Error::NoSuchBucket { bucket };
    }
    match e {
        object_store::Error::NotFound { .. } => S3Error::NoSuchBucket { bucket },
        object_store::Error::PermissionDenied { .. }
        | object_store::Error::Unauthenticated { .. } => S3Error::AccessDenied { bucket },
        object_store::Error::NotImplemented { .. } => S3Error::NoConditionalPut { bucket },
        other => S3Error::Unreachable {
            bucket,
            message: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(url: &str) -> String {
        match S3Location::parse(url) {
            Err(e) => e.to_string(),
            Ok(l) => panic!("{url} parsed as {l:?}"),
        }
    }

    #[test]
    fn urls() {
        assert_eq!(
            S3Location::parse("s3://files-1/smcp/prod/").ok(),
            Some(S3Location {
                bucket: "files-1".into(),
                prefix: Some("smcp/prod".into())
            })
        );
        assert_eq!(
            S3Location::parse("s3://my.bucket").ok(),
            Some(S3Location {
                bucket: "my.bucket".into(),
                prefix: None
            })
        );
        assert_eq!(
            S3Location::parse("s3://abc/").map(|l| l.to_string()).ok(),
            Some("s3://abc".to_owned())
        );
        assert!(err("https://bucket/x").contains("expected s3://bucket"));
        assert!(err("s3://").contains("no bucket name"));
        assert!(err("s3://ab").contains("3 to 63"));
        assert!(err("s3://Bucket").contains("lowercase"));
        assert!(err("s3://-bucket").contains("starting and ending"));
        assert!(err("s3://bucket/a//b").contains("empty"));
        assert!(err("s3://bucket/a/../b").contains("\"..\""));
        assert!(err("s3://bucket/a b").contains("printable ASCII"));
        assert!(err(&format!("s3://bucket/{}", "a".repeat(600))).contains("prefix longer"));
    }
}
