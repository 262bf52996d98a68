//! `files-inline`: `data:` URI values against `maxSize`, `accept` and `transferModes`.

use serde_json::json;

use super::outcome::{Outcome, expect_file_result, expect_rejected};
use super::upload_call::upload_file;
use crate::files::{data_uri_base64, data_uri_percent};
use crate::report::Recorder;
use crate::sep;
use crate::wire::{Wire, WireError, files_caps};

/// The start of a Windows PE executable (DOS header, `MZ`).
pub(crate) const PE_HEAD: &[u8] = &[
    0x4D, 0x5A, 0x90, 0x00, 0x03, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00,
    0xB8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
];

/// A tiny valid PNG (1x1).
pub(crate) const PNG_1X1: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52, 0, 0, 0,
    1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1F, 0x15, 0xC4, 0x89,
];

async fn call(wire: &Wire, tool: &str, value: &str) -> Result<Outcome, WireError> {
    Ok(Outcome::of(
        &wire
            .call_tool(tool, json!({"file": value}), files_caps())
            .await?,
    ))
}

pub(crate) async fn run(wire: &Wire, rec: &mut Recorder) -> Result<(), WireError> {
    let hello = b"Hello, SEP-2631!\n";
    let o = call(
        wire,
        "files_inline_text",
        &data_uri_base64("text/plain", hello),
    )
    .await?;
    rec.must(
        "sep2631-inline-base64-accepted",
        &sep::INLINE_ACCEPTED,
        expect_file_result(&o, hello, "text/plain"),
    );

    // An executable declared as an accepted image type: the content decides.
    let o = call(
        wire,
        "files_any_image",
        &data_uri_base64("image/png", PE_HEAD),
    )
    .await?;
    rec.should(
        "sep2631-content-checked-against-accept",
        &sep::CONTENT_SNIFFED,
        expect_rejected(&o, "file", &["mimeTypeNotAccepted"]),
    );

    let odd = b"50% off & more; \"quoted\"";
    let o = call(
        wire,
        "files_inline_text",
        &data_uri_percent("text/plain", odd),
    )
    .await?;
    rec.must(
        "sep2631-inline-percent-encoded-accepted",
        &sep::INLINE_ACCEPTED,
        expect_file_result(&o, odd, "text/plain"),
    );

    let o = call(wire, "files_inline_text", &format!("data:,{}", "plain")).await?;
    rec.must(
        "sep2631-inline-default-media-type",
        &sep::INLINE_ACCEPTED,
        expect_file_result(&o, b"plain", "text/plain"),
    );

    let exact = vec![b'a'; 64];
    let o = call(
        wire,
        "files_inline_text",
        &data_uri_base64("text/plain", &exact),
    )
    .await?;
    rec.must(
        "sep2631-inline-max-size-boundary-accepted",
        &sep::MAX_SIZE,
        expect_file_result(&o, &exact, "text/plain"),
    );

    let over = vec![b'a'; 65];
    let o = call(
        wire,
        "files_inline_text",
        &data_uri_base64("text/plain", &over),
    )
    .await?;
    rec.must(
        "sep2631-inline-max-size-exceeded-rejected",
        &sep::MAX_SIZE,
        expect_rejected(&o, "file", &["maxSizeExceeded"]),
    );
    // Percent-encoded: 64 decoded bytes but 192 encoded characters => still accepted.
    let spaces = vec![b' '; 64];
    let o = call(
        wire,
        "files_inline_text",
        &data_uri_percent("text/plain", &spaces),
    )
    .await?;
    rec.must(
        "sep2631-inline-max-size-counts-decoded-bytes",
        &sep::MAX_SIZE,
        expect_file_result(&o, &spaces, "text/plain"),
    );

    let o = call(
        wire,
        "files_inline_text",
        &data_uri_base64("TEXT/Plain;charset=UTF-8", hello),
    )
    .await?;
    rec.must(
        "sep2631-accept-case-and-params",
        &sep::ACCEPT,
        expect_file_result(&o, hello, "text/plain"),
    );
    let o = call(
        wire,
        "files_inline_text",
        &data_uri_base64("application/json", b"{}"),
    )
    .await?;
    rec.must(
        "sep2631-accept-mismatch-rejected",
        &sep::ACCEPT,
        expect_rejected(&o, "file", &["mimeTypeNotAccepted"]),
    );
    let o = call(
        wire,
        "files_any_image",
        &data_uri_base64("image/png", PNG_1X1),
    )
    .await?;
    rec.must(
        "sep2631-accept-wildcard-matches",
        &sep::ACCEPT,
        expect_file_result(&o, PNG_1X1, "image/png"),
    );
    let o = call(
        wire,
        "files_any_image",
        &data_uri_base64("image/SVG+xml", b"<svg/>"),
    )
    .await?;
    rec.must(
        "sep2631-accept-wildcard-matches",
        &sep::ACCEPT,
        expect_file_result(&o, b"<svg/>", "image/svg+xml"),
    );
    let o = call(
        wire,
        "files_any_image",
        &data_uri_base64("text/plain", hello),
    )
    .await?;
    rec.must(
        "sep2631-accept-wildcard-rejects-other-type",
        &sep::ACCEPT,
        expect_rejected(&o, "file", &["mimeTypeNotAccepted"]),
    );

    let o = call(
        wire,
        "files_upload_only",
        &data_uri_base64("text/plain", hello),
    )
    .await?;
    rec.must(
        "sep2631-upload-only-rejects-data-uri",
        &sep::TRANSFER_MODES,
        expect_rejected(&o, "file", &["transferModeNotAllowed"]),
    );
    match upload_file(wire, hello, "hello.txt", "text/plain").await? {
        Ok((uri, _)) => {
            let o = call(wire, "files_inline_text", &uri).await?;
            rec.must(
                "sep2631-inline-only-rejects-file-uri",
                &sep::TRANSFER_MODES,
                expect_rejected(&o, "file", &["transferModeNotAllowed"]),
            );
        }
        Err(e) => rec.skip(
            "sep2631-inline-only-rejects-file-uri",
            &sep::TRANSFER_MODES,
            format!("could not upload: {e}"),
        ),
    }

    let o = call(
        wire,
        "files_inline_text",
        "data:text/plain;base64,@@not-base64@@",
    )
    .await?;
    rec.must(
        "sep2631-malformed-data-uri-rejected",
        &sep::MALFORMED_URI,
        expect_rejected(&o, "file", &[]),
    );

    let reply = wire
        .call_tool(
            "files_many",
            json!({"files": [data_uri_base64("text/plain", hello), data_uri_base64("application/octet-stream", &[0, 1, 2])]}),
            files_caps(),
        )
        .await?;
    let problem = match Outcome::of(&reply) {
        Outcome::Ok(sc) => {
            let files = sc
                .get("files")
                .and_then(|f| f.as_array())
                .cloned()
                .unwrap_or_default();
            let sizes: Vec<_> = files
                .iter()
                .map(|f| f.get("size").and_then(serde_json::Value::as_u64))
                .collect();
            (sizes != [Some(hello.len() as u64), Some(3)])
                .then(|| format!("files_many sizes {sizes:?}, want [17, 3]"))
        }
        other => Some(format!(
            "files_many rejected two valid data: URIs: {other:?}"
        )),
    };
    rec.must(
        "sep2631-array-items-accepted",
        &sep::INLINE_ACCEPTED,
        problem,
    );
    Ok(())
}
