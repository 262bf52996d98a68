//! `Content-Disposition` for downloads: an attachment with a safe file name, sent by the data
//! plane and asked of the store for a presigned download.

/// A file name safe to put in `Content-Disposition`: the last path component, without control
/// characters, quotes or backslashes, not hidden; `download` when nothing usable is left.
pub(crate) fn attachment_name(name: Option<&str>) -> String {
    let last = name
        .unwrap_or_default()
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or_default();
    let cleaned: String = last
        .chars()
        .filter(|c| !c.is_control() && !matches!(c, '"' | '\\' | ';'))
        .take(200)
        .collect();
    let cleaned = cleaned.trim().trim_start_matches('.');
    if cleaned.is_empty() {
        "download".to_owned()
    } else {
        cleaned.to_owned()
    }
}

/// `attachment; filename="<ascii>"; filename*=UTF-8''<percent-encoded>` (RFC 6266).
pub(crate) fn content_disposition(name: Option<&str>) -> String {
    let name = attachment_name(name);
    let ascii: String = name
        .chars()
        .map(|c| if c.is_ascii() { c } else { '_' })
        .collect();
    const ATTR: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    let encoded = percent_encoding::utf8_percent_encode(&name, ATTR);
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attachment_names_are_safe() {
        assert_eq!(attachment_name(Some("report.pdf")), "report.pdf");
        assert_eq!(attachment_name(Some("../../etc/passwd")), "passwd");
        assert_eq!(attachment_name(Some("a\\b\".html")), "b.html");
        assert_eq!(
            attachment_name(Some("x\r\nSet-Cookie: a=b")),
            "xSet-Cookie: a=b"
        );
        assert_eq!(attachment_name(Some(".bashrc")), "bashrc");
        assert_eq!(attachment_name(Some("..")), "download");
        assert_eq!(attachment_name(None), "download");
        assert_eq!(
            content_disposition(Some("résumé 1.pdf")),
            "attachment; filename=\"r_sum_ 1.pdf\"; filename*=UTF-8''r%C3%A9sum%C3%A9%201.pdf"
        );
    }
}
