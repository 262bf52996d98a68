//! Typed tools, prompts and elicitation (feature `schemars`), and the server-side check of
//! `structuredContent` against `outputSchema` (REQUIREMENTS A13.81, `server/tools.mdx`
//! §Output Schema).

#![cfg(feature = "schemars")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    missing_docs,
    dead_code
)]

use crate::common;

use common::*;
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use smcp_proto::server::prompts::{GetPromptResult, PromptMessage};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::typed::{self, Json};
use smcp_server::{BuildError, HandlerError, McpService, Server, mrtr, prompt, tool};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
enum Units {
    Metric,
    Imperial,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Place {
    /// City name.
    city_name: String,
    /// Mirrored into `Mcp-Param-Country` when present.
    #[schemars(extend("x-mcp-header" = "Country"))]
    country: Option<String>,
}

/// Arguments of `weather`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct WeatherArgs {
    place: Place,
    /// Days ahead.
    #[serde(default)]
    days_ahead: u8,
    units: Option<Units>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Forecast {
    city_name: String,
    days_ahead: u8,
    metric: bool,
}

fn weather() -> smcp_server::ToolBuilder {
    tool("weather")
        .description("The forecast")
        .typed(|_call, args: WeatherArgs| async move {
            Ok(Json(Forecast {
                city_name: args.place.city_name,
                days_ahead: args.days_ahead,
                metric: !matches!(args.units, Some(Units::Imperial)),
            }))
        })
}

fn server() -> McpService {
    Server::builder("typed", "1")
        .tool(weather())
        .tool(
            // A permissive schema set by hand wins over the derived one, so arguments that
            // pass the schema can still fail to deserialize.
            tool("permissive")
                .input_schema(json!({"type": "object"}))
                .typed(|_call, args: WeatherArgs| async move {
                    Ok(CallToolResult::text(args.place.city_name))
                }),
        )
        .tool(
            tool("liar")
                .output_schema(json!({
                    "type": "object",
                    "properties": {"n": {"type": "integer"}, "inner": {"type": "object", "properties": {"s": {"type": "string"}}}},
                    "required": ["n"]
                }))
                .handler(|call| async move {
                    let mut result = CallToolResult::text("structured");
                    result.structured_content = match call.str_arg("mode") {
                        Some("good") => Some(json!({"n": 1, "inner": {"s": "x"}})),
                        Some("bad") => Some(json!({"n": 1, "inner": {"s": 424_242}})),
                        Some("error") => {
                            let mut r = CallToolResult::error_text("failed");
                            r.structured_content = Some(json!({"reason": "anything"}));
                            return Ok(r);
                        }
                        _ => None,
                    };
                    Ok(result)
                }),
        )
        .prompt(prompt("review").typed(|_get, args: ReviewArgs| async move {
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
                "{}|{}",
                args.code,
                args.focus.unwrap_or_default()
            ))]))
        }))
        .tool(tool("confirm").typed(|call, _args: NoArgs| async move {
            let answer = call
                .input
                .ask(mrtr::elicit_typed::<Confirm>("confirm", "Sure?"))?;
            Ok(format!("{answer:?}"))
        }))
        .build()
        .unwrap()
        .service()
}

