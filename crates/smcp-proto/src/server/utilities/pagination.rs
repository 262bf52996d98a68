//! Pagination (`server/utilities/pagination.mdx`; `schema.ts` `PaginatedRequestParams`).
//!
//! Cursors are opaque strings; an empty string is a real cursor. `nextCursor` absent = last page.

use serde::{Deserialize, Serialize};

use crate::basic::{Cursor, RequestMeta};

/// Params of a paginated list request (`tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PaginatedRequestParams {
    /// Request metadata (required by the schema).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
    /// The cursor from the previous page's `nextCursor`; absent for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_cursor_is_kept() {
        let p: PaginatedRequestParams = serde_json::from_value(json!({"cursor": ""})).unwrap();
        assert_eq!(p.cursor.as_deref(), Some(""));
        assert_eq!(serde_json::to_value(&p).unwrap(), json!({"cursor": ""}));
    }
}
