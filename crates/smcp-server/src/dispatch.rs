//! Method dispatch: from a validated request to a result, an error, or a handler future.
//!
//! Stages that need the target item (the tool's `x-mcp-header` parameters, its required
//! client capabilities) run here, before the handler, and refuse with the status the spec
//! gives them. Everything a handler produces is an [`Outcome`].

use std::future::Future;
use std::sync::Arc;

use futures_util::FutureExt as _;

use http::HeaderMap;
use serde_json::{Map, Value, json};
use smcp_proto::content::ContentBlock;
use smcp_proto::error::ErrorObject;
use smcp_proto::header;
use smcp_proto::jsonrpc::RequestId;
use smcp_proto::server::tools::CallToolResult;

use crate::context::RequestContext;
use crate::error::Rejection;
use crate::mrtr::{Binding, Input, Salient};
use crate::pagination;
use crate::server::completion::{CompletionRef, CompletionRequest};
use crate::server::handler::HandlerError;
use crate::server::prompts::PromptGet;
use crate::server::resources::ResourceRead;
use crate::server::tools::{BoxFuture, ToolCall, ToolEntry};
use crate::server::{Inner, SUPPORTED_VERSIONS};

/// A result object (without the server's `_meta`) or a JSON-RPC error.
pub(crate) type Outcome = Result<Value, ErrorObject>;

/// A successful result: a JSON object, or a tool's own typed result, which goes to the wire
/// without becoming a `Value` first (see `transport::service::result_bytes`).
#[derive(Debug)]
pub(crate) enum Success {
    Value(Value),
    Tool(CallToolResult),
}

/// What a handler's future ends with.
pub(crate) type Finished = Result<Success, ErrorObject>;

/// What dispatch produced: an answer now, or a handler to run.
pub(crate) enum Dispatch {
    Ready(Outcome),
    Pending(BoxFuture<Finished>),
}

impl Dispatch {
    /// A handler future whose result is a JSON value.
    pub(crate) fn pending(fut: impl Future<Output = Outcome> + Send + 'static) -> Self {
        Self::Pending(Box::pin(fut.map(|outcome| outcome.map(Success::Value))))
    }
}

/// One validated request, ready to dispatch.
pub(crate) struct Call<'a> {
    pub(crate) inner: &'a Arc<Inner>,
    pub(crate) headers: &'a HeaderMap,
    pub(crate) id: &'a RequestId,
    pub(crate) method: &'a str,
    /// The request body, for reading the salient params back (see [`Salient`]).
    pub(crate) body: &'a bytes::Bytes,
    /// `params` without `_meta`, and without `name` and `arguments` for `tools/call` (see
    /// [`Call::tool_parts`]); other methods get them in `params`.
    pub(crate) params: Map<String, Value>,
    /// `params.name` and `params.arguments` of a `tools/call`.
    pub(crate) tool_parts: ToolParts,
    pub(crate) ctx: RequestContext,
    /// The authenticated principal, when an auth layer set one.
    pub(crate) principal: Option<String>,
}

/// `params.name` and `params.arguments`, kept out of the params map.
#[derive(Debug, Default)]
pub(crate) struct ToolParts {
    pub(crate) name: Option<Value>,
    pub(crate) arguments: Option<Value>,
}

impl Call<'_> {
    /// Binds multi round-trip state to this request (`method` + salient params + principal)
    /// and verifies any `requestState` it carries; an error means the handler must not run.
    fn mrtr_input(
        &mut self,
        method: &'static str,
        salient: Salient,
    ) -> Result<(Binding, Input), ErrorObject> {
        let binding = Binding {
            method,
            salient,
            principal: self.principal.take(),
        };
        let input = Input::prepare(
            &self.inner.mrtr,
            &binding,
            &mut self.params,
            self.ctx.clone(),
        )?;
        Ok((binding, input))
    }
}

/// Methods that may answer `input_required` (`basic/patterns/mrtr.mdx` §Supported Requests).
const MRTR_METHODS: [&str; 3] = ["tools/call", "resources/read", "prompts/get"];

