//! Discovery, lists, pagination, caching hints, resources, prompts, completion and the
//! registration-time checks (REQUIREMENTS A3, A11–A13).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    clippy::type_complexity
)]

use crate::common;

use common::*;
use serde_json::{Value, json};
use smcp_proto::content::TextResourceContents;
use smcp_proto::server::prompts::{GetPromptResult, PromptMessage};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{
    BuildError, CacheConfig, CacheHint, CacheScope, Completion, HandlerError, Limits, Server,
    prompt, resource, resource_template, tool,
};

fn full_server() -> smcp_server::McpService {
    Server::builder("cat", "2.0.0")
        .instructions("be nice")
        .limits(Limits {
            page_size: 2,
            ..Limits::default()
        })
        .cache(CacheConfig {
            tools_list: CacheHint::new(std::time::Duration::from_secs(5), CacheScope::Public),
            ..CacheConfig::default()
        })
        .tool(tool("a").handler(|_| async { Ok::<_, HandlerError>(CallToolResult::text("a")) }))
        .tool(tool("b").handler(|_| async { Ok::<_, HandlerError>(CallToolResult::text("b")) }))
        .tool(tool("c").handler(|_| async { Ok::<_, HandlerError>(CallToolResult::text("c")) }))
        .resource(
            resource("mem://one", "one")
                .mime_type("text/plain")
                .cache(CacheHint::new(
                    std::time::Duration::from_secs(60),
                    CacheScope::Public,
                ))
                .handler(|read| async move {
                    Ok(vec![TextResourceContents::new(read.uri, "1").into()])
                }),
        )
        .resource(resource("mem://empty", "empty").handler(|_read| async move { Ok(Vec::new()) }))
        .resource(
            resource_template("mem://item/{id}", "item").handler(|read| async move {
                let id = read.variables["id"].clone();
                Ok(vec![TextResourceContents::new(read.uri, id).into()])
            }),
        )
        .prompt(
            prompt("p")
                .description("d")
                .argument("who", "who", true)
                .handler(|get| async move {
                    Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                        get.arg("who").unwrap_or_default(),
                    )]))
                }),
        )
        .completion(|req: smcp_server::CompletionRequest| async move {
            Ok(Completion::values(
                (0..150).map(|i| format!("{}{i}", req.value)).collect(),
            ))
        })
        .build()
        .unwrap()
        .service()
}

fn result(reply: &Reply) -> Value {
    let v = reply.json();
    assert_eq!(reply.status, 200, "{v}");
    let r = v["result"].clone();
    assert_eq!(r["resultType"], "complete", "{v}");
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "cat"
    );
    r
}

#[tokio::test]
async fn discover_describes_the_server() {
    let svc = full_server();
    let r = result(&call(&svc, &body(json!("d"), "server/discover", json!({}))).await);
    assert_eq!(r["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(
        r["capabilities"],
        json!({"tools": {}, "resources": {}, "prompts": {}, "completions": {}})
    );
    assert_eq!(r["instructions"], "be nice");
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
        "2.0.0"
    );
    assert!(
        r.get("serverInfo").is_none(),
        "no top-level serverInfo in 2026-07-28"
    );
    assert!(r["ttlMs"].is_u64());
    assert!(r["cacheScope"] == "public" || r["cacheScope"] == "private");
}

#[tokio::test]
async fn tools_page_in_registration_order_with_cache_hints() {
    let svc = full_server();
    let r1 = result(&call(&svc, &body(json!(1), "tools/list", json!({}))).await);
    let names: Vec<_> = r1["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, vec![json!("a"), json!("b")]);
    assert_eq!(r1["ttlMs"], 5000);
    assert_eq!(r1["cacheScope"], "public");
    assert_eq!(r1["tools"][0]["inputSchema"], json!({"type": "object"}));
    let cursor = r1["nextCursor"].as_str().unwrap().to_owned();
    let r2 = result(
        &call(
            &svc,
            &body(json!(2), "tools/list", json!({"cursor": cursor})),
        )
        .await,
    );
    assert_eq!(r2["tools"][0]["name"], "c");
    assert!(r2.get("nextCursor").is_none());
    assert_eq!(r2["cacheScope"], "public", "same scope on every page");
    // Deterministic: the same call gives the same answer.
    let again = result(&call(&svc, &body(json!(3), "tools/list", json!({}))).await);
    assert_eq!(again["tools"], r1["tools"]);
}

#[tokio::test]
async fn resources_templates_and_reads() {
    let svc = full_server();
    let list = result(&call(&svc, &body(json!(1), "resources/list", json!({}))).await);
    assert_eq!(list["resources"][0]["uri"], "mem://one");
    let templates =
        result(&call(&svc, &body(json!(2), "resources/templates/list", json!({}))).await);
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "mem://item/{id}"
    );

    let read = result(
        &call(
            &svc,
            &body(json!(3), "resources/read", json!({"uri": "mem://one"})),
        )
        .await,
    );
    assert_eq!(read["contents"][0]["text"], "1");
    assert_eq!(read["ttlMs"], 60000);
    assert_eq!(read["cacheScope"], "public");

    let item = result(
        &call(
            &svc,
            &body(json!(4), "resources/read", json!({"uri": "mem://item/42"})),
        )
        .await,
    );
    assert_eq!(item["contents"][0]["text"], "42");
    assert_eq!(item["ttlMs"], 0);

    for uri in ["mem://nope", "mem://empty"] {
        let reply = call(&svc, &body(json!(5), "resources/read", json!({"uri": uri}))).await;
        reply.assert_error(200, -32602, Some(json!(5)));
        assert_eq!(
            reply.json()["error"]["data"]["uri"],
            uri,
            "never empty contents"
        );
    }
}

