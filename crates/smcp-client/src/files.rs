//! SEP-2631 file transfer on the client: declares `files`, turns local paths into file
//! argument values (inline `data:` below a threshold, upload above it or when required),
//! streams uploads from disk, downloads outputs with integrity checks.
//!
//! Security (REQUIREMENTS A22): descriptors must be `https` (plain `http` only on loopback
//! and only when [`FileTransfer::allow_insecure_loopback`] is set); descriptor URLs are
//! fetched with a separate HTTP client that never carries the MCP endpoint's headers
//! (`Authorization`, cookies) and never follows redirects.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use futures_util::StreamExt;
use serde_json::{Map, Value, json};
use smcp_proto::ext::files::{
    AuthorizeDownloadResult, AuthorizeUploadRequestParams, AuthorizeUploadResult, DigestBuilder,
    FileDigest, FileInputDescriptor, FileTransferDescriptor, FileValue, METHOD_AUTHORIZE_DOWNLOAD,
    METHOD_AUTHORIZE_UPLOAD, SHA_256, TransferMode, X_MCP_FILE,
};
use smcp_proto::server::tools::CallToolResult;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::client::{Client, decode};
use crate::error::{Error, Result};

/// Progress callback: `(bytes done, total if known)`.
pub type Progress<'a> = &'a (dyn Fn(u64, Option<u64>) + Send + Sync);

const CHUNK: usize = 256 * 1024;

/// File-transfer settings of a client.
#[derive(Debug, Clone)]
pub struct FileTransfer {
    /// Files up to this size go inline as `data:` URIs when the field allows it.
    pub inline_threshold: u64,
    /// Declare and use out-of-band upload.
    pub upload: bool,
    /// Declare and use out-of-band download.
    pub download: bool,
    /// Accept `http://127.0.0.1` / `http://[::1]` / `http://localhost` descriptors
    /// (development only; never other plain-http hosts).
    pub allow_insecure_loopback: bool,
}

impl Default for FileTransfer {
    fn default() -> Self {
        Self {
            inline_threshold: 256 * 1024,
            upload: true,
            download: true,
            allow_insecure_loopback: false,
        }
    }
}

impl FileTransfer {
    pub(crate) fn capability(&self) -> Value {
        json!({"upload": self.upload, "download": self.download, "transports": ["https"]})
    }
}

pub(crate) fn data_plane_client(
    roots: &[reqwest::Certificate],
    connect_timeout: Option<Duration>,
) -> Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none());
    for root in roots {
        builder = builder.add_root_certificate(root.clone());
    }
    if let Some(t) = connect_timeout {
        builder = builder.connect_timeout(t);
    }
    builder
        .build()
        .map_err(|e| Error::config(format!("cannot build the file transfer client: {e}")))
}

/// Refuses descriptors the client must not follow.
pub fn check_descriptor(
    d: &FileTransferDescriptor,
    allow_insecure_loopback: bool,
) -> Result<reqwest::Url> {
    if d.transport != "https" {
        return Err(Error::file(format!(
            "unsupported transport {:?}",
            d.transport
        )));
    }
    let url =
        reqwest::Url::parse(&d.url).map_err(|e| Error::file(format!("bad descriptor URL: {e}")))?;
    match url.scheme() {
        "https" => Ok(url),
        "http" if allow_insecure_loopback => {
            let host = url.host_str().unwrap_or_default();
            let loopback = host == "localhost"
                || host == "[::1]"
                || host
                    .parse::<std::net::Ipv4Addr>()
                    .is_ok_and(|a| a.is_loopback());
            if loopback {
                Ok(url)
            } else {
                Err(Error::file(
                    "plain http descriptor refused: only loopback is allowed in development mode",
                ))
            }
        }
        other => Err(Error::file(format!(
            "descriptor URL scheme {other:?} refused: https required"
        ))),
    }
}

/// A file-valued field of a tool's input schema. Misplaced declarations are ignored (A16
/// item 95).
#[derive(Debug, Clone, PartialEq)]
pub struct FileField {
    /// Top-level property name.
    pub name: String,
    /// An array of files.
    pub array: bool,
    /// The declaration.
    pub descriptor: FileInputDescriptor,
}

fn uri_string(p: &Value) -> bool {
    p.get("type").and_then(Value::as_str) == Some("string")
        && p.get("format").and_then(Value::as_str) == Some("uri")
}

