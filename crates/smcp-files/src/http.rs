//! The data plane: `PUT <prefix>/upload/{token}` (raw), `POST <prefix>/upload` (multipart:
//! `token` field, then the file field) and `GET <prefix>/download/{token}`.
//!
//! Uploads stream to a staged write while hashing and counting; the file becomes visible
//! only after size and digest verification (atomic commit). An upload token is good only on
//! the route its descriptor names, and only one upload of a file runs at a time (a racing one
//! is refused before it stores anything). Errors are JSON `{"reason": …}` with the statuses of
//! `docs/files/errors.md`: 413 `maxSizeExceeded` / `sizeMismatch`, 422 `digestMismatch`, 410
//! `descriptorExpired` (expired, already redeemed, or being redeemed), 403 `fileUnavailable`
//! (forged, tampered, wrong-direction or wrong-route token), 507 `storeFull`.
//!
//! An upload refused before its body was read to the end keeps the request body open until
//! the refusal has been sent, so over HTTP/2 the client gets the response (and then a
//! `NO_ERROR` reset of its upload), not a cancelled stream.
//!
//! Downloads are served as inert attachments: `Content-Disposition: attachment` with a safe
//! file name, `X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox`, no
//! caching and no referrer.

use std::pin::Pin;
use std::task::{Context, Poll};

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

use crate::disposition::content_disposition;
use crate::error::FileError;
use crate::meta::FileMeta;
use crate::service::{Files, sniff_head};
use crate::sniff;
use crate::token::{self, Claims, Direction, Route, TransferTokenError};

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

