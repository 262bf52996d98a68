//! SEP-2631 in the server: the `files/authorize*` methods, file arguments resolved before a
//! tool runs, and outputs gated on the client's `files.download` (REQUIREMENTS A15–A21).
//!
//! A bad file argument is an input validation error: an `isError` result whose
//! `structuredContent` is `{"argument": name, "reason": reason}` (A21 item 127). The
//! `files/*` RPCs themselves fail with −32602/−32603 carrying `data.reason`, −32601 (404)
//! when no file service is configured, and −32021 (400) when the client did not declare
//! `files.upload`/`files.download` with `https`.

use std::collections::HashMap;

use bytes::Bytes;
use serde_json::{Map, Value, json};
use smcp_files::{FileError, FileField, FileHandle, Files};
use smcp_proto::error::ErrorObject;
use smcp_proto::ext::files::{
    AuthorizeDownloadRequestParams, AuthorizeUploadRequestParams, FileInputDescriptor, FileValue,
    FilesCapability, METHOD_AUTHORIZE_UPLOAD,
};

use crate::context::RequestContext;
use crate::dispatch::{Call, Dispatch};
use crate::error::Rejection;
use crate::server::handler::HandlerError;

/// The resolved file arguments of one tool call.
#[derive(Debug, Clone, Default)]
pub struct FileArgs {
    handles: HashMap<String, Vec<FileHandle>>,
    files: Option<Files>,
    principal: Option<String>,
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
) -> Result<FileHandle, FileError> {
    match files {
        Some(files) => files.resolve(value, descriptor, principal).await,
        None if value.starts_with("mcp-file:") => Err(FileError::unavailable()),
        None => smcp_files::service::resolve_inline(value, descriptor, 8 << 20),
    }
}

/// The `isError` result for a refused file argument.
pub fn file_error_result(argument: &str, error: &FileError) -> Value {
    json!({
        "content": [{"type": "text", "text": format!(
            "Invalid file argument {argument:?}: {} ({})", error.reason, error.message
        )}],
        "structuredContent": {"argument": argument, "reason": error.reason.as_str()},
        "isError": true,
    })
}

/// Resolves every declared file field present in `arguments`; a refusal is the
/// ready-to-send `isError` result.
pub(crate) async fn resolve_arguments(
    fields: &[FileField],
    arguments: &Map<String, Value>,
    files: Option<&Files>,
    principal: Option<&str>,
) -> Result<FileArgs, Value> {
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
            match resolve_one(s, &field.descriptor, files, principal).await {
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
    })
}

/// Whether the request declared `files.download` with `https`.
pub fn client_can_download(ctx: &RequestContext) -> bool {
    FilesCapability::from_capabilities(ctx.client_capabilities()).is_some_and(|f| f.can_download())
}

fn fallback_text(file: &Value) -> String {
    let s = |k: &str| {
        file.get(k)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned()
    };
    let size = file
        .get("size")
        .and_then(Value::as_u64)
        .map_or_else(|| "?".to_owned(), |n| n.to_string());
    format!(
        "File {} ({}, {size} bytes) at {} — out-of-band download needs the files.download capability",
        s("name"),
        s("mimeType"),
        s("uri")
    )
}

/// Replaces `{"type":"file"}` content blocks with text for clients without `files.download`.
/// `can_download` is asked only when a result has such a block: most results have none, and
/// answering means parsing the request's `_meta`.
pub(crate) fn gate_outputs(mut result: Value, can_download: impl FnOnce() -> bool) -> Value {
    let is_file = |block: &Value| block.get("type").and_then(Value::as_str) == Some("file");
    let has_files =
        matches!(result.get("content"), Some(Value::Array(blocks)) if blocks.iter().any(is_file));
    if !has_files || can_download() {
        return result;
    }
    if let Some(Value::Array(blocks)) = result.get_mut("content") {
        for block in blocks.iter_mut() {
            if is_file(block) {
                let text = fallback_text(block.get("file").unwrap_or(&Value::Null));
                *block = json!({"type": "text", "text": text});
            }
        }
    }
    result
}