#[derive(Debug, Deserialize, JsonSchema)]
struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
struct ReviewArgs {
    /// The code.
    code: String,
    /// What to look at.
    focus: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Level {
    /// Just this once
    Once,
    /// Every time
    Always,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Confirm {
    ok: bool,
    level: Option<Level>,
    /// How many copies.
    copies: Option<u32>,
}

fn list(svc_tools: &Value, name: &str) -> Value {
    svc_tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .cloned()
        .unwrap()
}

#[test]
fn derived_input_schema_is_2020_12_inline_and_header_ready() {
    let schema = typed::input_schema::<WeatherArgs>();
    assert!(schema.get("$schema").is_none(), "{schema}");
    assert!(
        schema.get("$defs").is_none(),
        "nested types are inlined: {schema}"
    );
    assert_eq!(schema["type"], "object");
    // rename_all applies to properties; `Option` and `#[serde(default)]` are not required.
    assert_eq!(schema["required"], json!(["place"]));
    let place = &schema["properties"]["place"];
    assert_eq!(place["type"], "object");
    assert_eq!(place["required"], json!(["cityName"]));
    assert_eq!(place["properties"]["cityName"]["description"], "City name.");
    // An `Option` field annotated `x-mcp-header` has one type (a header carries no null).
    assert_eq!(place["properties"]["country"]["type"], "string");
    assert_eq!(place["properties"]["country"]["x-mcp-header"], "Country");
    // A unit enum with rename_all: its wire names, and null for `Option`.
    let units = schema["properties"]["units"].to_string();
    assert!(
        units.contains("\"metric\"") && units.contains("\"imperial\""),
        "{units}"
    );
    assert!(units.contains("null"), "{units}");
    // The proto's own header rules accept it, with the path through `properties`.
    let params =
        smcp_proto::x_mcp_header::validate_annotations(schema.as_object().unwrap()).unwrap();
    assert_eq!(params.len(), 1);
    assert_eq!(
        params[0].path,
        vec!["place".to_owned(), "country".to_owned()]
    );
}

#[tokio::test]
async fn typed_tool_is_listed_with_both_schemas_and_answers_structured() {
    let svc = server();
    let tools = call(&svc, &body(json!(1), "tools/list", json!({})))
        .await
        .json();
    let weather = list(&tools, "weather");
    assert_eq!(
        Value::Object(weather["inputSchema"].as_object().unwrap().clone()),
        typed::input_schema::<WeatherArgs>()
    );
    assert_eq!(weather["outputSchema"], typed::output_schema::<Forecast>());
    assert_eq!(
        weather["outputSchema"]["required"],
        json!(["cityName", "daysAhead", "metric"])
    );

    let b = body(
        json!(2),
        "tools/call",
        json!({"name": "weather", "arguments": {"place": {"cityName": "Lisbon", "country": "PT"}, "daysAhead": 2, "units": "imperial"}}),
    );
    let req = request(&b)
        .header("mcp-param-country", "PT")
        .body(full(&b))
        .unwrap();
    let result = send(&svc, req).await.json()["result"].clone();
    let expected = json!({"cityName": "Lisbon", "daysAhead": 2, "metric": false});
    assert_eq!(result["structuredContent"], expected, "{result}");
    // The same JSON as text, for clients that read only `content`.
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, expected);
    assert!(result.get("isError").is_none());
}

#[tokio::test]
async fn schema_failures_and_deserialization_failures_are_the_same_is_error() {
    let svc = server();
    // Refused by the derived schema: `daysAhead` is a u8.
    let b = body(
        json!(1),
        "tools/call",
        json!({"name": "weather", "arguments": {"place": {"cityName": "x"}, "daysAhead": 300}}),
    );
    let result = call(&svc, &b).await.json()["result"].clone();
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Invalid arguments for tool \"weather\": /daysAhead"),
        "{text}"
    );

    // Passes the hand-written schema, fails to deserialize: the same shape of message,
    // naming the argument's path and never its value.
    let b = body(
        json!(2),
        "tools/call",
        json!({"name": "permissive", "arguments": {"place": {"cityName": "SECRET-town"}, "daysAhead": "SECRET-days"}}),
    );
    let result = call(&svc, &b).await.json()["result"].clone();
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Invalid arguments for tool \"permissive\": /daysAhead: "),
        "{text}"
    );
    assert!(text.contains("expected u8"), "{text}");
    assert!(
        !text.contains("SECRET"),
        "the value is never echoed: {text}"
    );

    let b = body(
        json!(3),
        "tools/call",
        json!({"name": "permissive", "arguments": {"place": {}}}),
    );
    let result = call(&svc, &b).await.json()["result"].clone();
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("/place: missing field `cityName`"), "{text}");
}

#[tokio::test]
async fn structured_content_is_checked_against_the_output_schema() {
    let svc = server();
    let run = |mode: &str, id: i64| {
        body(
            json!(id),
            "tools/call",
            json!({"name": "liar", "arguments": {"mode": mode}}),
        )
    };
    let good = call(&svc, &run("good", 1)).await.json();
    assert_eq!(good["result"]["structuredContent"]["n"], 1, "{good}");

    // A result that breaks the tool's own contract never leaves: −32603 naming the path.
    let bad = call(&svc, &run("bad", 2)).await;
    bad.assert_error(200, -32603, Some(json!(2)));
    let message = bad.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("outputSchema"), "{message}");
    assert!(message.contains("/inner/s"), "{message}");
    assert!(
        !message.contains("424242"),
        "the value is never echoed: {message}"
    );

    // A successful result without structuredContent breaks it too.
    let missing = call(&svc, &run("none", 3)).await;
    missing.assert_error(200, -32603, Some(json!(3)));
    assert!(
        missing.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("structuredContent is missing")
    );

    // An error result is not held to the output schema.
    let error = call(&svc, &run("error", 4)).await.json();
    assert_eq!(error["result"]["isError"], true, "{error}");
    assert_eq!(error["result"]["structuredContent"]["reason"], "anything");
}

#[test]
fn an_invalid_output_schema_is_refused_at_build() {
    let err = Server::builder("x", "1")
        .tool(
            tool("t")
                .output_schema(json!({"type": 5}))
                .handler(|_| async { Ok::<_, HandlerError>(CallToolResult::text("")) }),
        )
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, BuildError::InvalidOutputSchema { tool, reason } if tool == "t" && reason.contains("outputSchema is not a valid JSON Schema")),
        "{err}"
    );
}

