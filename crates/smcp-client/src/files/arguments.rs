//! File argument values ([`Client::file_argument`]), tool calls with files, and SEP-2631 file
//! fields in elicitation answers: the part of `files/` that extends [`Client`].

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{Map, Value};
use smcp_proto::ext::files::{FileInputDescriptor, TransferMode};
use smcp_proto::server::tools::CallToolResult;
use tokio::io::AsyncReadExt;

use super::config::FileTransfer;
use super::file_fields;
use super::local::{Progress, guess_mime, local_path, normalize_mime};
use super::policy::AddressPolicy;
use super::transfer_error::TransferError;
use crate::client::Client;
use crate::error::{Error, Result};

impl Client {
    pub(super) fn data_plane(&self) -> Result<(&reqwest::Client, &FileTransfer, &AddressPolicy)> {
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
