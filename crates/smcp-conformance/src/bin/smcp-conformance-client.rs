//! The client under test for `conformance client` (CONFORMANCE.md §5).
//!
//! The suite runs this binary once per scenario with the scenario name in
//! `MCP_CONFORMANCE_SCENARIO`, optional data in `MCP_CONFORMANCE_CONTEXT` and the mock server's
//! URL as the last argument. Every scenario uses only the public `smcp-client` API. The
//! version the scenario runs at (`MCP_CONFORMANCE_PROTOCOL_VERSION`: 2026-07-28, or 2025-11-25
//! for `scripts/conformance client 2025-11-25`) is pinned with `protocol_version`.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use anyhow::{Context as _, bail};
use serde_json::{Map, Value, json};
use smcp_client::auth::{EnterpriseIdp, HeadlessAuthorizer, KeySigner, OAuthConfig, Secret};
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult, ElicitValue};
use smcp_client::proto::client::roots::{ListRootsRequestParams, ListRootsResult};
use smcp_client::proto::client::sampling::{CreateMessageRequestParams, CreateMessageResult};
use smcp_client::proto::server::tools::Tool;
use smcp_client::{Client, InputHandler, InputHandlerError, InputKinds};

/// Answers every input request: accepts elicitations with a value per requested field, and
/// in `sep-2322-client-request-state` calls `test_mrtr_unrelated` before answering, so the
/// suite sees an unrelated request between the rounds (parallel isolation).
struct ConformanceHandler {
    unrelated: Option<Arc<OnceLock<Client>>>,
}

impl InputHandler for ConformanceHandler {
    fn kinds(&self) -> InputKinds {
        InputKinds::all()
    }

    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> smcp_client::BoxFuture<'_, Result<ElicitResult, InputHandlerError>> {
        Box::pin(async move {
            if let Some(client) = self.unrelated.as_ref().and_then(|c| c.get()) {
                client
                    .call_tool("test_mrtr_unrelated", json!({}))
                    .await
                    .map_err(|e| InputHandlerError::new(e.to_string()))?;
            }
            let mut content = BTreeMap::new();
            if let ElicitRequestParams::Form(form) = &params {
                for (name, schema) in &form.requested_schema.properties {
                    let schema = serde_json::to_value(schema).unwrap_or(Value::Null);
                    // SEP-1034: a field with a default gets it.
                    if let Some(default) = schema
                        .get("default")
                        .and_then(|d| serde_json::from_value::<ElicitValue>(d.clone()).ok())
                    {
                        content.insert(name.clone(), default);
                        continue;
                    }
                    let value = match schema.get("type").and_then(Value::as_str) {
                        Some("boolean") => ElicitValue::Bool(true),
                        Some("integer" | "number") => ElicitValue::Number(1.0),
                        _ => ElicitValue::String("conformance".to_owned()),
                    };
                    content.insert(name.clone(), value);
                }
            }
            Ok(ElicitResult::accept(content))
        })
    }

    fn create_message(
        &self,
        _params: CreateMessageRequestParams,
    ) -> smcp_client::BoxFuture<'_, Result<CreateMessageResult, InputHandlerError>> {
        Box::pin(async {
            serde_json::from_value(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "conformance"},
                "model": "smcp-conformance"
            }))
            .map_err(|e| InputHandlerError::new(e.to_string()))
        })
    }

    fn list_roots(
        &self,
        _params: Option<ListRootsRequestParams>,
    ) -> smcp_client::BoxFuture<'_, Result<ListRootsResult, InputHandlerError>> {
        Box::pin(async { Ok(ListRootsResult::default()) })
    }
}

