//! Content sniffing: the media type a file's magic bytes show ([`detect`], with the `infer`
//! crate), checked against a field's `accept` list ([`check_content`]) so a declared media type
//! is never trusted alone (SEP-2631 §Security: "Servers MUST validate MIME type, size, and file
//! content according to their own policy rather than trusting client metadata").
//!
//! The policy: when the bytes show a type, that type must be accepted by the field too, unless
//! it is consistent with the declared type (the same type; a ZIP container for a ZIP-based
//! format; a text detection — HTML, XML, a `#!` script — for a declared `text/*` type). Bytes
//! without magic (plain text, CSV, JSON, most text formats) show nothing and are judged by the
//! declared type alone.

use smcp_proto::ext::files::{FileErrorReason, FileInputDescriptor, mime_essence};

use crate::error::FileError;

/// How many leading bytes [`detect`] looks at (every `infer` matcher fits).
pub const SNIFF_LEN: usize = 8192;

/// The media type the leading bytes show, if any.
pub fn detect(head: &[u8]) -> Option<&'static str> {
    let head = &head[..head.len().min(SNIFF_LEN)];
    infer::get(head).map(|kind| kind.mime_type())
}

/// Whether `detected` is consistent with the declared media type.
fn consistent(declared: &str, detected: &str) -> bool {
    let declared = mime_essence(declared);
    if declared == detected {
        return true;
    }
    let text_detection = matches!(detected, "text/html" | "text/xml" | "text/x-shellscript");
    if text_detection && declared.starts_with("text/") {
        return true;
    }
    // ZIP containers: OOXML, ODF, EPUB, JAR, APK, and any `+zip` type.
    detected == "application/zip"
        && (declared.ends_with("+zip")
            || declared.starts_with("application/vnd.openxmlformats-officedocument.")
            || declared.starts_with("application/vnd.oasis.opendocument.")
            || declared == "application/java-archive"
            || declared == "application/vnd.android.package-archive")
}

/// Checks the detected type (if any) of a file declared as `declared` against the field.
/// Called after the declared type passed `accept`.
pub fn check_content(
    descriptor: &FileInputDescriptor,
    declared: &str,
    detected: Option<&str>,
) -> Result<(), FileError> {
    let Some(detected) = detected else {
        return Ok(());
    };
    if descriptor.accepts(detected) || consistent(declared, detected) {
        return Ok(());
    }
    Err(FileError::new(
        FileErrorReason::MimeTypeNotAccepted,
        format!(
            "the content is {detected:?}, which is not accepted (declared as {:?})",
            mime_essence(declared)
        ),
    )
    .with("mimeType", mime_essence(declared))
    .with("detectedMimeType", detected))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(list: &[&str]) -> FileInputDescriptor {
        FileInputDescriptor {
            accept: Some(list.iter().map(|s| (*s).to_owned()).collect()),
            ..FileInputDescriptor::default()
        }
    }

    const PE: &[u8] = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00";
    const PDF: &[u8] = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n";

    #[test]
    fn magic_bytes_must_be_accepted_too() {
        assert_eq!(
            detect(PE),
            Some("application/vnd.microsoft.portable-executable")
        );
        assert_eq!(detect(PDF), Some("application/pdf"));
        let pdf_only = accept(&["application/pdf"]);
        let e = check_content(&pdf_only, "application/pdf", detect(PE)).unwrap_err();
        assert_eq!(e.reason, FileErrorReason::MimeTypeNotAccepted);
        assert_eq!(
            e.details.get("detectedMimeType").and_then(|v| v.as_str()),
            Some("application/vnd.microsoft.portable-executable")
        );
        assert!(check_content(&pdf_only, "application/pdf", detect(PDF)).is_ok());
        // No accept list: anything goes.
        assert!(
            check_content(
                &FileInputDescriptor::default(),
                "application/pdf",
                detect(PE)
            )
            .is_ok()
        );
    }

    #[test]
    fn text_without_magic_and_consistent_containers_pass() {
        let text = accept(&["text/plain", "text/csv"]);
        for body in [&b"a,b\n1,2\n"[..], b"hello world", b"#!/bin/sh\necho hi\n"] {
            assert!(
                check_content(&text, "text/csv", detect(body)).is_ok(),
                "{body:?}"
            );
        }
        let html = b"<!DOCTYPE html><html><body>x</body></html>";
        assert!(check_content(&text, "text/plain", detect(html)).is_ok());
        // HTML declared as a PDF is not.
        let pdf_only = accept(&["application/pdf"]);
        assert!(check_content(&pdf_only, "application/pdf", detect(html)).is_err());
        let zip = b"PK\x03\x04\x14\x00\x00\x00\x08\x00";
        let docx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
        assert_eq!(detect(zip), Some("application/zip"));
        assert!(check_content(&accept(&[docx]), docx, detect(zip)).is_ok());
        assert!(check_content(&pdf_only, "application/pdf", detect(zip)).is_err());
    }
}
