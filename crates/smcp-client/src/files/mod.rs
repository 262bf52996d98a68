//! SEP-2631 file transfer on the client: declares `files`, turns local paths into file
//! argument values (inline `data:` below a threshold, upload above it or when required),
//! streams uploads from disk, downloads outputs with integrity checks.
//!
//! Security (REQUIREMENTS A22): descriptors must be `https` (plain `http` only on loopback
//! and only when [`FileTransfer::allow_insecure_loopback`] is set) and are checked before any
//! connection ([`check_descriptor`]); their hosts must be public addresses unless they are the
//! MCP server's own host or loopback under the opt-in ([`AddressPolicy`]: IP literals before
//! connecting, names by the resolver, so the address connected to is the checked one);
//! descriptor URLs are fetched with a separate HTTP client that never carries the MCP
//! endpoint's headers (`Authorization`, cookies), never follows redirects and uses no proxy. Downloads land under their final name only after size and digest were verified.
//! Failures carry a typed [`TransferError`] ([`crate::Error::transfer_error`]).
//!
//! | module | what |
//! |---|---|
//! | `policy` | [`check_descriptor`], [`check_transfer_url`], [`is_loopback`], [`AddressPolicy`], [`is_public`] |
//! | `upload` | `files/authorizeUpload`, raw and multipart uploads from a path ([`Client::upload_path`]), memory ([`Client::upload_bytes`]) or any `AsyncRead` ([`Client::upload_reader`]) |
//! | `download` | `files/authorizeDownload`, verified downloads to disk ([`Client::download_file`]) or into any `AsyncWrite` ([`Client::download_into`]) |
//! | `error` | [`TransferError`] |

mod download;
mod policy;
mod transfer_error;
mod upload;

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Map, Value, json};
use smcp_proto::content::ContentBlock;
use smcp_proto::ext::files::{
    DigestBuilder, FileDigest, FileInputDescriptor, FileValue, TransferMode, X_MCP_FILE,
    is_valid_mime,
};
use smcp_proto::server::tools::CallToolResult;
use tokio::io::AsyncReadExt;

pub use policy::{AddressPolicy, check_descriptor, check_transfer_url, is_loopback, is_public};
pub use transfer_error::{Operation, TransferError};
pub use upload::UploadMeta;

use crate::client::Client;
use crate::error::{Error, Result};

/// Progress callback: `(bytes done, total if known)`.
pub type Progress<'a> = &'a (dyn Fn(u64, Option<u64>) + Send + Sync);

const CHUNK: usize = 256 * 1024;

/// File-transfer settings of a client.
///
/// Install it with [`ClientBuilder::files`](crate::ClientBuilder::files).
///
/// # Examples
///
/// ```
/// use smcp_client::files::FileTransfer;
///
/// let files = FileTransfer {
///     allow_insecure_loopback: true, // a development server on http://127.0.0.1
///     ..FileTransfer::default()
/// };
/// let client = smcp_client::Client::builder("http://127.0.0.1:8931/mcp").files(files).build()?;
/// # let _ = client;
/// # Ok::<(), smcp_client::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct FileTransfer {
    /// Files up to this size go inline as `data:` URIs when the field allows it.
    pub inline_threshold: u64,
    /// Declare and use out-of-band upload.
    pub upload: bool,
    /// Declare and use out-of-band download.
    pub download: bool,
    /// Accept `http://127.0.0.1` / `http://[::1]` / `http://localhost` descriptors, and
    /// descriptors on loopback addresses at all (development only; never other plain-http
    /// hosts, never other non-public addresses).
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

