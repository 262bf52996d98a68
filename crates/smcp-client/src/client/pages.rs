//! Pagination: one page of a list, or every page following `nextCursor` (with loop and
//! length guards; an invalid cursor drops the list's cached pages).

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use smcp_proto::error::INVALID_PARAMS;

use super::handle::Client;
use super::result::decode;
use crate::error::{Error, Result};

/// Largest number of pages one list call follows.
const MAX_PAGES: usize = 10_000;

impl Client {
    /// Follows `nextCursor` through every page of a list, collecting `key`.
    pub(crate) async fn list_all<T: DeserializeOwned>(
        &self,
        method_name: &str,
        key: &str,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let page = self
                .list_page::<T>(method_name, key, cursor.as_deref())
                .await?;
            out.extend(page.items);
            match page.next_cursor {
                Some(next) => {
                    if !seen.insert(next.clone()) {
                        return Err(Error::protocol(format!(
                            "{method_name} returned the cursor {next:?} twice (pagination loop)"
                        )));
                    }
                    cursor = Some(next);
                }
                None => return Ok(out),
            }
        }
        Err(Error::protocol(format!(
            "{method_name} has more than {MAX_PAGES} pages"
        )))
    }

    /// One page of a paginated list: the items under `key` and the next cursor.
    pub(crate) async fn list_page<T: DeserializeOwned>(
        &self,
        method_name: &str,
        key: &str,
        cursor: Option<&str>,
    ) -> Result<crate::page::Page<T>> {
        let mut params = Map::new();
        if let Some(c) = cursor {
            params.insert("cursor".to_owned(), Value::String(c.to_owned()));
        }
        let page = match self.request(method_name, params).await {
            Err(e) if cursor.is_some() && e.jsonrpc_code() == Some(INVALID_PARAMS) => {
                // An invalid cursor invalidates every cached page of this list (A11 item 78).
                if let Some(c) = &self.inner.cache {
                    c.invalidate_method(method_name);
                }
                return Err(e);
            }
            other => other?,
        };
        let Value::Object(mut page) = page else {
            return Err(Error::protocol(format!(
                "{method_name} result is not an object"
            )));
        };
        let items = page.remove(key).unwrap_or(Value::Array(Vec::new()));
        let items: Vec<T> = decode(method_name, items)?;
        let next_cursor = match page.remove("nextCursor") {
            Some(Value::String(next)) => Some(next),
            None | Some(Value::Null) => None,
            Some(other) => {
                return Err(Error::protocol(format!(
                    "{method_name} nextCursor must be a string, got {other}"
                )));
            }
        };
        Ok(crate::page::Page { items, next_cursor })
    }
}
