//! Bounded fetches of metadata documents and posts to OAuth endpoints.

use std::time::Duration;

use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use super::AuthError;

/// Largest metadata or token response read.
pub(crate) const MAX_DOCUMENT: usize = 256 * 1024;
/// Bound on each metadata / token / registration exchange.
pub(crate) const FETCH_TIMEOUT: Duration = Duration::from_secs(15);

/// The client used for authorization-server traffic: no redirects, a total timeout.
pub(crate) fn http_client(roots: &[reqwest::Certificate]) -> Result<reqwest::Client, AuthError> {
    let mut b = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(FETCH_TIMEOUT);
    for r in roots {
        b = b.add_root_certificate(r.clone());
    }
    b.build()
        .map_err(|e| AuthError::Config(format!("cannot build the HTTP client: {e}")))
}

/// The outcome of a GET: a parsed document, or a status that means "not here".
pub(crate) enum Fetched<T> {
    /// 2xx with a JSON body that parsed.
    Found(T),
    /// Any other status (the caller tries the next URL).
    NotFound(u16),
}

/// GETs `url` as JSON (bounded), `what` naming the document in errors.
pub(crate) async fn get_json<T: DeserializeOwned>(
    http: &reqwest::Client,
    what: &'static str,
    url: &str,
) -> Result<Fetched<T>, AuthError> {
    let fail = |detail: String| AuthError::Fetch {
        what,
        url: url.to_owned(),
        detail,
    };
    let response = http
        .get(url)
        .header(http::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| fail(e.to_string()))?;
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        return Ok(Fetched::NotFound(status));
    }
    let body = read_body(response).await.map_err(fail)?;
    serde_json::from_slice(&body)
        .map(Fetched::Found)
        .map_err(|e| fail(format!("not the expected JSON document: {e}")))
}

/// Reads at most [`MAX_DOCUMENT`] bytes; longer is an error.
pub(crate) async fn read_body(response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| e.to_string())?;
        if out.len() + chunk.len() > MAX_DOCUMENT {
            return Err(format!("body exceeds {MAX_DOCUMENT} bytes"));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}