/// A plausible value for each required (and each annotated) property of a tool's schema.
fn sample_arguments(tool: &Tool) -> Value {
    let mut args = Map::new();
    let required: Vec<&str> = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(Value::Object(props)) = tool.input_schema.get("properties") {
        for (name, schema) in props {
            if !required.contains(&name.as_str()) && schema.get("x-mcp-header").is_none() {
                continue;
            }
            let value = match schema.get("type").and_then(Value::as_str) {
                Some("integer") => json!(1),
                Some("number") => json!(1.5),
                Some("boolean") => json!(true),
                Some("object") => json!({}),
                Some("array") => json!([]),
                _ => json!("us-west1"),
            };
            args.insert(name.clone(), value);
        }
    }
    Value::Object(args)
}

/// The version the suite runs the scenario at (`MCP_CONFORMANCE_PROTOCOL_VERSION`), pinned:
/// the suite's mock servers of the older revisions answer any request, so a 2026-07-28 probe
/// would not tell their era.
fn client(url: &str, handler: Option<ConformanceHandler>) -> anyhow::Result<Client> {
    let mut builder = Client::builder(url);
    if let Ok(version) = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        builder = builder.protocol_version(&version);
    }
    if let Some(h) = handler {
        builder = builder.input_handler(h);
    }
    Ok(builder.build()?)
}

/// The suite's Client ID Metadata Document URL (`auth/basic-cimd`): used as `client_id` when
/// the authorization server advertises `client_id_metadata_document_supported`.
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";

/// A client with OAuth for the `auth/*` scenarios: the suite's authorization servers redirect
/// at once, so the browser step is [`HeadlessAuthorizer`]; pre-registered credentials come
/// from `MCP_CONFORMANCE_CONTEXT` (`client_id`, `client_secret`, `issuer`). The extension
/// scenarios pick the grant: `auth/client-credentials-*` the client credentials grant (with a
/// `private_key_pem` for `private_key_jwt`), `auth/wif-*` workload identity with `valid_jwt`,
/// `auth/enterprise-*` the ID-JAG exchange with the `idp_*` fields. DPoP is chosen from the
/// authorization server's metadata, as by any client.
fn auth_client(url: &str, scenario: &str) -> anyhow::Result<Client> {
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    let field = |k: &str| context.get(k).and_then(Value::as_str).map(str::to_owned);
    let mut oauth = OAuthConfig::builder()
        .authorizer(HeadlessAuthorizer::new("http://127.0.0.1:3030/callback")?)
        .client_metadata_url(CIMD_URL)
        .client_name("smcp-conformance-client");
    if let Some(id) = field("client_id") {
        oauth = oauth.client_id(id);
    }
    if let Some(secret) = field("client_secret") {
        oauth = oauth.client_secret(secret);
    }
    if let Some(issuer) = field("issuer") {
        oauth = oauth.client_issuer(issuer);
    }
    if let Some(pem) = field("private_key_pem") {
        oauth = oauth.client_assertion_signer(KeySigner::from_pem(pem.as_bytes())?);
    }
    if scenario.starts_with("auth/client-credentials") {
        oauth = oauth.client_credentials(true);
    }
    if scenario.starts_with("auth/wif") {
        let jwt = field("valid_jwt").context("the context has no valid_jwt")?;
        oauth = oauth.workload_identity(Secret::new(jwt));
    }
    if scenario.starts_with("auth/enterprise") {
        let endpoint =
            field("idp_token_endpoint").context("the context has no idp_token_endpoint")?;
        let client_id = field("idp_client_id").context("the context has no idp_client_id")?;
        let id_token = field("idp_id_token").context("the context has no idp_id_token")?;
        oauth = oauth.enterprise_idp(EnterpriseIdp::new(
            endpoint,
            client_id,
            Secret::new(id_token),
        ));
    }
    let mut builder = Client::builder(url).oauth(oauth.build());
    if let Ok(version) = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        builder = builder.protocol_version(&version);
    }
    Ok(builder.build()?)
}

/// Lists the tools and calls each usable one with sample arguments.
async fn call_every_tool(client: &Client) -> anyhow::Result<()> {
    for tool in client.list_tools().await? {
        let result = client.call_tool(&tool.name, sample_arguments(&tool)).await;
        tracing::info!(tool = %tool.name, ok = result.is_ok(), "called");
    }
    Ok(())
}

