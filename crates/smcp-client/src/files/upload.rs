//! `files/authorizeUpload` and the out-of-band upload: a raw body with the descriptor's method
//! and headers, or a `multipart/form-data` POST with every `fields` entry plus the bytes under
//! `fileField` (the boundary is generated here; a descriptor's bare
//! `Content-Type: multipart/form-data` is never sent verbatim).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use smcp_proto::ext::files::{
    AuthorizeUploadRequestParams, AuthorizeUploadResult, DigestBuilder, FileDigest,
    FileTransferDescriptor, FileValue, METHOD_AUTHORIZE_UPLOAD,
};
use tokio::io::AsyncReadExt;

use super::chunks::ChunkPool;
use super::local::{CHUNK, Progress, digest_path, guess_mime, normalize_mime};
use super::policy::{check_descriptor, descriptor_method, refused_address};
use super::transfer_error::refusal;
use super::transfer_error::{Operation, TransferError};
use crate::client::{Client, decode};
use crate::error::{Error, Result};

/// Descriptor headers the client never copies: the MCP credentials, and what the HTTP client
/// computes itself.
const NEVER_COPIED: &[&str] = &[
    "authorization",
    "content-length",
    "host",
    "transfer-encoding",
];

/// The descriptor headers to send. With `multipart`, `Content-Type` is dropped too: the
/// multipart body brings its own, with the boundary.
pub(crate) fn descriptor_headers(
    headers: Option<&BTreeMap<String, String>>,
    multipart: bool,
) -> Vec<(&str, &str)> {
    headers
        .into_iter()
        .flatten()
        .filter(|(k, _)| {
            let computed = multipart && k.eq_ignore_ascii_case("content-type");
            !computed && !NEVER_COPIED.iter().any(|n| k.eq_ignore_ascii_case(n))
        })
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

impl Client {
    /// `files/authorizeUpload`.
    pub async fn authorize_upload(
        &self,
        params: &AuthorizeUploadRequestParams,
    ) -> Result<AuthorizeUploadResult> {
        let Value::Object(map) =
            serde_json::to_value(params).map_err(|e| Error::protocol(e.to_string()))?
        else {
            return Err(Error::protocol("params"));
        };
        decode(
            METHOD_AUTHORIZE_UPLOAD,
            &self.request(METHOD_AUTHORIZE_UPLOAD, map).await?,
        )
    }

    /// Authorizes and uploads a local file, streaming it from disk; returns the server's
    /// `FileValue` (its URI goes into file-valued arguments).
    ///
    /// `files/authorizeUpload` carries the file's name, media type (`mime_type`, else guessed
    /// from the extension), size and sha-256 digest. The upload descriptor is checked
    /// ([`super::check_descriptor`], method `PUT`/`POST`) before any connection to it; a refused
    /// descriptor's file URI is never returned.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::path::Path;
    ///
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// let file = client.upload_path(Path::new("scan.png"), None, None).await?;
    /// let result = client.call_tool("ocr", serde_json::json!({"image": file.uri})).await?;
    /// # let _ = result;
    /// # Ok(()) }
    /// ```
    pub async fn upload_path(
        &self,
        path: &Path,
        mime_type: Option<&str>,
        progress: Option<Progress<'_>>,
    ) -> Result<FileValue> {
        // Fail on a disabled data plane before reading the file.
        self.data_plane()?;
        let mime = match mime_type {
            Some(m) => normalize_mime(m)?,
            None => guess_mime(path).to_owned(),
        };
        let (size, digest) = digest_path(path).await?;
        let name = path.file_name().and_then(|n| n.to_str()).map(str::to_owned);
        let file = tokio::fs::File::open(path)
            .await
            .map_err(|e| TransferError::io(path, e))?;
        let meta = UploadMeta {
            name,
            mime_type: Some(mime),
            size,
            digest: Some(digest),
        };
        self.upload_stream(file, meta, path, progress).await
    }

    /// Authorizes and uploads bytes held in memory (size and sha-256 digest computed here);
    /// `meta.size` and `meta.digest` are replaced by the real ones.
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// use smcp_client::files::UploadMeta;
    /// let bytes = bytes::Bytes::from_static(b"id,name\n1,Ada\n");
    /// let file = client
    ///     .upload_bytes(bytes, UploadMeta::new(0).name("people.csv"), None)
    ///     .await?;
    /// println!("uploaded as {}", file.uri);
    /// # Ok(()) }
    /// ```
    pub async fn upload_bytes(
        &self,
        bytes: bytes::Bytes,
        mut meta: UploadMeta,
        progress: Option<Progress<'_>>,
    ) -> Result<FileValue> {
        let mut hasher = DigestBuilder::new();
        hasher.update(&bytes);
        let (size, digest) = hasher.finish();
        meta.size = size;
        meta.digest = Some(digest);
        let what = meta.display_path();
        self.upload_stream(std::io::Cursor::new(bytes), meta, &what, progress)
            .await
    }

    /// Authorizes and uploads exactly `meta.size` bytes read from `reader` (a socket, a
    /// decompressor, a pipe: anything [`AsyncRead`](tokio::io::AsyncRead)), streamed with
    /// bounded memory. The size is required (the upload has a `Content-Length`); a reader that
    /// ends early or runs past it fails with [`TransferError::SizeMismatch`]. Give the digest
    /// when it is known, so the server verifies the bytes (without one, it cannot).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use smcp_client::files::UploadMeta;
    ///
    /// # async fn demo(client: smcp_client::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// let file = tokio::fs::File::open("backup.tar").await?;
    /// let size = file.metadata().await?.len();
    /// let meta = UploadMeta::new(size).name("backup.tar").mime_type("application/x-tar");
    /// let uploaded = client.upload_reader(file, meta, None).await?;
    /// println!("{}", uploaded.uri);
    /// # Ok(()) }
    /// ```
    pub async fn upload_reader<R>(
        &self,
        reader: R,
        meta: UploadMeta,
        progress: Option<Progress<'_>>,
    ) -> Result<FileValue>
    where
        R: tokio::io::AsyncRead + Unpin + Send,
    {
        let what = meta.display_path();
        self.upload_stream(reader, meta, &what, progress).await
    }

    async fn upload_stream<R>(
        &self,
        mut reader: R,
        meta: UploadMeta,
        what: &Path,
        progress: Option<Progress<'_>>,
    ) -> Result<FileValue>
    where
        R: tokio::io::AsyncRead + Unpin + Send,
    {
        let (http, cfg, policy) = self.data_plane()?;
        let UploadMeta {
            name,
            mime_type,
            size,
            digest,
        } = meta;
        let mime = match mime_type {
            Some(m) => normalize_mime(&m)?,
            None => match &name {
                Some(n) => guess_mime(Path::new(n)).to_owned(),
                None => "application/octet-stream".to_owned(),
            },
        };
        let auth = self
            .authorize_upload(&AuthorizeUploadRequestParams {
                name: name.clone(),
                mime_type: Some(mime.clone()),
                size: Some(size),
                digest: digest.clone(),
                ..Default::default()
            })
            .await?;
        let url = check_descriptor(&auth.upload, cfg.allow_insecure_loopback)?;
        policy.check_url(&url)?;
        let method = descriptor_method(&auth.upload, Operation::Upload)?;
        tracing::info!(file = %what.display(), host = ?url.host_str(), size, "uploading");
        // Bounded pipe from the reader (which reports progress) to the request body:
        // at most 4 chunks in flight, so memory stays flat for any size.
        let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<bytes::Bytes>>(4);
        let stream = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|chunk| (chunk, rx))
        });
        let body = reqwest::Body::wrap_stream(stream);
        let req = upload_request(http, method, url, &auth.upload, body, size, name, &mime)?;
        // The chunks in the pipe, in the HTTP client and one being read.
        let pool = ChunkPool::new(CHUNK, 8);
        let pump = async move {
            let mut done = 0u64;
            loop {
                let mut buf = pool.take();
                match reader.read(&mut buf).await {
                    Ok(0) if done == size => return Ok(()),
                    Ok(0) => {
                        let _ = tx.send(Err(std::io::ErrorKind::UnexpectedEof.into())).await;
                        return Err(TransferError::SizeMismatch {
                            expected: size,
                            received: done,
                        });
                    }
                    Ok(n) => {
                        done += n as u64;
                        if done > size {
                            let _ = tx.send(Err(std::io::ErrorKind::InvalidData.into())).await;
                            return Err(TransferError::SizeMismatch {
                                expected: size,
                                received: done,
                            });
                        }
                        if let Some(p) = progress {
                            p(done, Some(size));
                        }
                        if tx.send(Ok(pool.chunk(buf, n))).await.is_err() {
                            return Ok(());
                        }
                    }
                    Err(e) => {
                        let kind = e.kind();
                        let _ = tx.send(Err(kind.into())).await;
                        return Err(TransferError::io(what, e));
                    }
                }
            }
        };
        let (resp, pumped) = tokio::join!(req.send(), pump);
        // A local failure (short reader, read error) explains the request's failure.
        pumped?;
        let resp = resp.map_err(|source| {
            refused_address(&source).unwrap_or(TransferError::Http {
                operation: Operation::Upload,
                source,
            })
        })?;
        if !resp.status().is_success() {
            return Err(refusal(resp, Operation::Upload).await.into());
        }
        let mut file = auth.file;
        file.size.get_or_insert(size);
        if let Some(digest) = digest {
            file.digest.get_or_insert(digest);
        }
        Ok(file)
    }
}

