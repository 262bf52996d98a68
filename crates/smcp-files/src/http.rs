//! The data plane: `PUT <prefix>/upload/{token}` (raw), `POST <prefix>/upload` (multipart:
//! `token` field, then the file field) and `GET <prefix>/download/{token}`.
//!
//! Uploads stream to a staged write while hashing and counting; the file becomes visible
//! only after size and digest verification (atomic commit). Errors are JSON
//! `{"reason": …}`: 413 `maxSizeExceeded`, 422 `digestMismatch`, 400 `sizeMismatch`,
//! 410 `descriptorExpired` (expired ticket), 409 `descriptorExpired` (ticket already used),
//! 403 `fileUnavailable` (forged or wrong-direction token), 507 `storeFull`.

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use base64::Engine as _;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use serde_json::json;
use smcp_proto::ext::files::{DigestBuilder, FileErrorReason};

use crate::error::FileError;
use crate::meta::FileMeta;
use crate::service::Files;
use crate::token::{self, Claims, Direction, TokenError};

impl Files {
    /// The data-plane routes, mounted at the configured prefix.
    pub fn router(&self) -> Router {
        let prefix = self.inner.config.path_prefix.trim_end_matches('/');
        Router::new()
            .route(&format!("{prefix}/upload/{{token}}"), put(upload_raw))
            .route(&format!("{prefix}/upload"), post(upload_multipart))
            .route(&format!("{prefix}/download/{{token}}"), get(download))
            .with_state(self.clone())
    }
}

fn refuse(status: StatusCode, reason: FileErrorReason, message: &str) -> Response {
    (
        status,
        [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        axum::Json(json!({"reason": reason.as_str(), "message": message})),
    )
        .into_response()
}

fn refuse_file(e: &FileError) -> Response {
    let status = StatusCode::from_u16(e.reason.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
    let mut body = e.data();
    if let Some(obj) = body.as_object_mut() {
        obj.insert("message".into(), json!(e.message));
    }
    (status, axum::Json(body)).into_response()
}

fn token_refusal(e: TokenError) -> Response {
    match e {
        TokenError::Expired => refuse(
            StatusCode::GONE,
            FileErrorReason::DescriptorExpired,
            "descriptor expired",
        ),
        _ => refuse(
            StatusCode::FORBIDDEN,
            FileErrorReason::FileUnavailable,
            "invalid descriptor",
        ),
    }
}

async fn upload_raw(
    State(files): State<Files>,
    Path(token): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let claims = match token::verify(&files.inner.keys, &token, Direction::Upload, files.now()) {
        Ok(c) => c,
        Err(e) => return token_refusal(e),
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    receive(
        &files,
        &claims,
        declared,
        body.into_data_stream()
            .map(|r| r.map_err(std::io::Error::other)),
    )
    .await
}

async fn upload_multipart(State(files): State<Files>, headers: HeaderMap, body: Body) -> Response {
    let boundary = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|ct| multer::parse_boundary(ct).ok());
    let Some(boundary) = boundary else {
        return refuse(
            StatusCode::BAD_REQUEST,
            FileErrorReason::MalformedFileUri,
            "expected multipart/form-data with a boundary",
        );
    };
    let constraints = multer::Constraints::new().size_limit(
        multer::SizeLimit::new()
            .per_field(files.inner.config.max_size.saturating_add(1))
            .for_field("token", 8192),
    );
    let mut form =
        multer::Multipart::with_constraints(body.into_data_stream(), boundary, constraints);
    let mut claims: Option<Claims> = None;
    loop {
        let field = match form.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    FileErrorReason::MalformedFileUri,
                    &format!("bad multipart body: {e}"),
                );
            }
        };
        match field.name() {
            Some("token") => {
                let Ok(text) = field.text().await else {
                    return refuse(
                        StatusCode::BAD_REQUEST,
                        FileErrorReason::MalformedFileUri,
                        "unreadable token field",
                    );
                };
                match token::verify(&files.inner.keys, &text, Direction::Upload, files.now()) {
                    Ok(c) => claims = Some(c),
                    Err(e) => return token_refusal(e),
                }
            }
            Some("file") => {
                let Some(claims) = &claims else {
                    return refuse(
                        StatusCode::BAD_REQUEST,
                        FileErrorReason::MalformedFileUri,
                        "the token field must precede the file field",
                    );
                };
                let stream = field.map(|r| r.map_err(std::io::Error::other));
                return receive(&files, claims, None, stream).await;
            }
            _ => {}
        }
    }
    refuse(
        StatusCode::BAD_REQUEST,
        FileErrorReason::MalformedFileUri,
        "no file field in the form",
    )
}