async fn run(scenario: &str, url: &str) -> anyhow::Result<()> {
    let all = || Some(ConformanceHandler { unrelated: None });
    match scenario {
        "tools_call" => {
            let c = client(url, all())?;
            c.list_tools().await?;
            let r = c.call_tool("add_numbers", json!({"a": 2, "b": 3})).await?;
            tracing::info!(?r, "add_numbers");
            c.close().await;
        }
        "request-metadata" => {
            let c = client(url, all())?;
            c.discover().await?;
            c.list_tools().await?;
        }
        "sep-2322-client-request-state" => {
            let slot = Arc::new(OnceLock::new());
            let c = client(
                url,
                Some(ConformanceHandler {
                    unrelated: Some(slot.clone()),
                }),
            )?;
            let _ = slot.set(c.clone());
            c.list_tools().await?;
            c.call_tool("test_mrtr_echo_state", json!({})).await?;
            c.call_tool("test_mrtr_no_state", json!({})).await?;
            c.call_tool("test_mrtr_no_result_type", json!({})).await?;
        }
        "http-standard-headers" => {
            let c = client(url, all())?;
            call_every_tool(&c).await?;
            for resource in c.list_resources().await? {
                c.read_resource(&resource.uri).await?;
            }
            for prompt in c.list_prompts().await? {
                let args = prompt
                    .arguments
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|a| a.required == Some(true))
                    .map(|a| (a.name, "conformance".to_owned()))
                    .collect();
                c.get_prompt(&prompt.name, args).await?;
            }
        }
        "http-custom-headers" => {
            let context: Value = serde_json::from_str(
                &std::env::var("MCP_CONFORMANCE_CONTEXT").context("MCP_CONFORMANCE_CONTEXT")?,
            )?;
            let c = client(url, all())?;
            c.list_tools().await?;
            let calls = context
                .get("toolCalls")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for call in calls {
                let Some(name) = call.get("name").and_then(Value::as_str) else {
                    bail!("toolCalls entry without a name: {call}");
                };
                let arguments = call.get("arguments").cloned().unwrap_or(json!({}));
                c.call_tool(name, arguments).await?;
            }
        }
        "http-invalid-tool-headers" => {
            let c = client(url, all())?;
            call_every_tool(&c).await?;
        }
        "json-schema-ref-no-deref" => {
            let c = client(url, all())?;
            let tools = c.list_tools().await?;
            tracing::info!(
                count = tools.len(),
                "listed tools without dereferencing $ref"
            );
        }
        "json-schema-2020-12-preservation" => {
            // The focal tool's inputSchema goes back verbatim to the echo tool: the suite
            // compares it with what it served (SEP-1613, SEP-2106 keywords kept).
            let c = client(url, all())?;
            let tools = c.list_tools().await?;
            let focal = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or_else(|| anyhow::anyhow!("the server listed no json_schema_2020_12_tool"))?;
            let schema = Value::Object(focal.input_schema.clone());
            c.call_tool("json_schema_echo", json!({ "schema": schema }))
                .await?;
            c.close().await;
        }
        auth if auth.starts_with("auth/") => {
            let c = auth_client(url, auth)?;
            call_every_tool(&c).await?;
            c.close().await;
        }
        other => {
            // Anything else gets the generic flow.
            tracing::warn!(scenario = %other, "no dedicated flow; listing and calling tools");
            let c = client(url, all())?;
            call_every_tool(&c).await?;
            c.close().await;
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RUST_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let scenario =
        std::env::var("MCP_CONFORMANCE_SCENARIO").context("MCP_CONFORMANCE_SCENARIO is not set")?;
    let Some(url) = std::env::args()
        .next_back()
        .filter(|a| a.starts_with("http"))
    else {
        bail!("usage: smcp-conformance-client <server-url> (with MCP_CONFORMANCE_SCENARIO set)");
    };
    tracing::info!(%scenario, %url, "conformance client");
    run(&scenario, &url).await
}
