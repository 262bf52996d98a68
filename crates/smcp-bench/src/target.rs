//! Where the load goes: an `http://` URL that must name a loopback address.
//!
//! The load generator refuses any other target so it cannot be pointed at someone else's
//! server by mistake.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// A parsed loopback target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The socket address to connect to.
    pub addr: SocketAddr,
    /// The `Host` header value (`host:port` as written in the URL).
    pub authority: String,
    /// The request path, e.g. `/mcp`.
    pub path: String,
    /// The `Authorization` header every request carries (`Bearer …` or `DPoP …`), if any.
    pub authorization: Option<http::HeaderValue>,
}

/// Parses `http://HOST:PORT/PATH` where HOST is a loopback IP literal or `localhost`.
pub fn parse_loopback_url(url: &str) -> Result<Target, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("{url}: only http:// URLs are supported"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = authority
        .rsplit_once(':')
        .ok_or_else(|| format!("{url}: the URL needs an explicit port"))?;
    let port: u16 = port
        .parse()
        .map_err(|_| format!("{url}: bad port {port:?}"))?;
    let host_trim = host.trim_start_matches('[').trim_end_matches(']');
    let ip: IpAddr = if host_trim.eq_ignore_ascii_case("localhost") {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        host_trim
            .parse()
            .map_err(|_| format!("{url}: host must be a loopback IP or localhost"))?
    };
    if !ip.is_loopback() {
        return Err(format!(
            "{url}: refusing a non-loopback target ({ip}); the load generator only targets loopback"
        ));
    }
    Ok(Target {
        addr: SocketAddr::new(ip, port),
        authority: authority.to_owned(),
        path: path.to_owned(),
        authorization: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_loopback() {
        let t = parse_loopback_url("http://127.0.0.1:8080/mcp").unwrap();
        assert_eq!(t.addr, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(t.authority, "127.0.0.1:8080");
        assert_eq!(t.path, "/mcp");
        assert!(parse_loopback_url("http://localhost:1/").is_ok());
        assert!(parse_loopback_url("http://[::1]:9/mcp").is_ok());
        assert!(parse_loopback_url("http://127.3.4.5:9/mcp").is_ok());
    }

    #[test]
    fn refuses_everything_else() {
        assert!(parse_loopback_url("http://10.0.0.1:80/mcp").is_err());
        assert!(parse_loopback_url("http://example.com:80/mcp").is_err());
        assert!(parse_loopback_url("https://127.0.0.1:443/mcp").is_err());
        assert!(parse_loopback_url("http://127.0.0.1/mcp").is_err());
        assert!(parse_loopback_url("http://0.0.0.0:80/mcp").is_err());
    }
}
