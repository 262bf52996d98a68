//! [`Endpoint`]: the MCP endpoint at one path, with no router in front of it.
//!
//! An axum `Router` ([`crate::Server::router`]) is the way to mount the endpoint into an
//! existing app. A server that is only an MCP server ([`crate::serve`] in `smcpd`) pays for
//! nothing it does not use with an `Endpoint`: requests for the path go straight to the
//! [`McpService`]; any other path goes to the fallback router when one is given (the SEP-2631
//! data plane, say), or gets an empty 404.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::FutureExt as _;
use http::{Request, Response, StatusCode};
use http_body::Body;
use http_body_util::Either;
use tower::ServiceExt as _;

use super::body::McpBody;
use super::service::McpService;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The response body of an [`Endpoint`]: the MCP endpoint's own, or the fallback's.
pub type EndpointBody = Either<McpBody, axum::body::Body>;

/// The MCP endpoint at exactly one path, and a fallback router (when given) on the others.
/// Built by [`crate::Server::endpoint`]; cheap to clone.
#[derive(Clone, Debug)]
pub struct Endpoint {
    path: Arc<str>,
    mcp: McpService,
    other: Option<axum::Router>,
    readiness: Option<Arc<str>>,
    liveness: Option<Arc<str>>,
}

impl Endpoint {
    pub(crate) fn new(path: &str, mcp: McpService) -> Self {
        Self {
            path: path.into(),
            mcp,
            other: None,
            readiness: None,
            liveness: None,
        }
    }

    /// Serves every other path with `router` (e.g. `smcp_files::Files::router`, the SEP-2631
    /// upload and download endpoints).
    ///
    /// # Examples
    ///
    /// ```
    /// # let server = smcp_server::Server::builder("demo", "1.0.0").build()?;
    /// let health = axum::Router::new().route("/health", axum::routing::get(|| async { "ok" }));
    /// let endpoint = server.endpoint("/mcp").fallback(health);
    /// # let _ = endpoint;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn fallback(mut self, router: axum::Router) -> Self {
        self.other = Some(router);
        self
    }

    /// Answers readiness at `path` (`/readyz`, say): 200 with `{"status":"ready"}` when every
    /// registered [`HealthCheck`](crate::core::health::HealthCheck) passes, 503 with the
    /// failing checks (or `"draining"`) otherwise. The MCP endpoint's Host and Origin checks
    /// apply; authentication does not (a layer such as `AuthLayer` passes paths other than
    /// the endpoint's through).
    ///
    /// # Examples
    ///
    /// ```
    /// # let server = smcp_server::Server::builder("demo", "1.0.0").build()?;
    /// let endpoint = server.endpoint("/mcp").readiness("/readyz").liveness("/livez");
    /// # let _ = endpoint;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn readiness(mut self, path: &str) -> Self {
        self.readiness = Some(path.into());
        self
    }

    /// Answers liveness at `path` (`/livez`, say): 200 with `{"status":"live"}` whenever the
    /// process answers at all. Host and Origin checks apply as for [`Endpoint::readiness`].
    #[must_use]
    pub fn liveness(mut self, path: &str) -> Self {
        self.liveness = Some(path.into());
        self
    }

    /// Whether `path` is one of the probe paths: `Some(true)` for readiness.
    fn probe(&self, path: &str) -> Option<bool> {
        if self.readiness.as_deref() == Some(path) {
            Some(true)
        } else if self.liveness.as_deref() == Some(path) {
            Some(false)
        } else {
            None
        }
    }
}

impl<B> tower::Service<Request<B>> for Endpoint
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<EndpointBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if request.uri().path() == &*self.path {
            return Box::pin(
                self.mcp
                    .handle(request)
                    .map(|response| Ok(response.map(Either::Left))),
            );
        }
        if let Some(ready) = self.probe(request.uri().path()) {
            let (parts, _body) = request.into_parts();
            let shared = self.mcp.shared().clone();
            return Box::pin(async move {
                Ok(super::observe::probe(shared, ready, &parts)
                    .await
                    .map(Either::Right))
            });
        }
        match &self.other {
            Some(router) => {
                let router = router.clone();
                let request = request.map(axum::body::Body::new);
                Box::pin(async move {
                    let response = match router.oneshot(request).await {
                        Ok(response) => response,
                        Err(never) => match never {},
                    };
                    Ok(response.map(Either::Right))
                })
            }
            None => Box::pin(async {
                let mut response = Response::new(Either::Left(McpBody::empty()));
                *response.status_mut() = StatusCode::NOT_FOUND;
                Ok(response)
            }),
        }
    }
}
