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
    AuthorizeDownloadRequestParams, AuthorizeUploadRequestParams, FileInputDescriptor, FileValue,
    FilesCapability, METHOD_AUTHORIZE_DOWNLOAD, METHOD_AUTHORIZE_UPLOAD,
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
    max_inline: u64,
}

impl FilesExtension {
    /// Full file transfer through `files`: inline `data:` and uploaded `mcp-file://`
    /// arguments, the `files/*` methods, and `files` in `server/discover`. Mount
    /// [`Files::router`] (the data plane) next to the MCP endpoint.
    pub fn new(files: Files) -> Self {
        let max_inline = files.config().max_inline;
        Self {
            files: Some(files),
            max_inline,
        }
    }

    /// Only inline `data:` file arguments, with no store and no data plane: `mcp-file://`
    /// URIs are `fileUnavailable`, the `files/*` methods are unknown and `files` is not
    /// advertised.
    pub fn inline_only() -> Self {
        Self {
            files: None,
            max_inline: DEFAULT_MAX_INLINE,
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
        let max_inline = self.max_inline;
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
                max_inline,
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

/// The `isError` result for a refused file argument.
pub fn file_error_result(argument: &str, error: &FileError) -> CallToolResult {
    let mut result = CallToolResult::error_text(format!(
        "Invalid file argument {argument:?}: {} ({})",
        error.reason, error.message
    ));
    let mut structured = Map::new();
    structured.insert("argument".to_owned(), Value::from(argument));
    structured.insert("reason".to_owned(), Value::from(error.reason.as_str()));
    result.structured_content = Some(Value::Object(structured));
    result
}

/// Resolves every declared file field present in `arguments`; a refusal is the
/// ready-to-send `isError` result.
async fn resolve_arguments(
    fields: &[FileField],
    arguments: &Map<String, Value>,
    files: Option<&Files>,
    principal: Option<&str>,
    max_inline: u64,
) -> Result<FileArgs, CallToolResult> {
    let mut handles = HashMap::new();
    for field in fields {
        let Some(value) = arguments.get(&field.name) else {
            continue;
        };
        let values: Vec<&Value> = match (field.array, value) {
            (true, Value::Array(items)) => items.iter().collect(),
            (false, v) => vec![v],
            (true, _) => continue, // the schema validator already refused it
        };
        let mut resolved = Vec::with_capacity(values.len());
        for v in values {
            let Some(s) = v.as_str() else { continue };
            match resolve_one(s, &field.descriptor, files, principal, max_inline).await {
                Ok(h) => resolved.push(h),
                Err(e) => return Err(file_error_result(&field.name, &e)),
            }
        }
        handles.insert(field.name.clone(), resolved);
    }
    Ok(FileArgs {
        handles,
        files: files.cloned(),
        principal: principal.map(str::to_owned),
        max_inline,
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
    let result = if upload {
        let params: AuthorizeUploadRequestParams =
            read_params(params).map_err(|e| e.to_error_object())?;
        let result = files
            .authorize_upload(&params, principal.as_deref())
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
