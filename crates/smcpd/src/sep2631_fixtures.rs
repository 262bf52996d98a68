//! SEP-2631 fixtures for the file-transfer conformance suite (`files_*` tools), served by
//! `smcpd --sep2631-fixtures` and by the conformance fixture server (`smcp-conformance`).
//!
//! The contract: the four input tools return `structuredContent`
//! `{"size", "mimeType", "digest": {"algorithm": "sha-256", "value"}}` (for `files_many`:
//! `{"files": [...]}`) plus the same JSON as text; a refused argument is an `isError`
//! result with `structuredContent` `{"argument", "reason"}`. `files_generate` returns
//! `{"file": FileValue}` and a `type: "file"` block (text for clients without
//! `files.download`); `files_elicit` asks for a file through MRTR.

use serde_json::{Value, json};
use smcp_files::{FileHandle, FilesToolCall as _, file_error_result};
use smcp_proto::client::elicitation::ElicitValue;
use smcp_proto::content::ContentBlock;
use smcp_proto::ext::files::{FileContent, FileInputDescriptor, mime_essence};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, ServerBuilder, mrtr, tool};

fn file_prop(decl: &Value) -> Value {
    json!({"type": "string", "format": "uri", "x-mcp-file": decl})
}

fn single(decl: &Value) -> Value {
    json!({"type": "object", "properties": {"file": file_prop(decl)}, "required": ["file"]})
}

fn summary(h: &FileHandle) -> Value {
    json!({
        "size": h.size(),
        "mimeType": mime_essence(h.mime_type()),
        "digest": {"algorithm": h.digest().algorithm, "value": h.digest().value},
    })
}

fn structured(value: Value) -> CallToolResult {
    let mut result = CallToolResult::text(value.to_string());
    result.structured_content = Some(value);
    result
}

fn single_file(call: &smcp_server::ToolCall) -> Result<CallToolResult, HandlerError> {
    let h = call
        .files()
        .get("file")
        .ok_or_else(|| HandlerError::failed("missing file"))?;
    Ok(structured(summary(h)))
}

/// The byte at offset `i` of a `files_generate` file.
pub fn generated_byte(i: u64) -> u8 {
    (i % 251) as u8
}

fn elicit_schema() -> Value {
    json!({"type": "object",
           "properties": {"document": file_prop(&json!({"maxSize": 65536}))},
           "required": ["document"]})
}

/// Adds the `files_*` fixture tools.
pub fn with_files(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            tool("files_inline_text")
                .description("One small text file, inline only")
                .input_schema(single(
                    &json!({"accept": ["text/plain"], "maxSize": 64, "transferModes": ["inline"]}),
                ))
                .handler(|call| async move { single_file(&call) }),
        )
        .tool(
            tool("files_upload_only")
                .description("One file up to 1 MiB, upload only")
                .input_schema(single(
                    &json!({"maxSize": 1_048_576, "transferModes": ["upload"]}),
                ))
                .handler(|call| async move { single_file(&call) }),
        )
        .tool(
            tool("files_any_image")
                .description("One image up to 64 KiB, any transfer mode")
                .input_schema(single(&json!({"accept": ["image/*"], "maxSize": 65536})))
                .handler(|call| async move { single_file(&call) }),
        )
        .tool(
            tool("files_many")
                .description("Any number of files up to 64 KiB each")
                .input_schema(json!({"type": "object", "properties": {"files": {
                    "type": "array", "items": file_prop(&json!({"maxSize": 65536}))}},
                    "required": ["files"]}))
                .handler(|call| async move {
                    let files: Vec<Value> = call.files().all("files").iter().map(summary).collect();
                    Ok(structured(json!({"files": files})))
                }),
        )
        .tool(
            tool("files_generate")
                .description(
                    "Generates `size` bytes (byte i = i % 251) as application/octet-stream",
                )
                .input_schema(json!({"type": "object", "properties": {
                    "size": {"type": "integer", "minimum": 0, "maximum": 1_048_576},
                    "name": {"type": "string"}}, "required": ["size", "name"]}))
                .handler(|call| async move {
                    let size = call
                        .arguments
                        .get("size")
                        .and_then(Value::as_u64)
                        .unwrap_or(0);
                    let name = call.str_arg("name").unwrap_or("generated.bin").to_owned();
                    let bytes: Vec<u8> = (0..size).map(generated_byte).collect();
                    let file = call
                        .files()
                        .output(&name, "application/octet-stream", bytes)
                        .await?;
                    let mut result = CallToolResult::new(vec![ContentBlock::File(
                        FileContent::new(file.clone()),
                    )]);
                    result.structured_content = Some(json!({"file": file}));
                    Ok(result)
                }),
        )
        .tool(
            tool("files_elicit")
                .description("Asks the user for a document through MRTR elicitation")
                .handler(|call| async move {
                    let answer = call.input.ask(mrtr::elicit_form(
                        "document_request",
                        "Select a document to analyze.",
                        elicit_schema(),
                    ))?;
                    let value = match answer.content.as_ref().and_then(|c| c.get("document")) {
                        Some(ElicitValue::String(s)) => s.clone(),
                        _ => {
                            return Err(HandlerError::failed(
                                "the user declined to provide a document",
                            ));
                        }
                    };
                    let descriptor = FileInputDescriptor {
                        max_size: Some(65536),
                        ..Default::default()
                    };
                    match call.files().resolve(&value, &descriptor).await {
                        Ok(h) => Ok(structured(summary(&h))),
                        Err(e) => Ok(file_error_result("document", &e)),
                    }
                }),
        )
}