pub(crate) fn dispatch(mut call: Call<'_>) -> Result<Dispatch, Rejection> {
    if call.method != "tools/call" {
        // Every other method reads its params as one map.
        let ToolParts { name, arguments } = std::mem::take(&mut call.tool_parts);
        if let Some(name) = name {
            call.params.insert("name".to_owned(), name);
        }
        if let Some(arguments) = arguments {
            call.params.insert("arguments".to_owned(), arguments);
        }
    }
    let call = call;
    let inner = call.inner;
    let gated = |cap: &str| -> Result<(), Rejection> {
        if inner.advertises(cap) {
            Ok(())
        } else {
            Err(method_not_found(call.id, call.method))
        }
    };
    if !MRTR_METHODS.contains(&call.method)
        && (call.params.contains_key("inputResponses") || call.params.contains_key("requestState"))
        && inner.advertises_method(call.method)
    {
        return Ok(Dispatch::Ready(Err(ErrorObject::invalid_params(format!(
            "{} does not take inputResponses or requestState: only tools/call, \
             resources/read and prompts/get are multi round-trip requests",
            call.method
        )))));
    }
    match call.method {
        "server/discover" => Ok(Dispatch::Ready(Ok(discover(inner)))),
        "tools/list" => {
            gated("tools")?;
            let catalog = inner.catalog();
            Ok(Dispatch::Ready(list(
                inner,
                &call.params,
                &catalog.tools,
                "tools",
                &inner.cache.tools_list,
                |t| t.descriptor.clone(),
            )))
        }
        "tools/call" => {
            gated("tools")?;
            call_tool(call)
        }
        "resources/list" => {
            gated("resources")?;
            let catalog = inner.catalog();
            Ok(Dispatch::Ready(list(
                inner,
                &call.params,
                &catalog.resources,
                "resources",
                &inner.cache.resources_list,
                |r| r.descriptor.clone(),
            )))
        }
        "resources/templates/list" => {
            gated("resources")?;
            let catalog = inner.catalog();
            Ok(Dispatch::Ready(list(
                inner,
                &call.params,
                &catalog.templates,
                "resourceTemplates",
                &inner.cache.templates_list,
                |r| r.descriptor.clone(),
            )))
        }
        "resources/read" => {
            gated("resources")?;
            Ok(read_resource(call))
        }
        "prompts/list" => {
            gated("prompts")?;
            let catalog = inner.catalog();
            Ok(Dispatch::Ready(list(
                inner,
                &call.params,
                &catalog.prompts,
                "prompts",
                &inner.cache.prompts_list,
                |p| p.descriptor.clone(),
            )))
        }
        "prompts/get" => {
            gated("prompts")?;
            Ok(get_prompt(call))
        }
        smcp_proto::ext::files::METHOD_AUTHORIZE_UPLOAD
        | smcp_proto::ext::files::METHOD_AUTHORIZE_DOWNLOAD => crate::files::dispatch(call),
        "completion/complete" => {
            gated("completions")?;
            Ok(complete(call))
        }
        _ => Err(method_not_found(call.id, call.method)),
    }
}

fn method_not_found(id: &RequestId, method: &str) -> Rejection {
    Rejection::protocol(Some(id.clone()), ErrorObject::method_not_found(method))
}

fn discover(inner: &Inner) -> Value {
    let mut result = Map::new();
    result.insert("supportedVersions".into(), json!(SUPPORTED_VERSIONS));
    result.insert("capabilities".into(), inner.catalog().capabilities.clone());
    if let Some(instructions) = &inner.instructions {
        result.insert("instructions".into(), json!(instructions));
    }
    result.insert("ttlMs".into(), inner.cache.discover.ttl_ms());
    result.insert("cacheScope".into(), json!(inner.cache.discover.scope_str()));
    Value::Object(result)
}

fn list<T>(
    inner: &Inner,
    params: &Map<String, Value>,
    items: &[T],
    key: &str,
    hint: &crate::config::CacheHint,
    render: impl Fn(&T) -> Value,
) -> Outcome {
    let cursor = match params.get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c.as_str()),
        Some(_) => return Err(ErrorObject::invalid_params("\"cursor\" must be a string")),
    };
    let (page, next) = pagination::page(items, cursor, inner.limits.page_size)
        .map_err(ErrorObject::invalid_params)?;
    let mut result = Map::with_capacity(4);
    result.insert(
        key.to_owned(),
        Value::Array(page.iter().map(render).collect()),
    );
    if let Some(next) = next {
        result.insert("nextCursor".into(), Value::String(next));
    }
    result.insert("ttlMs".into(), hint.ttl_ms());
    result.insert("cacheScope".into(), json!(hint.scope_str()));
    Ok(Value::Object(result))
}