/// What `files/authorizeUpload` announces for an upload from a reader or from memory
/// ([`Client::upload_reader`], [`Client::upload_bytes`]).
///
/// # Examples
///
/// ```
/// use smcp_client::files::UploadMeta;
///
/// let meta = UploadMeta::new(1024).name("notes.txt").mime_type("text/plain");
/// # let _ = meta;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UploadMeta {
    /// The file's name (also used to guess the media type).
    pub name: Option<String>,
    /// The media type; guessed from the name when absent (else `application/octet-stream`).
    pub mime_type: Option<String>,
    /// The exact number of bytes the upload will have.
    pub size: u64,
    /// The sha-256 digest, when known: the server then refuses bytes that do not match.
    pub digest: Option<FileDigest>,
}

impl UploadMeta {
    /// An upload of exactly `size` bytes, with no name, media type or digest yet.
    pub fn new(size: u64) -> Self {
        Self {
            name: None,
            mime_type: None,
            size,
            digest: None,
        }
    }

    /// The file's name.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The media type.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The sha-256 digest of the bytes.
    #[must_use]
    pub fn digest(mut self, digest: FileDigest) -> Self {
        self.digest = Some(digest);
        self
    }

    /// What log lines and I/O errors call this upload.
    fn display_path(&self) -> std::path::PathBuf {
        std::path::PathBuf::from(self.name.as_deref().unwrap_or("(upload stream)"))
    }
}

