//! SEP-2631 in an smcp server, entirely through the server's extension seam
//! (`smcp_server::Extension`; REQUIREMENTS A15–A21):
//!
//! - `files/authorizeUpload` and `files/authorizeDownload`, served by the [`Files`] service,
//!   and `files` advertised in `server/discover`;
//! - every tool's input schema checked for `x-mcp-file` declarations when it is registered
//!   (a misplaced one refuses the tool);
//! - file arguments resolved into [`FileHandle`]s before the tool runs, and handed to it as
//!   [`FileArgs`] ([`FilesToolCall::files`]);
//! - file outputs (`{"type":"file"}` blocks, `FileResourceContents`) replaced with text for a
//!   client that did not declare `files.download`.
//!
//! A bad file argument is an input validation error: an `isError` result whose
//! `structuredContent` is `{"argument": name, "reason": reason}` (A21 item 127). The
//! `files/*` RPCs fail with −32602/−32603 carrying `data.reason`, and with −32021 (HTTP 400)
//! when the client did not declare `files.upload`/`files.download` with `https`.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # fn demo(files: smcp_files::Files) -> Result<(), smcp_server::BuildError> {
//! use smcp_files::{FilesExtension, FilesToolCall as _};
//! use smcp_server::proto::server::tools::CallToolResult;
//! use smcp_server::{HandlerError, Server, tool};
//!
//! let server = Server::builder("demo", "1.0.0")
//!     .extension(FilesExtension::new(files.clone()))
//!     .tool(
//!         tool("size_of")
//!             .input_schema(serde_json::json!({"type": "object", "properties": {
//!                 "doc": {"type": "string", "format": "uri", "x-mcp-file": {}}}}))
//!             .handler(|call| async move {
//!                 let size = call.files().get("doc").map(|f| f.size()).unwrap_or(0);
//!                 Ok::<_, HandlerError>(CallToolResult::text(format!("{size} bytes")))
//!             }),
//!     )
//!     .build()?;
//! // The MCP endpoint, with the upload and download endpoints on the other paths.
//! let endpoint = server.endpoint("/mcp").fallback(files.router());
//! # let _ = endpoint; Ok(()) }
//! ```

use std::collections::HashMap;
use std::sync::LazyLock;

use bytes::Bytes;
use serde_json::{Map, Value};
use smcp_proto::capabilities::ServerCapabilities;
use smcp_proto::content::{ContentBlock, ResourceContents, TextResourceContents};
use smcp_proto::error::ErrorObject;
use smcp_proto::ext::files::{
    AuthorizeDownloadRequestParams, AuthorizeUploadRequestParams, FileErrorReason,
    FileInputDescriptor, FileValue, FilesCapability, METHOD_AUTHORIZE_DOWNLOAD,
    METHOD_AUTHORIZE_UPLOAD,
};
use smcp_proto::jsonrpc::incoming::read_params;
use smcp_proto::server::resources::ReadResourceResult;
use smcp_proto::server::tools::{CallToolResult, Tool};
use smcp_server::extension::{
    Extension, ExtensionRequest, ExtensionResult, MethodSpec, Next, ToolData, ToolOutcome,
    ToolRefused, ToolReply,
};
use smcp_server::tools::{BoxFuture, ToolCall};
use smcp_server::{HandlerError, RequestContext};

use crate::error::FileError;
use crate::handle::FileHandle;
use crate::schema::{FileField, file_fields};
use crate::service::{Files, resolve_inline};

/// The largest decoded `data:` value an inline-only server accepts (8 MiB).
const DEFAULT_MAX_INLINE: u64 = 8 << 20;

/// SEP-2631 file transfer as a server extension (see the module docs).
#[derive(Debug, Clone)]
pub struct FilesExtension {
    files: Option<Files>,
    limits: Limits,
}

/// What one call may pull in.
#[derive(Debug, Clone, Copy)]
struct Limits {
    max_inline: u64,
    max_call_files: usize,
    max_call_bytes: u64,
}

