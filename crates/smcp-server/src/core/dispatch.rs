//! Method dispatch: every method is routed here, from a checked request to a reply, an
//! error, a running handler, or a listen stream for the transport to open.
//!
//! The order of refusals (REQUIREMENTS A1 item 18, the part after the transport's checks):
//! an unknown or unadvertised method (−32601); multi round-trip members on a method that
//! takes none (−32602); params that do not fit the method (−32602); then, for `tools/call`,
//! the unknown tool (−32602), the transport's mirrored params (−32020), the required client
//! capabilities (−32021), `requestState` (−32602) and the arguments against the input schema
//! (an `isError` result, so the model can correct itself). Only then does a handler run.
//!
//! Before all of that, when the server has rate limits and the transport asks for them
//! ([`RateCheck::Apply`]), the request's buckets are asked (`ratelimit/gate.rs`): a refusal
//! is the answer, whatever else is wrong with the request. A limiter that answers at once
//! (in this process) refuses before any dispatch work; one that answers later (a shared
//! store) gates the dispatched request ([`Dispatch::Gated`]): its handler runs only once the
//! decision lets it.

use std::borrow::Cow;
use std::net::IpAddr;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::FutureExt as _;
use serde_json::{Map, Value};
use smcp_proto::basic::ResultType;
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::{ClientRequest, IncomingRequest, InvalidParams};
use smcp_proto::messages::method;
use smcp_proto::patterns::mrtr::InputResponses;
use smcp_proto::patterns::subscriptions::SubscriptionsListenRequestParams;
use smcp_proto::server::discover::DiscoverResult;
use smcp_proto::server::prompts::{GetPromptRequestParams, ListPromptsResult};
use smcp_proto::server::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams, ReadResourceResult,
};
use smcp_proto::server::tools::{CallToolRequestParams, CallToolResult, ListToolsResult};
use smcp_proto::server::utilities::completion::{
    CompleteRequestParams, CompleteResult, CompletionReference,
};
use smcp_proto::x_mcp_header::HeaderParam;
use tokio_util::sync::CancellationToken;

use super::access::check_declared;
use super::catalog::Catalog;
use super::completion::{CompletionRequest, truncated};
use super::context::{ContextParts, EventSink, MetaSource, Principal, RequestContext, ServerRef};
use super::extension::{ExtensionRequest, Extensions, Next, ToolReply};
use super::handler::HandlerError;
use super::meta::{Admitted, meta_bytes};
use super::mrtr::{Binding, Input, Salient};
use super::pagination;
use super::prompts::PromptGet;
use super::ratelimit::{Gate, RateLimited};
use super::reply::{Finished, Reply};
use super::resources::{Descriptor, ResourceRead};
use super::server::{SUPPORTED_VERSIONS, Shared};
use super::tools::{BoxFuture, ToolCall};
use crate::config::CacheHint;

/// One request the transport has read and checked, ready for dispatch.
pub(crate) struct Call<'a> {
    /// The method.
    pub(crate) method: Cow<'static, str>,
    /// The typed params, or why they do not fit the method.
    pub(crate) params: Result<ClientRequest, InvalidParams>,
    /// Whether params carried `inputResponses` or `requestState`.
    pub(crate) mrtr_members: bool,
    /// The request context (it carries the id, `_meta` and the principal).
    pub(crate) ctx: RequestContext,
    /// The request's JSON text, when the transport has it: a `tools/call`'s salient params
    /// are read back from it only when `requestState` is verified or sealed, instead of
    /// copying the arguments of every call.
    pub(crate) body: Option<Bytes>,
    /// The transport's own copies of params (over HTTP, the `Mcp-Param-*` headers).
    pub(crate) mirror: &'a dyn ParamMirror,
    /// Whether the rate limits apply to this request.
    pub(crate) rate: RateCheck,
}

