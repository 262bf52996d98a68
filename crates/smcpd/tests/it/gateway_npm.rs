//! `smcpd gateway` in front of servers from the npm registry, over stdio: the official
//! reference server `@modelcontextprotocol/server-everything`, and a server on the TypeScript
//! SDK 1.x (`tests/interop/ts_server.cjs`); both installed by `scripts/npm-servers`
//! (`SMCP_NPM_SERVERS=skip` skips this), driven by smcp-client at 2026-07-28.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use serde_json::json;
use smcp_client::Client;
use smcp_client::proto::client::elicitation::ElicitValue;
use smcp_test_support::root;

use crate::gateway_support::{FormAnswer, config, serves};
use crate::support::Smcpd;

#[tokio::test]
async fn the_reference_server_and_a_typescript_sdk_server_behind_the_gateway() {
    if !smcp_test_support::require_service("npm MCP servers", "SMCP_NPM_SERVERS") {
        return;
    }
    let script = root().join("scripts/npm-servers");
    smcp_test_support::provide(
        "npm MCP servers",
        "SMCP_NPM_SERVERS",
        std::process::Command::new(&script).arg("install"),
    );
    let (_dir, config) = config(&format!(
        r#"
[[upstream]]
name = "everything"
command = ["{script}", "everything", "stdio"]
tools.deny = ["get-env"]

[[upstream]]
name = "ts"
command = ["{script}", "ts-server"]
"#,
        script = script.display()
    ));
    let gateway = Smcpd::start_gateway(&config, &[], "smcpd=info,smcp_gateway=info");
    let asked = FormAnswer::new("name", ElicitValue::String("Ada".to_owned()));
    let client = Client::builder(format!("http://{}/mcp", gateway.addr))
        .input_handler(asked.clone())
        .build()
        .unwrap();
    let names = serves(
        &client,
        &[
            "everything_echo",
            "everything_get-sum",
            "ts_shout",
            "ts_ask_name",
        ],
    )
    .await;
    assert!(
        !names.iter().any(|n| n == "everything_get-env"),
        "denied: {names:?}"
    );

    let echoed = client
        .call_tool("everything_echo", json!({"message": "through the gateway"}))
        .await
        .unwrap();
    assert!(
        echoed.text_content().contains("through the gateway"),
        "{echoed:?}"
    );
    let sum = client
        .call_tool("everything_get-sum", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert!(sum.text_content().contains('5'), "{sum:?}");
    // Its structured content is checked against its output schema on the way through.
    let weather = client
        .call_tool(
            "everything_get-structured-content",
            json!({"location": "Chicago"}),
        )
        .await
        .unwrap();
    assert!(weather.structured_content.is_some(), "{weather:?}");

    let seen = Arc::new(Mutex::new(0u32));
    let count = Arc::clone(&seen);
    let shouted = client
        .tool_call("ts_shout")
        .arguments(json!({"text": "hi"}))
        .on_progress(move |_| *count.lock().unwrap() += 1)
        .send()
        .await
        .unwrap();
    assert_eq!(shouted.text_content(), "HI");
    assert_eq!(*seen.lock().unwrap(), 2, "two progress notifications");

    // The TypeScript server asks with elicitation/create in the middle of the call.
    let greeted = client.call_tool("ts_ask_name", json!({})).await.unwrap();
    assert_eq!(greeted.text_content(), "hello Ada");
    assert_eq!(asked.messages(), ["Your name?"]);

    let status = gateway.terminate();
    assert!(status.success(), "{status}");
}