/// The HTTP client for descriptor URLs: no redirects, no proxy (the address connected to is
/// the one `policy` checked), and a resolver that refuses non-public addresses.
pub(crate) fn data_plane_client(
    roots: &[reqwest::Certificate],
    connect_timeout: Option<Duration>,
    policy: &AddressPolicy,
) -> Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(std::sync::Arc::new(policy.clone()));
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
///
/// # Examples
///
/// ```
/// let schema = serde_json::json!({
///     "type": "object",
///     "properties": {
///         "report": {"type": "string", "format": "uri", "x-mcp-file": {"accept": ["application/pdf"]}},
///         "title": {"type": "string"}
///     }
/// });
/// let fields = smcp_client::files::file_fields(&schema);
/// assert_eq!(fields.len(), 1);
/// assert_eq!(fields[0].name, "report");
/// ```
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

/// The file outputs of a tool result: the `FileValue` of every `{"type": "file"}` content
/// block (SEP-2631 §8), first occurrence of each URI, in order. `FileValue`s inside
/// `structuredContent` are only recognisable through the tool's `outputSchema` and are left to
/// the caller.
///
/// # Examples
///
/// ```no_run
/// use smcp_client::files::output_files;
///
/// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
/// let result = client.call_tool("export", serde_json::json!({"format": "csv"})).await?;
/// for file in output_files(&result) {
///     let (path, _) = client.download_file(&file, std::path::Path::new("downloads"), None).await?;
///     println!("saved {}", path.display());
/// }
/// # Ok(()) }
/// ```
pub fn output_files(result: &CallToolResult) -> Vec<FileValue> {
    let mut out: Vec<FileValue> = Vec::new();
    for block in &result.content {
        if let ContentBlock::File(f) = block
            && !out.iter().any(|o| o.uri == f.file.uri)
        {
            out.push(f.file.clone());
        }
    }
    out
}

/// A media type from the file extension (`application/octet-stream` when unknown).
///
/// # Examples
///
/// ```
/// use std::path::Path;
/// use smcp_client::files::guess_mime;
///
/// assert_eq!(guess_mime(Path::new("report.pdf")), "application/pdf");
/// assert_eq!(guess_mime(Path::new("data.unknown")), "application/octet-stream");
/// ```
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

/// A caller-supplied media type, checked (`type/subtype`) and with the whitespace around
/// parameters removed, so it can go into a `data:` URI as is.
pub(crate) fn normalize_mime(mime_type: &str) -> Result<String, TransferError> {
    if !is_valid_mime(mime_type) {
        return Err(TransferError::InvalidMimeType {
            mime_type: mime_type.to_owned(),
        });
    }
    Ok(mime_type
        .split(';')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(";"))
}

