//! A server a browser app on another origin may call: CORS for the browser, and the
//! Host/Origin allow-lists that stop DNS-rebinding attacks.
//!
//! ```sh
//! cargo run -p smcp-examples --bin cors -- --listen 127.0.0.1:3000
//! # A preflight from the allowed web app: 200 with Access-Control-Allow-Origin.
//! curl -si -X OPTIONS http://127.0.0.1:3000/mcp -H 'Origin: https://app.example.com' \
//!   -H 'Access-Control-Request-Method: POST' -H 'Access-Control-Request-Headers: content-type,mcp-method'
//! # Any other origin is refused by the server itself: 403.
//! curl -si http://127.0.0.1:3000/mcp -H 'Origin: https://evil.example' -d '{}'
//! ```
//!
//! The two are different things. CORS tells a *browser* which foreign pages may read the
//! responses; it protects nothing on its own, since a request can be sent without it. The
//! `SecurityPolicy` is checked by the server on every request: a `Host` not on its list, or an
//! `Origin` header not on its list, gets 403 before anything else happens. By default both
//! lists hold loopback names only, so a page on the web cannot reach a server on your machine
//! through a rebound DNS name.

use std::time::Duration;

use axum::http::{HeaderValue, Method};
use smcp_server::proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, SecurityPolicy, ServeOptions, Server, tool};
use tower_http::cors::{AllowHeaders, CorsLayer};

/// The web app allowed to call this server from a browser.
const APP_ORIGIN: &str = "https://app.example.com";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    smcp_examples::init_logging();
    // ANCHOR: policy
    let server = Server::builder("cors", "1.0.0")
        // Loopback names, plus the public name a reverse proxy forwards as Host, plus the
        // one web app's origin. Everything else: 403.
        .security(
            SecurityPolicy::loopback()
                .allow_host("mcp.example.com")
                .allow_origin(APP_ORIGIN),
        )
        .tool(
            tool("ping")
                .handler(|_call| async { Ok::<_, HandlerError>(CallToolResult::text("pong")) }),
        )
        .build()?;

    // The same origin for CORS. Header names are mirrored from the preflight because
    // `Mcp-Param-*` names depend on the tool.
    let cors = CorsLayer::new()
        .allow_origin(HeaderValue::from_static(APP_ORIGIN))
        .allow_methods([Method::POST])
        .allow_headers(AllowHeaders::mirror_request())
        .max_age(Duration::from_secs(600));
    let app = server.router("/mcp").layer(cors);
    // ANCHOR_END: policy

    let listener = tokio::net::TcpListener::bind(smcp_examples::listen_addr()?).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    smcp_server::serve(
        listener,
        app,
        ServeOptions::default(),
        smcp_examples::shutdown_signal(),
    )
    .await?;
    Ok(())
}