fn string_param<'p>(params: &'p Map<String, Value>, key: &str) -> Result<&'p str, ErrorObject> {
    match params.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(ErrorObject::invalid_params(format!(
            "\"params.{key}\" must be a string"
        ))),
        None => Err(ErrorObject::invalid_params(format!(
            "\"params.{key}\" is required"
        ))),
    }
}

/// Refuses a state that was already used, for tools that demand single use.
async fn check_single_use(inner: &Inner, input: &Input) -> Result<(), ErrorObject> {
    let (Some(id), Some(expiry)) = (input.state_id(), input.state_expiry()) else {
        return Ok(());
    };
    let Some(guard) = &inner.replay else {
        return Err(ErrorObject::internal(
            "single-use state without a replay guard",
        ));
    };
    if guard.first_use(id, expiry).await {
        Ok(())
    } else {
        Err(crate::mrtr::state_error(crate::mrtr::StateError::Replayed))
    }
}

fn call_tool(mut call: Call<'_>) -> Result<Dispatch, Rejection> {
    let name = match call.tool_parts.name.take() {
        Some(Value::String(name)) => name,
        Some(_) => {
            return Ok(Dispatch::Ready(Err(ErrorObject::invalid_params(
                "\"params.name\" must be a string",
            ))));
        }
        None => {
            return Ok(Dispatch::Ready(Err(ErrorObject::invalid_params(
                "\"params.name\" is required",
            ))));
        }
    };
    let catalog = call.inner.catalog();
    let Some(tool) = catalog.tool(&name).cloned() else {
        return Ok(Dispatch::Ready(Err(ErrorObject::invalid_params(format!(
            "Unknown tool: {name}"
        )))));
    };
    let arguments = match call.tool_parts.arguments.take() {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(args)) => args,
        Some(_) => {
            return Ok(Dispatch::Ready(Err(ErrorObject::invalid_params(
                "\"params.arguments\" must be an object",
            ))));
        }
    };
    check_param_headers(call.headers, &tool, &arguments)
        .map_err(|msg| Rejection::header_mismatch(Some(call.id.clone()), msg))?;
    for cap in &tool.required_capabilities {
        if !call.ctx.has_capability(&[cap.as_str()]) {
            let err = HandlerError::missing_capability(cap).into_error_object();
            return Err(Rejection::protocol(Some(call.id.clone()), err));
        }
    }
    let salient = Salient::ToolCall(call.body.clone());
    let (binding, input) = match call.mrtr_input("tools/call", salient) {
        Ok(prepared) => prepared,
        Err(e) => return Ok(Dispatch::Ready(Err(e))),
    };
    let args_value = Value::Object(arguments);
    if let Err(problems) = tool.validator.validate(&args_value) {
        return Ok(Dispatch::Ready(Ok(tool_error_result(&format!(
            "Invalid arguments for tool {name:?}: {}",
            problems.join("; ")
        )))));
    }
    let Value::Object(arguments) = args_value else {
        return Ok(Dispatch::Ready(Err(ErrorObject::internal("arguments"))));
    };
    let inner = call.inner.clone();
    let ctx = call.ctx;
    let gate_ctx = ctx.clone();
    Ok(Dispatch::Pending(Box::pin(async move {
        if tool.single_use_state {
            check_single_use(&inner, &input).await?;
        }
        let files = match crate::files::resolve_arguments(
            &tool.file_fields,
            &arguments,
            inner.files.as_ref(),
            binding.principal.as_deref(),
        )
        .await
        {
            Ok(files) => files,
            Err(refusal) => return Ok(Success::Value(refusal)),
        };
        let outcome = tool
            .handler
            .call(ToolCall {
                name,
                arguments,
                ctx,
                input: input.clone(),
                files,
            })
            .await;
        match outcome {
            // Without file outputs the typed result goes to the wire as it is.
            Ok(result)
                if !result
                    .content
                    .iter()
                    .any(|block| matches!(block, ContentBlock::File(_))) =>
            {
                Ok(Success::Tool(result))
            }
            Ok(result) => serde_json::to_value(result)
                .map(|v| {
                    Success::Value(crate::files::gate_outputs(v, || {
                        crate::files::client_can_download(&gate_ctx)
                    }))
                })
                .map_err(|e| ErrorObject::internal(format!("result serialization: {e}"))),
            Err(HandlerError::Failed(message)) => Ok(Success::Value(tool_error_result(&message))),
            Err(HandlerError::InputRequired(ir)) => {
                input.finish(&inner.mrtr, &binding, *ir).map(Success::Value)
            }
            Err(other) => Err(other.into_error_object()),
        }
    })))
}