impl FilesExtension {
    /// Full file transfer through `files`: inline `data:` and uploaded `mcp-file://`
    /// arguments, the `files/*` methods, and `files` in `server/discover`. Mount
    /// [`Files::router`] (the data plane) next to the MCP endpoint.
    pub fn new(files: Files) -> Self {
        let cfg = files.config();
        let limits = Limits {
            max_inline: cfg.max_inline,
            max_call_files: cfg.max_call_files,
            max_call_bytes: cfg.max_call_bytes,
        };
        Self {
            files: Some(files),
            limits,
        }
    }

    /// Only inline `data:` file arguments, with no store and no data plane: `mcp-file://`
    /// URIs are `fileUnavailable`, the `files/*` methods are unknown and `files` is not
    /// advertised.
    pub fn inline_only() -> Self {
        Self {
            files: None,
            limits: Limits {
                max_inline: DEFAULT_MAX_INLINE,
                max_call_files: crate::DEFAULT_MAX_CALL_FILES,
                max_call_bytes: crate::DEFAULT_MAX_CALL_BYTES,
            },
        }
    }

    /// The file service, when configured.
    pub fn files(&self) -> Option<&Files> {
        self.files.as_ref()
    }
}

/// The `x-mcp-file` fields of a tool, found when it was registered.
#[derive(Debug)]
struct ToolFileFields(Vec<FileField>);

impl Extension for FilesExtension {
    fn name(&self) -> &'static str {
        "sep-2631/files"
    }

    fn capabilities(&self, capabilities: &mut ServerCapabilities) {
        if self.files.is_some()
            && let Ok(files) = serde_json::to_value(FilesCapability::full())
        {
            capabilities.extra.insert("files".to_owned(), files);
        }
    }

    fn methods(&self) -> Vec<MethodSpec> {
        if self.files.is_none() {
            return Vec::new();
        }
        vec![
            MethodSpec::new(METHOD_AUTHORIZE_UPLOAD),
            MethodSpec::new(METHOD_AUTHORIZE_DOWNLOAD),
        ]
    }

    fn call(&self, request: ExtensionRequest) -> BoxFuture<ExtensionResult> {
        let files = self.files.clone();
        Box::pin(async move {
            let Some(files) = files else {
                return Err(ErrorObject::method_not_found(request.method));
            };
            authorize(&files, request).await
        })
    }

    fn register_tool(&self, tool: &Tool, data: &mut ToolData) -> Result<(), ToolRefused> {
        let fields = file_fields(&tool.input_schema, true).map_err(ToolRefused::new)?;
        if !fields.is_empty() {
            data.insert(ToolFileFields(fields));
        }
        Ok(())
    }

    fn tool_call(&self, mut call: ToolCall, next: Next) -> BoxFuture<ToolOutcome> {
        let files = self.files.clone();
        let limits = self.limits;
        Box::pin(async move {
            let principal = call.ctx.principal().map(|p| p.0.clone());
            let fields = call
                .tool_data::<ToolFileFields>()
                .map_or(&[][..], |f| f.0.as_slice());
            let resolved = resolve_arguments(
                fields,
                &call.arguments,
                files.as_ref(),
                principal.as_deref(),
                limits,
            )
            .await;
            match resolved {
                Ok(args) => {
                    call.extensions.insert(args);
                }
                Err(refusal) => return Ok(ToolReply::Complete(refusal)),
            }
            let ctx = call.ctx.clone();
            match next.run(call).await {
                Ok(ToolReply::Complete(mut result)) => {
                    gate_outputs(&mut result, || client_can_download(&ctx));
                    Ok(ToolReply::Complete(result))
                }
                other => other,
            }
        })
    }

    fn resource_read(&self, ctx: &RequestContext, result: &mut ReadResourceResult) {
        gate_resource_contents(&mut result.contents, || client_can_download(ctx));
    }
}

/// The resolved file arguments of one tool call.
#[derive(Debug, Clone, Default)]
pub struct FileArgs {
    handles: HashMap<String, Vec<FileHandle>>,
    files: Option<Files>,
    principal: Option<String>,
    max_inline: u64,
}