/// Replaces `FileResourceContents` with text contents for clients without `files.download`.
/// `can_download` is asked only when there is such an item (see [`gate_outputs`]).
pub(crate) fn gate_resource_contents(
    mut contents: Value,
    can_download: impl FnOnce() -> bool,
) -> Value {
    let is_file = |item: &Value| {
        item.get("content").is_some() && item.get("text").is_none() && item.get("blob").is_none()
    };
    let has_files = matches!(&contents, Value::Array(items) if items.iter().any(is_file));
    if !has_files || can_download() {
        return contents;
    }
    if let Value::Array(items) = &mut contents {
        for item in items.iter_mut() {
            if is_file(item) {
                let uri = item.get("uri").cloned().unwrap_or(Value::Null);
                let file_uri = item
                    .pointer("/content/uri")
                    .and_then(Value::as_str)
                    .unwrap_or("?");
                let mut text = json!({
                    "uri": uri,
                    "text": format!("File-backed resource at {file_uri} — out-of-band download needs the files.download capability"),
                    "mimeType": "text/plain",
                });
                if let (Some(meta), Some(obj)) = (item.get("_meta"), text.as_object_mut()) {
                    obj.insert("_meta".into(), meta.clone());
                }
                *item = text;
            }
        }
    }
    contents
}

fn missing_files_capability(id: &smcp_proto::jsonrpc::RequestId, direction: &str) -> Rejection {
    let mut caps = Map::new();
    caps.insert(
        "files".into(),
        json!({direction: true, "transports": ["https"]}),
    );
    Rejection::protocol(
        Some(id.clone()),
        ErrorObject::missing_required_client_capability(
            format!(
                "files/* requires the client capability files.{direction} with transport https"
            ),
            caps,
        ),
    )
}

/// Routes `files/authorizeUpload` and `files/authorizeDownload`.
pub(crate) fn dispatch(call: Call<'_>) -> Result<Dispatch, Rejection> {
    let Some(files) = call.inner.files.clone() else {
        return Err(Rejection::protocol(
            Some(call.id.clone()),
            ErrorObject::method_not_found(call.method),
        ));
    };
    let declared = FilesCapability::from_capabilities(call.ctx.client_capabilities());
    let upload = call.method == METHOD_AUTHORIZE_UPLOAD;
    let allowed = declared.is_some_and(|f| {
        if upload {
            f.can_upload()
        } else {
            f.can_download()
        }
    });
    if !allowed {
        return Err(missing_files_capability(
            call.id,
            if upload { "upload" } else { "download" },
        ));
    }
    let principal = call.principal.clone();
    let params = Value::Object(call.params);
    if upload {
        let params: AuthorizeUploadRequestParams = match serde_json::from_value(params) {
            Ok(p) => p,
            Err(e) => {
                return Ok(Dispatch::Ready(Err(ErrorObject::invalid_params(format!(
                    "invalid files/authorizeUpload params: {e}"
                )))));
            }
        };
        let outcome = files
            .authorize_upload(&params, principal.as_deref())
            .map_err(|e| e.to_error_object())
            .and_then(|r| {
                serde_json::to_value(r).map_err(|e| ErrorObject::internal(e.to_string()))
            });
        return Ok(Dispatch::Ready(outcome));
    }
    let params: AuthorizeDownloadRequestParams = match serde_json::from_value(params) {
        Ok(p) => p,
        Err(e) => {
            return Ok(Dispatch::Ready(Err(ErrorObject::invalid_params(format!(
                "invalid files/authorizeDownload params: {e}"
            )))));
        }
    };
    Ok(Dispatch::pending(async move {
        let result = files
            .authorize_download(&params.uri, principal.as_deref())
            .await
            .map_err(|e| e.to_error_object())?;
        serde_json::to_value(result).map_err(|e| ErrorObject::internal(e.to_string()))
    }))
}
