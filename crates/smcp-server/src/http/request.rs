//! The request before JSON-RPC: its head (Host and Origin allow-lists, HTTP method, media
//! types; REQUIREMENTS A1 items 8, 14, 17) and its body, within the size limit.

use bytes::Buf as _;
use bytes::Bytes;
use http::header::{ACCEPT, ALLOW, CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderValue, Method, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Limited};

use super::body::McpBody;
use super::deadline::BodyTimedOut;
use super::response::refuse;
use crate::core::server::Shared;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Which response media types the client accepts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Accepts {
    pub(crate) json: bool,
    pub(crate) sse: bool,
}

/// The `Accept` value the transport page tells every client to send, which nearly all send
/// verbatim: matched as bytes before the general parse.
const USUAL_ACCEPT: &[u8] = b"application/json, text/event-stream";

/// What `Accept` allows (no header: anything), for the 2026-07-28 endpoint and the legacy
/// sessions alike.
pub(crate) fn accepts(headers: &http::HeaderMap) -> Accepts {
    let mut seen = false;
    let mut a = Accepts {
        json: false,
        sse: false,
    };
    for value in headers.get_all(ACCEPT) {
        if value.as_bytes() == USUAL_ACCEPT {
            seen = true;
            a.json = true;
            a.sse = true;
            continue;
        }
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            seen = true;
            let media = item.split(';').next().unwrap_or("").trim();
            let is = |m: &str| media.eq_ignore_ascii_case(m);
            if is("*/*") {
                a.json = true;
                a.sse = true;
            } else if is("application/json") || is("application/*") {
                a.json = true;
            } else if is("text/event-stream") || is("text/*") {
                a.sse = true;
            }
        }
    }
    if !seen {
        // No Accept header: anything is acceptable (RFC 9110 §12.5.1).
        a.json = true;
        a.sse = true;
    }
    a
}

fn is_json_content_type(headers: &http::HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// The checks on the request head (REQUIREMENTS A1 items 8, 14, 17): Host and Origin,
/// method, media types. `Err` is the refusal.
/// Refusals are boxed: they are rare, and the `Ok` side is two flags.
pub(crate) fn check_head(
    inner: &Shared,
    parts: &http::request::Parts,
) -> Result<Accepts, Box<Response<McpBody>>> {
    check_host_origin(inner, parts)?;
    check_method_and_media(parts)
}

/// The Host and Origin allow-lists (403): the DNS-rebinding defence, for every request of
/// either era.
pub(crate) fn check_host_origin(
    inner: &Shared,
    parts: &http::request::Parts,
) -> Result<(), Box<Response<McpBody>>> {
    let host = parts
        .headers
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| parts.uri.authority().map(http::uri::Authority::as_str));
    match host {
        Some(h) if inner.security.host_allowed(h) => {}
        Some(h) => {
            return Err(Box::new(refuse(
                StatusCode::FORBIDDEN,
                smcp_proto::error::INVALID_REQUEST,
                format!("Forbidden: Host {h:?} is not allowed"),
            )));
        }
        None => {
            return Err(Box::new(refuse(
                StatusCode::FORBIDDEN,
                smcp_proto::error::INVALID_REQUEST,
                "Forbidden: the Host header is required".to_owned(),
            )));
        }
    }
    if let Some(origin) = parts.headers.get(ORIGIN) {
        let allowed = origin
            .to_str()
            .is_ok_and(|o| inner.security.origin_allowed(o));
        if !allowed {
            return Err(Box::new(refuse(
                StatusCode::FORBIDDEN,
                smcp_proto::error::INVALID_REQUEST,
                format!(
                    "Forbidden: Origin {:?} is not allowed",
                    String::from_utf8_lossy(origin.as_bytes())
                ),
            )));
        }
    }
    Ok(())
}

