//! What an operator probes: request measurements, readiness and liveness.
//!
//! With metrics on ([`ServerBuilder::metrics`](crate::ServerBuilder::metrics)), each request
//! runs with a small per-request probe that the layers below fill in (the method label, the
//! JSON-RPC error code) and that is reported when the response head is ready. With metrics
//! off, no probe exists and the notes below are never called.
//!
//! Readiness and liveness answer `GET` (and `HEAD`) with JSON: on the main listener through
//! [`Endpoint::readiness`](super::Endpoint::readiness) (after the Host/Origin checks of the
//! MCP endpoint, without authentication), on a separate operations listener through
//! [`OpsRouter`].

use std::cell::Cell;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use http::{Response, StatusCode, header};

use super::probe::{PROBE, Probe};
use crate::core::health::Readiness;
use crate::core::metrics::RequestRecord;
use crate::core::server::{Server, Shared};
use crate::core::trace::TraceContext;

/// Runs `fut` (one request) with a probe and reports it when its response is ready.
pub(crate) async fn metered<B>(
    shared: Arc<Shared>,
    start: Instant,
    fut: impl Future<Output = Response<B>>,
) -> Response<B> {
    let probe = Probe {
        method: Cell::new("none"),
        code: Cell::new(None),
    };
    let (response, method, code) = PROBE
        .scope(probe, async {
            let response = fut.await;
            let (method, code) = PROBE.with(|p| (p.method.get(), p.code.get()));
            (response, method, code)
        })
        .await;
    shared.metrics.request(RequestRecord {
        method,
        status: response.status().as_u16(),
        code,
        elapsed: start.elapsed(),
    });
    response
}

/// A probe on the main listener: the MCP endpoint's Host/Origin checks, `GET`/`HEAD` only,
/// then readiness (`ready`) or liveness.
pub(crate) async fn probe(
    shared: Arc<Shared>,
    ready: bool,
    parts: &http::request::Parts,
) -> Response<axum::body::Body> {
    if let Err(refusal) = super::request::check_host_origin(&shared, parts) {
        return (*refusal).map(axum::body::Body::new);
    }
    if parts.method != http::Method::GET && parts.method != http::Method::HEAD {
        return probe_method_not_allowed();
    }
    if ready {
        readiness_response(Server { shared }).await
    } else {
        liveness_response()
    }
}

/// The request's trace context (see [`crate::core::trace`]), recorded on its span as
/// `trace_id` and `parent_span_id`. Only called when the span is enabled.
pub(crate) fn trace_context(
    span: &tracing::Span,
    parts: &http::request::Parts,
    request: &smcp_proto::jsonrpc::IncomingRequest<'_>,
) -> Option<TraceContext> {
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let (ctx, _source) = TraceContext::of_request(
        request.meta.as_deref(),
        header("traceparent"),
        header("tracestate"),
    )?;
    span.record("trace_id", ctx.trace_id_hex());
    span.record("parent_span_id", ctx.parent_id_hex());
    Some(ctx)
}

/// The readiness answer: 200 when ready, 503 otherwise, with the verdict as JSON.
pub(crate) async fn readiness_response(server: Server) -> Response<axum::body::Body> {
    let verdict = server.readiness().await;
    let status = match verdict {
        Readiness::Ready => StatusCode::OK,
        Readiness::Draining | Readiness::Failing(_) => StatusCode::SERVICE_UNAVAILABLE,
    };
    if let Readiness::Failing(failing) = &verdict {
        for (check, why) in failing {
            tracing::warn!(check = %check, reason = %why, "health check failing");
        }
    }
    json(status, &verdict.to_json())
}

/// The liveness answer: 200 while the process serves requests at all.
pub(crate) fn liveness_response() -> Response<axum::body::Body> {
    json(StatusCode::OK, &serde_json::json!({"status": "live"}))
}

/// 405 for anything but `GET` and `HEAD` on a probe path.
fn probe_method_not_allowed() -> Response<axum::body::Body> {
    let mut response = json(
        StatusCode::METHOD_NOT_ALLOWED,
        &serde_json::json!({"error": "probe paths answer GET only"}),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, http::HeaderValue::from_static("GET, HEAD"));
    response
}

fn json(status: StatusCode, value: &serde_json::Value) -> Response<axum::body::Body> {
    let mut response = Response::new(axum::body::Body::from(value.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    response
}

/// The operations listener's router: readiness, liveness and (feature `metrics`) the
/// Prometheus scrape path, with no Host/Origin allow-list and no authentication. Serve it on
/// a listener of its own that only the operator's network reaches (`smcpd
/// --metrics-listen`).
///
/// # Examples
///
/// ```
/// use smcp_server::http::OpsRouter;
///
/// let server = smcp_server::Server::builder("demo", "1.0.0").build()?;
/// let ops: axum::Router = OpsRouter::new(&server).readiness("/readyz").liveness("/livez").build();
/// # let _ = ops;
/// # Ok::<(), smcp_server::BuildError>(())
/// ```
#[derive(Debug, Clone)]
pub struct OpsRouter {
    server: Server,
    readiness: Option<String>,
    liveness: Option<String>,
    #[cfg(feature = "metrics")]
    metrics: Option<(String, crate::metrics::Prometheus)>,
}

impl OpsRouter {
    /// An empty router for `server`'s probes.
    pub fn new(server: &Server) -> Self {
        Self {
            server: server.clone(),
            readiness: None,
            liveness: None,
            #[cfg(feature = "metrics")]
            metrics: None,
        }
    }

    /// Answers readiness at `path` (see [`Server::readiness`]).
    #[must_use]
    pub fn readiness(mut self, path: impl Into<String>) -> Self {
        self.readiness = Some(path.into());
        self
    }

    /// Answers liveness at `path`.
    #[must_use]
    pub fn liveness(mut self, path: impl Into<String>) -> Self {
        self.liveness = Some(path.into());
        self
    }

    /// Serves `prometheus`'s metrics at `path`, in the Prometheus text format.
    #[cfg(feature = "metrics")]
    #[must_use]
    pub fn metrics(
        mut self,
        path: impl Into<String>,
        prometheus: crate::metrics::Prometheus,
    ) -> Self {
        self.metrics = Some((path.into(), prometheus));
        self
    }

    /// The router.
    pub fn build(self) -> axum::Router {
        let mut router = axum::Router::new();
        if let Some(path) = &self.readiness {
            let server = self.server.clone();
            router = router.route(
                path,
                axum::routing::get(move || readiness_response(server.clone())),
            );
        }
        if let Some(path) = &self.liveness {
            router = router.route(path, axum::routing::get(|| async { liveness_response() }));
        }
        #[cfg(feature = "metrics")]
        if let Some((path, prometheus)) = self.metrics {
            let server = self.server.clone();
            router = router.route(
                &path,
                axum::routing::get(move || {
                    let text = prometheus.render(&server);
                    async move {
                        let mut response = Response::new(axum::body::Body::from(text));
                        response.headers_mut().insert(
                            header::CONTENT_TYPE,
                            http::HeaderValue::from_static(crate::metrics::CONTENT_TYPE),
                        );
                        response
                    }
                }),
            );
        }
        router
    }
}