/// The data-plane request for an upload descriptor (already checked).
#[allow(clippy::too_many_arguments)]
fn upload_request(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: reqwest::Url,
    d: &FileTransferDescriptor,
    body: reqwest::Body,
    size: u64,
    name: Option<String>,
    mime: &str,
) -> Result<reqwest::RequestBuilder, TransferError> {
    let mut req = http.request(method, url);
    for (k, v) in descriptor_headers(d.headers.as_ref(), d.multipart.is_some()) {
        req = req.header(k, v);
    }
    Ok(match &d.multipart {
        Some(mp) => {
            let mut form = reqwest::multipart::Form::new();
            for (k, v) in mp.fields.iter().flatten() {
                form = form.text(k.clone(), v.clone());
            }
            let part = reqwest::multipart::Part::stream_with_length(body, size)
                .file_name(name.unwrap_or_else(|| "file".to_owned()))
                .mime_str(mime)
                .map_err(|_| TransferError::InvalidMimeType {
                    mime_type: mime.to_owned(),
                })?;
            req.multipart(form.part(mp.file_field.clone(), part))
        }
        None => req.header(reqwest::header::CONTENT_LENGTH, size).body(body),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_headers_keep_the_descriptors_own_and_drop_credentials() {
        let h: BTreeMap<String, String> = [
            ("Content-Type", "multipart/form-data"),
            ("x-amz-meta-a", "1"),
            ("Authorization", "Bearer mcp-secret"),
            ("Content-Length", "5"),
            ("Host", "evil"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        assert_eq!(
            descriptor_headers(Some(&h), true),
            vec![("x-amz-meta-a", "1")]
        );
        assert_eq!(
            descriptor_headers(Some(&h), false),
            vec![
                ("Content-Type", "multipart/form-data"),
                ("x-amz-meta-a", "1")
            ]
        );
        assert!(descriptor_headers(None, false).is_empty());
    }
}
