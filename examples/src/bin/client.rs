//! A client with an input handler made of a closure (`FnInputHandler`: it answers a server's
//! questions on the terminal), a `subscriptions/listen` stream (it hears when a resource
//! changes), and a list fetched a page at a time.
//!
//! ```sh
//! cargo run -p smcp-examples --bin elicitation -- --listen 127.0.0.1:3000   # the server
//! cargo run -p smcp-examples --bin client -- --url http://127.0.0.1:3000/mcp
//! ```
//!
//! It subscribes to `notes://title`, calls the `retitle` tool, fills in the form the tool asks
//! for from what you type, then waits for the change notification, reads the new title, and
//! lists the server's tools page by page.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use smcp_client::prelude::*;
use smcp_client::proto::client::elicitation::{ElicitValue, PrimitiveSchemaDefinition};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::sync::Mutex;

const TITLE_URI: &str = "notes://title";

// ANCHOR: handler
/// Answers elicitation forms from the terminal, one line per field. A `FnInputHandler`
/// declares what it can answer in every request's client capabilities: this one answers
/// forms only, so a server never asks it for sampling or roots.
fn terminal() -> FnInputHandler {
    let lines = Arc::new(Mutex::new(BufReader::new(tokio::io::stdin()).lines()));
    FnInputHandler::new().on_elicit(move |params| {
        let lines = lines.clone();
        async move {
            let ElicitRequestParams::Form(form) = params else {
                return Ok(ElicitResult::decline());
            };
            println!("The server asks: {}", form.message);
            let required = form.requested_schema.required.unwrap_or_default();
            let mut content = std::collections::BTreeMap::new();
            let mut lines = lines.lock().await;
            for (name, field) in form.requested_schema.properties {
                print!("  {name}: ");
                let _ = std::io::stdout().flush();
                // End of input: the user dismissed the form.
                let Ok(Some(line)) = lines.next_line().await else {
                    return Ok(ElicitResult::cancel());
                };
                let line = line.trim();
                if line.is_empty() {
                    if required.contains(&name) {
                        return Ok(ElicitResult::decline());
                    }
                    continue;
                }
                let value = match field {
                    PrimitiveSchemaDefinition::Boolean(_) => {
                        ElicitValue::Bool(matches!(line, "y" | "yes" | "true"))
                    }
                    PrimitiveSchemaDefinition::Number(_) => match line.parse() {
                        Ok(n) => ElicitValue::Number(n),
                        Err(_) => {
                            return Err(InputHandlerError::new(format!("{name}: not a number")));
                        }
                    },
                    _ => ElicitValue::String(line.to_owned()),
                };
                content.insert(name, value);
            }
            Ok(ElicitResult::accept(content))
        }
    })
}
// ANCHOR_END: handler

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // ANCHOR: client
    let client = Client::builder(smcp_examples::server_url())
        .input_handler(terminal())
        .build()?;

    // Open the listen stream first; the server acknowledges what it will actually send.
    let mut changes = client.listen(SubscriptionFilter {
        resource_subscriptions: Some(vec![TITLE_URI.to_owned()]),
        ..SubscriptionFilter::default()
    });
    match changes.next().await {
        Some(Ok(SubscriptionEvent::Acknowledged(filter))) => {
            println!(
                "subscribed to {:?}",
                filter.resource_subscriptions.unwrap_or_default()
            );
        }
        other => anyhow::bail!("no acknowledgement from the server: {other:?}"),
    }

    // The call may take several rounds: each InputRequiredResult goes to the handler above,
    // and the call is retried with its answers, all inside `call_tool`.
    let result = client.call_tool("retitle", serde_json::json!({})).await?;
    // The text blocks of the result, joined.
    println!("retitle: {}", result.text_content());
    // ANCHOR_END: client

    // ANCHOR: listen
    // Wait (a little) for the change notification, then read the resource again.
    let updated = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(event) = changes.next().await {
            if let SubscriptionEvent::ResourceUpdated { uri } = event? {
                return Ok::<_, smcp_client::Error>(Some(uri));
            }
        }
        Ok(None)
    })
    .await;
    match updated {
        Ok(Ok(Some(uri))) => {
            // `text()`: the text contents, joined.
            let read = client.read_resource(&uri).await?;
            println!("{uri} changed: {}", read.text());
        }
        Ok(Ok(None)) => println!("the server closed the listen stream"),
        Ok(Err(e)) => return Err(e.into()),
        Err(_) => println!("no change within 5 s"),
    }
    // ANCHOR_END: listen

    // ANCHOR: pages
    // `list_tools` follows every page; `list_tools_page` fetches one at a time, for a server
    // with a large catalog or a UI that shows one page.
    let mut cursor: Option<String> = None;
    loop {
        let page = client.list_tools_page(cursor.as_deref()).await?;
        for tool in &page.items {
            println!("tool: {}", tool.name);
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    // ANCHOR_END: pages
    Ok(())
}