/// Whether dispatch asks the rate limits about a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RateCheck {
    /// Ask them (an unauthenticated request keyed by `peer` when the limits say so).
    Apply {
        /// The peer's address, when the transport has one.
        peer: Option<IpAddr>,
    },
    /// Do not: the transport decided already, or this is a later round of one request.
    #[cfg_attr(not(feature = "legacy"), allow(dead_code))]
    Skip,
}

/// What a transport decided about a request before dispatch.
pub(crate) struct Admission {
    /// What it read from `_meta`.
    pub(crate) admitted: Admitted,
    /// Where the handler's notifications go, if it may send any.
    pub(crate) events: Option<EventSink>,
    /// The request's cancellation.
    pub(crate) cancel: CancellationToken,
    /// Who the request acts for.
    pub(crate) principal: Option<Principal>,
    /// What its credentials allow.
    pub(crate) access: Option<super::access::Access>,
    /// Whether the rate limits apply.
    pub(crate) rate: RateCheck,
}

impl<'a> Call<'a> {
    /// The call for `request`, parsed from `message`: its context keeps `_meta` as a slice of
    /// `message`, and the salient params of a `tools/call` are read back from it when needed.
    pub(crate) fn new(
        shared: &Arc<Shared>,
        request: IncomingRequest<'_>,
        message: &Bytes,
        admission: Admission,
        mirror: &'a dyn ParamMirror,
    ) -> Self {
        Self::build(shared, request, message, admission, mirror, None)
    }

    fn build(
        shared: &Arc<Shared>,
        request: IncomingRequest<'_>,
        message: &Bytes,
        admission: Admission,
        mirror: &'a dyn ParamMirror,
        given_meta: Option<Bytes>,
    ) -> Self {
        let IncomingRequest {
            id,
            method,
            meta,
            params,
            mrtr_members,
        } = request;
        let ctx = RequestContext::new(ContextParts {
            id,
            method: method.clone(),
            meta: match (given_meta, meta.as_deref()) {
                (Some(given), _) => MetaSource::Raw(given),
                (None, Some(m)) => match admission.admitted.client_capabilities {
                    Some(caps) => MetaSource::Request(meta_bytes(message, m), caps),
                    None => MetaSource::Raw(meta_bytes(message, m)),
                },
                (None, None) => MetaSource::Parsed(Map::new()),
            },
            progress_token: admission.admitted.progress_token,
            log_level: admission.admitted.log_level,
            logging_enabled: shared.features.logging,
            events: admission.events,
            cancel: admission.cancel,
            principal: admission.principal,
            access: admission.access,
            server: ServerRef(Some(shared.clone())),
        });
        Self {
            method,
            params,
            mrtr_members,
            ctx,
            body: Some(message.clone()),
            mirror,
            rate: admission.rate,
        }
    }
}

impl Call<'_> {
    /// The call for `request` with `_meta` given whole, as JSON, rather than read from the
    /// message (the earlier revisions' sessions, whose `_meta` comes from the session).
    #[cfg(feature = "legacy")]
    pub(crate) fn with_meta<'m>(
        shared: &Arc<Shared>,
        request: IncomingRequest<'_>,
        message: &Bytes,
        admission: Admission,
        mirror: &'m dyn ParamMirror,
        meta: Bytes,
    ) -> Call<'m> {
        Call::build(shared, request, message, admission, mirror, Some(meta))
    }
}

/// What a transport knows about params besides the body, checked once the tool is known.
pub(crate) trait ParamMirror {
    /// `Err` (−32020) when a copy disagrees with the arguments it mirrors.
    fn check_tool_arguments(
        &self,
        params: &[HeaderParam],
        arguments: &Map<String, Value>,
    ) -> Result<(), ErrorObject>;
}

/// What dispatch produced.
pub(crate) enum Dispatch {
    /// The answer, now.
    Ready(Finished),
    /// A handler is running.
    Pending(BoxFuture<Finished>),
    /// `subscriptions/listen`: the transport opens the stream (after its own checks), from
    /// the params or the reason they are invalid (a protocol error: HTTP 400), and the
    /// request context (extensions that honour filter members of their own read it).
    Listen(
        Result<SubscriptionsListenRequestParams, ErrorObject>,
        RequestContext,
    ),
    /// A rate limit decision still to come (a shared store): the request (never a listen)
    /// is answered with the refusal, or as dispatched once the gate lets it through.
    Gated(BoxFuture<Result<(), RateLimited>>, Box<Dispatch>),
}

