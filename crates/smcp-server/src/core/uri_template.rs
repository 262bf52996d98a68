//! Matching resource URIs against RFC 6570 templates (`server/resources.mdx` §Resource
//! Templates).
//!
//! Matching needs only the expressions that produce a single value: simple `{var}` (any
//! characters but `/ ? #`) and reserved `{+var}` (anything, `/` included). Other operators
//! are refused at registration rather than matched wrongly.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var { name: String, reserved: bool },
}

/// A parsed RFC 6570 URI template, as a resource template is matched: `{var}` and `{+var}`.
///
/// ```
/// use smcp_server::UriTemplate;
///
/// let files = UriTemplate::parse("file:///{+path}")?;
/// let variables = files.matches("file:///src/main.rs").expect("it matches");
/// assert_eq!(variables["path"], "src/main.rs");
/// assert!(files.matches("https://example.com").is_none());
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses `template`.
    ///
    /// # Errors
    ///
    /// Why it cannot be matched: an unclosed expression, an operator other than `+`, a
    /// variable list, a modifier.
    pub fn parse(template: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let after = &rest[open + 1..];
            let close = after
                .find('}')
                .ok_or_else(|| "unclosed '{' in template".to_owned())?;
            let expr = &after[..close];
            let (reserved, name) = match expr.strip_prefix('+') {
                Some(name) => (true, name),
                None => (false, expr),
            };
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
            {
                return Err(format!(
                    "unsupported expression {{{expr}}}: only {{var}} and {{+var}} can be matched"
                ));
            }
            if matches!(parts.last(), Some(Part::Var { .. })) {
                return Err("two expressions must be separated by a literal".to_owned());
            }
            // Matching gives each variable one value; a second occurrence could only match a
            // different one, which the URI would then not round-trip to.
            if parts
                .iter()
                .any(|p| matches!(p, Part::Var { name: other, .. } if other == name))
            {
                return Err(format!("the variable {name:?} appears more than once"));
            }
            parts.push(Part::Var {
                name: name.to_owned(),
                reserved,
            });
            rest = &after[close + 1..];
        }
        if rest.contains('}') {
            return Err("unmatched '}' in template".to_owned());
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(Self { parts })
    }

    /// The variables of `uri` when it matches, else `None`.
    ///
    /// Linear in the length of `uri` for each part of the template (no backtracking, so a URI
    /// crafted against adjacent variables cannot make it slow), and URIs longer than
    /// [`MAX_MATCHED_URI`] bytes never match (the work and memory stay bounded). When a URI
    /// matches in more than one way, each variable takes the shortest value that lets the
    /// rest match.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let n = uri.len();
        if n > MAX_MATCHED_URI {
            return None;
        }
        let bytes = uri.as_bytes();
        // stop[p]: where a simple `{var}` starting at p must end at the latest (the next
        // `/`, `?` or `#`, or the end).
        let mut stop = vec![n; n + 1];
        for p in (0..n).rev() {
            stop[p] = if matches!(bytes[p], b'/' | b'?' | b'#') {
                p
            } else {
                stop[p + 1]
            };
        }
        // from[i][p]: parts[i..] match the URI from position p to its end. Filled from the
        // last part back, each row from the one after it.
        let k = self.parts.len();
        let mut from = vec![vec![false; n + 1]; k + 1];
        from[k][n] = true;
        for (i, part) in self.parts.iter().enumerate().rev() {
            let (head, tail) = from.split_at_mut(i + 1);
            let (here, next) = (&mut head[i], &tail[0]);
            // The smallest q > p with next[q], kept as p walks down.
            let mut nearest = None;
            for p in (0..=n).rev() {
                here[p] = uri.is_char_boundary(p)
                    && match part {
                        Part::Literal(lit) => {
                            uri[p..].starts_with(lit.as_str()) && next[p + lit.len()]
                        }
                        Part::Var { reserved, .. } => {
                            let limit = if *reserved { n } else { stop[p] };
                            nearest.is_some_and(|q| q <= limit)
                        }
                    };
                if next[p] {
                    nearest = Some(p);
                }
            }
        }
        if !from[0][0] {
            return None;
        }
        let mut vars = BTreeMap::new();
        let mut p = 0;
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(lit) => p += lit.len(),
                Part::Var { name, .. } => {
                    // The shortest value: the first end from which the rest matches.
                    let end = (p + 1..=n).find(|&q| from[i + 1][q])?;
                    vars.insert(name.clone(), uri[p..end].to_owned());
                    p = end;
                }
            }
        }
        Some(vars)
    }
}