/// A `CallToolResult` with `isError: true`: the model sees the message and can retry.
fn tool_error_result(message: &str) -> Value {
    json!({"content": [{"type": "text", "text": message}], "isError": true})
}

/// Every `Mcp-Param-*` header the tool declares must match the argument it mirrors
/// (`basic/transports/streamable-http.mdx` §Server Behavior for Custom Headers): present
/// when the argument has a value, equal after decoding, integers compared numerically.
fn check_param_headers(
    headers: &HeaderMap,
    tool: &ToolEntry,
    arguments: &Map<String, Value>,
) -> Result<(), String> {
    for param in &tool.header_params {
        let header_name = format!("mcp-param-{}", param.header_name.to_ascii_lowercase());
        let mut values = headers.get_all(header_name.as_str()).iter();
        let raw = values.next();
        if values.next().is_some() {
            return Err(format!(
                "Mcp-Param-{} appears more than once",
                param.header_name
            ));
        }
        let body = lookup(arguments, &param.path).filter(|v| !v.is_null());
        match (raw, body) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(format!(
                    "Mcp-Param-{} header is required: argument {} has a value",
                    param.header_name,
                    param.path.join(".")
                ));
            }
            (Some(raw), body) => {
                let text = raw.to_str().map_err(|_| {
                    format!(
                        "Mcp-Param-{} contains invalid characters",
                        param.header_name
                    )
                })?;
                let Some(body) = body else {
                    return Err(format!(
                        "Mcp-Param-{} header is present but argument {} has no value",
                        param.header_name,
                        param.path.join(".")
                    ));
                };
                match header::param_matches(text, body) {
                    Ok(true) => {}
                    Ok(false) => {
                        return Err(format!(
                            "Header mismatch: Mcp-Param-{} header value {text:?} does not match body value {body}",
                            param.header_name
                        ));
                    }
                    Err(e) => {
                        return Err(format!("Mcp-Param-{}: {e}", param.header_name));
                    }
                }
            }
        }
    }
    Ok(())
}

fn lookup<'a>(arguments: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let mut current = arguments.get(first)?;
    for key in rest {
        current = current.as_object()?.get(key)?;
    }
    Some(current)
}

fn read_resource(mut call: Call<'_>) -> Dispatch {
    let uri = match string_param(&call.params, "uri") {
        Ok(uri) => uri.to_owned(),
        Err(e) => return Dispatch::Ready(Err(e)),
    };
    let catalog = call.inner.catalog();
    let Some((entry, variables)) = catalog.resource(&uri) else {
        return Dispatch::Ready(Err(ErrorObject::invalid_params(format!(
            "Resource not found: {uri}"
        ))
        .with_data(json!({"uri": uri}))));
    };
    let hint = entry.cache.unwrap_or(call.inner.cache.resources_read);
    let (binding, input) =
        match call.mrtr_input("resources/read", Salient::Value(json!({"uri": uri}))) {
            Ok(prepared) => prepared,
            Err(e) => return Dispatch::Ready(Err(e)),
        };
    let gate_ctx = call.ctx.clone();
    let fut = entry.handler.read(ResourceRead {
        uri: uri.clone(),
        variables,
        ctx: call.ctx,
        input: input.clone(),
    });
    let inner = call.inner.clone();
    Dispatch::pending(async move {
        let contents = match fut.await {
            Ok(contents) => contents,
            Err(HandlerError::InputRequired(ir)) => {
                return input.finish(&inner.mrtr, &binding, *ir);
            }
            Err(other) => return Err(other.into_error_object()),
        };
        if contents.is_empty() {
            return Err(
                ErrorObject::invalid_params(format!("Resource not found: {uri}"))
                    .with_data(json!({"uri": uri})),
            );
        }
        let contents = serde_json::to_value(contents)
            .map(|v| {
                crate::files::gate_resource_contents(v, || {
                    crate::files::client_can_download(&gate_ctx)
                })
            })
            .map_err(|e| ErrorObject::internal(format!("result serialization: {e}")))?;
        Ok(json!({
            "contents": contents,
            "ttlMs": hint.ttl_ms(),
            "cacheScope": hint.scope_str(),
        }))
    })
}

