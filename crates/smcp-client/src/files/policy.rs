//! Which descriptor URLs the client follows (REQUIREMENTS A22): `https` only; plain `http`
//! only to a loopback host and only when the caller opted in (development). Everything here
//! runs before any connection to the URL.

use std::net::IpAddr;

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