/// A local path named by an elicitation answer: a `file://` URL or a string without a URI
/// scheme. Any other URI (`data:`, a server-issued file URI of whatever scheme) is a value to
/// pass through, not a path.
pub(crate) fn local_path(value: &str) -> Option<PathBuf> {
    if value.starts_with("file://") {
        return reqwest::Url::parse(value).ok()?.to_file_path().ok();
    }
    let scheme = value.split_once(':').map(|(s, _)| s);
    let is_uri = scheme.is_some_and(|s| {
        // RFC 3986 scheme; one letter is a Windows drive (`C:\…`), not a scheme.
        s.len() > 1
            && s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    (!is_uri && !value.is_empty()).then(|| PathBuf::from(value))
}

/// Size and sha-256 of a file, read in chunks.
pub async fn digest_path(path: &Path) -> Result<(u64, FileDigest)> {
    let mut file = tokio::fs::File::open(path)
        .await
        .map_err(|e| TransferError::io(path, e))?;
    let mut buf = vec![0u8; CHUNK];
    let mut hasher = DigestBuilder::new();
    loop {
        let n = file
            .read(&mut buf)
            .await
            .map_err(|e| TransferError::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finish())
}

/// A data-plane refusal: the status and the `reason` of a JSON error body, if any.
async fn refusal(resp: reqwest::Response, operation: Operation) -> TransferError {
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    TransferError::Refused {
        operation,
        status,
        reason: body
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
    }
}

impl Client {
    fn data_plane(&self) -> Result<(&reqwest::Client, &FileTransfer, &AddressPolicy)> {
        match (&self.inner.data_plane, &self.inner.files) {
            (Some((http, policy)), Some(cfg)) => Ok((http, cfg, policy)),
            _ => Err(Error::config(
                "file transfer is not enabled (ClientBuilder::files)",
            )),
        }
    }

    /// The argument value for `path` in a field declared by `descriptor`: a `data:` URI when
    /// inline is allowed and the file is small (or upload is not allowed), else an upload
    /// ([`upload_path`](Self::upload_path)). The media type is `mime_type`, else guessed from
    /// the extension. A file above the field's `maxSize` is refused before anything is sent.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::path::Path;
    /// use smcp_client::files::file_fields;
    ///
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// let tools = client.list_tools().await?;
    /// let Some(tool) = tools.iter().find(|t| t.name == "summarize_pdf") else { return Ok(()) };
    /// let schema = serde_json::Value::Object(tool.input_schema.clone());
    /// let field = &file_fields(&schema)[0];
    /// let value = client
    ///     .file_argument(Path::new("paper.pdf"), Some("application/pdf"), &field.descriptor, None)
    ///     .await?;
    /// let result = client.call_tool(&tool.name, serde_json::json!({ field.name.clone(): value })).await?;
    /// # let _ = result;
    /// # Ok(()) }
    /// ```
    pub async fn file_argument(
        &self,
        path: &Path,
        mime_type: Option<&str>,
        descriptor: &FileInputDescriptor,
        progress: Option<Progress<'_>>,
    ) -> Result<String> {
        let mime = match mime_type {
            Some(m) => normalize_mime(m)?,
            None => guess_mime(path).to_owned(),
        };
        let size = tokio::fs::metadata(path)
            .await
            .map_err(|e| TransferError::io(path, e))?
            .len();
        if let Some(max_size) = descriptor.max_size
            && size > max_size
        {
            return Err(TransferError::TooLargeForField {
                path: path.to_path_buf(),
                size,
                max_size,
            }
            .into());
        }
        let cfg = self.inner.files.clone().unwrap_or_default();
        let upload_ok =
            self.inner.files.is_some() && cfg.upload && descriptor.allows(TransferMode::Upload);
        let inline_ok = descriptor.allows(TransferMode::Inline);
        if inline_ok && (size <= cfg.inline_threshold || !upload_ok) {
            let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
            tokio::fs::File::open(path)
                .await
                .map_err(|e| TransferError::io(path, e))?
                .read_to_end(&mut bytes)
                .await
                .map_err(|e| TransferError::io(path, e))?;
            let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
            return Ok(format!("data:{mime};base64,{b64}"));
        }
        if upload_ok {
            return Ok(self.upload_path(path, Some(&mime), progress).await?.uri);
        }
        Err(TransferError::NoUsableTransferMode {
            modes: descriptor.transfer_modes.clone(),
        }
        .into())
    }

    /// SEP-2631 file fields inside an MRTR elicitation: an [`crate::InputHandler`] may answer
    /// an `x-mcp-file` field with a local path (or a `file://` URL); it is turned into a
    /// `data:` URI or an uploaded file URI per the field's declaration before the answer is
    /// sent. Values that already are URIs (`data:`, server-issued file URIs) pass through
    /// untouched.
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
                && let Some(path) = local_path(v)
            {
                *v = self
                    .file_argument(&path, None, &field.descriptor, None)
                    .await?;
            }
        }
        Ok(())
    }

    /// Calls a tool, turning `(field, path)` pairs into file values (a repeated field of an
    /// array property becomes several items). Media types are guessed from the extensions;
    /// use [`file_fields`] and [`file_argument`](Self::file_argument) to give them.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::path::PathBuf;
    ///
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// let progress = |done: u64, total: Option<u64>| eprintln!("{done}/{total:?} bytes");
    /// let result = client
    ///     .call_tool_with_files(
    ///         "summarize_pdf",
    ///         serde_json::json!({"length": "short"}),
    ///         &[("document".to_owned(), PathBuf::from("paper.pdf"))],
    ///         Some(&progress),
    ///     )
    ///     .await?;
    /// println!("{}", result.text_content());
    /// # Ok(()) }
    /// ```
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
                let value = Value::String(
                    self.file_argument(path, None, &decl.descriptor, progress)
                        .await?,
                );
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
}

impl crate::mrtr::ElicitedFiles for Client {
    fn resolve<'a>(
        &'a self,
        schema: &'a Value,
        answer: &'a mut smcp_proto::client::elicitation::ElicitResult,
    ) -> futures_util::future::BoxFuture<'a, Result<()>> {
        Box::pin(self.resolve_elicited_files(schema, answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use smcp_proto::ext::files::FileContent;

    #[test]
    fn file_fields_top_level_and_array_items() {
        let schema = json!({"type": "object", "properties": {
            "doc": {"type": "string", "format": "uri", "x-mcp-file": {"maxSize": 10, "transferModes": ["upload"]}},
            "many": {"type": "array", "items": {"type": "string", "format": "uri", "x-mcp-file": {}}},
            "misplaced": {"type": "integer", "x-mcp-file": {}},
            "plain": {"type": "string"}
        }});
        let fields = file_fields(&schema);
        assert_eq!(fields.len(), 2, "{fields:?}");
        let doc = fields.iter().find(|f| f.name == "doc").unwrap();
        assert!(!doc.array && doc.descriptor.max_size == Some(10));
        assert!(!doc.descriptor.allows(TransferMode::Inline));
        assert!(fields.iter().any(|f| f.name == "many" && f.array));
    }

    #[test]
    fn media_types_are_checked_and_compacted() {
        assert_eq!(normalize_mime("text/plain").unwrap(), "text/plain");
        assert_eq!(
            normalize_mime("text/plain; charset=utf-8").unwrap(),
            "text/plain;charset=utf-8"
        );
        assert!(matches!(
            normalize_mime("not a type"),
            Err(TransferError::InvalidMimeType { .. })
        ));
        assert_eq!(guess_mime(Path::new("a/B.TXT")), "text/plain");
        assert_eq!(guess_mime(Path::new("x")), "application/octet-stream");
    }

    #[test]
    fn elicited_values_that_are_paths() {
        assert_eq!(local_path("/tmp/a.txt"), Some(PathBuf::from("/tmp/a.txt")));
        assert_eq!(
            local_path("rel/a b.txt"),
            Some(PathBuf::from("rel/a b.txt"))
        );
        assert_eq!(local_path("C:\\x.txt"), Some(PathBuf::from("C:\\x.txt")));
        assert_eq!(
            local_path("file:///tmp/a%20b.txt"),
            Some(PathBuf::from("/tmp/a b.txt"))
        );
        for uri in [
            "data:text/plain;base64,SGk=",
            "mcp-file://server/file_1",
            "https://files.example/f/1",
            "urn:x-files:1",
            "",
        ] {
            assert_eq!(local_path(uri), None, "{uri}");
        }
    }

    #[test]
    fn output_files_come_from_file_content_blocks() {
        let f = |uri: &str| FileValue {
            uri: uri.to_owned(),
            name: Some("a.bin".into()),
            mime_type: None,
            size: Some(3),
            digest: None,
        };
        let mut r = CallToolResult::new(vec![
            ContentBlock::File(FileContent::new(f("mcp-file://s/1"))),
            ContentBlock::File(FileContent::new(f("mcp-file://s/2"))),
            ContentBlock::File(FileContent::new(f("mcp-file://s/1"))),
        ]);
        r.structured_content = Some(json!({"file": {"uri": "mcp-file://s/3"}}));
        let uris: Vec<String> = output_files(&r).into_iter().map(|f| f.uri).collect();
        assert_eq!(uris, ["mcp-file://s/1", "mcp-file://s/2"]);
    }
}