fn get_prompt(mut call: Call<'_>) -> Dispatch {
    let name = match string_param(&call.params, "name") {
        Ok(name) => name.to_owned(),
        Err(e) => return Dispatch::Ready(Err(e)),
    };
    let catalog = call.inner.catalog();
    let Some(entry) = catalog.prompt(&name).cloned() else {
        return Dispatch::Ready(Err(ErrorObject::invalid_params(format!(
            "Unknown prompt: {name}"
        ))));
    };
    let arguments = match call.params.remove("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(args)) => args,
        Some(_) => {
            return Dispatch::Ready(Err(ErrorObject::invalid_params(
                "\"params.arguments\" must be an object of strings",
            )));
        }
    };
    if let Some((key, _)) = arguments.iter().find(|(_, v)| !v.is_string()) {
        return Dispatch::Ready(Err(ErrorObject::invalid_params(format!(
            "prompt argument {key:?} must be a string"
        ))));
    }
    if let Some(missing) = entry.required.iter().find(|r| !arguments.contains_key(*r)) {
        return Dispatch::Ready(Err(ErrorObject::invalid_params(format!(
            "Missing required argument {missing:?} for prompt {name:?}"
        ))));
    }
    let (binding, input) = match call.mrtr_input(
        "prompts/get",
        Salient::Value(json!({"name": name, "arguments": arguments})),
    ) {
        Ok(prepared) => prepared,
        Err(e) => return Dispatch::Ready(Err(e)),
    };
    let fut = entry.handler.get(PromptGet {
        name,
        arguments,
        ctx: call.ctx,
        input: input.clone(),
    });
    let inner = call.inner.clone();
    Dispatch::pending(async move {
        match fut.await {
            Ok(result) => serde_json::to_value(result)
                .map_err(|e| ErrorObject::internal(format!("result serialization: {e}"))),
            Err(HandlerError::InputRequired(ir)) => input.finish(&inner.mrtr, &binding, *ir),
            Err(other) => Err(other.into_error_object()),
        }
    })
}

fn complete(call: Call<'_>) -> Dispatch {
    let Some(handler) = call.inner.completion.clone() else {
        return Dispatch::Ready(Err(ErrorObject::method_not_found(call.method)));
    };
    let parsed = (|| {
        let reference = call
            .params
            .get("ref")
            .and_then(Value::as_object)
            .ok_or_else(|| ErrorObject::invalid_params("\"params.ref\" must be an object"))?;
        let reference = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                CompletionRef::Prompt(string_param(reference, "name")?.to_owned())
            }
            Some("ref/resource") => {
                CompletionRef::Resource(string_param(reference, "uri")?.to_owned())
            }
            _ => {
                return Err(ErrorObject::invalid_params(
                    "\"params.ref.type\" must be \"ref/prompt\" or \"ref/resource\"",
                ));
            }
        };
        let argument = call
            .params
            .get("argument")
            .and_then(Value::as_object)
            .ok_or_else(|| ErrorObject::invalid_params("\"params.argument\" must be an object"))?;
        let name = string_param(argument, "name")?.to_owned();
        let value = string_param(argument, "value")?.to_owned();
        let context_arguments = call
            .params
            .get("context")
            .and_then(|c| c.get("arguments"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        Ok((reference, name, value, context_arguments))
    })();
    let (reference, argument, value, context_arguments) = match parsed {
        Ok(p) => p,
        Err(e) => return Dispatch::Ready(Err(e)),
    };
    let fut = handler.complete(CompletionRequest {
        reference,
        argument,
        value,
        context_arguments,
        ctx: call.ctx,
    });
    Dispatch::pending(async move {
        let completion = fut
            .await
            .map_err(HandlerError::into_error_object)?
            .truncated();
        Ok(json!({ "completion": completion }))
    })
}
