//! Which descriptor URLs the client follows (REQUIREMENTS A22): `https` only; plain `http`
//! only to a loopback host and only when the caller opted in (development); and only to public
//! addresses (A22.133): a descriptor whose host is, or resolves to, a private, loopback,
//! link-local, unspecified, multicast or otherwise non-public address is refused, unless it is
//! the MCP server's own host, or loopback with the development opt-in. IP literals are checked
//! before any connection ([`AddressPolicy::check_url`]); names are checked when they are
//! resolved, by the data-plane client's resolver ([`AddressPolicy`] implements
//! `reqwest::dns::Resolve`), so the address connected to is the address that was checked and a
//! second, different DNS answer (rebinding) cannot slip through.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use smcp_proto::ext::files::{FileTransferDescriptor, TRANSPORT_HTTPS};

use super::transfer_error::{Operation, TransferError};

/// Whether `url` points at this machine: `localhost`, `127.0.0.0/8`, `::1` or an IPv4-mapped
/// loopback address. Names other than `localhost` are not resolved.
pub fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| match ip {
            IpAddr::V4(a) => a.is_loopback(),
            IpAddr::V6(a) => {
                a.is_loopback() || a.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
            }
        })
}

/// Checks a URL the client is about to connect to for file transfer: `https` is accepted;
/// `http` only when `allow_insecure_loopback` is set and the host [`is_loopback`]; anything
/// else is refused with [`TransferError::InsecureUrl`] (or [`TransferError::InvalidUrl`]).
pub fn check_transfer_url(
    url: &str,
    allow_insecure_loopback: bool,
) -> Result<reqwest::Url, TransferError> {
    let parsed = reqwest::Url::parse(url).map_err(|e| TransferError::InvalidUrl {
        reason: e.to_string(),
    })?;
    let Some(host) = parsed.host_str().map(str::to_owned) else {
        return Err(TransferError::InvalidUrl {
            reason: format!("a {}: URL without a host", parsed.scheme()),
        });
    };
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if allow_insecure_loopback && is_loopback(&parsed) => Ok(parsed),
        scheme => Err(TransferError::InsecureUrl {
            scheme: scheme.to_owned(),
            host,
            loopback_allowed: allow_insecure_loopback,
        }),
    }
}

/// Refuses descriptors the client must not follow: a transport other than `https`, a URL that
/// [`check_transfer_url`] refuses. Returns the URL to connect to.
pub fn check_descriptor(
    d: &FileTransferDescriptor,
    allow_insecure_loopback: bool,
) -> crate::Result<reqwest::Url> {
    if d.transport != TRANSPORT_HTTPS {
        return Err(TransferError::UnsupportedTransport {
            transport: d.transport.clone(),
        }
        .into());
    }
    Ok(check_transfer_url(&d.url, allow_insecure_loopback)?)
}

/// Whether `ip` is a public (globally routable unicast) address. Everything else is refused
/// as a descriptor target: unspecified, loopback, private (RFC 1918, IPv6 unique local),
/// shared (RFC 6598), link-local, multicast, broadcast, documentation, benchmarking, reserved
/// and protocol-assignment ranges, and IPv6 forms that embed a non-public IPv4 address
/// (IPv4-mapped, IPv4-compatible, NAT64, 6to4).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => is_public_v4(a),
        IpAddr::V6(a) => is_public_v6(a),
    }
}

fn is_public_v4(a: Ipv4Addr) -> bool {
    let [o0, o1, o2, _] = a.octets();
    !(a.is_unspecified()
        || o0 == 0 // "this network"
        || a.is_loopback()
        || a.is_private()
        || a.is_link_local()
        || a.is_multicast()
        || a.is_broadcast()
        || a.is_documentation()
        || (o0 == 100 && (o1 & 0xc0) == 64) // shared address space 100.64.0.0/10
        || (o0 == 192 && o1 == 0 && o2 == 0) // IETF protocol assignments 192.0.0.0/24
        || (o0 == 192 && o1 == 88 && o2 == 99) // 6to4 relay anycast
        || (o0 == 198 && (o1 & 0xfe) == 18) // benchmarking 198.18.0.0/15
        || o0 >= 240) // reserved 240.0.0.0/4
}

