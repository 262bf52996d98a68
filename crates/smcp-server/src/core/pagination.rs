//! Opaque cursors for the list methods (`server/utilities/pagination.mdx`).
//!
//! A cursor encodes the offset of the next page. It is opaque to clients (base64url of a
//! versioned token), and an invalid one is a −32602 error, never a silent first page.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

const PREFIX: &str = "smcp.v1.";

/// Encodes the offset of the next page.
pub(crate) fn encode(offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("{PREFIX}{offset}"))
}

/// Decodes a cursor into an offset; `None` if it is not one of ours.
pub(crate) fn decode(cursor: &str) -> Option<usize> {
    let raw = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = std::str::from_utf8(&raw).ok()?;
    text.strip_prefix(PREFIX)?.parse().ok()
}

/// The slice of `items` for this page and the cursor of the next one.
pub(crate) fn page<'a, T>(
    items: &'a [T],
    cursor: Option<&str>,
    page_size: usize,
) -> Result<(&'a [T], Option<String>), String> {
    let start = match cursor {
        None => 0,
        Some(c) => match decode(c) {
            Some(offset) if offset <= items.len() => offset,
            _ => return Err(format!("Invalid cursor {c:?}")),
        },
    };
    let end = start.saturating_add(page_size.max(1)).min(items.len());
    let next = (end < items.len()).then(|| encode(end));
    Ok((&items[start..end], next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_through() {
        let items: Vec<u32> = (0..5).collect();
        let (p1, c1) = page(&items, None, 2).unwrap();
        assert_eq!(p1, &[0, 1]);
        let (p2, c2) = page(&items, c1.as_deref(), 2).unwrap();
        assert_eq!(p2, &[2, 3]);
        let (p3, c3) = page(&items, c2.as_deref(), 2).unwrap();
        assert_eq!(p3, &[4]);
        assert!(c3.is_none());
    }

    #[test]
    fn rejects_foreign_cursors() {
        let items = [1, 2];
        assert!(page(&items, Some("nope"), 2).is_err());
        assert!(page(&items, Some(""), 2).is_err());
        assert!(page(&items, Some(&encode(3)), 2).is_err());
    }
}