impl Dispatch {
    fn pending(fut: impl Future<Output = Finished> + Send + 'static) -> Self {
        Self::Pending(Box::pin(fut))
    }

    /// The same, with a pending gate folded into the handler's future (for transports that
    /// answer a refusal in-band, as any other error: stdio, the sessions' later rounds).
    #[cfg_attr(not(any(feature = "stdio", feature = "legacy")), allow(dead_code))]
    pub(crate) fn ungated(self) -> Self {
        match self {
            Self::Gated(gate, then) => match *then {
                Self::Ready(outcome) => Self::pending(async move {
                    gate.await.map_err(|r| r.to_error_object())?;
                    outcome
                }),
                Self::Pending(fut) => Self::pending(async move {
                    gate.await.map_err(|r| r.to_error_object())?;
                    fut.await
                }),
                other => other.ungated(),
            },
            other => other,
        }
    }
}

/// Methods that may answer `input_required` (`basic/patterns/mrtr.mdx` §Supported Requests).
const MRTR_METHODS: [&str; 3] = [
    method::TOOLS_CALL,
    method::RESOURCES_READ,
    method::PROMPTS_GET,
];

/// Whether the server serves `name` (an unadvertised kind is an unknown method).
fn serves(shared: &Shared, catalog: &Catalog, name: &str) -> bool {
    let caps = &catalog.capabilities;
    match name {
        method::DISCOVER => true,
        method::TOOLS_LIST | method::TOOLS_CALL => caps.tools.is_some(),
        method::RESOURCES_LIST | method::RESOURCES_TEMPLATES_LIST | method::RESOURCES_READ => {
            caps.resources.is_some()
        }
        method::PROMPTS_LIST | method::PROMPTS_GET => caps.prompts.is_some(),
        method::COMPLETE => caps.completions.is_some() && shared.completion.is_some(),
        method::SUBSCRIPTIONS_LISTEN => {
            shared.features.any_change_notifications() || super::listen::extensions_listen(shared)
        }
        other => shared.extension_method(other).is_some(),
    }
}

/// An `input_required` answer, counted.
fn input_required(shared: &Shared, ir: smcp_proto::patterns::mrtr::InputRequiredResult) -> Reply {
    shared
        .metrics
        .mrtr(super::metrics::MrtrRound::InputRequired);
    Reply::InputRequired(ir)
}

pub(crate) fn dispatch(shared: &Arc<Shared>, call: Call<'_>) -> Dispatch {
    if let (Some(limits), RateCheck::Apply { peer }) = (&shared.rate_limits, call.rate)
        && call.method != method::SUBSCRIPTIONS_LISTEN
    {
        let tool = match &call.params {
            Ok(ClientRequest::CallTool(p)) => Some(p.name.as_str()),
            _ => None,
        };
        match limits.gate(call.ctx.principal(), peer, tool) {
            Gate::Open => {}
            Gate::Closed(refused) => return Dispatch::Ready(Err(refused.to_error_object())),
            Gate::Pending(gate) => return Dispatch::Gated(gate, Box::new(route(shared, call))),
        }
    }
    route(shared, call)
}