/// The HTTP method (405), `Content-Type` (415) and `Accept` (406).
fn check_method_and_media(parts: &http::request::Parts) -> Result<Accepts, Box<Response<McpBody>>> {
    if parts.method != Method::POST {
        let mut response = refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            smcp_proto::error::INVALID_REQUEST,
            format!(
                "Method Not Allowed: this MCP endpoint accepts only POST (got {})",
                parts.method
            ),
        );
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("POST"));
        return Err(Box::new(response));
    }

    if !is_json_content_type(&parts.headers) {
        return Err(Box::new(refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            smcp_proto::error::INVALID_REQUEST,
            "Unsupported Media Type: Content-Type must be application/json".to_owned(),
        )));
    }
    let accepts = accepts(&parts.headers);
    if !accepts.json && !accepts.sse {
        return Err(Box::new(refuse(
            StatusCode::NOT_ACCEPTABLE,
            smcp_proto::error::INVALID_REQUEST,
            "Not Acceptable: Accept must allow application/json or text/event-stream".to_owned(),
        )));
    }

    Ok(accepts)
}

/// The body, within the size limit (413 beyond it, also when `Content-Length` says so) and,
/// under [`crate::serve`], its time limits (408).
pub(crate) async fn read_body<B>(
    inner: &Shared,
    parts: &http::request::Parts,
    body: B,
) -> Result<Bytes, Box<Response<McpBody>>>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let limit = inner.limits.max_body_bytes;
    let too_large = || {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            smcp_proto::error::INVALID_REQUEST,
            format!("Payload Too Large: the body exceeds {limit} bytes"),
        )
    };
    if parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|len| len > limit as u64)
    {
        return Err(Box::new(too_large()));
    }
    // Frame by frame rather than `collect()`: a body that arrives in one frame (the usual
    // case) is kept as it is, with no list of chunks to build and flatten.
    let mut body = std::pin::pin!(Limited::new(body, limit));
    let mut first: Option<Bytes> = None;
    let mut joined: Option<Vec<u8>> = None;
    while let Some(frame) = body.frame().await {
        let frame = match frame {
            Ok(frame) => frame,
            Err(e)
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some() =>
            {
                return Err(Box::new(too_large()));
            }
            Err(e) if e.downcast_ref::<BodyTimedOut>().is_some() => {
                tracing::debug!(error = %e, "request body timed out");
                return Err(Box::new(refuse(
                    StatusCode::REQUEST_TIMEOUT,
                    smcp_proto::error::INVALID_REQUEST,
                    format!("Request Timeout: {e}"),
                )));
            }
            Err(e) => {
                return Err(Box::new(refuse(
                    StatusCode::BAD_REQUEST,
                    smcp_proto::error::INVALID_REQUEST,
                    format!("Bad Request: could not read the body: {e}"),
                )));
            }
        };
        let Ok(mut data) = frame.into_data() else {
            continue; // trailers: nothing MCP reads
        };
        let chunk = data.copy_to_bytes(data.remaining());
        match (&mut joined, first.take()) {
            (Some(all), _) => all.extend_from_slice(&chunk),
            (None, None) => first = Some(chunk),
            (None, Some(head)) => {
                let mut all = Vec::with_capacity(head.len() + chunk.len());
                all.extend_from_slice(&head);
                all.extend_from_slice(&chunk);
                joined = Some(all);
            }
        }
    }
    Ok(joined.map_or_else(|| first.unwrap_or_default(), Bytes::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(values: &[&str]) -> (bool, bool) {
        let mut headers = http::HeaderMap::new();
        for v in values {
            headers.append(ACCEPT, http::HeaderValue::from_str(v).unwrap());
        }
        let a = accepts(&headers);
        (a.json, a.sse)
    }

    #[test]
    fn the_usual_value_and_its_variants_read_alike() {
        for usual in [
            "application/json, text/event-stream",
            "text/event-stream, application/json",
            "application/json,text/event-stream",
            "Application/JSON; q=0.9, TEXT/event-stream",
            "*/*",
        ] {
            assert_eq!(of(&[usual]), (true, true), "{usual}");
        }
        assert_eq!(of(&["application/json", "text/event-stream"]), (true, true));
        assert_eq!(of(&[]), (true, true), "no Accept: anything");
    }

    #[test]
    fn what_is_missing_is_not_accepted() {
        assert_eq!(of(&["application/json"]), (true, false));
        assert_eq!(of(&["text/event-stream"]), (false, true));
        assert_eq!(of(&["text/html"]), (false, false));
        // The usual value's bytes with a twist are parsed, not matched.
        assert_eq!(of(&["application/json, text/event-streams"]), (true, false));
        assert_eq!(of(&["application/jsonx, text/event-stream"]), (false, true));
    }
}