/// Gives a tool handler its resolved file arguments.
pub trait FilesToolCall {
    /// The call's file arguments (empty when the server has no [`FilesExtension`] or the
    /// tool declares no file fields).
    fn files(&self) -> &FileArgs;
}

impl FilesToolCall for ToolCall {
    fn files(&self) -> &FileArgs {
        static NONE: LazyLock<FileArgs> = LazyLock::new(FileArgs::default);
        self.extensions.get::<FileArgs>().unwrap_or(&NONE)
    }
}

impl FileArgs {
    /// The file of a single-file field (the first one of an array field).
    pub fn get(&self, field: &str) -> Option<&FileHandle> {
        self.handles.get(field).and_then(|v| v.first())
    }

    /// Every file of a field, in argument order.
    pub fn all(&self, field: &str) -> &[FileHandle] {
        self.handles.get(field).map_or(&[], Vec::as_slice)
    }

    /// The file service, when configured.
    pub fn service(&self) -> Option<&Files> {
        self.files.as_ref()
    }

    /// Validates and resolves a value the tool received some other way (e.g. an
    /// elicitation answer's file field) exactly like a tool argument.
    pub async fn resolve(
        &self,
        value: &str,
        descriptor: &FileInputDescriptor,
    ) -> Result<FileHandle, FileError> {
        resolve_one(
            value,
            descriptor,
            self.files.as_ref(),
            self.principal.as_deref(),
            self.max_inline,
        )
        .await
    }

    /// Stores a generated file owned by the caller and returns its `FileValue`.
    pub async fn output(
        &self,
        name: &str,
        mime_type: &str,
        bytes: impl Into<Bytes>,
    ) -> Result<FileValue, HandlerError> {
        let files = self
            .files
            .as_ref()
            .ok_or_else(|| HandlerError::internal("no file service configured"))?;
        files
            .create_bytes(
                Some(name.to_owned()),
                mime_type,
                bytes,
                self.principal.as_deref(),
            )
            .await
            .map_err(|e| HandlerError::Rpc(e.to_error_object()))
    }
}

async fn resolve_one(
    value: &str,
    descriptor: &FileInputDescriptor,
    files: Option<&Files>,
    principal: Option<&str>,
    max_inline: u64,
) -> Result<FileHandle, FileError> {
    match files {
        Some(files) => files.resolve(value, descriptor, principal).await,
        None if value.starts_with("mcp-file:") => Err(FileError::unavailable()),
        None => resolve_inline(value, descriptor, max_inline),
    }
}

/// The `isError` result for a refused file argument: `structuredContent` is
/// `{"argument", "reason", …details}` (`maxSize`, `actualSize`, …).
pub fn file_error_result(argument: &str, error: &FileError) -> CallToolResult {
    let mut result = CallToolResult::error_text(format!(
        "Invalid file argument {argument:?}: {} ({})",
        error.reason, error.message
    ));
    let mut structured = Map::new();
    structured.insert("argument".to_owned(), Value::from(argument));
    structured.insert("reason".to_owned(), Value::from(error.reason.as_str()));
    for (k, v) in &error.details {
        structured.entry(k.clone()).or_insert_with(|| v.clone());
    }
    result.structured_content = Some(Value::Object(structured));
    result
}

/// The file values of `arguments` in the declared fields, with the field each belongs to.
fn file_values<'a>(
    fields: &'a [FileField],
    arguments: &'a Map<String, Value>,
) -> impl Iterator<Item = (&'a FileField, &'a str)> {
    fields.iter().flat_map(move |field| {
        let values: Vec<&str> = match (field.array, arguments.get(&field.name)) {
            (true, Some(Value::Array(items))) => items.iter().filter_map(Value::as_str).collect(),
            (false, Some(Value::String(s))) => vec![s.as_str()],
            // Absent, or the wrong shape (the schema validator already refused it).
            _ => Vec::new(),
        };
        values.into_iter().map(move |v| (field, v))
    })
}