/// [`dispatch`], past the rate limits.
fn route(shared: &Arc<Shared>, call: Call<'_>) -> Dispatch {
    let catalog = shared.catalog();
    let name = &*call.method;
    if !serves(shared, &catalog, name) {
        return Dispatch::Ready(Err(ErrorObject::method_not_found(name)));
    }
    if call.mrtr_members {
        shared.metrics.mrtr(super::metrics::MrtrRound::Retry);
    }
    if call.mrtr_members && ClientRequest::models(name) && !MRTR_METHODS.contains(&name) {
        let refusal = ErrorObject::invalid_params(format!(
            "{name} does not take inputResponses or requestState: only tools/call, \
             resources/read and prompts/get are multi round-trip requests"
        ));
        return if name == method::SUBSCRIPTIONS_LISTEN {
            Dispatch::Listen(Err(refusal), call.ctx)
        } else {
            Dispatch::Ready(Err(refusal))
        };
    }
    let request = match call.params {
        Ok(request) => request,
        Err(invalid) if name == method::SUBSCRIPTIONS_LISTEN => {
            return Dispatch::Listen(Err(invalid.to_error_object()), call.ctx);
        }
        Err(invalid) => return Dispatch::Ready(Err(invalid.to_error_object())),
    };
    let (ctx, body, mirror) = (call.ctx, call.body, call.mirror);
    if let Some(access) = ctx.access() {
        let tool = match &request {
            ClientRequest::CallTool(p) => Some(p.name.as_str()),
            _ => None,
        };
        if let Err(refusal) = access.0.check(name, tool) {
            tracing::debug!(method = name, tool, needed = %refusal.scope, "insufficient scope");
            return Dispatch::Ready(Err(refusal.to_error_object()));
        }
    }
    match request {
        ClientRequest::Discover => Dispatch::Ready(Ok(discover(shared, &catalog))),
        ClientRequest::ListTools(p) => {
            let hint = shared.cache.tools_list;
            list(shared, p.cursor.as_deref(), &catalog.tools, |page, next| {
                let shown = page.iter().filter(|t| {
                    ctx.access()
                        .is_none_or(|access| access.0.shows_tool(&t.tool.name, &t.scopes))
                });
                let mut r = ListToolsResult::new(shown.map(|t| t.tool.clone()).collect());
                r.next_cursor = next;
                Reply::ListTools(cached(r, hint))
            })
        }
        ClientRequest::ListResources(p) => {
            let hint = shared.cache.resources_list;
            list(
                shared,
                p.cursor.as_deref(),
                &catalog.resources,
                |page, next| {
                    let items = page.iter().filter_map(|r| match &r.descriptor {
                        Descriptor::Resource(d) => Some(d.clone()),
                        Descriptor::Template(..) => None,
                    });
                    let mut r = ListResourcesResult::new(items.collect());
                    r.next_cursor = next;
                    Reply::ListResources(cached(r, hint))
                },
            )
        }
        ClientRequest::ListResourceTemplates(p) => {
            let hint = shared.cache.templates_list;
            list(
                shared,
                p.cursor.as_deref(),
                &catalog.templates,
                |page, next| {
                    let items = page.iter().filter_map(|r| match &r.descriptor {
                        Descriptor::Template(d, _) => Some(d.clone()),
                        Descriptor::Resource(_) => None,
                    });
                    let mut r = ListResourceTemplatesResult::new(items.collect());
                    r.next_cursor = next;
                    Reply::ListResourceTemplates(cached(r, hint))
                },
            )
        }
        ClientRequest::ListPrompts(p) => {
            let hint = shared.cache.prompts_list;
            list(
                shared,
                p.cursor.as_deref(),
                &catalog.prompts,
                |page, next| {
                    let mut r =
                        ListPromptsResult::new(page.iter().map(|p| p.prompt.clone()).collect());
                    r.next_cursor = next;
                    Reply::ListPrompts(cached(r, hint))
                },
            )
        }
        ClientRequest::CallTool(p) => call_tool(shared, &catalog, p, ctx, body, mirror),
        ClientRequest::ReadResource(p) => read_resource(shared, &catalog, p, ctx),
        ClientRequest::GetPrompt(p) => get_prompt(shared, &catalog, p, ctx),
        ClientRequest::Complete(p) => complete(shared, &catalog, p, ctx),
        ClientRequest::Listen(p) => Dispatch::Listen(Ok(p), ctx),
        ClientRequest::Other(params) => {
            let Some((extension, spec)) = shared.extension_method(name) else {
                return Dispatch::Ready(Err(ErrorObject::method_not_found(name)));
            };
            let fut = extension.call(ExtensionRequest {
                method: spec.method,
                params,
                ctx,
            });
            Dispatch::pending(fut.map(|r| r.map(Reply::Object)))
        }
    }
}

