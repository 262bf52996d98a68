//! SEP-2631 file transfer for smcp servers.
//!
//! Layout:
//! - [`store`]: the [`FileStore`] trait; [`LocalFileStore`] (content-addressed, crash-safe:
//!   temp file + fsync + rename) and [`ObjectStoreFileStore`] (any `object_store` backend).
//! - [`token`]: transfer tokens signed with the server's key ring (`smcp_server::KeyRing`,
//!   shared by instances), so any instance verifies what another issued; no server-side
//!   session state.
//! - [`meta`]: [`FileMeta`], stored next to the bytes so any instance resolves a file URI.
//! - [`s3`] (feature `s3`): [`S3StoreBuilder`], an [`ObjectStoreFileStore`] on an S3 bucket
//!   (`s3://bucket/prefix`, configured from the `AWS_*` environment variables, probed at
//!   build).
//! - [`direct`]: the seam of direct transfers ([`DirectTransfer`]: presigned upload and
//!   download URLs, confirmation of an upload the store received); the S3 store implements
//!   it (`s3_direct`, signing with `sigv4`) and [`FilesConfig::presign`] turns it on.
//! - [`schema`]: finds `x-mcp-file` declarations in tool and elicitation schemas.
//! - [`sniff`]: the media type magic bytes show, checked with the declared one against
//!   `accept`.
//! - [`service`]: [`Files`], the control plane (`files/authorize*`), validation of file
//!   arguments into [`FileHandle`]s, generated outputs, garbage collection.
//! - [`http`]: the data plane (upload and download endpoints) as an axum router.
//! - [`extension`]: SEP-2631 in an smcp server, through its extension seam:
//!   [`FilesExtension`] adds the `files/*` methods and the `files` capability, resolves file
//!   arguments before a tool runs ([`FilesToolCall::files`]) and gates file outputs after.
//!
//! # Features
//!
//! | feature | default | what |
//! |---|---|---|
//! | `s3` | no | `s3`: an S3 backend for [`ObjectStoreFileStore`] (`s3://bucket/prefix`, object_store's `aws` feature on the workspace's rustls provider), with presigned direct transfers ([`FilesConfig::presign`]) |

pub mod direct;
mod disposition;
pub mod error;
pub mod extension;
pub mod handle;
pub mod http;
pub mod meta;
mod presigned;
#[cfg(feature = "s3")]
pub mod s3;
#[cfg(feature = "s3")]
mod s3_direct;
pub mod schema;
pub mod service;
#[cfg(feature = "s3")]
mod sigv4;
pub mod sniff;
pub mod store;
mod stream;
pub mod token;

pub use direct::{DirectTransfer, PresignedRequest, Unconfirmed, UploadIntent};
#[allow(deprecated)]
pub use error::StoreError;
pub use error::{FileError, FileStoreError};
pub use extension::{FileArgs, FilesExtension, FilesToolCall, file_error_result};
pub use handle::{ByteStream, FileHandle};
pub use meta::FileMeta;
#[cfg(feature = "s3")]
pub use s3::{S3Error, S3Location, S3StoreBuilder};
pub use schema::{DeclarationError, FileField, file_fields};
pub use service::{BaseUrlError, SetupError, check_base_url};
pub use service::{
    DEFAULT_MAX_CALL_BYTES, DEFAULT_MAX_CALL_FILES, Files, FilesConfig, MAX_MIME_TYPE_BYTES,
    UploadStyle,
};
pub use store::{FileStore, LocalFileStore, ObjectStoreFileStore, StagedFile};
#[allow(deprecated)]
pub use token::TokenError;
pub use token::{Claims, Direction, Route, TransferTokenError};
