//! SEP-2663 tasks through the gateway, for 2026-07-28 upstreams that serve them: a
//! `tools/call` whose client declared the extension goes up with the declaration, an
//! upstream's `CreateTaskResult` comes back with the task's id qualified by its upstream
//! (`upstream:id`), and `tasks/get`, `tasks/update` and `tasks/cancel` go to the upstream the
//! id names, answered as it answers. Nothing is held: the id says where the task lives.
//! (`notifications/tasks` on listen streams are not passed through: clients poll.)

use std::sync::Arc;

use serde_json::{Map, Value};
use smcp_proto::capabilities::ServerCapabilities;
use smcp_proto::error::ErrorObject;
use smcp_proto::ext::tasks;
use smcp_proto::messages::method;
use smcp_proto::server::tools::CallToolResult;
use smcp_server::extension::{ExtensionRequest, ExtensionResult, ToolOutcome};
use smcp_server::tools::BoxFuture;
use smcp_server::{Extension, HandlerError, MethodSpec, Next, ToolCall, ToolReply};

use crate::passthrough::Passed;
use crate::upstream::Upstream;

/// Between the upstream's name and its task id in the ids the client sees.
const SEPARATOR: char = ':';

/// Which upstream tool a served tool calls (its tool data).
#[derive(Debug, Clone)]
pub(crate) struct Route {
    pub(crate) upstream: Arc<Upstream>,
    /// The tool's name upstream.
    pub(crate) tool: String,
}

/// The tasks extension of the gateway.
#[derive(Debug)]
pub(crate) struct TasksThrough {
    upstreams: Vec<Arc<Upstream>>,
}

impl TasksThrough {
    pub(crate) fn new(upstreams: Vec<Arc<Upstream>>) -> Self {
        Self { upstreams }
    }

    /// The upstream and its own id for a client's task id.
    fn locate(&self, task_id: &str) -> Option<(&Arc<Upstream>, String)> {
        let (name, id) = task_id.split_once(SEPARATOR)?;
        let upstream = self.upstreams.iter().find(|u| u.name() == name)?;
        Some((upstream, id.to_owned()))
    }
}

/// `value` with its `taskId` qualified by `upstream`.
fn qualify(upstream: &str, mut value: Value) -> Value {
    if let Some(Value::String(id)) = value.get_mut(tasks::NAME_MEMBER) {
        *id = format!("{upstream}{SEPARATOR}{id}");
    }
    value
}

fn object(method: &str, value: Value) -> ExtensionResult {
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(ErrorObject::internal(format!(
            "an upstream's {method} answer is not an object"
        ))),
    }
}

impl Extension for TasksThrough {
    fn name(&self) -> &'static str {
        "io.modelcontextprotocol/tasks (gateway)"
    }

    fn capabilities(&self, capabilities: &mut ServerCapabilities) {
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(tasks::EXTENSION_ID.to_owned(), Map::new());
    }

    fn methods(&self) -> Vec<MethodSpec> {
        [
            tasks::METHOD_GET,
            tasks::METHOD_UPDATE,
            tasks::METHOD_CANCEL,
        ]
        .into_iter()
        .map(|m| MethodSpec::new(m).named_by(tasks::NAME_MEMBER))
        .collect()
    }

    fn call(&self, request: ExtensionRequest) -> BoxFuture<ExtensionResult> {
        let ExtensionRequest {
            method,
            mut params,
            ctx,
        } = request;
        if !ctx.has_capability(&["extensions", tasks::EXTENSION_ID]) {
            // As the upstream would answer: before the task is looked up.
            let mut extensions = Map::new();
            extensions.insert(tasks::EXTENSION_ID.to_owned(), Value::Object(Map::new()));
            let mut required = Map::new();
            required.insert("extensions".to_owned(), Value::Object(extensions));
            let refusal = ErrorObject::missing_required_client_capability(
                format!(
                    "{method} needs the {} extension declared",
                    tasks::EXTENSION_ID
                ),
                required,
            );
            return Box::pin(async move { Err(refusal) });
        }
        let located = params
            .get(tasks::NAME_MEMBER)
            .and_then(Value::as_str)
            .and_then(|id| self.locate(id))
            .map(|(upstream, id)| (Arc::clone(upstream), id));
        Box::pin(async move {
            let Some((upstream, id)) = located else {
                return Err(ErrorObject::invalid_params(format!(
                    "{}: no such task",
                    tasks::NAME_MEMBER
                )));
            };
            params.insert(tasks::NAME_MEMBER.to_owned(), Value::String(id));
            let passed = upstream
                .pass_raw(&ctx, None, method, params, true)
                .await
                .map_err(|e| match e {
                    HandlerError::Rpc(object) => object,
                    other => ErrorObject::internal(other.to_string()),
                })?;
            match passed {
                Passed::Complete(value) => object(method, qualify(upstream.name(), value)),
                Passed::Task(_) => Err(ErrorObject::internal(format!(
                    "upstream {:?} answered {method} with a task",
                    upstream.name()
                ))),
            }
        })
    }

    fn tool_call(&self, call: ToolCall, next: Next) -> BoxFuture<ToolOutcome> {
        let route = call.tool_data::<Route>().cloned();
        let declared = call
            .ctx
            .has_capability(&["extensions", tasks::EXTENSION_ID]);
        match route {
            Some(route) if declared && route.upstream.stateless() => Box::pin(async move {
                let mut params = Map::new();
                params.insert("name".to_owned(), Value::String(route.tool));
                params.insert("arguments".to_owned(), Value::Object(call.arguments));
                let passed = route
                    .upstream
                    .pass_raw(
                        &call.ctx,
                        Some(&call.input),
                        method::TOOLS_CALL,
                        params,
                        true,
                    )
                    .await?;
                match passed {
                    Passed::Complete(value) => serde_json::from_value::<CallToolResult>(value)
                        .map(ToolReply::Complete)
                        .map_err(|e| {
                            HandlerError::internal(format!(
                                "upstream {:?} sent a malformed tools/call result (at line {} \
                                 column {})",
                                route.upstream.name(),
                                e.line(),
                                e.column()
                            ))
                        }),
                    Passed::Task(created) => match qualify(route.upstream.name(), created) {
                        Value::Object(map) => Ok(ToolReply::Other(map)),
                        _ => Err(HandlerError::internal(format!(
                            "upstream {:?} sent a malformed CreateTaskResult",
                            route.upstream.name()
                        ))),
                    },
                }
            }),
            _ => next.run(call),
        }
    }
}
