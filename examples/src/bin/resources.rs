//! Resources, resource templates, and change notifications on `subscriptions/listen`.
//!
//! ```sh
//! cargo run -p smcp-examples --bin resources -- --listen 127.0.0.1:3000
//! cargo run -p smcp -- resources                       # notes://readme, clock://now
//! cargo run -p smcp -- read weather://paris            # a template: weather://{city}
//! cargo run -p smcp -- listen --resource clock://now   # notifications/resources/updated every second
//! cargo run -p smcp -- call pin_city --arg city=oslo   # adds a resource: resources/list_changed
//! ```

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;
use smcp_server::proto::content::TextResourceContents;
use smcp_server::proto::server::tools::CallToolResult;
use smcp_server::{
    HandlerError, ResourceBuilder, ServeOptions, Server, resource, resource_template, tool,
};

const CLOCK_URI: &str = "clock://now";

/// A text resource's contents with its media type.
fn text(uri: String, body: String) -> smcp_server::proto::content::ResourceContents {
    let mut contents = TextResourceContents::new(uri, body);
    contents.mime_type = Some("text/plain".to_owned());
    contents.into()
}

// ANCHOR: template
/// `weather://{city}`: one template stands for any number of resources. The handler gets the
/// matched variables; completion can suggest values for them (see the prompts example).
fn weather() -> ResourceBuilder {
    resource_template("weather://{city}", "weather")
        .description("Today's (made-up) weather in a city")
        .mime_type("text/plain")
        .handler(|read| async move {
            let city = read.variables.get("city").cloned().unwrap_or_default();
            let degrees = city.len() * 3 % 30;
            Ok(vec![text(read.uri, format!("{city}: {degrees} °C, clear"))])
        })
}
// ANCHOR_END: template

/// A pinned city: a concrete resource added at runtime.
fn pinned(city: &str) -> ResourceBuilder {
    let body = format!("{city} is pinned");
    resource(format!("pinned://{city}"), format!("pinned {city}"))
        .mime_type("text/plain")
        .handler(move |read| {
            let body = body.clone();
            async move { Ok(vec![text(read.uri, body)]) }
        })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    smcp_examples::init_logging();
    // ANCHOR: server
    let server = Server::builder("resources", "1.0.0")
        // Listeners may ask for notifications/resources/updated on URIs they name …
        .resources_subscribe(true)
        // … and for notifications/resources/list_changed.
        .resources_list_changed(true)
        .resource(
            resource("notes://readme", "readme")
                .title("Read me")
                .mime_type("text/plain")
                .handler(|read| async move {
                    Ok(vec![text(read.uri, "Hello from a resource.".to_owned())])
                }),
        )
        .resource(
            resource(CLOCK_URI, "clock")
                .description("Seconds since the Unix epoch; changes every second")
                .mime_type("text/plain")
                .handler(|read| async move {
                    let now = SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .map(|d| d.as_secs())
                        .unwrap_or(0);
                    Ok(vec![text(read.uri, now.to_string())])
                }),
        )
        .resource(weather())
        .tool(
            tool("pin_city")
                .description("Adds the resource pinned://CITY")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"city": {"type": "string", "pattern": "^[a-z]{1,40}$"}},
                    "required": ["city"]
                }))
                .handler(|call| async move {
                    let city = call.str_arg("city").unwrap_or_default().to_owned();
                    let server = call
                        .ctx
                        .server()
                        .ok_or_else(|| HandlerError::failed("no server"))?;
                    // Changing the catalog at runtime notifies every listener that asked for
                    // resourcesListChanged.
                    server
                        .add_resource(pinned(&city))
                        .map_err(|e| HandlerError::failed(e.to_string()))?;
                    Ok(CallToolResult::text(format!("pinned://{city} added")))
                }),
        )
        .build()?;

    // Something that changes: mark the clock updated every second. Every listen stream that
    // named clock://now in resourceSubscriptions gets notifications/resources/updated.
    let ticking = server.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            tick.tick().await;
            ticking.notify_resource_updated(CLOCK_URI);
        }
    });
    // ANCHOR_END: server

    let listener = tokio::net::TcpListener::bind(smcp_examples::listen_addr()?).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    smcp_server::serve(
        listener,
        server.endpoint("/mcp"),
        ServeOptions::default(),
        smcp_examples::shutdown_signal(),
    )
    .await?;
    // Close open listen streams with their final result.
    server.shutdown();
    Ok(())
}
