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
//! | `config` | [`FileTransfer`] (the settings) and the data-plane HTTP client |
//! | `local` | local files: media types ([`guess_mime`]), digests ([`digest_path`]), paths named in elicitation answers |
//! | `arguments` | file argument values ([`Client::file_argument`](crate::Client::file_argument)), [`Client::call_tool_with_files`](crate::Client::call_tool_with_files), files in elicitation answers |
//! | `policy` | [`check_descriptor`], [`check_transfer_url`], [`is_loopback`], [`AddressPolicy`], [`is_public`] |
//! | `chunks` | upload chunks read into reused buffers, handed to the HTTP client without a copy |
//! | `upload` | `files/authorizeUpload`, raw and multipart uploads from a path ([`Client::upload_path`](crate::Client::upload_path)), memory ([`Client::upload_bytes`](crate::Client::upload_bytes)) or any `AsyncRead` ([`Client::upload_reader`](crate::Client::upload_reader)) |
//! | `download` | `files/authorizeDownload`, verified downloads to disk ([`Client::download_file`](crate::Client::download_file)) or into any `AsyncWrite` ([`Client::download_into`](crate::Client::download_into)) |
//! | `error` | [`TransferError`] |

mod arguments;
mod chunks;
mod config;
mod download;
mod local;
mod policy;
mod transfer_error;
mod upload;

use serde_json::Value;
use smcp_proto::content::ContentBlock;
use smcp_proto::ext::files::{FileInputDescriptor, FileValue, X_MCP_FILE};
use smcp_proto::server::tools::CallToolResult;

pub use config::FileTransfer;
pub(crate) use config::data_plane_client;
pub use local::{Progress, digest_path, guess_mime};
pub use policy::{AddressPolicy, check_descriptor, check_transfer_url, is_loopback, is_public};
pub use transfer_error::{Operation, TransferError};
pub use upload::UploadMeta;

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use smcp_proto::ext::files::{FileContent, TransferMode};

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