/// `ttlMs` and `cacheScope` of a cacheable result.
trait Cacheable {
    fn set_cache(&mut self, ttl_ms: u64, scope: smcp_proto::basic::CacheScope);
}

macro_rules! cacheable {
    ($($t:ty),*) => {
        $(impl Cacheable for $t {
            fn set_cache(&mut self, ttl_ms: u64, scope: smcp_proto::basic::CacheScope) {
                self.ttl_ms = ttl_ms;
                self.cache_scope = scope;
            }
        })*
    };
}

cacheable!(
    ListToolsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListPromptsResult,
    ReadResourceResult,
    DiscoverResult
);

fn cached<R: Cacheable>(mut result: R, hint: CacheHint) -> R {
    result.set_cache(hint.ttl_ms(), hint.scope);
    result
}

fn discover(shared: &Shared, catalog: &Catalog) -> Reply {
    let result = DiscoverResult {
        meta: None,
        result_type: ResultType::Complete,
        supported_versions: SUPPORTED_VERSIONS.iter().map(|v| (*v).to_owned()).collect(),
        capabilities: catalog.capabilities.clone(),
        instructions: shared.instructions.clone(),
        ttl_ms: 0,
        cache_scope: Default::default(),
    };
    Reply::Discover(Box::new(cached(result, shared.cache.discover)))
}

fn list<T>(
    shared: &Shared,
    cursor: Option<&str>,
    items: &[T],
    render: impl FnOnce(&[T], Option<String>) -> Reply,
) -> Dispatch {
    Dispatch::Ready(
        pagination::page(items, cursor, shared.limits.page_size)
            .map(|(page, next)| render(page, next))
            .map_err(ErrorObject::invalid_params),
    )
}

/// Binds multi round-trip state to this request (`method` + salient params + principal)
/// and verifies any `requestState` it carries; an error means the handler must not run.
fn mrtr_input(
    shared: &Shared,
    ctx: &RequestContext,
    method: &'static str,
    salient: Salient,
    responses: Option<InputResponses>,
    request_state: Option<String>,
    asked_only: bool,
) -> Result<(Binding, Input), ErrorObject> {
    let binding = Binding {
        method,
        salient,
        principal: ctx.principal().map(|p| p.0.clone()),
    };
    let input = Input::prepare(
        &shared.mrtr,
        &binding,
        responses,
        request_state,
        asked_only,
        ctx.clone(),
    )?;
    Ok((binding, input))
}

/// Refuses a state that was already used, for tools that demand single use.
async fn check_single_use(shared: &Shared, input: &Input) -> Result<(), ErrorObject> {
    let (Some(id), Some(expiry)) = (input.state_id(), input.state_expiry()) else {
        return Ok(());
    };
    if shared.replay.first_use(id, expiry).await {
        Ok(())
    } else {
        Err(super::mrtr::state_error(super::mrtr::StateError::Replayed))
    }
}

