//! The client mirrors every argument value that has a header form, so the server never
//! refuses a schema-valid call with −32020 (issue #16 item 12): integers beyond 2^53, integral
//! floats and values the schema then refuses, against the real server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use serde_json::{Value, json};
use smcp_client::Client;
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, Server, tool};

async fn client() -> Client {
    let server = Server::builder("params", "1.0.0")
        .tool(
            tool("route")
                .description("mirrors its arguments into headers")
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "count": {"type": "integer", "x-mcp-header": "Count"},
                        "region": {"type": "string", "x-mcp-header": "Region"},
                        "on": {"type": "boolean", "x-mcp-header": "On"}
                    }
                }))
                .handler(|call| async move {
                    Ok::<_, HandlerError>(CallToolResult::text(
                        serde_json::to_string(&call.arguments).unwrap_or_default(),
                    ))
                }),
        )
        .build()
        .unwrap();
    let url = common::serve_mcp(server).await;
    let client = Client::builder(&url).build().unwrap();
    client.list_tools().await.unwrap();
    client
}

#[tokio::test]
async fn schema_valid_calls_never_fail_on_their_headers() {
    let client = client().await;
    for args in [
        json!({"count": 9_007_199_254_740_993_i64}),
        json!({"count": -9_007_199_254_740_993_i64}),
        json!({"count": u64::MAX}),
        json!({"count": i64::MIN}),
        json!({"count": 1e300}),
        json!({"count": 42.0}),
        json!({"count": 7, "region": "Hello, 世界", "on": false}),
    ] {
        let result = client
            .call_tool("route", args.clone())
            .await
            .unwrap_or_else(|e| panic!("{args}: {e}"));
        assert_ne!(result.is_error, Some(true), "{args}: {result:?}");
    }
}

#[tokio::test]
async fn schema_invalid_calls_get_the_schema_error_not_a_header_mismatch() {
    let client = client().await;
    for args in [
        json!({"count": 2.5}),
        json!({"count": null}),
        json!({"count": "7"}),
        json!({"region": 5}),
        json!({"region": ["a"]}),
        json!({"on": {"x": true}}),
    ] {
        let result: CallToolResult = client
            .call_tool("route", args.clone())
            .await
            .unwrap_or_else(|e| panic!("{args}: {e}"));
        assert_eq!(result.is_error, Some(true), "{args}: {result:?}");
        let text = serde_json::to_value(&result.content).unwrap();
        let text: Value = text[0]["text"].clone();
        assert!(
            text.as_str().unwrap().contains("Invalid arguments"),
            "{args}: {text}"
        );
    }
}
