//! Mounting the MCP endpoint into an existing axum app, behind tower layers: request
//! tracing, a bearer-token check that tells the server who is calling, and a response header.
//!
//! ```sh
//! cargo run -p smcp-examples --bin axum_mount -- --listen 127.0.0.1:3000
//! curl http://127.0.0.1:3000/health                                     # the app's own route
//! cargo run -p smcp -- --url http://127.0.0.1:3000/mcp --header 'Authorization: Bearer alice-token' call whoami
//! ```
//!
//! `Server::router(path)` is an axum `Router`; `Server::service()` is the bare tower
//! `Service` (mount it with `route_service`, or hand it to hyper yourself).

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse as _, Response};
use axum::routing::get;
use smcp_server::proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, Principal, Server, tool};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

// ANCHOR: auth
/// The authentication layer: a known bearer token becomes a [`Principal`] in the request's
/// extensions, which the MCP server reads (tools see it as `call.ctx.principal()`, and
/// multi round-trip state and files are bound to it). Anything else is refused with 401.
async fn bearer_auth(mut request: Request, next: Next) -> Response {
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    // A real app checks the token against its identity provider here.
    let user = match token {
        Some("alice-token") => "alice",
        Some("bob-token") => "bob",
        _ => return (StatusCode::UNAUTHORIZED, "a bearer token is required").into_response(),
    };
    request.extensions_mut().insert(Principal(user.to_owned()));
    next.run(request).await
}
// ANCHOR_END: auth

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    smcp_examples::init_logging();
    let server = Server::builder("axum-app", "1.0.0")
        .tool(
            tool("whoami")
                .description("Who the server thinks is calling")
                .handler(|call| async move {
                    let who = call
                        .ctx
                        .principal()
                        .map_or("nobody", |p| p.0.as_str())
                        .to_owned();
                    Ok::<_, HandlerError>(CallToolResult::text(who))
                }),
        )
        .build()?;

    // ANCHOR: mount
    // The MCP endpoint with its own layers: only /mcp needs a token.
    let mcp = server
        .router("/mcp")
        .layer(middleware::from_fn(bearer_auth));
    // The rest of the app, and layers for everything.
    let app = axum::Router::new()
        .route("/health", get(|| async { "ok" }))
        .merge(mcp)
        .layer(SetResponseHeaderLayer::if_not_present(
            header::HeaderName::from_static("x-served-by"),
            HeaderValue::from_static("smcp-examples"),
        ))
        .layer(TraceLayer::new_for_http());
    // Do not add a response timeout or compression over the MCP route: tool calls may stream
    // (SSE) and subscriptions/listen streams stay open.
    // ANCHOR_END: mount

    let listener = tokio::net::TcpListener::bind(smcp_examples::listen_addr()?).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(smcp_examples::shutdown_signal())
        .await?;
    Ok(())
}