fn call_tool(
    shared: &Arc<Shared>,
    catalog: &Catalog,
    params: CallToolRequestParams,
    ctx: RequestContext,
    body: Option<Bytes>,
    mirror: &dyn ParamMirror,
) -> Dispatch {
    let CallToolRequestParams {
        name,
        arguments,
        input_responses,
        request_state,
        ..
    } = params;
    let Some(tool) = catalog.tool(&name).cloned() else {
        return Dispatch::Ready(Err(ErrorObject::invalid_params(format!(
            "Unknown tool: {name}"
        ))));
    };
    if let Err(refusal) =
        check_declared(ctx.access(), method::TOOLS_CALL, Some(&name), &tool.scopes)
    {
        return Dispatch::Ready(Err(refusal));
    }
    let arguments = arguments.unwrap_or_default();
    if let Err(mismatch) = mirror.check_tool_arguments(&tool.header_params, &arguments) {
        return Dispatch::Ready(Err(mismatch));
    }
    if !tool.required_capabilities.is_empty()
        && let Err(unreadable) = ctx.try_meta()
    {
        // Never read an unreadable `_meta` as one that declares nothing (−32021).
        return Dispatch::Ready(Err(ErrorObject::invalid_params(unreadable.to_owned())));
    }
    for cap in &tool.required_capabilities {
        if !ctx.has_capability(&[cap.as_str()]) {
            return Dispatch::Ready(Err(
                HandlerError::missing_capability(cap).into_error_object()
            ));
        }
    }
    let salient = match body {
        Some(body) => Salient::ToolCall(body),
        None => Salient::tool_call(&name, &arguments),
    };
    let (binding, input) = match mrtr_input(
        shared,
        &ctx,
        method::TOOLS_CALL,
        salient,
        input_responses,
        request_state,
        tool.single_use_state,
    ) {
        Ok(prepared) => prepared,
        Err(e) => return Dispatch::Ready(Err(e)),
    };
    let arguments = Value::Object(arguments);
    if let Err(problems) = tool.validator.validate(&arguments) {
        return Dispatch::Ready(Ok(Reply::Tool(CallToolResult::error_text(format!(
            "Invalid arguments for tool {name:?}: {}",
            problems.join("; ")
        )))));
    }
    let Value::Object(arguments) = arguments else {
        return Dispatch::Ready(Err(ErrorObject::internal("arguments")));
    };
    let shared = shared.clone();
    Dispatch::pending(async move {
        if tool.single_use_state {
            check_single_use(&shared, &input).await?;
        }
        let handler = tool.handler.clone();
        let call = ToolCall {
            name,
            arguments,
            ctx,
            input: input.clone(),
            extensions: Extensions::new(),
            tool,
        };
        let outcome = if shared.extensions.is_empty() {
            handler.call(call).await.map(ToolReply::Complete)
        } else {
            Next::chain(shared.extensions.clone(), handler)
                .run(call)
                .await
        };
        match outcome {
            Ok(ToolReply::Complete(result)) => Ok(Reply::Tool(result)),
            Ok(ToolReply::Other(result)) => Ok(Reply::Object(result)),
            Err(HandlerError::Failed(message)) => {
                Ok(Reply::Tool(CallToolResult::error_text(message)))
            }
            Err(HandlerError::InputRequired(ir)) => input
                .finish(&shared.mrtr, &binding, *ir)
                .map(|ir| input_required(&shared, ir)),
            Err(other) => Err(other.into_error_object()),
        }
    })
}

fn resource_not_found(uri: &str) -> ErrorObject {
    let mut data = Map::new();
    data.insert("uri".to_owned(), Value::from(uri));
    ErrorObject::invalid_params(format!("Resource not found: {uri}")).with_data(Value::Object(data))
}

fn read_resource(
    shared: &Arc<Shared>,
    catalog: &Catalog,
    params: ReadResourceRequestParams,
    ctx: RequestContext,
) -> Dispatch {
    let ReadResourceRequestParams {
        uri,
        input_responses,
        request_state,
        ..
    } = params;
    let Some((entry, variables)) = catalog.resource(&uri) else {
        return Dispatch::Ready(Err(resource_not_found(&uri)));
    };
    if let Err(refusal) = check_declared(ctx.access(), method::RESOURCES_READ, None, &entry.scopes)
    {
        return Dispatch::Ready(Err(refusal));
    }
    let hint = entry.cache.unwrap_or(shared.cache.resources_read);
    let (binding, input) = match mrtr_input(
        shared,
        &ctx,
        method::RESOURCES_READ,
        Salient::resource(&uri),
        input_responses,
        request_state,
        false,
    ) {
        Ok(prepared) => prepared,
        Err(e) => return Dispatch::Ready(Err(e)),
    };
    let gate_ctx = ctx.clone();
    let fut = entry.handler.read(ResourceRead {
        uri: uri.clone(),
        variables,
        ctx,
        input: input.clone(),
    });
    let shared = shared.clone();
    Dispatch::pending(async move {
        let contents = match fut.await {
            Ok(contents) => contents,
            Err(HandlerError::InputRequired(ir)) => {
                return input
                    .finish(&shared.mrtr, &binding, *ir)
                    .map(|ir| input_required(&shared, ir));
            }
            Err(other) => return Err(other.into_error_object()),
        };
        if contents.is_empty() {
            return Err(resource_not_found(&uri));
        }
        let mut result = cached(ReadResourceResult::new(contents), hint);
        for extension in shared.extensions.iter() {
            extension.resource_read(&gate_ctx, &mut result);
        }
        Ok(Reply::ReadResource(result))
    })
}