/// Streams an upload into the store: count, hash, verify, then commit.
async fn receive<S>(files: &Files, claims: &Claims, declared: Option<u64>, body: S) -> Response
where
    S: Stream<Item = Result<Bytes, std::io::Error>> + Send,
{
    let cfg = &files.inner.config;
    let limit = claims
        .size
        .unwrap_or(claims.max.unwrap_or(cfg.max_size))
        .min(cfg.max_size);
    if let Some(len) = declared
        && len > limit
    {
        return refuse_file(&too_large(limit, len));
    }
    match files.inner.store.meta(&claims.fid).await {
        Ok(None) => {}
        Ok(Some(_)) => {
            return refuse(
                StatusCode::CONFLICT,
                FileErrorReason::DescriptorExpired,
                "this upload descriptor was already used",
            );
        }
        Err(e) => return refuse_file(&FileError::from(e)),
    }
    let mut staged = match files.inner.store.stage().await {
        Ok(s) => s,
        Err(e) => return refuse_file(&FileError::from(e)),
    };
    let mut hasher = DigestBuilder::new();
    let mut body = std::pin::pin!(body);
    while let Some(chunk) = body.next().await {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                // Client went away or sent a broken body: drop the staged bytes.
                tracing::debug!(error = %e, file = %claims.fid, "upload body failed");
                staged.abort().await;
                return refuse(
                    StatusCode::BAD_REQUEST,
                    FileErrorReason::SizeMismatch,
                    "upload body interrupted",
                );
            }
        };
        hasher.update(&chunk);
        if hasher.len() > limit {
            let actual = hasher.len();
            staged.abort().await;
            return refuse_file(&too_large(limit, actual));
        }
        if let Err(e) = staged.write(chunk).await {
            staged.abort().await;
            return refuse_file(&FileError::from(e));
        }
    }
    let (size, digest) = hasher.finish();
    if let Some(expected) = claims.size
        && expected != size
    {
        staged.abort().await;
        return refuse_file(
            &FileError::new(
                FileErrorReason::SizeMismatch,
                format!("received {size} bytes, authorized {expected}"),
            )
            .with("expectedSize", expected)
            .with("actualSize", size),
        );
    }
    if let Some(expected) = &claims.digest
        && !expected.matches(&digest)
        && !cfg.skip_digest_check
    {
        staged.abort().await;
        return refuse_file(&FileError::new(
            FileErrorReason::DigestMismatch,
            "uploaded bytes do not match the authorized digest",
        ));
    }
    let now = files.now();
    let meta = FileMeta {
        id: claims.fid.clone(),
        name: claims.name.clone(),
        mime_type: claims
            .mime
            .clone()
            .unwrap_or_else(|| "application/octet-stream".into()),
        size,
        digest,
        owner: claims.sub.clone(),
        created_at: now,
        expires_at: claims.ret.unwrap_or(now + cfg.retention),
    };
    match staged.commit(meta.clone()).await {
        Ok(()) => {
            let uri = files.uri_for(&meta.id);
            (
                StatusCode::OK,
                axum::Json(json!({"file": meta.file_value(uri)})),
            )
                .into_response()
        }
        Err(crate::StoreError::AlreadyExists) => refuse(
            StatusCode::CONFLICT,
            FileErrorReason::DescriptorExpired,
            "this upload descriptor was already used",
        ),
        Err(e) => refuse_file(&FileError::from(e)),
    }
}

fn too_large(limit: u64, actual: u64) -> FileError {
    FileError::new(
        FileErrorReason::MaxSizeExceeded,
        format!("upload exceeds {limit} bytes"),
    )
    .with("maxSize", limit)
    .with("actualSize", actual)
}

async fn download(State(files): State<Files>, Path(token): Path<String>) -> Response {
    let claims = match token::verify(&files.inner.keys, &token, Direction::Download, files.now()) {
        Ok(c) => c,
        Err(e) => return token_refusal(e),
    };
    let meta = match files.inner.store.meta(&claims.fid).await {
        Ok(Some(m)) if m.usable_by(claims.sub.as_deref(), files.now()) => m,
        Ok(_) => return refuse_file(&FileError::unavailable()),
        Err(e) => return refuse_file(&FileError::from(e)),
    };
    let stream = match files.inner.store.open(&meta).await {
        Ok(s) => s,
        Err(e) => return refuse_file(&FileError::from(e)),
    };
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(&meta.digest.value)
        .unwrap_or_default();
    let std_b64 = base64::engine::general_purpose::STANDARD.encode(raw);
    let mut response = Response::new(Body::from_stream(stream));
    let h = response.headers_mut();
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(meta.size));
    if let Ok(v) = HeaderValue::from_str(&meta.mime_type) {
        h.insert(header::CONTENT_TYPE, v);
    }
    if let Ok(v) = HeaderValue::from_str(&format!("sha-256=:{std_b64}:")) {
        h.insert("repr-digest", v);
    }
    if let Ok(v) = HeaderValue::from_str(&format!("sha-256={}", meta.digest.value)) {
        h.insert("x-mcp-file-digest", v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
