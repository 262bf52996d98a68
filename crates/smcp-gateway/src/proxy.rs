//! The served items that call through: each upstream item's definition under the gateway's
//! name, with a handler that forwards to its upstream under the upstream's name; and the
//! completion handler that routes by reference.

use std::sync::Arc;

use serde_json::{Map, Value};
use smcp_proto::messages::method;
use smcp_proto::server::prompts::Prompt;
use smcp_proto::server::resources::{ReadResourceResult, Resource, ResourceTemplate};
use smcp_proto::server::tools::{CallToolResult, Tool};
use smcp_proto::server::utilities::completion::{
    CompleteRequestParams, CompleteResult, CompletionArgument, CompletionContext,
    CompletionReference, PromptReference, ResourceTemplateReference,
};
use smcp_server::tools::BoxFuture;
use smcp_server::{
    Completion, CompletionRequest, HandlerError, PromptBuilder, ResourceBuilder, ToolBuilder,
    ToolCall, ToolHandler,
};

use crate::held::HeldCalls;
use crate::upstream::Upstream;

/// The served tool.
pub(crate) fn tool(
    name: &str,
    tool: Tool,
    upstream: &Arc<Upstream>,
    held: &Arc<HeldCalls>,
) -> ToolBuilder {
    #[cfg(feature = "files")]
    let (fields, schema) = {
        let fields = crate::files::fields(&tool.input_schema);
        let mut schema = tool.input_schema;
        crate::files::widen(&mut schema, &fields, upstream);
        (Arc::new(fields), schema)
    };
    #[cfg(not(feature = "files"))]
    let schema = tool.input_schema;
    let mut builder = smcp_server::tool(name).input_schema(Value::Object(schema));
    if let Some(title) = tool.title {
        builder = builder.title(title);
    }
    if let Some(description) = tool.description {
        builder = builder.description(description);
    }
    if let Some(schema) = tool.output_schema {
        builder = builder.output_schema(Value::Object(schema));
    }
    if let Some(annotations) = tool.annotations {
        builder = builder.annotations(annotations);
    }
    if let Some(icons) = tool.icons {
        builder = builder.icons(icons);
    }
    if let Some(meta) = tool.meta {
        builder = builder.meta(meta);
    }
    let per_tool = upstream.config.tool_scopes.get(&tool.name).into_iter();
    for scope in upstream.config.scopes.iter().chain(per_tool.flatten()) {
        builder = builder.scope(scope);
    }
    builder
        .data(crate::tasks::Route {
            upstream: Arc::clone(upstream),
            tool: tool.name.clone(),
            #[cfg(feature = "files")]
            fields: Arc::clone(&fields),
        })
        .handler_impl(ToolProxy {
            upstream: Arc::clone(upstream),
            tool: tool.name,
            held: Arc::clone(held),
            #[cfg(feature = "files")]
            fields,
        })
}

/// A served tool's handler.
struct ToolProxy {
    upstream: Arc<Upstream>,
    /// The tool's name upstream.
    tool: String,
    held: Arc<HeldCalls>,
    /// Its SEP-2631 file fields.
    #[cfg(feature = "files")]
    fields: Arc<Vec<smcp_files::FileField>>,
}

impl ToolHandler for ToolProxy {
    fn call(&self, mut call: ToolCall) -> BoxFuture<Result<CallToolResult, HandlerError>> {
        let upstream = Arc::clone(&self.upstream);
        let held = Arc::clone(&self.held);
        let tool = self.tool.clone();
        #[cfg(feature = "files")]
        let fields = Arc::clone(&self.fields);
        Box::pin(async move {
            #[allow(unused_mut, reason = "changed only with the files feature")]
            let mut arguments = std::mem::take(&mut call.arguments);
            // The ways of calling but the stateless one are boxed where they are taken: this
            // future, moved into its box on every call, holds only the common way inline.
            #[cfg(feature = "files")]
            if !fields.is_empty() && call.input.round() == 0 {
                Box::pin(crate::files::arguments(
                    &call,
                    &upstream,
                    &fields,
                    &mut arguments,
                ))
                .await?;
            }
            #[allow(unused_mut, reason = "changed only with the files feature")]
            let mut result = if upstream.stateless() {
                let mut params = Map::new();
                params.insert("name".to_owned(), Value::String(tool));
                params.insert("arguments".to_owned(), Value::Object(arguments));
                upstream
                    .pass(&call.ctx, Some(&call.input), method::TOOLS_CALL, params)
                    .await?
            } else if call.input.round() > 0 {
                Box::pin(held.resume(&call.ctx, &call.input)).await?
            } else {
                Box::pin(upstream.call_tool(&held, &call.ctx, &tool, arguments)).await?
            };
            #[cfg(feature = "files")]
            if crate::files::has_outputs(&result) {
                Box::pin(crate::files::outputs(&call, &upstream, &mut result)).await?;
            }
            Ok(result)
        })
    }
}