fn get_prompt(
    shared: &Arc<Shared>,
    catalog: &Catalog,
    params: GetPromptRequestParams,
    ctx: RequestContext,
) -> Dispatch {
    let GetPromptRequestParams {
        name,
        arguments,
        input_responses,
        request_state,
        ..
    } = params;
    let Some(entry) = catalog.prompt(&name).cloned() else {
        return Dispatch::Ready(Err(ErrorObject::invalid_params(format!(
            "Unknown prompt: {name}"
        ))));
    };
    if let Err(refusal) = check_declared(ctx.access(), method::PROMPTS_GET, None, &entry.scopes) {
        return Dispatch::Ready(Err(refusal));
    }
    let arguments = arguments.unwrap_or_default();
    if let Some(missing) = entry.required.iter().find(|r| !arguments.contains_key(*r)) {
        return Dispatch::Ready(Err(ErrorObject::invalid_params(format!(
            "Missing required argument {missing:?} for prompt {name:?}"
        ))));
    }
    let (binding, input) = match mrtr_input(
        shared,
        &ctx,
        method::PROMPTS_GET,
        Salient::prompt(&name, &arguments),
        input_responses,
        request_state,
        false,
    ) {
        Ok(prepared) => prepared,
        Err(e) => return Dispatch::Ready(Err(e)),
    };
    let fut = entry.handler.get(PromptGet {
        name,
        arguments,
        ctx,
        input: input.clone(),
    });
    let shared = shared.clone();
    Dispatch::pending(async move {
        match fut.await {
            Ok(result) => Ok(Reply::GetPrompt(result)),
            Err(HandlerError::InputRequired(ir)) => input
                .finish(&shared.mrtr, &binding, *ir)
                .map(|ir| input_required(&shared, ir)),
            Err(other) => Err(other.into_error_object()),
        }
    })
}

fn complete(
    shared: &Shared,
    catalog: &Catalog,
    params: CompleteRequestParams,
    ctx: RequestContext,
) -> Dispatch {
    let Some(handler) = shared.completion.clone() else {
        return Dispatch::Ready(Err(ErrorObject::method_not_found(method::COMPLETE)));
    };
    // Completing a prompt's arguments or a template's variables needs what using it needs;
    // looked up only when credentials are checked at all.
    if ctx.access().is_some() {
        let declared = match &params.reference {
            CompletionReference::Prompt(p) => catalog.prompt(&p.name).map(|e| e.scopes.as_slice()),
            CompletionReference::ResourceTemplate(t) => catalog
                .templates
                .iter()
                .find(|e| e.key == t.uri)
                .map(|e| e.scopes.as_slice()),
        };
        if let Err(refusal) = check_declared(
            ctx.access(),
            method::COMPLETE,
            None,
            declared.unwrap_or_default(),
        ) {
            return Dispatch::Ready(Err(refusal));
        }
    }
    let fut = handler.complete(CompletionRequest {
        reference: params.reference,
        argument: params.argument.name,
        value: params.argument.value,
        context_arguments: params.context.and_then(|c| c.arguments).unwrap_or_default(),
        ctx,
    });
    Dispatch::pending(async move {
        let completion = fut.await.map_err(HandlerError::into_error_object)?;
        Ok(Reply::Complete(CompleteResult {
            meta: None,
            result_type: ResultType::Complete,
            completion: truncated(completion),
        }))
    })
}
