//! Pagination: one page of a list, or every page following `nextCursor` (with loop and
//! length guards; an invalid cursor drops the list's cached pages).

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess,
    Visitor,
};
use serde_json::{Map, Value};
use smcp_proto::error::INVALID_PARAMS;

use super::handle::Client;
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
        let mut reader = serde_json::Deserializer::from_str(page.get());
        let read = PageOf {
            key,
            items: PhantomData,
        }
        .deserialize(&mut reader)
        .and_then(|read| reader.end().map(|()| read))
        .map_err(|e| Error::protocol(format!("malformed {method_name} result: {e}")))?;
        let Some((items, next_cursor)) = read else {
            return Err(Error::protocol(format!(
                "{method_name} result is not an object"
            )));
        };
        let items = items.unwrap_or_default();
        let next_cursor = match next_cursor {
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

/// A page's items (the member named `key`) and `nextCursor`, read from the result's text in
/// one pass; every other member is skipped. `None` when the result is not an object.
type PageMembers<T> = Option<(Option<Vec<T>>, Option<Value>)>;

/// Reads [`PageMembers`] with the items under `key`.
struct PageOf<'k, T> {
    key: &'k str,
    items: PhantomData<T>,
}

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for PageOf<'_, T> {
    type Value = PageMembers<T>;

    fn deserialize<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for PageOf<'_, T> {
    type Value = PageMembers<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let (mut items, mut next) = (None, None);
        while let Some(name) = map.next_key::<String>()? {
            if name == self.key {
                items = Some(map.next_value::<Vec<T>>()?);
            } else if name == "nextCursor" {
                next = Some(map.next_value::<Value>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Some((items, next)))
    }

    fn visit_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> serde_json::Result<PageMembers<String>> {
        let mut reader = serde_json::Deserializer::from_str(text);
        let read = PageOf {
            key: "tools",
            items: PhantomData,
        }
        .deserialize(&mut reader)?;
        reader.end()?;
        Ok(read)
    }

    #[test]
    fn a_page_reads_its_items_and_cursor_and_skips_the_rest() {
        let (items, next) = read(
            r#"{"resultType":"complete","tools":["a","b"],"other":{"tools":[1]},"nextCursor":"c"}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(items, Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(next, Some(Value::from("c")));
        let (items, next) = read(r#"{"ttlMs":5}"#).unwrap().unwrap();
        assert_eq!((items, next), (None, None));
        assert!(read(r#"["tools"]"#).unwrap().is_none(), "not an object");
        assert!(read("7").unwrap().is_none(), "not an object");
        assert!(
            read(r#"{"tools":[1]}"#).is_err(),
            "an item of the wrong type"
        );
        assert!(read(r#"{"tools":[]"#).is_err(), "cut short");
    }
}