#[tokio::test]
async fn prompts_check_required_arguments() {
    let svc = full_server();
    let ok = result(
        &call(
            &svc,
            &body(
                json!(1),
                "prompts/get",
                json!({"name": "p", "arguments": {"who": "Ada"}}),
            ),
        )
        .await,
    );
    assert_eq!(ok["messages"][0]["content"]["text"], "Ada");
    for params in [
        json!({"name": "p"}),
        json!({"name": "p", "arguments": {"who": 1}}),
        json!({"name": "nope"}),
    ] {
        call(&svc, &body(json!(2), "prompts/get", params))
            .await
            .assert_error(200, -32602, Some(json!(2)));
    }
}

#[tokio::test]
async fn completion_is_capped_at_100() {
    let svc = full_server();
    let r = result(
        &call(
            &svc,
            &body(
                json!(1),
                "completion/complete",
                json!({
                    "ref": {"type": "ref/prompt", "name": "p"},
                    "argument": {"name": "who", "value": "x"}
                }),
            ),
        )
        .await,
    );
    assert_eq!(r["completion"]["values"].as_array().unwrap().len(), 100);
    assert_eq!(r["completion"]["hasMore"], true);
    assert_eq!(r["completion"]["total"], 150);
    call(
        &svc,
        &body(
            json!(2),
            "completion/complete",
            json!({"ref": {"type": "ref/x"}, "argument": {"name": "a", "value": ""}}),
        ),
    )
    .await
    .assert_error(200, -32602, Some(json!(2)));
}

fn build_with(schema: Value) -> Result<Server, BuildError> {
    Server::builder("x", "1")
        .tool(
            tool("t")
                .input_schema(schema)
                .handler(|_| async { Ok::<_, HandlerError>(CallToolResult::text("")) }),
        )
        .build()
}

#[test]
fn registration_rejects_bad_tools() {
    let header = |prop: Value| json!({"type": "object", "properties": {"p": prop}});
    for schema in [
        header(json!({"type": "number", "x-mcp-header": "P"})),
        header(json!({"type": "string", "x-mcp-header": ""})),
        header(json!({"type": "string", "x-mcp-header": "Bad Name"})),
        header(json!({"type": "object", "x-mcp-header": "P"})),
        json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "Same"},
            "b": {"type": "string", "x-mcp-header": "same"}}}),
    ] {
        assert!(
            matches!(
                build_with(schema.clone()),
                Err(BuildError::InvalidHeaderAnnotation { .. })
            ),
            "{schema}"
        );
    }
    assert!(matches!(
        build_with(json!({"type": "array"})),
        Err(BuildError::InvalidInputSchema { .. })
    ));
    assert!(matches!(
        build_with(
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}})
        ),
        Err(BuildError::InvalidInputSchema { .. })
    ));
    let dup = Server::builder("x", "1")
        .tool(tool("t").handler(|_| async { Ok::<_, HandlerError>(CallToolResult::text("")) }))
        .tool(tool("t").handler(|_| async { Ok::<_, HandlerError>(CallToolResult::text("")) }))
        .build();
    assert!(matches!(dup, Err(BuildError::Duplicate { .. })));
    let bad_name = Server::builder("x", "1")
        .tool(
            tool("has space")
                .handler(|_| async { Ok::<_, HandlerError>(CallToolResult::text("")) }),
        )
        .build();
    assert!(matches!(bad_name, Err(BuildError::InvalidToolName(_))));
}

#[tokio::test]
async fn schemas_are_listed_verbatim() {
    let schema = smcp_conformance_schema();
    let svc = Server::builder("x", "1")
        .tool(
            tool("t")
                .input_schema(schema.clone())
                .handler(|_| async { Ok::<_, HandlerError>(CallToolResult::text("")) }),
        )
        .build()
        .unwrap()
        .service();
    let r = result_any(&call(&svc, &body(json!(1), "tools/list", json!({}))).await);
    assert_eq!(r["tools"][0]["inputSchema"], schema);
    // Key order as authored (clients render forms in this order).
    let keys: Vec<_> = r["tools"][0]["inputSchema"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, vec!["zeta", "alpha"]);
}

fn smcp_conformance_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"n": {"$anchor": "num", "type": "integer"}},
        "properties": {"zeta": {"$ref": "#num"}, "alpha": {"type": "string"}},
        "allOf": [{"anyOf": [{"required": ["zeta"]}, {"required": ["alpha"]}]}],
        "additionalProperties": false
    })
}

fn result_any(reply: &Reply) -> Value {
    reply.json()["result"].clone()
}