/// Resolves every declared file field present in `arguments`; a refusal is the
/// ready-to-send `isError` result. A call with more file values than
/// `limits.max_call_files` is refused before any is resolved (`tooManyFiles`); one whose
/// files add up to more than `limits.max_call_bytes` (a file named twice counts twice) is
/// refused as soon as the sum passes it (`maxSizeExceeded` with `maxCallBytes`).
async fn resolve_arguments(
    fields: &[FileField],
    arguments: &Map<String, Value>,
    files: Option<&Files>,
    principal: Option<&str>,
    limits: Limits,
) -> Result<FileArgs, CallToolResult> {
    let count = file_values(fields, arguments).count();
    if count > limits.max_call_files {
        // The field in which the count passes the limit.
        let argument = file_values(fields, arguments)
            .nth(limits.max_call_files)
            .map_or("", |(field, _)| field.name.as_str());
        let error = FileError::new(
            FileErrorReason::TooManyFiles,
            format!(
                "the call names {count} files; at most {} are taken in one call",
                limits.max_call_files
            ),
        )
        .with("maxFiles", limits.max_call_files)
        .with("actualFiles", count);
        return Err(file_error_result(argument, &error));
    }
    let mut handles: HashMap<String, Vec<FileHandle>> = HashMap::new();
    for field in fields {
        if arguments.contains_key(&field.name) {
            handles.entry(field.name.clone()).or_default();
        }
    }
    let mut total = 0u64;
    for (field, value) in file_values(fields, arguments) {
        let handle = resolve_one(
            value,
            &field.descriptor,
            files,
            principal,
            limits.max_inline,
        )
        .await
        .map_err(|e| file_error_result(&field.name, &e))?;
        total = total.saturating_add(handle.size());
        if total > limits.max_call_bytes {
            let error = FileError::new(
                FileErrorReason::MaxSizeExceeded,
                format!(
                    "the files of this call add up to more than {} bytes",
                    limits.max_call_bytes
                ),
            )
            .with("maxCallBytes", limits.max_call_bytes);
            return Err(file_error_result(&field.name, &error));
        }
        handles.entry(field.name.clone()).or_default().push(handle);
    }
    Ok(FileArgs {
        handles,
        files: files.cloned(),
        principal: principal.map(str::to_owned),
        max_inline: limits.max_inline,
    })
}

/// Whether the request declared `files.download` with `https`.
pub fn client_can_download(ctx: &RequestContext) -> bool {
    FilesCapability::from_capabilities(ctx.client_capabilities()).is_some_and(|f| f.can_download())
}

fn fallback_text(file: &FileValue) -> String {
    let or = |v: Option<&String>| v.map_or("?", String::as_str).to_owned();
    let size = file.size.map_or_else(|| "?".to_owned(), |n| n.to_string());
    format!(
        "File {} ({}, {size} bytes) at {} — out-of-band download needs the files.download capability",
        or(file.name.as_ref()),
        or(file.mime_type.as_ref()),
        file.uri
    )
}

/// Replaces `{"type":"file"}` content blocks with text for clients without `files.download`.
/// `can_download` is asked only when a result has such a block: most results have none, and
/// answering means parsing the request's `_meta`.
fn gate_outputs(result: &mut CallToolResult, can_download: impl FnOnce() -> bool) {
    let is_file = |block: &ContentBlock| matches!(block, ContentBlock::File(_));
    if !result.content.iter().any(is_file) || can_download() {
        return;
    }
    for block in &mut result.content {
        if let ContentBlock::File(file) = block {
            *block = ContentBlock::text(fallback_text(&file.file));
        }
    }
}

/// Replaces `FileResourceContents` with text contents for clients without `files.download`.
/// `can_download` is asked only when there is such an item (see [`gate_outputs`]).
fn gate_resource_contents(contents: &mut [ResourceContents], can_download: impl FnOnce() -> bool) {
    let is_file = |item: &ResourceContents| matches!(item, ResourceContents::File(_));
    if !contents.iter().any(is_file) || can_download() {
        return;
    }
    for item in contents.iter_mut() {
        if let ResourceContents::File(file) = item {
            let mut text = TextResourceContents::new(
                file.uri.clone(),
                format!(
                    "File-backed resource at {} — out-of-band download needs the files.download capability",
                    file.content.uri
                ),
            );
            text.mime_type = Some("text/plain".to_owned());
            text.meta = file.meta.clone();
            *item = ResourceContents::Text(text);
        }
    }
}