/// The longest URI matched against a template, in bytes.
pub(crate) const MAX_MATCHED_URI: usize = 64 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_and_reserved() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(t.matches("test://template/123/data").unwrap()["id"], "123");
        assert!(t.matches("test://template/1/2/data").is_none());
        assert!(t.matches("test://template//data").is_none());
        let t = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(t.matches("file:///a/b.txt").unwrap()["path"], "a/b.txt");
    }

    #[test]
    fn each_variable_takes_the_shortest_value_that_lets_the_rest_match() {
        let t = UriTemplate::parse("x://{+a}/{+b}").unwrap();
        let v = t.matches("x://1/2/3").unwrap();
        assert_eq!((v["a"].as_str(), v["b"].as_str()), ("1", "2/3"));
        let t = UriTemplate::parse("x://{a}-{b}.txt").unwrap();
        let v = t.matches("x://a-b-c.txt").unwrap();
        assert_eq!((v["a"].as_str(), v["b"].as_str()), ("a", "b-c"));
        let t = UriTemplate::parse("x://é{a}ü/{+rest}").unwrap();
        let v = t.matches("x://éçüü/ä/ö").unwrap();
        assert_eq!((v["a"].as_str(), v["rest"].as_str()), ("çü", "ä/ö"));
        assert!(t.matches("x://éü/x").is_none(), "a variable is never empty");
        assert!(t.matches("x://é").is_none());
        assert!(
            UriTemplate::parse("x://{a}")
                .unwrap()
                .matches("x://")
                .is_none()
        );
    }

    /// Adjacent variables separated by one repeated literal, against a URI of that literal
    /// that does not match at the end: a backtracking matcher tries every split (O(n^k)); this
    /// one reads each position once per part.
    #[test]
    fn crafted_uris_do_not_backtrack() {
        let t = UriTemplate::parse("x://{+a}-{+b}-{+c}-{+d}-{+e}-{+f}.end").unwrap();
        let uri = format!("x://{}", "-a".repeat(20_000));
        assert!(t.matches(&uri).is_none());
        let uri = format!("x://{}.end", "a-".repeat(20_000) + "a");
        let v = t.matches(&uri).unwrap();
        assert_eq!(v["a"], "a");
        assert_eq!(v["f"].len(), 20_000 * 2 + 1 - 10);
        let too_long = format!("x://{}.end", "a-".repeat(MAX_MATCHED_URI / 2) + "a");
        assert!(t.matches(&too_long).is_none());
    }

    #[test]
    fn refuses_what_it_cannot_match() {
        assert!(UriTemplate::parse("x://{?q}").is_err());
        assert!(UriTemplate::parse("x://{a}{b}").is_err());
        assert!(UriTemplate::parse("x://{a").is_err());
    }

    /// Found by the `uri_template` fuzz target: `{+p}/{+p}` matched `file:///a/b.txt` with
    /// `p` = `b.txt` (the second value replaced the first), a URI the values do not give back.
    #[test]
    fn a_variable_appears_once() {
        for template in ["{+patf}/{+patf}", "x://{a}/{a}", "x://{a}-{+a}"] {
            let err = UriTemplate::parse(template).unwrap_err();
            assert!(err.contains("more than once"), "{template}: {err}");
        }
        assert!(UriTemplate::parse("x://{a}/{ab}").is_ok());
    }
}
