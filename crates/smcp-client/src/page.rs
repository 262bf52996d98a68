//! [`Page`]: one page of a paginated list, a leaf shared by the request path (`client.rs`)
//! and the typed API (`api.rs`).

/// One page of a paginated list ([`Client::list_tools_page`](crate::Client::list_tools_page) and friends).
///
/// # Examples
///
/// See [`Client::list_tools_page`](crate::Client::list_tools_page).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Page<T> {
    /// The items of this page, in the server's order.
    pub items: Vec<T>,
    /// The cursor of the next page; `None` on the last page. Opaque: pass it back as is.
    pub next_cursor: Option<String>,
}
