//! SEP-2631 files through the gateway (feature `files`). The gateway is its clients' file
//! server (its own store, `Gateway::serve_files`): a client uploads to it, or sends a
//! `data:` URI, and the gateway's `FilesExtension` checks the file against the tool's
//! declaration (`accept`, `maxSize`) before the call. Then each file goes to the upstream as
//! the upstream takes it:
//!
//! - uploaded again to an upstream that speaks SEP-2631 and allows `upload` for the field
//!   (its `files/authorizeUpload`, its data plane), the upstream's file URI in the argument;
//! - otherwise as a `data:` URI, within the field's `maxSize` (an upstream that only takes
//!   inline files).
//!
//! A file output (`{"type":"file"}`) of an upstream is downloaded from it and stored by the
//! gateway, so the client downloads it from the gateway; without a store it becomes a text
//! block naming the file. The served schema lets every file field be uploaded to the
//! gateway, whatever the upstream allows.

use base64::Engine as _;
use serde_json::{Map, Value};
use smcp_files::{FileField, FileHandle, FilesToolCall as _};
use smcp_proto::content::ContentBlock;
use smcp_proto::ext::files::FileInputDescriptor;
use smcp_proto::server::tools::CallToolResult;
use smcp_server::HandlerError;
use smcp_server::tools::ToolCall;

use crate::upstream::Upstream;

/// The largest file sent inline to a field that declares no `maxSize` (8 MiB).
const MAX_INLINE: u64 = 8 << 20;

/// The file fields of an upstream tool's input schema (none when its declarations are
/// malformed: the gateway's own `FilesExtension` then refuses the tool).
pub(crate) fn fields(schema: &Map<String, Value>) -> Vec<FileField> {
    smcp_files::file_fields(schema, true).unwrap_or_default()
}

/// The schema the gateway serves: with a store, every file field may also be uploaded to
/// the gateway.
pub(crate) fn widen(schema: &mut Map<String, Value>, fields: &[FileField], upstream: &Upstream) {
    if !upstream.files.gateway() {
        return;
    }
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    for field in fields {
        let Some(Value::Object(property)) = properties.get_mut(&field.name) else {
            continue;
        };
        let declared = if field.array {
            match property.get_mut("items") {
                Some(Value::Object(items)) => items,
                _ => continue,
            }
        } else {
            property
        };
        if let Some(Value::Object(declaration)) =
            declared.get_mut(smcp_proto::ext::files::X_MCP_FILE)
            && let Some(Value::Array(modes)) = declaration.get_mut("transferModes")
            && !modes.iter().any(|m| m == "upload")
        {
            modes.push(Value::from("upload"));
        }
    }
}

/// Puts each file argument of `call` in `arguments` as `upstream` takes it.
pub(crate) async fn arguments(
    call: &ToolCall,
    upstream: &Upstream,
    fields: &[FileField],
    arguments: &mut Map<String, Value>,
) -> Result<(), HandlerError> {
    for field in fields {
        let handles = call.files().all(&field.name);
        if handles.is_empty() {
            continue;
        }
        let mut values = Vec::with_capacity(handles.len());
        for handle in handles {
            let value = to_upstream(handle, upstream, &field.name, &field.descriptor).await?;
            values.push(Value::String(value));
        }
        let value = if field.array {
            Value::Array(values)
        } else {
            values.swap_remove(0)
        };
        arguments.insert(field.name.clone(), value);
    }
    Ok(())
}

