//! `smcpd gateway` in front of servers from the npm registry, over stdio: the official
//! reference server `@modelcontextprotocol/server-everything`, and a server on the TypeScript
//! SDK 1.x (`tests/interop/ts_server.cjs`); both installed by `scripts/npm-servers`
//! (`SMCP_NPM_SERVERS=skip` skips this), driven by smcp-client at 2026-07-28.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult, ElicitValue};
use smcp_client::{BoxFuture, Client, InputHandler, InputHandlerError, InputKinds};
use smcp_test_support::root;

use crate::support::Smcpd;

/// Answers every form with `name: "Ada"`.
#[derive(Clone, Default)]
struct Ada(Arc<Mutex<Vec<String>>>);

impl InputHandler for Ada {
    fn kinds(&self) -> InputKinds {
        InputKinds {
            elicitation_form: true,
            ..InputKinds::default()
        }
    }

    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, InputHandlerError>> {
        Box::pin(async move {
            let ElicitRequestParams::Form(form) = params else {
                return Err(InputHandlerError::new("a form was expected"));
            };
            self.0.lock().unwrap().push(form.message);
            Ok(ElicitResult::accept(BTreeMap::from([(
                "name".to_owned(),
                ElicitValue::String("Ada".to_owned()),
            )])))
        })
    }
}

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
    let dir = std::env::temp_dir().join(format!("smcpd-gateway-npm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("gateway.toml");
    std::fs::write(
        &config,
        format!(
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
        ),
    )
    .unwrap();
    let gateway = Smcpd::start_gateway(&config, &[], "smcpd=info,smcp_gateway=info");
    let asked = Ada::default();
    let client = Client::builder(format!("http://{}/mcp", gateway.addr))
        .input_handler(asked.clone())
        .build()
        .unwrap();
    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    for expected in [
        "everything_echo",
        "everything_get-sum",
        "ts_shout",
        "ts_ask_name",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
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
    assert_eq!(*asked.0.lock().unwrap(), ["Your name?"]);

    let status = gateway.terminate();
    assert!(status.success(), "{status}");
    let _ = std::fs::remove_dir_all(&dir);
}