/// Headers on every data-plane answer: never cached, never sniffed.
fn inert(response: &mut Response) {
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

fn refuse(status: StatusCode, reason: FileErrorReason, message: &str) -> Response {
    let mut response = (
        status,
        axum::Json(json!({"reason": reason.as_str(), "message": message})),
    )
        .into_response();
    inert(&mut response);
    response
}

fn refuse_file(e: &FileError) -> Response {
    let status = StatusCode::from_u16(e.reason.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
    let mut body = e.data();
    if let Some(obj) = body.as_object_mut() {
        obj.insert("message".into(), json!(e.message));
    }
    let mut response = (status, axum::Json(body)).into_response();
    inert(&mut response);
    response
}

fn redeemed() -> Response {
    refuse_file(&FileError::new(
        FileErrorReason::DescriptorExpired,
        "this upload descriptor was already used",
    ))
}

fn token_refusal(e: TransferTokenError) -> Response {
    match e {
        TransferTokenError::Expired => refuse(
            StatusCode::GONE,
            FileErrorReason::DescriptorExpired,
            "descriptor expired",
        ),
        TransferTokenError::WrongRoute => refuse(
            StatusCode::FORBIDDEN,
            FileErrorReason::FileUnavailable,
            "invalid descriptor for this upload route",
        ),
        _ => refuse(
            StatusCode::FORBIDDEN,
            FileErrorReason::FileUnavailable,
            "invalid descriptor",
        ),
    }
}

/// A response body that keeps `held` (the request body) alive until the response body has
/// ended, so the request stream is closed only after the response went out (HTTP/2: a reset
/// with `NO_ERROR` after the response instead of `CANCEL` before it).
struct HoldUntilSent<T> {
    inner: Body,
    held: Option<T>,
}

impl<T: Send + Unpin + 'static> http_body::Body for HoldUntilSent<T> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            this.held = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// `response`, with the request body kept open until it has been sent. Over HTTP/1.x a
/// refusal also closes the connection: the rest of the body may still be on its way, so the
/// connection cannot carry another request (the client learns it from `Connection: close`
/// instead of a reset of a connection it took for reusable).
fn hold_request<T: Send + Unpin + 'static>(
    response: Response,
    version: http::Version,
    request_body: T,
) -> Response {
    let (mut parts, body) = response.into_parts();
    let http1 = matches!(version, http::Version::HTTP_10 | http::Version::HTTP_11);
    if http1 && !parts.status.is_success() {
        parts
            .headers
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    Response::from_parts(
        parts,
        Body::new(HoldUntilSent {
            inner: body,
            held: Some(request_body),
        }),
    )
}

async fn upload_raw(
    State(files): State<Files>,
    Path(token): Path<String>,
    version: http::Version,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let claims = match token::verify_upload(&files.inner.keys, &token, Route::Put, files.now()) {
        Ok(c) => c,
        Err(e) => return hold_request(token_refusal(e), version, body),
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let mut stream = body
        .into_data_stream()
        .map(|r| r.map_err(std::io::Error::other));
    let response = receive(&files, &claims, declared, &mut stream).await;
    hold_request(response, version, stream)
}

async fn upload_multipart(
    State(files): State<Files>,
    version: http::Version,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let boundary = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|ct| multer::parse_boundary(ct).ok());
    let Some(boundary) = boundary else {
        let refusal = refuse(
            StatusCode::BAD_REQUEST,
            FileErrorReason::MalformedFileUri,
            "expected multipart/form-data with a boundary",
        );
        return hold_request(refusal, version, body);
    };
    let constraints = multer::Constraints::new().size_limit(
        multer::SizeLimit::new()
            .per_field(files.inner.config.max_size.saturating_add(1))
            .for_field("token", 8192),
    );
    let mut form =
        multer::Multipart::with_constraints(body.into_data_stream(), boundary, constraints);
    let response = multipart_form(&files, &mut form).await;
    hold_request(response, version, form)
}

async fn multipart_form(files: &Files, form: &mut multer::Multipart<'static>) -> Response {
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
                match token::verify_upload(&files.inner.keys, &text, Route::Form, files.now()) {
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
                let mut stream = field.map(|r| r.map_err(std::io::Error::other));
                return receive(files, claims, None, &mut stream).await;
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

fn size_mismatch(expected: u64, actual: u64, at_least: bool) -> FileError {
    let message = if at_least {
        format!("received more than the authorized {expected} bytes")
    } else {
        format!("received {actual} bytes, authorized {expected}")
    };
    FileError::new(FileErrorReason::SizeMismatch, message)
        .with("expectedSize", expected)
        .with("actualSize", actual)
}

/// Streams an upload into the store: count, hash, verify, then commit. The bytes go to a
/// staged write under the upload's claim, so a concurrent upload with the same descriptor is
/// refused before it writes anything.
async fn receive<S>(files: &Files, claims: &Claims, declared: Option<u64>, body: &mut S) -> Response
where
    S: Stream<Item = Result<Bytes, std::io::Error>> + Send + Unpin,
{
    let cfg = &files.inner.config;
    let max = claims.max.unwrap_or(cfg.max_size).min(cfg.max_size);
    // A redeemed descriptor is refused whatever the body (410 before any size check).
    match files.inner.store.meta(&claims.fid).await {
        Ok(None) => {}
        Ok(Some(_)) => return redeemed(),
        Err(e) => return refuse_file(&FileError::from(e)),
    }
    // The authorized size is exact: a declared length that differs is refused unread.
    match (claims.size, declared) {
        (Some(expected), Some(len)) if len != expected => {
            return refuse_file(&size_mismatch(expected, len, false));
        }
        (None, Some(len)) if len > max => return refuse_file(&too_large(max, len)),
        _ => {}
    }
    let mut staged = match files.inner.store.stage_upload(&claims.fid).await {
        Ok(s) => s,
        Err(crate::FileStoreError::AlreadyExists) => return redeemed(),
        Err(e) => return refuse_file(&FileError::from(e)),
    };
    let mut hasher = DigestBuilder::new();
    let mut head = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                // Client went away or sent a broken body: drop the staged bytes.
                tracing::debug!(error = %e, file = %claims.fid, "upload body failed");
                staged.abort().await;
                let received = hasher.len();
                return refuse_file(&FileError::new(
                    FileErrorReason::SizeMismatch,
                    format!("upload body interrupted after {received} bytes"),
                ));
            }
        };
        hasher.update(&chunk);
        sniff_head(&mut head, &chunk);
        if let Some(expected) = claims.size
            && hasher.len() > expected
        {
            let actual = hasher.len();
            staged.abort().await;
            return refuse_file(&size_mismatch(expected, actual, true));
        }
        if hasher.len() > max {
            let actual = hasher.len();
            staged.abort().await;
            return refuse_file(&too_large(max, actual));
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
        return refuse_file(&size_mismatch(expected, size, false));
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
        detected_type: sniff::detect(&head).map(str::to_owned),
        blob: None,
    };
    match staged.commit(meta.clone()).await {
        Ok(()) => {
            files
                .metrics()
                .file_bytes(smcp_server::core::metrics::FileDirection::In, size);
            let uri = files.uri_for(&meta.id);
            let mut response = (
                StatusCode::OK,
                axum::Json(json!({"file": meta.file_value(uri)})),
            )
                .into_response();
            inert(&mut response);
            response
        }
        Err(crate::FileStoreError::AlreadyExists) => redeemed(),
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
    let metrics = files.metrics();
    let mut response = if metrics.is_on() {
        Response::new(Body::from_stream(stream.inspect(move |chunk| {
            if let Ok(bytes) = chunk {
                metrics.file_bytes(
                    smcp_server::core::metrics::FileDirection::Out,
                    bytes.len() as u64,
                );
            }
        })))
    } else {
        Response::new(Body::from_stream(stream))
    };
    inert(&mut response);
    let h = response.headers_mut();
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(meta.size));
    if let Ok(v) = HeaderValue::from_str(&meta.mime_type) {
        h.insert(header::CONTENT_TYPE, v);
    }
    if let Ok(v) = HeaderValue::from_str(&content_disposition(meta.name.as_deref())) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("sandbox; default-src 'none'"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    if let Ok(v) = HeaderValue::from_str(&format!("sha-256=:{std_b64}:")) {
        h.insert("repr-digest", v);
    }
    if let Ok(v) = HeaderValue::from_str(&format!("sha-256={}", meta.digest.value)) {
        h.insert("x-mcp-file-digest", v);
    }
    response
}