/// The `x-mcp-file` fields of a schema (`properties` and one level of array `items`).
pub fn file_fields(schema: &Value) -> Vec<FileField> {
    let mut out = Vec::new();
    let Some(Value::Object(props)) = schema.get("properties") else {
        return out;
    };
    for (name, prop) in props {
        let (array, target) = match prop.get("items") {
            Some(items) if prop.get(X_MCP_FILE).is_none() => (true, items),
            _ => (false, prop),
        };
        if let Some(decl) = target.get(X_MCP_FILE)
            && uri_string(target)
            && let Ok(descriptor) = serde_json::from_value(decl.clone())
        {
            out.push(FileField {
                name: name.clone(),
                array,
                descriptor,
            });
        }
    }
    out
}

/// A media type from the file extension (`application/octet-stream` when unknown).
pub fn guess_mime(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match ext.as_str() {
        "pdf" => "application/pdf",
        "csv" => "text/csv",
        "txt" | "text" | "log" => "text/plain",
        "md" => "text/markdown",
        "json" => "application/json",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "html" | "htm" => "text/html",
        _ => "application/octet-stream",
    }
}

fn io_err(path: &Path, e: &std::io::Error) -> Error {
    Error::file(format!("{}: {e}", path.display()))
}

/// Size and sha-256 of a file, read in chunks.
pub async fn digest_path(path: &Path) -> Result<(u64, FileDigest)> {
    let mut file = tokio::fs::File::open(path)
        .await
        .map_err(|e| io_err(path, &e))?;
    let mut buf = vec![0u8; CHUNK];
    let mut hasher = DigestBuilder::new();
    loop {
        let n = file.read(&mut buf).await.map_err(|e| io_err(path, &e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finish())
}

async fn refusal(resp: reqwest::Response, what: &str) -> Error {
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    let reason = body
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    Error::file(format!("{what} refused: HTTP {status}, reason {reason}"))
}

impl Client {
    fn data_plane(&self) -> Result<(&reqwest::Client, &FileTransfer)> {
        match (&self.inner.data_plane, &self.inner.files) {
            (Some(http), Some(cfg)) => Ok((http, cfg)),
            _ => Err(Error::config(
                "file transfer is not enabled (ClientBuilder::files)",
            )),
        }
    }

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
            self.request(METHOD_AUTHORIZE_UPLOAD, map).await?,
        )
    }

    /// `files/authorizeDownload`.
    pub async fn authorize_download(&self, uri: &str) -> Result<AuthorizeDownloadResult> {
        let mut map = Map::new();
        map.insert("uri".into(), Value::String(uri.to_owned()));
        decode(
            METHOD_AUTHORIZE_DOWNLOAD,
            self.request(METHOD_AUTHORIZE_DOWNLOAD, map).await?,
        )
    }

    /// Authorizes and uploads a local file, streaming it from disk; returns the server's
    /// `FileValue` (its URI goes into file-valued arguments).
    pub async fn upload_path(
        &self,
        path: &Path,
        mime_type: Option<&str>,
        progress: Option<Progress<'_>>,
    ) -> Result<FileValue> {
        let (http, cfg) = self.data_plane()?;
        let (size, digest) = digest_path(path).await?;
        let mime = mime_type.unwrap_or_else(|| guess_mime(path)).to_owned();
        let name = path.file_name().and_then(|n| n.to_str()).map(str::to_owned);
        let auth = self
            .authorize_upload(&AuthorizeUploadRequestParams {
                name: name.clone(),
                mime_type: Some(mime.clone()),
                size: Some(size),
                digest: Some(digest.clone()),
                ..Default::default()
            })
            .await?;
        let url = check_descriptor(&auth.upload, cfg.allow_insecure_loopback)?;
        tracing::info!(file = %path.display(), host = ?url.host_str(), size, "uploading");
        let mut file = tokio::fs::File::open(path)
            .await
            .map_err(|e| io_err(path, &e))?;
        // Bounded pipe from the disk reader (which reports progress) to the request body:
        // at most 4 chunks in flight, so memory stays flat for any file size.
        let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<bytes::Bytes>>(4);
        let stream = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|chunk| (chunk, rx))
        });
        let body = reqwest::Body::wrap_stream(stream);
        let method = reqwest::Method::from_bytes(auth.upload.method.as_bytes())
            .map_err(|_| Error::file("bad descriptor method"))?;
        let mut req = http.request(method, url);
        if let Some(mp) = &auth.upload.multipart {
            let mut form = reqwest::multipart::Form::new();
            for (k, v) in mp.fields.iter().flatten() {
                form = form.text(k.clone(), v.clone());
            }
            let part = reqwest::multipart::Part::stream_with_length(body, size)
                .file_name(name.unwrap_or_else(|| "file".to_owned()))
                .mime_str(&mime)
                .map_err(|e| Error::file(e.to_string()))?;
            req = req.multipart(form.part(mp.file_field.clone(), part));
        } else {
            for (k, v) in auth.upload.headers.iter().flatten() {
                if !k.eq_ignore_ascii_case("authorization")
                    && !k.eq_ignore_ascii_case("content-length")
                {
                    req = req.header(k.as_str(), v.as_str());
                }
            }
            req = req.header(reqwest::header::CONTENT_LENGTH, size).body(body);
        }
        let pump = async move {
            let mut buf = vec![0u8; CHUNK];
            let mut done = 0u64;
            loop {
                match file.read(&mut buf).await {
                    Ok(0) => break,
                    Ok(n) => {
                        done += n as u64;
                        if let Some(p) = progress {
                            p(done, Some(size));
                        }
                        let chunk = bytes::Bytes::copy_from_slice(&buf[..n]);
                        if tx.send(Ok(chunk)).await.is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e)).await;
                        break;
                    }
                }
            }
        };
        let (resp, ()) = tokio::join!(req.send(), pump);
        let resp = resp.map_err(|e| Error::file(format!("upload failed: {e}")))?;
        if !resp.status().is_success() {
            return Err(refusal(resp, "upload").await);
        }
        let mut file = auth.file;
        file.size.get_or_insert(size);
        file.digest.get_or_insert(digest);
        Ok(file)
    }

    /// The argument value for `path` in a field declared by `descriptor`: a `data:` URI when
    /// inline is allowed and the file is small (or upload is not allowed), else an upload.
    pub async fn file_argument(
        &self,
        path: &Path,
        descriptor: &FileInputDescriptor,
        progress: Option<Progress<'_>>,
    ) -> Result<String> {
        let size = tokio::fs::metadata(path)
            .await
            .map_err(|e| io_err(path, &e))?
            .len();
        if let Some(max) = descriptor.max_size
            && size > max
        {
            return Err(Error::file(format!(
                "{} is {size} bytes; the field accepts at most {max}",
                path.display()
            )));
        }
        let cfg = self.inner.files.clone().unwrap_or_default();
        let upload_ok =
            self.inner.files.is_some() && cfg.upload && descriptor.allows(TransferMode::Upload);
        let inline_ok = descriptor.allows(TransferMode::Inline);
        if inline_ok && (size <= cfg.inline_threshold || !upload_ok) {
            let mut bytes = Vec::with_capacity(size as usize);
            tokio::fs::File::open(path)
                .await
                .map_err(|e| io_err(path, &e))?
                .read_to_end(&mut bytes)
                .await
                .map_err(|e| io_err(path, &e))?;
            let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
            return Ok(format!("data:{};base64,{b64}", guess_mime(path)));
        }
        if upload_ok {
            return Ok(self.upload_path(path, None, progress).await?.uri);
        }
        Err(Error::file(
            "no transfer mode of this field is usable by this client",
        ))
    }

    /// SEP-2631 file fields inside an MRTR elicitation: an [`crate::InputHandler`] may answer
    /// an `x-mcp-file` field with a local path; it is turned into a `data:` URI or an
    /// uploaded file URI per the field's declaration before the answer is sent. Values that
    /// already are `data:` or `mcp-file:` URIs pass through untouched.
    pub(crate) async fn resolve_elicited_files(
        &self,
        schema: &Value,
        answer: &mut smcp_proto::client::elicitation::ElicitResult,
    ) -> Result<()> {
        use smcp_proto::client::elicitation::ElicitValue;
        let Some(content) = answer.content.as_mut() else {
            return Ok(());
        };
        for field in file_fields(schema).into_iter().filter(|f| !f.array) {
            if let Some(ElicitValue::String(v)) = content.get_mut(&field.name)
                && !v.starts_with("data:")
                && !v.starts_with("mcp-file:")
            {
                let path = PathBuf::from(v.strip_prefix("file://").unwrap_or(v));
                *v = self.file_argument(&path, &field.descriptor, None).await?;
            }
        }
        Ok(())
    }

    /// Calls a tool, turning `(field, path)` pairs into file values (a repeated field of an
    /// array property becomes several items).
    pub async fn call_tool_with_files(
        &self,
        name: &str,
        arguments: Value,
        files: &[(String, PathBuf)],
        progress: Option<Progress<'_>>,
    ) -> Result<CallToolResult> {
        let mut args = match arguments {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            _ => return Err(Error::config("tool arguments must be a JSON object")),
        };
        if !files.is_empty() {
            let tools = self.list_tools().await?;
            let tool = tools
                .iter()
                .find(|t| t.name == name)
                .ok_or_else(|| Error::config(format!("unknown tool {name:?}")))?;
            let schema = serde_json::to_value(&tool.input_schema).unwrap_or(Value::Null);
            let fields = file_fields(&schema);
            for (field, path) in files {
                let decl = fields.iter().find(|f| &f.name == field).ok_or_else(|| {
                    Error::config(format!("{name}: {field:?} is not a file field"))
                })?;
                let value =
                    Value::String(self.file_argument(path, &decl.descriptor, progress).await?);
                if decl.array {
                    match args
                        .entry(field.clone())
                        .or_insert_with(|| Value::Array(Vec::new()))
                    {
                        Value::Array(items) => items.push(value),
                        other => *other = Value::Array(vec![value]),
                    }
                } else {
                    args.insert(field.clone(), value);
                }
            }
        }
        self.call_tool(name, Value::Object(args)).await
    }

    /// Downloads a file URI into `dest` (a directory: the server's name is used) through a
    /// temp file; size and digest are verified before the rename, the temp file is deleted
    /// on any mismatch. Returns the final path and the file's metadata.
    pub async fn download_to(
        &self,
        uri: &str,
        dest: &Path,
        progress: Option<Progress<'_>>,
    ) -> Result<(PathBuf, FileValue)> {
        let (http, cfg) = self.data_plane()?;
        let auth = self.authorize_download(uri).await?;
        let url = check_descriptor(&auth.download, cfg.allow_insecure_loopback)?;
        let target = if dest.is_dir() {
            let name = auth
                .file
                .name
                .as_deref()
                .and_then(|n| Path::new(n).file_name())
                .and_then(|n| n.to_str())
                .filter(|n| !n.starts_with('.'))
                .unwrap_or("download.bin");
            dest.join(name)
        } else {
            dest.to_path_buf()
        };
        let parent = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = parent.join(format!(".smcp-download-{}-{seq}.part", std::process::id()));
        let mut req = http.get(url);
        for (k, v) in auth.download.headers.iter().flatten() {
            if !k.eq_ignore_ascii_case("authorization") {
                req = req.header(k.as_str(), v.as_str());
            }
        }
        let resp = req
            .send()
            .await
            .map_err(|e| Error::file(format!("download failed: {e}")))?;
        if !resp.status().is_success() {
            return Err(refusal(resp, "download").await);
        }
        let total = auth.file.size.or(resp.content_length());
        let result = async {
            let file = tokio::fs::File::create(&tmp)
                .await
                .map_err(|e| io_err(&tmp, &e))?;
            let mut out = tokio::io::BufWriter::with_capacity(1 << 20, file);
            let mut hasher = DigestBuilder::new();
            let mut body = resp.bytes_stream();
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(|e| Error::file(format!("download interrupted: {e}")))?;
                hasher.update(&chunk);
                if let Some(limit) = total
                    && hasher.len() > limit
                {
                    return Err(Error::file("download larger than the announced size"));
                }
                out.write_all(&chunk).await.map_err(|e| io_err(&tmp, &e))?;
                if let Some(p) = progress {
                    p(hasher.len(), total);
                }
            }
            out.flush().await.map_err(|e| io_err(&tmp, &e))?;
            // Flushed, not fsynced: the rename happens only after verification and a
            // client-side copy can be fetched again (curl does not fsync either).
            let (size, digest) = hasher.finish();
            if let Some(expected) = auth.file.size
                && expected != size
            {
                return Err(Error::file(format!(
                    "size mismatch: got {size} bytes, expected {expected}"
                )));
            }
            if let Some(expected) = &auth.file.digest
                && expected.algorithm.eq_ignore_ascii_case(SHA_256)
                && !expected.matches(&digest)
            {
                return Err(Error::file(
                    "digest mismatch: the downloaded bytes are not the file",
                ));
            }
            tokio::fs::rename(&tmp, &target)
                .await
                .map_err(|e| io_err(&target, &e))
        }
        .await;
        if result.is_err() {
            let _ = tokio::fs::remove_file(&tmp).await;
        }
        result.map(|()| (target, auth.file))
    }
}
