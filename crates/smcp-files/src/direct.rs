//! Direct transfers: upload and download descriptors that point straight at the store
//! (presigned URLs), so the bytes do not pass through the server.
//!
//! A store that can presign returns a [`DirectTransfer`] from [`crate::FileStore::direct`]
//! ; [`crate::FilesConfig::presign`] turns its use on. An upload is
//! authorized with an [`UploadIntent`] the store keeps (`tmp/<id>.pending`), and the presigned
//! request binds the exact size and digest, so the store itself refuses other bytes. The file
//! becomes visible only once [`DirectTransfer::confirm`] found the store's object with the
//! authorized size and digest and wrote the file record; an interrupted or refused upload
//! leaves no object, so nothing to confirm.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::FileStoreError;
use crate::meta::FileMeta;

/// A boxed future borrowing `'a`: the same type as the store's `BorrowedFuture`.
pub type DirectFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// An upload authorized for a direct transfer: the record to write once the store holds the
/// bytes (`meta`: id, name, media type, the authorized size and digest, owner, retention),
/// and until when the presigned request may be sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UploadIntent {
    /// The file record as authorized (`detected_type` and `blob` are set at confirmation).
    pub meta: FileMeta,
    /// Unix seconds after which the presigned upload is refused by the store.
    pub upload_expires_at: u64,
}

/// A presigned request: where to send it, and the headers it must carry exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresignedRequest {
    /// `PUT` or `GET`.
    pub method: String,
    /// The presigned URL (a bearer capability until it expires).
    pub url: String,
    /// Headers the client must send with these values (the signature covers them).
    pub headers: BTreeMap<String, String>,
}

/// Why a confirmation did not make a file visible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unconfirmed {
    /// No upload of that id was authorized for a direct transfer (or its intent is gone).
    NoIntent,
    /// Authorized, and the store holds no object for it yet (not uploaded, in progress,
    /// interrupted or refused).
    NotUploaded,
    /// The store holds an object that does not match the authorized size or digest, or does
    /// not report its digest; it was deleted and the file stays invisible.
    Mismatch,
}

/// A store's direct transfers (presigned URLs).
pub trait DirectTransfer: Send + Sync + std::fmt::Debug {
    /// The origin presigned URLs point at (`https://…`, or `http://` on loopback for tests),
    /// checked like the data plane's base URL.
    fn origin(&self) -> &str;

    /// The largest upload one presigned request may carry (S3: 5 GiB for a single `PUT`);
    /// larger uploads take the relayed path.
    fn max_upload(&self) -> u64;

    /// Records `intent` and presigns the `PUT` of its bytes, valid for `expires_in`, bound to
    /// its exact size, its sha-256 digest and its media type, and refused by the store once
    /// an object exists under its key.
    fn authorize_upload<'a>(
        &'a self,
        intent: &'a UploadIntent,
        expires_in: Duration,
    ) -> DirectFuture<'a, Result<PresignedRequest, FileStoreError>>;

    /// Presigns a `GET` of a committed file's bytes, valid for `expires_in`, answered as an
    /// attachment (`content_disposition`) of the record's media type, never cached.
    fn authorize_download<'a>(
        &'a self,
        meta: &'a FileMeta,
        content_disposition: &'a str,
        expires_in: Duration,
    ) -> DirectFuture<'a, Result<PresignedRequest, FileStoreError>>;

    /// Confirms the direct upload of `id` at `now`: when the store holds its object with the
    /// authorized size and sha-256 (as the store reports them), writes the file record (a
    /// conditional create; a record another instance wrote first is returned as is) and
    /// removes the intent.
    fn confirm<'a>(
        &'a self,
        id: &'a str,
        now: u64,
    ) -> DirectFuture<'a, Result<Result<FileMeta, Unconfirmed>, FileStoreError>>;

    /// The direct uploads authorized and not yet confirmed (for garbage collection, which
    /// confirms the ones uploaded).
    fn pending(&self) -> DirectFuture<'_, Result<Vec<UploadIntent>, FileStoreError>>;
}