/// One file as the upstream takes it: its file URI after an upload, or a `data:` URI.
async fn to_upstream(
    handle: &FileHandle,
    upstream: &Upstream,
    field: &str,
    descriptor: &FileInputDescriptor,
) -> Result<String, HandlerError> {
    let allows = |mode: &str| {
        descriptor
            .transfer_modes
            .as_ref()
            .is_none_or(|modes| modes.iter().any(|m| m == mode))
    };
    let failed = |what: &str, e: &dyn std::fmt::Display| {
        HandlerError::failed(format!(
            "upstream {:?}: the file argument {field:?} could not be {what}: {e}",
            upstream.name()
        ))
    };
    if upstream.files.upstream() && allows("upload") && !(handle.is_inline() && allows("inline")) {
        let stream = handle.stream().await.map_err(|e| failed("read", &e))?;
        let mut meta = smcp_client::files::UploadMeta::new(handle.size())
            .mime_type(handle.mime_type())
            .digest(handle.digest().clone());
        if let Some(name) = handle.name() {
            meta = meta.name(name);
        }
        let reader = tokio_util::io::StreamReader::new(stream);
        let file = upstream
            .client()
            .upload_reader(reader, meta, None)
            .await
            .map_err(|e| failed("uploaded to it", &e))?;
        return Ok(file.uri);
    }
    if !allows("inline") {
        return Err(HandlerError::failed(format!(
            "upstream {:?} takes the file argument {field:?} only by upload, which it does not \
             offer (no `files` capability)",
            upstream.name()
        )));
    }
    let limit = descriptor.max_size.unwrap_or(MAX_INLINE);
    if handle.size() > limit {
        return Err(HandlerError::failed(format!(
            "the file argument {field:?} has {} bytes; upstream {:?} takes at most {limit} inline",
            handle.size(),
            upstream.name()
        )));
    }
    let bytes = handle
        .read_to_vec(limit)
        .await
        .map_err(|e| failed("read", &e))?;
    Ok(format!(
        "data:{};base64,{}",
        handle.mime_type(),
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

/// Whether `result` has a file output for [`outputs`] to store.
pub(crate) fn has_outputs(result: &CallToolResult) -> bool {
    result
        .content
        .iter()
        .any(|block| matches!(block, ContentBlock::File(_)))
}

/// Each file output of `upstream` in `result`, stored by the gateway under its own URI (or,
/// without a store, a text block naming it).
pub(crate) async fn outputs(
    call: &ToolCall,
    upstream: &Upstream,
    result: &mut CallToolResult,
) -> Result<(), HandlerError> {
    for block in &mut result.content {
        let ContentBlock::File(content) = block else {
            continue;
        };
        let Some(files) = call.files().service() else {
            let name = content.file.name.as_deref().unwrap_or("a file");
            *block = ContentBlock::text(format!(
                "[{name} ({}): a file this gateway does not pass on]",
                content
                    .file
                    .mime_type
                    .as_deref()
                    .unwrap_or("application/octet-stream")
            ));
            continue;
        };
        let failed = |e: &dyn std::fmt::Display| {
            HandlerError::failed(format!(
                "upstream {:?}: its file output could not be fetched: {e}",
                upstream.name()
            ))
        };
        // Fetched whole (at most the store's file size) before it is stored, so a download
        // that fails leaves nothing half-written.
        let mut fetched = Bounded {
            bytes: Vec::new(),
            limit: files.config().max_size,
        };
        upstream
            .client()
            .download_file_into(&content.file, &mut fetched, None)
            .await
            .map_err(|e| failed(&e))?;
        let mime = content
            .file
            .mime_type
            .clone()
            .unwrap_or_else(|| "application/octet-stream".to_owned());
        content.file = files
            .create_bytes(
                content.file.name.clone(),
                &mime,
                fetched.bytes,
                principal(call),
            )
            .await
            .map_err(|e| failed(&e))?;
    }
    Ok(())
}

/// A writer into memory that refuses more than `limit` bytes.
struct Bounded {
    bytes: Vec<u8>,
    limit: u64,
}

impl tokio::io::AsyncWrite for Bounded {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if (self.bytes.len() + buf.len()) as u64 > self.limit {
            return std::task::Poll::Ready(Err(std::io::Error::other(format!(
                "the file is larger than this gateway stores ({} bytes)",
                self.limit
            ))));
        }
        self.bytes.extend_from_slice(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// Whose the stored outputs are: the caller's, as the gateway's store checks on download.
fn principal(call: &ToolCall) -> Option<&str> {
    call.ctx.principal().map(|p| p.0.as_str())
}
