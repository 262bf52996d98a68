//! The upload calls every scenario that needs a stored file makes: `files/authorizeUpload`
//! and the upload itself.

use serde_json::{Value, json};

use crate::wire::{RpcReply, Wire, WireError, files_caps};

/// `files/authorizeUpload` for `bytes` (name, mimeType, size, digest) with the files capability.
pub(crate) async fn authorize_upload(
    wire: &Wire,
    bytes: &[u8],
    name: &str,
    mime: &str,
) -> Result<RpcReply, WireError> {
    let params = json!({
        "name": name, "mimeType": mime, "size": bytes.len(),
        "digest": crate::files::digest_json(bytes),
    });
    wire.rpc("files/authorizeUpload", params, files_caps())
        .await
}

/// Authorizes and uploads `bytes`; returns the file URI or why it failed.
pub(crate) async fn upload_file(
    wire: &Wire,
    bytes: &[u8],
    name: &str,
    mime: &str,
) -> Result<Result<(String, Value), String>, WireError> {
    let reply = authorize_upload(wire, bytes, name, mime).await?;
    let Some(result) = reply.result() else {
        return Ok(Err(format!(
            "files/authorizeUpload failed: {}",
            reply.evidence()
        )));
    };
    let (Some(uri), Some(upload)) = (
        result.pointer("/file/uri").and_then(Value::as_str),
        result.get("upload"),
    ) else {
        return Ok(Err(format!(
            "files/authorizeUpload result lacks file.uri/upload: {}",
            reply.evidence()
        )));
    };
    let data = match wire.upload(upload, bytes, name, mime).await {
        Ok(d) => d,
        Err(WireError::InsecureDescriptor(u)) => {
            return Ok(Err(format!("descriptor url {u} is not https")));
        }
        Err(e) => return Err(e),
    };
    if !(200..300).contains(&data.status) {
        return Ok(Err(format!(
            "upload answered HTTP {} {:?}",
            data.status,
            data.reason()
        )));
    }
    Ok(Ok((uri.to_owned(), upload.clone())))
}
