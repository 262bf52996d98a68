//! A request's future stays small. It holds a transport's request, and each layer above that
//! kept its own copy inline (an `async fn` argument beside its `await`, a local moved into
//! what is awaited) multiplied it: a tool call through the gateway was a 100 KB future, moved
//! on every call. The bound leaves room to grow, not to multiply again.

#![allow(clippy::unwrap_used)]

use serde_json::json;
use smcp_client::Client;

/// Bytes a request's future may take (unoptimized build, where futures are largest).
const BOUND: usize = 4096;

fn sizes(client: &Client) -> Vec<(&'static str, usize)> {
    let call = client.call_tool("echo", json!({"text": "x"}));
    let task_call = client.call_tool_task("echo", json!({"text": "x"}));
    let round = client
        .round("tools/call", json!({"name": "echo", "arguments": {}}))
        .unwrap()
        .send();
    let discover = client.discover();
    let list = client.list_tools();
    let read = client.read_resource("smcp://clock");
    vec![
        ("call_tool", std::mem::size_of_val(&call)),
        ("call_tool_task", std::mem::size_of_val(&task_call)),
        ("round", std::mem::size_of_val(&round)),
        ("discover", std::mem::size_of_val(&discover)),
        ("list_tools", std::mem::size_of_val(&list)),
        ("read_resource", std::mem::size_of_val(&read)),
    ]
}

#[tokio::test]
async fn request_futures_stay_small() {
    // Built, never sent: nothing listens there.
    let client = Client::builder("http://127.0.0.1:9/mcp").build().unwrap();
    let sizes = sizes(&client);
    for (name, size) in sizes {
        assert!(
            size <= BOUND,
            "{name}: a {size}-byte future (bound {BOUND})"
        );
    }
}