fn missing_files_capability(direction: &str) -> ErrorObject {
    let mut files = Map::new();
    files.insert(direction.to_owned(), Value::Bool(true));
    files.insert("transports".to_owned(), Value::from(vec!["https"]));
    let mut caps = Map::new();
    caps.insert("files".to_owned(), Value::Object(files));
    ErrorObject::missing_required_client_capability(
        format!("files/* requires the client capability files.{direction} with transport https"),
        caps,
    )
}

/// A `files/authorizeUpload` member of the wrong type, as a refusal with its `reason` (a
/// −32602 for a file always carries one; docs/files/errors.md).
fn upload_params_error(params: &Map<String, Value>) -> Option<FileError> {
    let present = |k: &str| params.get(k).filter(|v| !v.is_null());
    if present("size").is_some_and(|v| v.as_u64().is_none()) {
        return Some(FileError::new(
            FileErrorReason::InvalidSize,
            "\"size\" must be a non-negative integer (bytes)",
        ));
    }
    if present("name").is_some_and(|v| !v.is_string()) {
        return Some(FileError::new(
            FileErrorReason::InvalidName,
            "\"name\" must be a string",
        ));
    }
    if present("mimeType").is_some_and(|v| !v.is_string()) {
        return Some(FileError::new(
            FileErrorReason::InvalidMimeType,
            "\"mimeType\" must be a string type/subtype",
        ));
    }
    let digest_ok = |d: &Value| {
        d.get("algorithm").is_some_and(Value::is_string)
            && d.get("value").is_some_and(Value::is_string)
    };
    if present("digest").is_some_and(|d| !digest_ok(d)) {
        return Some(FileError::new(
            FileErrorReason::InvalidDigest,
            "\"digest\" must be {\"algorithm\": string, \"value\": string}",
        ));
    }
    None
}

/// A `files/authorizeDownload` `uri` that is missing or not a string.
fn download_params_error(params: &Map<String, Value>) -> Option<FileError> {
    (!params.get("uri").is_some_and(Value::is_string)).then(|| {
        FileError::new(
            FileErrorReason::MalformedFileUri,
            "\"uri\" must be a string (a file URI)",
        )
    })
}

/// Serves `files/authorizeUpload` and `files/authorizeDownload`.
async fn authorize(files: &Files, request: ExtensionRequest) -> ExtensionResult {
    let declared = FilesCapability::from_capabilities(request.ctx.client_capabilities());
    let upload = request.method == METHOD_AUTHORIZE_UPLOAD;
    let allowed = declared.is_some_and(|f| {
        if upload {
            f.can_upload()
        } else {
            f.can_download()
        }
    });
    if !allowed {
        return Err(missing_files_capability(if upload {
            "upload"
        } else {
            "download"
        }));
    }
    let principal = request.ctx.principal().map(|p| p.0.clone());
    let params = request.params;
    let malformed = if upload {
        upload_params_error(&params)
    } else {
        download_params_error(&params)
    };
    if let Some(e) = malformed {
        return Err(e.to_error_object());
    }
    let result = if upload {
        let params: AuthorizeUploadRequestParams =
            read_params(params).map_err(|e| e.to_error_object())?;
        let result = files
            .authorize(&params, principal.as_deref())
            .await
            .map_err(|e| e.to_error_object())?;
        serde_json::to_value(result)
    } else {
        let params: AuthorizeDownloadRequestParams =
            read_params(params).map_err(|e| e.to_error_object())?;
        let result = files
            .authorize_download(&params.uri, principal.as_deref())
            .await
            .map_err(|e| e.to_error_object())?;
        serde_json::to_value(result)
    };
    match result {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ErrorObject::internal("result is not an object")),
        Err(e) => Err(ErrorObject::internal(e.to_string())),
    }
}