#[tokio::test]
async fn typed_prompt_declares_and_reads_its_arguments() {
    let svc = server();
    let prompts = call(&svc, &body(json!(1), "prompts/list", json!({})))
        .await
        .json();
    assert_eq!(
        prompts["result"]["prompts"][0]["arguments"],
        json!([
            {"name": "code", "description": "The code.", "required": true},
            {"name": "focus", "description": "What to look at.", "required": false}
        ])
    );
    let got = call(
        &svc,
        &body(
            json!(2),
            "prompts/get",
            json!({"name": "review", "arguments": {"code": "fn x() {}"}}),
        ),
    )
    .await
    .json();
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"], "fn x() {}|",
        "{got}"
    );
    // The optional argument, when the client passes it, reaches the handler.
    let got = call(
        &svc,
        &body(
            json!(3),
            "prompts/get",
            json!({"name": "review", "arguments": {"code": "fn x() {}", "focus": "naming"}}),
        ),
    )
    .await
    .json();
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"], "fn x() {}|naming",
        "{got}"
    );
}

#[test]
fn a_prompt_type_with_a_non_string_field_is_refused_at_build() {
    #[derive(Deserialize, JsonSchema)]
    struct Bad {
        count: u32,
    }
    let err = Server::builder("x", "1")
        .prompt(
            prompt("p")
                .typed(|_get, _args: Bad| async move { Ok(GetPromptResult::new(Vec::new())) }),
        )
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, BuildError::InvalidPromptArguments { prompt, reason } if prompt == "p" && reason.contains("\"count\"")),
        "{err}"
    );
}

#[test]
fn elicitation_schema_is_a_flat_form() {
    let schema = serde_json::to_value(typed::elicitation_schema::<Confirm>().unwrap()).unwrap();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["ok"]));
    assert_eq!(schema["properties"]["ok"], json!({"type": "boolean"}));
    // Documented variants become titled choices; `Option` drops its null.
    assert_eq!(
        schema["properties"]["level"],
        json!({"type": "string", "oneOf": [
            {"const": "once", "title": "Just this once"},
            {"const": "always", "title": "Every time"}
        ]})
    );
    assert_eq!(schema["properties"]["copies"]["type"], "integer");
    assert_eq!(
        schema["properties"]["copies"]["description"],
        "How many copies."
    );

    #[derive(Deserialize, JsonSchema)]
    struct Nested {
        place: Place,
    }
    let err = typed::elicitation_schema::<Nested>().unwrap_err();
    assert!(
        err.contains("field \"place\"") && err.contains("nested object"),
        "{err}"
    );
    #[derive(Deserialize, JsonSchema)]
    struct List {
        names: Vec<String>,
    }
    let err = typed::elicitation_schema::<List>().unwrap_err();
    assert!(err.contains("field \"names\""), "{err}");
}

#[tokio::test]
async fn typed_elicitation_round_trip() {
    let svc = server();
    let ask = |id: i64, extra: Value| {
        let mut b = body(
            json!(id),
            "tools/call",
            json!({"name": "confirm", "arguments": {}}),
        );
        b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
            json!({"elicitation": {}});
        for (k, v) in extra.as_object().unwrap() {
            b["params"][k] = v.clone();
        }
        b
    };
    let r1 = call(&svc, &ask(1, json!({}))).await.json()["result"].clone();
    assert_eq!(r1["resultType"], "input_required", "{r1}");
    let request = &r1["inputRequests"]["confirm"]["params"];
    assert_eq!(
        request["requestedSchema"],
        serde_json::to_value(typed::elicitation_schema::<Confirm>().unwrap()).unwrap()
    );
    let answer = json!({"confirm": {"action": "accept", "content": {"ok": true, "level": "always", "copies": 2}}});
    let r2 = call(
        &svc,
        &ask(
            2,
            json!({"inputResponses": answer, "requestState": r1["requestState"]}),
        ),
    )
    .await
    .json()["result"]
        .clone();
    assert_eq!(
        r2["content"][0]["text"],
        "Accept(Confirm { ok: true, level: Some(Always), copies: Some(2) })",
        "{r2}"
    );

    let declined = json!({"confirm": {"action": "decline"}});
    let r3 = call(
        &svc,
        &ask(
            3,
            json!({"inputResponses": declined, "requestState": r1["requestState"]}),
        ),
    )
    .await
    .json()["result"]
        .clone();
    assert_eq!(r3["content"][0]["text"], "Decline", "{r3}");
}

#[tokio::test]
async fn a_type_a_form_cannot_ask_fails_the_call_naming_the_field() {
    #[derive(Debug, Deserialize, JsonSchema)]
    struct Nested {
        place: Place,
    }
    let svc = Server::builder("x", "1")
        .tool(tool("t").handler(|call| async move {
            let answer = call.input.ask(mrtr::elicit_typed::<Nested>("k", "?"))?;
            Ok(CallToolResult::text(format!("{answer:?}")))
        }))
        .build()
        .unwrap()
        .service();
    let mut b = body(json!(1), "tools/call", json!({"name": "t"}));
    b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    let reply = call(&svc, &b).await;
    reply.assert_error(200, -32603, Some(json!(1)));
    let message = reply.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("field \"place\""), "{message}");
}
