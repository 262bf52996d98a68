//! `files-upload`, `files-upload-integrity`, `files-uris`.

use serde_json::{Value, json};

use super::outcome::{Outcome, expect_file_result, expect_rejected};
use super::upload_call::{authorize_upload, upload_file};
use crate::files::{generated_bytes, sha256_b64url};
use crate::report::{Recorder, Status, parse_rfc3339, unix_now};
use crate::sep;
use crate::wire::{Wire, WireError, files_caps, is_loopback_http};

/// Problems with a FileTransferDescriptor (`methods` = allowed methods).
pub(crate) fn descriptor_problems(
    d: Option<&Value>,
    methods: &[&str],
    dev_http: bool,
) -> Vec<String> {
    let Some(d) = d else {
        return vec!["descriptor missing".into()];
    };
    let mut p = Vec::new();
    if d.get("transport").and_then(Value::as_str) != Some("https") {
        p.push(format!(
            "transport = {:?}, want \"https\"",
            d.get("transport")
        ));
    }
    if !d
        .get("method")
        .and_then(Value::as_str)
        .is_some_and(|m| methods.contains(&m))
    {
        p.push(format!(
            "method = {:?}, want one of {methods:?}",
            d.get("method")
        ));
    }
    let url = d.get("url").and_then(Value::as_str).unwrap_or("");
    if !(url.starts_with("https://") || (dev_http && is_loopback_http(url))) {
        p.push(format!("url {url:?} is not https"));
    }
    match d
        .get("expiresAt")
        .and_then(Value::as_str)
        .map(|s| (s, parse_rfc3339(s)))
    {
        None => p.push("expiresAt missing (descriptors must be time-limited)".into()),
        Some((s, None)) => p.push(format!("expiresAt {s:?} is not RFC 3339")),
        Some((s, Some(t))) if t <= unix_now() => p.push(format!("expiresAt {s} is already past")),
        Some(_) => {}
    }
    if let Some(mp) = d.get("multipart")
        && (d.get("method").and_then(Value::as_str) != Some("POST")
            || mp.get("fileField").and_then(Value::as_str).is_none())
    {
        p.push("multipart needs method POST and a fileField".into());
    }
    p
}

fn joined(v: &[String]) -> Option<String> {
    (!v.is_empty()).then(|| v.join("; "))
}

