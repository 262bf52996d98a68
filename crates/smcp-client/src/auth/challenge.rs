//! `WWW-Authenticate: Bearer …` and `DPoP …` parsing (RFC 6750 §3, RFC 9449 §7.1, RFC 9728
//! §5.1).
//!
//! A header may hold several challenges (`Basic realm="x", Bearer scope="a b"`) and several
//! header lines; the first `Bearer` or `DPoP` one is read (both carry the same parameters).
//! Values may be quoted (with `\"` escapes) or bare tokens.

/// The parameters of a `Bearer` (or `DPoP`) challenge that the flow uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    /// `resource_metadata`: where the Protected Resource Metadata is.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs (space-separated).
    pub scope: Option<String>,
    /// `error`: `invalid_token`, `insufficient_scope`, `use_dpop_nonce`…
    pub error: Option<String>,
}

impl BearerChallenge {
    /// Whether this is a step-up challenge (`error="insufficient_scope"`).
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }

    /// The `Bearer` challenge of one `WWW-Authenticate` value, if it has one.
    pub fn parse(header: &str) -> Option<Self> {
        parse(header)
    }

    /// The `Bearer` challenge among `values` (every `WWW-Authenticate` line), if any.
    pub fn from_headers<'a>(values: impl IntoIterator<Item = &'a str>) -> Option<Self> {
        values.into_iter().find_map(parse)
    }
}

/// Reads the `Bearer` (or `DPoP`) challenge of one header value.
pub(crate) fn parse(header: &str) -> Option<BearerChallenge> {
    let mut found = None::<BearerChallenge>;
    let mut in_bearer = false;
    walk(header, |item| match item {
        Item::Scheme(scheme) => {
            if found.is_some() {
                return false;
            }
            in_bearer =
                scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("dpop");
            if in_bearer {
                found = Some(BearerChallenge::default());
            }
            true
        }
        Item::Param(name, value) => {
            if in_bearer && let Some(c) = found.as_mut() {
                match name.to_ascii_lowercase().as_str() {
                    "resource_metadata" => c.resource_metadata = Some(value),
                    "scope" => c.scope = Some(value),
                    "error" => c.error = Some(value),
                    _ => {}
                }
            }
            true
        }
    });
    found
}

/// The auth-schemes of one header value's challenges, in order.
pub(crate) fn schemes(header: &str) -> Vec<String> {
    let mut out = Vec::new();
    walk(header, |item| {
        if let Item::Scheme(s) = item {
            out.push(s.to_owned());
        }
        true
    });
    out
}

enum Item<'a> {
    Scheme(&'a str),
    Param(&'a str, String),
}

/// Calls `each` with every scheme and parameter of `header` until it returns false.
fn walk<'a>(header: &'a str, mut each: impl FnMut(Item<'a>) -> bool) {
    let mut rest = header.trim();
    while !rest.is_empty() {
        rest = rest.trim_start_matches([',', ' ', '\t']);
        if rest.is_empty() {
            break;
        }
        // A token: an auth-scheme (followed by space or end) or a parameter name (followed by '=').
        let end = rest
            .find(|c: char| c == '=' || c == ',' || c.is_whitespace())
            .unwrap_or(rest.len());
        let token = &rest[..end];
        let after = rest[end..].trim_start();
        let go_on = if let Some(value_part) = after.strip_prefix('=') {
            let (value, remaining) = read_value(value_part.trim_start());
            rest = remaining;
            each(Item::Param(token, value))
        } else {
            rest = after;
            each(Item::Scheme(token))
        };
        if !go_on {
            break;
        }
    }
}

/// A quoted string (with backslash escapes) or a bare token; returns it and what follows.
fn read_value(s: &str) -> (String, &str) {
    if let Some(body) = s.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = body.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, n)) = chars.next() {
                        out.push(n);
                    }
                }
                '"' => return (out, &body[i + 1..]),
                c => out.push(c),
            }
        }
        (out, "")
    } else {
        let end = s
            .find(|c: char| c == ',' || c.is_whitespace())
            .unwrap_or(s.len());
        (s[..end].to_owned(), &s[end..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_quoted_and_bare_parameters() {
        let c = parse(r#"Bearer resource_metadata="http://h/.well-known/oauth-protected-resource/mcp", scope="a b""#).unwrap_or_default();
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://h/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.scope.as_deref(), Some("a b"));
        let c = parse("Bearer error=insufficient_scope, scope=mcp:write").unwrap_or_default();
        assert!(c.is_insufficient_scope());
        assert_eq!(c.scope.as_deref(), Some("mcp:write"));
    }

    #[test]
    fn finds_bearer_among_several_challenges_and_handles_escapes() {
        let c = parse(r#"Basic realm="x, y", Bearer error="insufficient_scope", scope="s\"q", DPoP algs="ES256""#)
            .unwrap_or_default();
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("s\"q"));
        assert!(parse(r#"Basic realm="x""#).is_none());
        let c = BearerChallenge::from_headers([r#"Basic realm="r""#, "bearer scope=x"]);
        assert_eq!(c.and_then(|c| c.scope).as_deref(), Some("x"));
    }

    #[test]
    fn dpop_challenges_are_read_too() {
        let c = parse(r#"DPoP error="use_dpop_nonce", resource_metadata="http://h/prm""#)
            .unwrap_or_default();
        assert_eq!(c.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(c.resource_metadata.as_deref(), Some("http://h/prm"));
    }

    #[test]
    fn schemes_are_listed_in_order_whatever_the_quoting() {
        assert_eq!(
            schemes(r#"Basic realm="a, DPoP b", Bearer error="x", DPoP algs="ES256""#),
            ["Basic", "Bearer", "DPoP"]
        );
        assert_eq!(schemes("Bearer"), ["Bearer"]);
    }

    #[test]
    fn bare_bearer_has_no_parameters() {
        assert_eq!(parse("Bearer"), Some(BearerChallenge::default()));
    }
}