/// The served prompt.
pub(crate) fn prompt(name: &str, prompt: Prompt, upstream: &Arc<Upstream>) -> PromptBuilder {
    let mut builder = smcp_server::prompt(name);
    if let Some(title) = prompt.title {
        builder = builder.title(title);
    }
    if let Some(description) = prompt.description {
        builder = builder.description(description);
    }
    if let Some(icons) = prompt.icons {
        builder = builder.icons(icons);
    }
    if let Some(meta) = prompt.meta {
        builder = builder.meta(meta);
    }
    for argument in prompt.arguments.unwrap_or_default() {
        builder = builder.argument_definition(argument);
    }
    for scope in &upstream.config.scopes {
        builder = builder.scope(scope);
    }
    let upstream = Arc::clone(upstream);
    let original = prompt.name;
    builder.handler(move |get| {
        let upstream = Arc::clone(&upstream);
        let original = original.clone();
        async move {
            if upstream.stateless() {
                let mut params = Map::new();
                params.insert("name".to_owned(), Value::String(original));
                let arguments = get
                    .arguments
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect();
                params.insert("arguments".to_owned(), Value::Object(arguments));
                return upstream
                    .pass(&get.ctx, Some(&get.input), method::PROMPTS_GET, params)
                    .await;
            }
            upstream
                .request(&get.ctx, |client| async move {
                    client.get_prompt(&original, get.arguments).await
                })
                .await
        }
    })
}

/// The served resource, under its own URI.
pub(crate) fn resource(resource: Resource, upstream: &Arc<Upstream>) -> ResourceBuilder {
    let mut builder = smcp_server::resource(resource.uri, resource.name);
    if let Some(title) = resource.title {
        builder = builder.title(title);
    }
    if let Some(description) = resource.description {
        builder = builder.description(description);
    }
    if let Some(mime_type) = resource.mime_type {
        builder = builder.mime_type(mime_type);
    }
    if let Some(annotations) = resource.annotations {
        builder = builder.annotations(annotations);
    }
    if let Some(size) = resource.size {
        builder = builder.size(size);
    }
    if let Some(icons) = resource.icons {
        builder = builder.icons(icons);
    }
    if let Some(meta) = resource.meta {
        builder = builder.meta(meta);
    }
    reads_through(builder, upstream)
}

/// The served resource template, under its own URI template.
pub(crate) fn template(template: ResourceTemplate, upstream: &Arc<Upstream>) -> ResourceBuilder {
    let mut builder = smcp_server::resource_template(template.uri_template, template.name);
    if let Some(title) = template.title {
        builder = builder.title(title);
    }
    if let Some(description) = template.description {
        builder = builder.description(description);
    }
    if let Some(mime_type) = template.mime_type {
        builder = builder.mime_type(mime_type);
    }
    if let Some(annotations) = template.annotations {
        builder = builder.annotations(annotations);
    }
    if let Some(icons) = template.icons {
        builder = builder.icons(icons);
    }
    if let Some(meta) = template.meta {
        builder = builder.meta(meta);
    }
    reads_through(builder, upstream)
}

/// Reads through `upstream`, behind its scopes.
fn reads_through(mut builder: ResourceBuilder, upstream: &Arc<Upstream>) -> ResourceBuilder {
    for scope in &upstream.config.scopes {
        builder = builder.scope(scope);
    }
    let upstream = Arc::clone(upstream);
    builder.handler(move |read| {
        let upstream = Arc::clone(&upstream);
        async move {
            let result: ReadResourceResult = if upstream.stateless() {
                let mut params = Map::new();
                params.insert("uri".to_owned(), Value::String(read.uri));
                upstream
                    .pass(&read.ctx, Some(&read.input), method::RESOURCES_READ, params)
                    .await?
            } else {
                let uri = read.uri;
                upstream
                    .request(&read.ctx, |client| async move {
                        client.read_resource(&uri).await
                    })
                    .await?
            };
            Ok(result.contents)
        }
    })
}

/// Which upstream completes a reference, and the reference as it knows it.
pub(crate) type Route = Option<(Arc<Upstream>, CompletionReference)>;

/// Completes through the upstream that owns the reference (`route`); a reference no
/// upstream owns gets no values.
pub(crate) async fn complete(
    request: CompletionRequest,
    route: impl FnOnce(&CompletionReference) -> Route,
) -> Result<Completion, HandlerError> {
    let Some((upstream, reference)) = route(&request.reference) else {
        return Ok(Completion::values(Vec::new()));
    };
    let CompletionRequest {
        argument,
        value,
        context_arguments,
        ctx,
        ..
    } = request;
    // To a 2026-07-28 upstream the request goes up as any other passed through: the client's
    // capabilities, and an exchanged token where the upstream takes one.
    let result: CompleteResult = if upstream.stateless() {
        let params = CompleteRequestParams {
            meta: None,
            reference,
            argument: CompletionArgument {
                name: argument,
                value,
            },
            context: (!context_arguments.is_empty()).then_some(CompletionContext {
                arguments: Some(context_arguments),
            }),
        };
        let Ok(Value::Object(params)) = serde_json::to_value(params) else {
            return Err(HandlerError::internal(
                "completion/complete: cannot encode the request",
            ));
        };
        upstream.pass(&ctx, None, method::COMPLETE, params).await?
    } else {
        upstream
            .request(&ctx, |client| async move {
                client
                    .complete(reference, &argument, &value, context_arguments)
                    .await
            })
            .await?
    };
    Ok(result.completion)
}

/// The upstream's own reference for a prompt it serves as `original`.
pub(crate) fn prompt_reference(original: &str) -> CompletionReference {
    CompletionReference::Prompt(PromptReference {
        name: original.to_owned(),
        title: None,
    })
}

/// The upstream's own reference for a template (the URI template is not renamed).
pub(crate) fn template_reference(uri: &str) -> CompletionReference {
    CompletionReference::ResourceTemplate(ResourceTemplateReference {
        uri: uri.to_owned(),
    })
}
