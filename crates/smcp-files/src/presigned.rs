//! The file service's side of direct transfers ([`crate::FilesConfig::presign`]): presigned
//! descriptors from the store's [`DirectTransfer`], confirmation of uploads before their file
//! URI resolves, and the garbage-collection sweep of pending ones.

use std::time::Duration;

use smcp_proto::ext::files::{FileErrorReason, FileTransferDescriptor, TRANSPORT_HTTPS};
use smcp_proto::time::rfc3339;

use crate::direct::{DirectTransfer, PresignedRequest, UploadIntent};
use crate::disposition::content_disposition;
use crate::error::FileError;
use crate::meta::FileMeta;

/// The descriptor of a presigned request expiring at `exp` (Unix seconds).
fn descriptor(request: PresignedRequest, exp: u64) -> FileTransferDescriptor {
    FileTransferDescriptor {
        transport: TRANSPORT_HTTPS.into(),
        method: request.method,
        url: request.url,
        headers: (!request.headers.is_empty()).then_some(request.headers),
        multipart: None,
        expires_at: Some(rfc3339(i64::try_from(exp).unwrap_or(i64::MAX))),
    }
}

fn store_failure(what: &str, e: &crate::FileStoreError) -> FileError {
    tracing::warn!(error = %e, "{what}");
    FileError::new(FileErrorReason::StoreFull, what.to_owned())
}

/// Records `intent` and presigns its upload, valid until `intent.upload_expires_at`.
pub(crate) async fn upload(
    direct: &dyn DirectTransfer,
    intent: &UploadIntent,
    now: u64,
) -> Result<FileTransferDescriptor, FileError> {
    let ttl = intent.upload_expires_at.saturating_sub(now);
    let request = direct
        .authorize_upload(intent, Duration::from_secs(ttl))
        .await
        .map_err(|e| store_failure("cannot presign the upload", &e))?;
    tracing::debug!(file = %intent.meta.id, size = intent.meta.size, "presigned upload");
    Ok(descriptor(request, intent.upload_expires_at))
}

/// Presigns the download of `meta`, valid until `exp`.
pub(crate) async fn download(
    direct: &dyn DirectTransfer,
    meta: &FileMeta,
    now: u64,
    exp: u64,
) -> Result<FileTransferDescriptor, FileError> {
    let disposition = content_disposition(meta.name.as_deref());
    let ttl = Duration::from_secs(exp.saturating_sub(now));
    let request = direct
        .authorize_download(meta, &disposition, ttl)
        .await
        .map_err(|e| store_failure("cannot presign the download", &e))?;
    Ok(descriptor(request, exp))
}

/// Confirms the direct upload of `id`: its record once the store holds the authorized bytes,
/// `None` while it does not (never uploaded, in progress, interrupted, refused).
pub(crate) async fn confirm(
    direct: &dyn DirectTransfer,
    id: &str,
    now: u64,
) -> Result<Option<FileMeta>, FileError> {
    match direct.confirm(id, now).await {
        Ok(Ok(meta)) => Ok(Some(meta)),
        Ok(Err(why)) => {
            tracing::debug!(file = %id, ?why, "direct upload not confirmed");
            Ok(None)
        }
        Err(e) => Err(store_failure("cannot confirm the upload", &e)),
    }
}

/// One sweep of the pending direct uploads: confirms those the store holds. (Intents never
/// uploaded go with the store's sweep of `tmp/` after the GC grace, long after their
/// descriptor expired.) Returns how many were confirmed.
pub(crate) async fn sweep(direct: &dyn DirectTransfer, now: u64) -> Result<usize, FileError> {
    let pending = direct
        .pending()
        .await
        .map_err(|e| store_failure("cannot list pending uploads", &e))?;
    let mut confirmed = 0;
    for intent in pending {
        match direct.confirm(&intent.meta.id, now).await {
            Ok(Ok(_)) => confirmed += 1,
            Ok(Err(_)) => {}
            Err(e) => {
                tracing::warn!(file = %intent.meta.id, error = %e, "confirming a direct upload failed");
            }
        }
    }
    Ok(confirmed)
}
