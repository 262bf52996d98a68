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

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    pub(crate) fn parse(template: &str) -> Result<Self, String> {
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
    pub(crate) fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut vars = BTreeMap::new();
        match_parts(&self.parts, uri, &mut vars).then_some(vars)
    }
}

fn match_parts(parts: &[Part], input: &str, vars: &mut BTreeMap<String, String>) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return input.is_empty();
    };
    match first {
        Part::Literal(lit) => input
            .strip_prefix(lit.as_str())
            .is_some_and(|tail| match_parts(rest, tail, vars)),
        Part::Var { name, reserved } => {
            // Try the shortest value first so a following literal anchors the match.
            let limit = if *reserved {
                input.len()
            } else {
                input.find(['/', '?', '#']).unwrap_or(input.len())
            };
            for end in (1..=limit).filter(|&i| input.is_char_boundary(i)) {
                if match_parts(rest, &input[end..], vars) {
                    vars.insert(name.clone(), input[..end].to_owned());
                    return true;
                }
            }
            false
        }
    }
}

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
    fn refuses_what_it_cannot_match() {
        assert!(UriTemplate::parse("x://{?q}").is_err());
        assert!(UriTemplate::parse("x://{a}{b}").is_err());
        assert!(UriTemplate::parse("x://{a").is_err());
    }
}
