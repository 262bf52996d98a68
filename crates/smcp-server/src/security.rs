//! Host and Origin allow-lists: the DNS-rebinding defence the transport spec requires
//! (`basic/transports/streamable-http.mdx` §Security & Endpoint).
//!
//! A rebinding attack makes a browser send requests to a loopback server under an attacker's
//! host name, so checking `Origin` against `Host` is not enough: both lists name what is
//! allowed. The default allows only loopback names, whatever the port.
//!
//! Plain settings: the HTTP layer enforces them (`http/head.rs`).

/// Which `Host` values and which `Origin` values are accepted.
///
/// The default ([`SecurityPolicy::loopback`]) suits a server on the developer's machine; a
/// deployed server names its public host, and the web origins allowed to call it from a
/// browser.
///
/// # Examples
///
/// ```
/// use smcp_server::SecurityPolicy;
///
/// let policy = SecurityPolicy::loopback()
///     .allow_host("mcp.example.com")
///     .allow_origin("https://app.example.com");
/// assert!(policy.host_allowed("mcp.example.com:443"));
/// assert!(policy.host_allowed("localhost:8931"));
/// assert!(!policy.host_allowed("attacker.example"));
/// assert!(policy.origin_allowed("https://app.example.com"));
/// assert!(policy.origin_allowed("http://localhost:3000"));
/// assert!(!policy.origin_allowed("https://evil.example"));
/// ```
///
/// Register it with [`ServerBuilder::security`](crate::ServerBuilder::security).
#[derive(Debug, Clone)]
pub struct SecurityPolicy {
    hosts: Allow,
    origins: Allow,
}

#[derive(Debug, Clone)]
enum Allow {
    Any,
    /// Lower-cased host names (no port) or origins (`scheme://host[:port]`).
    List(Vec<String>),
}

const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

impl Default for SecurityPolicy {
    fn default() -> Self {
        Self::loopback()
    }
}

impl SecurityPolicy {
    /// Loopback only: `localhost`, `127.0.0.1` and `[::1]` on any port, over http or https.
    pub fn loopback() -> Self {
        Self {
            hosts: Allow::List(LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect()),
            origins: Allow::List(Vec::new()),
        }
    }

    /// Accepts every `Host` and every `Origin`. Only for servers behind a proxy that checks.
    pub fn permissive() -> Self {
        Self {
            hosts: Allow::Any,
            origins: Allow::Any,
        }
    }

    /// Also accepts this host name (without port), e.g. `mcp.example.com`.
    #[must_use]
    pub fn allow_host(mut self, host: &str) -> Self {
        if let Allow::List(list) = &mut self.hosts {
            list.push(host.to_ascii_lowercase());
        }
        self
    }

    /// Also accepts this exact origin, e.g. `https://app.example.com`.
    #[must_use]
    pub fn allow_origin(mut self, origin: &str) -> Self {
        if let Allow::List(list) = &mut self.origins {
            list.push(origin.trim_end_matches('/').to_ascii_lowercase());
        }
        self
    }

    /// Checks the `Host` header (or the URI authority for HTTP/2).
    pub fn host_allowed(&self, host: &str) -> bool {
        match &self.hosts {
            Allow::Any => true,
            Allow::List(list) => {
                // The list is lowercase; compare without allocating (this runs per request).
                let name = strip_port(host);
                list.iter()
                    .any(|allowed| allowed.eq_ignore_ascii_case(name))
            }
        }
    }

    /// Checks an `Origin` header that is present. Loopback origins are accepted whenever
    /// loopback hosts are; `null` and malformed origins are refused.
    pub fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim().to_ascii_lowercase();
        match &self.origins {
            Allow::Any => true,
            Allow::List(list) => {
                if list.contains(&origin) {
                    return true;
                }
                let Some(rest) = origin
                    .strip_prefix("http://")
                    .or_else(|| origin.strip_prefix("https://"))
                else {
                    return false;
                };
                if rest.contains('/') {
                    return false;
                }
                let host = strip_port(rest);
                LOOPBACK_HOSTS.contains(&host) && self.host_allowed(host)
            }
        }
    }
}

/// `host[:port]` → `host`; keeps the brackets of an IPv6 literal.
fn strip_port(authority: &str) -> &str {
    let authority = authority.trim();
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => &authority[..=end],
            None => authority,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_default() {
        let p = SecurityPolicy::default();
        for h in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "[::1]:99",
            "LOCALHOST",
        ] {
            assert!(p.host_allowed(h), "{h}");
        }
        for h in [
            "evil.example.com",
            "evil.example.com:80",
            "127.0.0.2",
            "localhost.evil",
        ] {
            assert!(!p.host_allowed(h), "{h}");
        }
        for o in [
            "http://localhost:3000",
            "https://127.0.0.1",
            "http://[::1]:8",
        ] {
            assert!(p.origin_allowed(o), "{o}");
        }
        for o in [
            "http://evil.example.com",
            "null",
            "http://localhost.evil",
            "file://",
        ] {
            assert!(!p.origin_allowed(o), "{o}");
        }
    }

    #[test]
    fn configured_names() {
        let p = SecurityPolicy::loopback()
            .allow_host("mcp.example.com")
            .allow_origin("https://app.example.com/");
        assert!(p.host_allowed("MCP.example.com:443"));
        assert!(p.origin_allowed("https://app.example.com"));
        assert!(!p.origin_allowed("http://app.example.com"));
        assert!(SecurityPolicy::permissive().origin_allowed("http://x"));
    }
}
