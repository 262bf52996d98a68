//! OpenTelemetry traces over OTLP/HTTP (protobuf), feature `otel`: the exporter, its HTTP
//! client, and the `tracing` layer that feeds it.
//!
//! On when `smcpd --otlp-endpoint URL` is given (spans go to `URL/v1/traces`), or when the
//! standard `OTEL_EXPORTER_OTLP_ENDPOINT` (`…/v1/traces` appended) or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) is set; the other standard variables
//! (`OTEL_EXPORTER_OTLP_HEADERS`, `…_TIMEOUT`, `OTEL_BSP_*`, `OTEL_SERVICE_NAME`) apply too.
//! Only smcp's request and handler spans are exported (`mcp.request`, `mcp.handler`), their
//! parent being the request's incoming trace context (`params._meta` or the `traceparent`
//! header).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::trace::SdkTracerProvider;

/// Largest collector response body read, in bytes.
const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// How long one export may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether the exporter is configured: by `flag`, or by the standard environment variables.
pub fn configured(flag: Option<&str>) -> bool {
    flag.is_some_and(|f| !f.is_empty())
        || [
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        ]
        .iter()
        .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()))
}

/// The tracer provider exporting to the collector (call [`SdkTracerProvider::shutdown`] at
/// exit to flush). Needs a tokio runtime: exports run on it.
pub fn provider(flag: Option<&str>) -> anyhow::Result<SdkTracerProvider> {
    let client = Client {
        http: reqwest::Client::builder().timeout(EXPORT_TIMEOUT).build()?,
        runtime: tokio::runtime::Handle::try_current()?,
    };
    let mut builder = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_timeout(EXPORT_TIMEOUT);
    if let Some(base) = flag.filter(|f| !f.is_empty()) {
        builder = builder.with_endpoint(format!("{}/v1/traces", base.trim_end_matches('/')));
    }
    let exporter = builder.build()?;
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name(
            std::env::var("OTEL_SERVICE_NAME")
                .ok()
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "smcpd".to_owned()),
        )
        .build();
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build())
}

/// The `tracing` layer recording smcp's spans into `provider`.
pub fn layer<S>(provider: &SdkTracerProvider) -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use tracing_subscriber::Layer as _;
    tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("smcpd"))
        .with_filter(tracing_subscriber::filter::filter_fn(|meta| {
            meta.is_span()
                && *meta.level() <= tracing::Level::DEBUG
                && meta.target().starts_with("smcp")
        }))
}

/// The exporter's HTTP client: the workspace's reqwest, run on the server's tokio runtime
/// (the batch processor exports from a thread of its own, with no runtime of its own).
#[derive(Debug)]
struct Client {
    http: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

type HttpResult = Result<http::Response<Bytes>, opentelemetry_http::HttpError>;

impl opentelemetry_http::HttpClient for Client {
    fn send_bytes<'a, 'r>(
        &'a self,
        request: http::Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = HttpResult> + Send + 'r>>
    where
        'a: 'r,
        Self: 'r,
    {
        let http = self.http.clone();
        let task = self.runtime.spawn(async move {
            let request = reqwest::Request::try_from(request)?;
            let mut response = http.execute(request).await?;
            let mut out = http::Response::builder().status(response.status().as_u16());
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                    return Err("collector response too large".into());
                }
                body.extend_from_slice(&chunk);
            }
            if let Some(headers) = out.headers_mut() {
                *headers = response.headers().clone();
            }
            Ok::<_, opentelemetry_http::HttpError>(out.body(Bytes::from(body))?)
        });
        Box::pin(async move { task.await? })
    }
}