pub(crate) async fn upload(
    wire: &Wire,
    rec: &mut Recorder,
    max_expiry_wait: std::time::Duration,
) -> Result<(), WireError> {
    let bytes = generated_bytes(3000);
    let reply = authorize_upload(wire, &bytes, "pattern.bin", "application/octet-stream").await?;
    let result = reply.result().cloned().unwrap_or(Value::Null);
    let mut shape = Vec::new();
    if result.get("resultType").and_then(Value::as_str) != Some("complete") {
        shape.push(format!(
            "resultType = {:?}, want \"complete\"",
            result.get("resultType")
        ));
    }
    let uri = result
        .pointer("/file/uri")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if uri.is_empty() {
        shape.push(format!("file.uri missing: {}", reply.evidence()));
    }
    let server_digest = result.pointer("/file/digest/value").and_then(Value::as_str);
    if server_digest.is_some_and(|d| d != sha256_b64url(&bytes)) {
        shape.push("file.digest differs from the digest the client authorized".into());
    }
    let dev = !wire.url().starts_with("https://");
    shape.extend(
        descriptor_problems(result.get("upload"), &["PUT", "POST"], true)
            .into_iter()
            .map(|p| format!("upload.{p}")),
    );
    rec.must(
        "sep2631-authorize-upload-result-shape",
        &sep::UPLOAD_SHAPE,
        joined(&shape),
    );
    let url = result
        .pointer("/upload/url")
        .and_then(Value::as_str)
        .unwrap_or("");
    rec.must(
        "sep2631-descriptor-transport-protected",
        &sep::DESCRIPTOR_HTTPS,
        (!(url.starts_with("https://") || (dev && is_loopback_http(url))))
            .then(|| format!("upload url {url:?} is not https")),
    );
    let Some(desc) = result.get("upload").filter(|_| !uri.is_empty()) else {
        rec.skip(
            "sep2631-upload-per-descriptor",
            &sep::UPLOAD,
            "no usable upload descriptor",
        );
        return Ok(());
    };
    let multipart = desc.get("multipart").is_some();
    let data = wire
        .upload(desc, &bytes, "pattern.bin", "application/octet-stream")
        .await;
    let (used, other) = if multipart {
        ("sep2631-upload-multipart", "sep2631-upload-raw-put")
    } else {
        ("sep2631-upload-raw-put", "sep2631-upload-multipart")
    };
    let ok = match &data {
        Ok(d) if (200..300).contains(&d.status) => None,
        Ok(d) => Some(format!(
            "upload answered HTTP {} {:?}",
            d.status,
            d.reason()
        )),
        Err(e) => Some(e.to_string()),
    };
    let uploaded = ok.is_none();
    rec.must(used, &sep::UPLOAD, ok);
    rec.skip(other, &sep::UPLOAD, "the server issued the other kind of descriptor for this request (the suite follows the descriptor)");
    if !uploaded {
        return Ok(());
    }
    let o = Outcome::of(
        &wire
            .call_tool("files_upload_only", json!({"file": uri}), files_caps())
            .await?,
    );
    rec.must(
        "sep2631-file-uri-accepted-in-tool-call",
        &sep::FILE_URI_ACCEPTED,
        expect_file_result(&o, &bytes, "application/octet-stream"),
    );
    // Same file again: a file URI identifies one immutable byte sequence.
    let o = Outcome::of(
        &wire
            .call_tool("files_upload_only", json!({"file": uri}), files_caps())
            .await?,
    );
    rec.must(
        "sep2631-file-uri-reusable-immutable",
        &sep::REPLAY,
        expect_file_result(&o, &bytes, "application/octet-stream"),
    );

    let replay = wire
        .upload(
            desc,
            b"different bytes",
            "pattern.bin",
            "application/octet-stream",
        )
        .await?;
    let problem = (!(400..500).contains(&replay.status)).then(|| {
        format!(
            "re-using the upload descriptor answered HTTP {}",
            replay.status
        )
    });
    rec.must("sep2631-upload-replay-refused", &sep::REPLAY, problem);
    rec.must(
        "sep2631-upload-replay-status",
        &sep::REPLAY_STATUS,
        (replay.status != 410 || replay.reason().as_deref() != Some("descriptorExpired")).then(
            || {
                format!(
                    "HTTP {} reason {:?}, want 410 descriptorExpired",
                    replay.status,
                    replay.reason()
                )
            },
        ),
    );
    let o = Outcome::of(
        &wire
            .call_tool("files_upload_only", json!({"file": uri}), files_caps())
            .await?,
    );
    rec.must(
        "sep2631-upload-replay-did-not-change-file",
        &sep::REPLAY,
        expect_file_result(&o, &bytes, "application/octet-stream"),
    );
    expiry(wire, rec, max_expiry_wait).await?;

    // Namespaces and resources/read.
    let list = wire.rpc("resources/list", json!({}), files_caps()).await?;
    let resources: Vec<String> = list
        .result()
        .and_then(|r| r.get("resources"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|r| r.get("uri").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let prefix = |u: &str| -> String {
        match u.split_once("://") {
            Some((s, rest)) => format!("{s}://{}", rest.split('/').next().unwrap_or("")),
            None => u.split(':').next().unwrap_or("").to_owned(),
        }
    };
    let clash = resources
        .iter()
        .find(|r| prefix(r) == prefix(&uri) || **r == uri);
    rec.should(
        "sep2631-file-uris-distinct-from-resource-uris",
        &sep::NAMESPACES,
        clash.map(|r| format!("file URI {uri} shares scheme/authority with resource {r}")),
    );
    let read = wire
        .rpc("resources/read", json!({"uri": uri}), files_caps())
        .await?;
    let after = Outcome::of(
        &wire
            .call_tool("files_upload_only", json!({"file": uri}), files_caps())
            .await?,
    );
    let mut problem = expect_file_result(&after, &bytes, "application/octet-stream");
    if read.status >= 500 {
        problem = Some(format!(
            "resources/read of a file URI crashed the server: HTTP {}",
            read.status
        ));
    }
    rec.push(
        "sep2631-resources-read-not-required",
        &sep::RESOURCES_READ,
        if problem.is_some() {
            Status::Failure
        } else {
            Status::Success
        },
        problem,
        Some(json!({"resourcesRead": read.evidence()})),
    );
    Ok(())
}

pub(crate) async fn integrity(wire: &Wire, rec: &mut Recorder) -> Result<(), WireError> {
    // Digest mismatch: authorize the digest of A, upload B (same size).
    let a = generated_bytes(512);
    let mut b = a.clone();
    b[100] ^= 0xFF;
    let reply = authorize_upload(wire, &a, "a.bin", "application/octet-stream").await?;
    let digest_reason = match (
        reply.result().and_then(|r| r.get("upload")),
        reply.result().and_then(|r| r.pointer("/file/uri")),
    ) {
        (Some(desc), Some(uri)) => {
            let d = wire
                .upload(desc, &b, "a.bin", "application/octet-stream")
                .await?;
            let uri = uri.as_str().unwrap_or("").to_owned();
            let used = Outcome::of(
                &wire
                    .call_tool("files_upload_only", json!({"file": uri}), files_caps())
                    .await?,
            );
            let mut p = Vec::new();
            if !(400..500).contains(&d.status) {
                p.push(format!(
                    "upload with mismatching bytes answered HTTP {} (must be rejected)",
                    d.status
                ));
            } else if d.reason().as_deref() != Some("digestMismatch") {
                p.push(format!(
                    "HTTP {} reason {:?}, want \"digestMismatch\"",
                    d.status,
                    d.reason()
                ));
            }
            if let Outcome::Ok(_) = used {
                p.push("the file URI of the rejected upload was accepted by tools/call".into());
            }
            rec.must(
                "sep2631-digest-mismatch-rejected",
                &sep::DIGEST_MISMATCH,
                joined(&p),
            );
            d.reason()
        }
        _ => {
            rec.must(
                "sep2631-digest-mismatch-rejected",
                &sep::DIGEST_MISMATCH,
                Some(format!("authorizeUpload failed: {}", reply.evidence())),
            );
            None
        }
    };

    // Size mismatch: authorize 10 bytes, upload 11.
    let reply = wire
        .rpc(
            "files/authorizeUpload",
            json!({"name": "ten.txt", "mimeType": "text/plain", "size": 10}),
            files_caps(),
        )
        .await?;
    let size_reason = match reply.result().and_then(|r| r.get("upload")) {
        Some(desc) => {
            let d = wire
                .upload(desc, b"0123456789X", "ten.txt", "text/plain")
                .await?;
            let problem = if !(400..500).contains(&d.status) {
                Some(format!(
                    "upload of 11 bytes for size 10 answered HTTP {}",
                    d.status
                ))
            } else if !matches!(
                d.reason().as_deref(),
                Some("sizeMismatch" | "maxSizeExceeded")
            ) {
                Some(format!(
                    "HTTP {} reason {:?}, want sizeMismatch",
                    d.status,
                    d.reason()
                ))
            } else {
                None
            };
            rec.must(
                "sep2631-size-mismatch-rejected",
                &sep::SIZE_MISMATCH,
                problem,
            );
            d.reason()
        }
        None => {
            rec.must(
                "sep2631-size-mismatch-rejected",
                &sep::SIZE_MISMATCH,
                Some(format!("authorizeUpload failed: {}", reply.evidence())),
            );
            None
        }
    };
    // One byte short: authorize 10, upload 9.
    let reply = wire
        .rpc(
            "files/authorizeUpload",
            json!({"name": "nine.txt", "mimeType": "text/plain", "size": 10}),
            files_caps(),
        )
        .await?;
    let problem = match reply.result().and_then(|r| r.get("upload")) {
        Some(desc) => {
            let d = wire
                .upload(desc, b"012345678", "nine.txt", "text/plain")
                .await?;
            (d.status != 413 || d.reason().as_deref() != Some("sizeMismatch")).then(|| {
                format!(
                    "upload of 9 bytes for size 10 answered HTTP {} reason {:?}, want 413 sizeMismatch",
                    d.status,
                    d.reason()
                )
            })
        }
        None => Some(format!("authorizeUpload failed: {}", reply.evidence())),
    };
    rec.must("sep2631-size-short-by-one-413", &sep::SIZE_STATUS, problem);

    // A size that is not a non-negative integer.
    for size in [json!(-1), json!(1.5), json!("10")] {
        let reply = wire
            .rpc(
                "files/authorizeUpload",
                json!({"name": "x.txt", "mimeType": "text/plain", "size": size}),
                files_caps(),
            )
            .await?;
        let reason = reply
            .error_data()
            .and_then(|d| d.get("reason"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let details = Some(json!({"size": size, "reply": reply.evidence()}));
        let code_ok = reply.error_code() == Some(smcp_proto::error::INVALID_PARAMS);
        rec.push(
            "sep2631-invalid-size-rejected",
            &sep::INVALID_SIZE,
            if code_ok {
                Status::Success
            } else {
                Status::Failure
            },
            (!code_ok).then(|| format!("size {size}: want -32602, got {}", reply.evidence())),
            details.clone(),
        );
        let reason_ok = reason.as_deref() == Some("invalidSize");
        rec.push(
            "sep2631-invalid-size-reason",
            &sep::INVALID_SIZE,
            if reason_ok {
                Status::Success
            } else {
                Status::Warning
            },
            (!reason_ok)
                .then(|| format!("size {size}: data.reason {reason:?}, want \"invalidSize\"")),
            details,
        );
    }

    let problem = match (&digest_reason, &size_reason) {
        (Some(d), Some(s)) if d != s => None,
        _ => Some(format!(
            "digest reason {digest_reason:?} vs size reason {size_reason:?}: not distinguishable"
        )),
    };
    rec.should(
        "sep2631-digest-mismatch-distinct-reason",
        &sep::DIGEST_DISTINCT,
        problem,
    );

    // maxSize on file URIs: 1 MiB + 1 byte to files_upload_only.
    let big = generated_bytes(1_048_577);
    let problem = match upload_file(wire, &big, "big.bin", "application/octet-stream").await? {
        Err(e) if e.contains("maxSizeExceeded") || e.contains("storeFull") || e.contains("413") => {
            None
        }
        Err(e) => Some(format!(
            "upload of maxSize+1 bytes failed without maxSizeExceeded: {e}"
        )),
        Ok((uri, _)) => {
            let o = Outcome::of(
                &wire
                    .call_tool("files_upload_only", json!({"file": uri}), files_caps())
                    .await?,
            );
            expect_rejected(&o, "file", &["maxSizeExceeded"])
        }
    };
    rec.must(
        "sep2631-file-uri-max-size-enforced",
        &sep::MAX_SIZE,
        problem,
    );
    let exact = generated_bytes(65_536);
    let problem = match upload_file(wire, &exact, "exact.png", "image/png").await? {
        Err(e) => Some(format!("upload of exactly 65536 bytes failed: {e}")),
        Ok((uri, _)) => expect_file_result(
            &Outcome::of(
                &wire
                    .call_tool("files_any_image", json!({"file": uri}), files_caps())
                    .await?,
            ),
            &exact,
            "image/png",
        ),
    };
    rec.must(
        "sep2631-file-uri-max-size-boundary-accepted",
        &sep::MAX_SIZE,
        problem,
    );

    for (id, digest, reasons) in [
        (
            "sep2631-unsupported-digest-algorithm-rejected",
            json!({"algorithm": "md5", "value": "1B2M2Y8AsgTpgAmY7PhCfg"}),
            ["unsupportedDigestAlgorithm"],
        ),
        (
            "sep2631-invalid-digest-rejected",
            json!({"algorithm": "sha-256", "value": "not+base64url/=="}),
            ["invalidDigest"],
        ),
    ] {
        let reply = wire
            .rpc(
                "files/authorizeUpload",
                json!({"name": "x", "mimeType": "text/plain", "size": 1, "digest": digest}),
                files_caps(),
            )
            .await?;
        let reason = reply
            .error_data()
            .and_then(|d| d.get("reason"))
            .and_then(Value::as_str);
        let problem = (reply.error_code() != Some(smcp_proto::error::INVALID_PARAMS)
            || !reason.is_some_and(|r| reasons.contains(&r)))
        .then(|| {
            format!(
                "want -32602 with data.reason {reasons:?}, got {}",
                reply.evidence()
            )
        });
        rec.must(id, &sep::INVALID_DIGEST, problem);
    }
    Ok(())
}

pub(crate) async fn uris(wire: &Wire, rec: &mut Recorder) -> Result<(), WireError> {
    for value in [
        "mcp-file://",
        "not a uri at all",
        "/etc/passwd",
        "file:///etc/passwd",
        "https://example.invalid/file.png",
        "mcp-file://%zz/bad",
    ] {
        let o = Outcome::of(
            &wire
                .call_tool("files_any_image", json!({"file": value}), files_caps())
                .await?,
        );
        rec.push(
            "sep2631-malformed-file-uri-rejected",
            &sep::MALFORMED_URI,
            if expect_rejected(&o, "file", &[]).is_some() {
                Status::Failure
            } else {
                Status::Success
            },
            expect_rejected(&o, "file", &[]),
            Some(json!({"value": value, "reason": o.reason()})),
        );
    }
    // Unknown: same scheme and authority as an issued URI, never-issued id.
    let issued = upload_file(wire, b"x", "x.txt", "text/plain").await?;
    let Ok((uri, _)) = issued else {
        rec.skip(
            "sep2631-unknown-file-uri-rejected",
            &sep::UNKNOWN_URI,
            "could not obtain an issued file URI",
        );
        return Ok(());
    };
    let unknown = match uri.rfind('/') {
        Some(i) => format!("{}/conformance-never-issued-0000", &uri[..i]),
        None => format!("{uri}-never-issued"),
    };
    let o = Outcome::of(
        &wire
            .call_tool("files_upload_only", json!({"file": unknown}), files_caps())
            .await?,
    );
    rec.must(
        "sep2631-unknown-file-uri-rejected",
        &sep::UNKNOWN_URI,
        expect_rejected(&o, "file", &["fileUnavailable"]),
    );
    let reply = wire
        .rpc(
            "files/authorizeDownload",
            json!({"uri": unknown}),
            files_caps(),
        )
        .await?;
    let reason = reply
        .error_data()
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str);
    rec.must(
        "sep2631-authorize-download-unknown-rejected",
        &sep::UNKNOWN_URI,
        (reply.error_code() != Some(smcp_proto::error::INVALID_PARAMS)
            || reason != Some("fileUnavailable"))
        .then(|| {
            format!(
                "want -32602 data.reason fileUnavailable, got {}",
                reply.evidence()
            )
        }),
    );
    Ok(())
}

/// Waits (at most `max_wait`) for a fresh upload descriptor to pass `expiresAt`, then redeems it.
async fn expiry(
    wire: &Wire,
    rec: &mut Recorder,
    max_wait: std::time::Duration,
) -> Result<(), WireError> {
    let bytes = b"expiring";
    let reply = authorize_upload(wire, bytes, "late.txt", "text/plain").await?;
    let result = reply.result().cloned().unwrap_or(Value::Null);
    let (Some(desc), Some(uri), Some(exp)) = (
        result.get("upload"),
        result.pointer("/file/uri").and_then(Value::as_str),
        result
            .pointer("/upload/expiresAt")
            .and_then(Value::as_str)
            .and_then(parse_rfc3339),
    ) else {
        rec.skip(
            "sep2631-upload-expired-refused",
            &sep::EXPIRED,
            "no upload descriptor with a parseable expiresAt",
        );
        return Ok(());
    };
    let wait = u64::try_from(exp + 1 - unix_now()).unwrap_or(0);
    if max_wait.is_zero() || wait > max_wait.as_secs() {
        rec.skip(
            "sep2631-upload-expired-refused",
            &sep::EXPIRED,
            format!(
                "descriptor expires in {wait}s, more than --max-expiry-wait-secs {}",
                max_wait.as_secs()
            ),
        );
        return Ok(());
    }
    tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
    let d = wire.upload(desc, bytes, "late.txt", "text/plain").await?;
    let used = Outcome::of(
        &wire
            .call_tool("files_upload_only", json!({"file": uri}), files_caps())
            .await?,
    );
    let problem = if !(400..500).contains(&d.status) {
        Some(format!("upload after expiresAt answered HTTP {}", d.status))
    } else if d.reason().as_deref() != Some("descriptorExpired") {
        Some(format!(
            "HTTP {} reason {:?}, want descriptorExpired",
            d.status,
            d.reason()
        ))
    } else if matches!(used, Outcome::Ok(_)) {
        Some("the file URI of the expired upload was accepted".into())
    } else {
        None
    };
    rec.must("sep2631-upload-expired-refused", &sep::EXPIRED, problem);
    Ok(())
}