fn is_public_v6(a: Ipv6Addr) -> bool {
    let seg = a.segments();
    // IPv4 embedded: mapped (::ffff:0:0/96), compatible (::/96), NAT64 (64:ff9b::/96).
    if let Some(v4) = a.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    if seg[..6] == [0, 0, 0, 0, 0, 0] || seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let v4 = Ipv4Addr::new(
            (seg[6] >> 8) as u8,
            seg[6] as u8,
            (seg[7] >> 8) as u8,
            seg[7] as u8,
        );
        return !a.is_unspecified() && !a.is_loopback() && is_public_v4(v4);
    }
    // 6to4 (2002::/16) carries the IPv4 address in segments 1 and 2.
    if seg[0] == 0x2002 {
        let v4 = Ipv4Addr::new(
            (seg[1] >> 8) as u8,
            seg[1] as u8,
            (seg[2] >> 8) as u8,
            seg[2] as u8,
        );
        return is_public_v4(v4);
    }
    !(a.is_unspecified()
        || a.is_loopback()
        || a.is_multicast()
        || (seg[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (seg[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (seg[0] & 0xffc0) == 0xfec0 // site-local (deprecated) fec0::/10
        || (seg[0] == 0x2001 && seg[1] == 0x0db8) // documentation 2001:db8::/32
        || (seg[0] == 0x3fff && seg[1] < 0x1000) // documentation 3fff::/20
        || (seg[0] == 0x2001 && seg[1] < 0x0200) // IETF protocol assignments 2001::/23
        || (seg[0] == 0x0100 && seg[1..4] == [0, 0, 0]) // discard-only 100::/64
        || (seg[0] == 0x0064 && seg[1] == 0xff9b && seg[2] == 1)) // local-use NAT64 64:ff9b:1::/48
}

/// Where descriptor URLs may point (REQUIREMENTS A22.133); also the data-plane client's DNS
/// resolver, which applies the same rule to every address a name resolves to.
#[derive(Debug, Clone, Default)]
pub struct AddressPolicy {
    /// Loopback addresses are allowed (the development opt-in,
    /// [`crate::FileTransfer::allow_insecure_loopback`], or a stdio server, which runs on this
    /// machine).
    pub allow_loopback: bool,
    /// The MCP endpoint's host (lower case, without brackets): descriptors on the server's
    /// own host are allowed whatever its address.
    pub server_host: Option<String>,
}

/// A descriptor host refused by [`AddressPolicy`]; what the resolver fails with.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{host} resolves to the non-public address {address}")]
pub(crate) struct NonPublicAddress {
    pub(crate) host: String,
    pub(crate) address: IpAddr,
}

impl From<NonPublicAddress> for TransferError {
    fn from(e: NonPublicAddress) -> Self {
        Self::NonPublicAddress {
            host: e.host,
            address: e.address,
        }
    }
}

fn bare_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

impl AddressPolicy {
    /// The policy for a client of the MCP endpoint `url` (`None`: a stdio server).
    pub fn for_server(url: Option<&str>, allow_insecure_loopback: bool) -> Self {
        let server_host = url
            .and_then(|u| reqwest::Url::parse(u).ok())
            .and_then(|u| u.host_str().map(bare_host));
        Self {
            allow_loopback: allow_insecure_loopback || url.is_none(),
            server_host,
        }
    }

    fn is_server(&self, host: &str) -> bool {
        self.server_host.as_deref() == Some(bare_host(host).as_str())
    }

    /// Whether `address` of `host` may be connected to.
    pub fn allows(&self, host: &str, address: IpAddr) -> bool {
        is_public(address)
            || self.is_server(host)
            || (self.allow_loopback && address.to_canonical().is_loopback())
    }

    /// Checks a descriptor URL's host before any connection: an IP literal must be allowed;
    /// a name is checked by the resolver when it is resolved.
    pub fn check_url(&self, url: &reqwest::Url) -> Result<(), TransferError> {
        let Some(host) = url.host_str() else {
            return Ok(());
        };
        match bare_host(host).parse::<IpAddr>() {
            Ok(address) if !self.allows(host, address) => Err(TransferError::NonPublicAddress {
                host: bare_host(host),
                address,
            }),
            _ => Ok(()),
        }
    }

    /// Every address of `addrs` must be allowed for `host`.
    fn check_resolved(&self, host: &str, addrs: &[SocketAddr]) -> Result<(), NonPublicAddress> {
        match addrs.iter().find(|a| !self.allows(host, a.ip())) {
            Some(a) => Err(NonPublicAddress {
                host: bare_host(host),
                address: a.ip(),
            }),
            None => Ok(()),
        }
    }
}

impl reqwest::dns::Resolve for AddressPolicy {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            policy.check_resolved(&host, &addrs)?;
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The [`NonPublicAddress`] refusal inside an HTTP client error (the resolver's), if any.
pub(crate) fn refused_address(e: &reqwest::Error) -> Option<TransferError> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(refused) = err.downcast_ref::<NonPublicAddress>() {
            return Some(refused.clone().into());
        }
        source = err.source();
    }
    None
}

/// The descriptor's method, if it fits `operation` (`PUT`/`POST` to upload, `GET` to
/// download).
pub(crate) fn descriptor_method(
    d: &FileTransferDescriptor,
    operation: Operation,
) -> Result<reqwest::Method, TransferError> {
    let method = d.method.to_ascii_uppercase();
    let ok = match operation {
        Operation::Upload => method == "PUT" || method == "POST",
        Operation::Download => method == "GET",
    };
    if !ok {
        return Err(TransferError::InvalidMethod {
            method: d.method.clone(),
            operation,
        });
    }
    reqwest::Method::from_bytes(method.as_bytes()).map_err(|_| TransferError::InvalidMethod {
        method: d.method.clone(),
        operation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descriptor(transport: &str, method: &str, url: &str) -> FileTransferDescriptor {
        FileTransferDescriptor {
            transport: transport.to_owned(),
            method: method.to_owned(),
            url: url.to_owned(),
            headers: None,
            multipart: None,
            expires_at: None,
        }
    }

    #[test]
    fn loopback_hosts() {
        for u in [
            "http://127.0.0.1:9/x",
            "http://127.8.9.10/",
            "http://localhost:1/",
            "http://LOCALHOST/",
            "http://[::1]:8080/",
            "http://[::ffff:127.0.0.1]/",
        ] {
            assert!(is_loopback(&reqwest::Url::parse(u).unwrap()), "{u}");
        }
        for u in [
            "http://192.0.2.1:9/x",
            "http://10.0.0.1/",
            "http://localhost.example.com/",
            "http://127.0.0.1.nip.io/",
            "http://[::2]/",
            "http://[::ffff:10.0.0.1]/",
        ] {
            assert!(!is_loopback(&reqwest::Url::parse(u).unwrap()), "{u}");
        }
    }

    #[test]
    fn https_always_http_only_on_loopback_when_allowed() {
        assert!(check_transfer_url("https://files.example/u/1", false).is_ok());
        assert!(check_transfer_url("https://files.example/u/1", true).is_ok());
        assert!(check_transfer_url("http://127.0.0.1:5/u", true).is_ok());
        let e = check_transfer_url("http://127.0.0.1:5/u", false).unwrap_err();
        assert!(
            matches!(&e, TransferError::InsecureUrl { scheme, host, loopback_allowed: false }
                if scheme == "http" && host == "127.0.0.1"),
            "{e:?}"
        );
        let e =
            check_transfer_url("http://192.0.2.1:9/upload/ticket-1?sig=secret", true).unwrap_err();
        assert!(
            matches!(
                &e,
                TransferError::InsecureUrl {
                    loopback_allowed: true,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(!e.to_string().contains("secret"), "{e}");
        for bad in ["ftp://127.0.0.1/x", "file:///etc/passwd", "ws://localhost/"] {
            assert!(check_transfer_url(bad, true).is_err(), "{bad}");
        }
        assert!(matches!(
            check_transfer_url("not a url", true),
            Err(TransferError::InvalidUrl { .. })
        ));
    }

    #[test]
    fn only_public_addresses_are_public() {
        for a in [
            "93.184.216.34",
            "8.8.8.8",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert!(is_public(a.parse().unwrap()), "{a} is public");
        }
        for a in [
            "0.0.0.0",
            "0.1.2.3",
            "127.0.0.1",
            "127.255.0.9",
            "10.0.0.1",
            "172.16.5.4",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254", // cloud metadata
            "100.64.0.1",
            "100.127.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "198.18.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "fe80::1",
            "fc00::1",
            "fd12:3456::1",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::a00:1",
            "2002:a00:1::1",
            "100::1",
        ] {
            assert!(!is_public(a.parse().unwrap()), "{a} is not public");
        }
    }

    #[test]
    fn address_policy_literals_server_host_and_loopback_opt_in() {
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        let strict = AddressPolicy::for_server(Some("https://mcp.example/mcp"), false);
        assert!(strict.check_url(&url("https://93.184.216.34/u")).is_ok());
        assert!(
            strict.check_url(&url("https://files.example/u")).is_ok(),
            "names: at resolve time"
        );
        for bad in [
            "https://10.0.0.7/upload/t",
            "https://127.0.0.1:8443/upload/t",
            "https://[::1]/u",
            "https://169.254.169.254/latest/meta-data",
            "https://[fe80::1]/u",
            "https://0.0.0.0/u",
            "https://[::ffff:192.168.0.1]/u",
            "https://224.0.0.1/u",
        ] {
            let e = strict.check_url(&url(bad)).unwrap_err();
            assert!(
                matches!(e, TransferError::NonPublicAddress { .. }) && e.is_descriptor_refused(),
                "{bad}: {e:?}"
            );
            assert!(!e.to_string().contains("upload/t"), "{e}");
        }
        // The MCP server's own host, and loopback with the development opt-in.
        let own = AddressPolicy::for_server(Some("https://127.0.0.1:9000/mcp"), false);
        assert!(
            own.check_url(&url("https://127.0.0.1:9001/files/u"))
                .is_ok()
        );
        assert!(own.check_url(&url("https://10.0.0.1/u")).is_err());
        let dev = AddressPolicy::for_server(Some("https://mcp.example/mcp"), true);
        assert!(dev.check_url(&url("http://127.0.0.1:9/u")).is_ok());
        assert!(dev.check_url(&url("https://[::1]/u")).is_ok());
        assert!(dev.check_url(&url("https://192.168.0.1/u")).is_err());
        // A stdio server runs on this machine.
        let stdio = AddressPolicy::for_server(None, false);
        assert!(stdio.check_url(&url("https://127.0.0.1:9/u")).is_ok());
        assert!(stdio.check_url(&url("https://10.1.1.1/u")).is_err());
    }

    #[tokio::test]
    async fn names_are_checked_at_resolution() {
        use reqwest::dns::Resolve as _;
        let strict = AddressPolicy::for_server(Some("https://mcp.example/mcp"), false);
        let Err(e) = strict.resolve("localhost".parse().unwrap()).await else {
            panic!("localhost resolves to loopback and must be refused")
        };
        let refused = e.downcast_ref::<NonPublicAddress>().expect("typed refusal");
        assert!(refused.address.to_canonical().is_loopback(), "{refused:?}");
        let dev = AddressPolicy::for_server(Some("https://mcp.example/mcp"), true);
        assert!(dev.resolve("localhost".parse().unwrap()).await.is_ok());
    }

    #[test]
    fn descriptors_need_https_transport_and_a_fitting_method() {
        let ok = descriptor("https", "PUT", "https://h/u");
        assert!(check_descriptor(&ok, false).is_ok());
        let e = check_descriptor(&descriptor("s3", "PUT", "https://h/u"), false).unwrap_err();
        assert!(matches!(
            e.transfer_error(),
            Some(TransferError::UnsupportedTransport { .. })
        ));
        let e = check_descriptor(&descriptor("https", "PUT", "http://192.0.2.1:9/u"), true)
            .unwrap_err();
        assert!(
            e.transfer_error()
                .is_some_and(TransferError::is_descriptor_refused)
        );
        assert!(descriptor_method(&ok, Operation::Upload).is_ok());
        assert!(
            descriptor_method(&descriptor("https", "post", "https://h"), Operation::Upload).is_ok()
        );
        assert!(descriptor_method(&ok, Operation::Download).is_err());
        assert!(
            descriptor_method(&descriptor("https", "GET", "https://h"), Operation::Upload).is_err()
        );
        assert_eq!(
            descriptor_method(
                &descriptor("https", "GET", "https://h"),
                Operation::Download
            )
            .unwrap(),
            reqwest::Method::GET
        );
    }
}
