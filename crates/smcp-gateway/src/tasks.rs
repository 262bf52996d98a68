//! SEP-2663 tasks through the gateway, for 2026-07-28 upstreams that serve them: a
//! `tools/call` whose client declared the extension goes up with the declaration, an
//! upstream's `CreateTaskResult` comes back with the task's id qualified by its upstream
//! (`upstream:id`), and `tasks/get`, `tasks/update` and `tasks/cancel` go to the upstream the
//! id names, answered as it answers. Nothing is held: the id says where the task lives.
//! A listener's `taskIds` are followed at their upstreams (`task_listen`), so
//! `notifications/tasks` reach it too.

use std::sync::Arc;

use serde_json::{Map, Value};
use smcp_proto::capabilities::ServerCapabilities;
use smcp_proto::error::ErrorObject;
use smcp_proto::ext::tasks;
use smcp_proto::messages::method;
use smcp_proto::server::tools::CallToolResult;
use smcp_server::extension::{ExtensionRequest, ExtensionResult, ToolOutcome};
use smcp_server::tools::BoxFuture;
use smcp_server::{
    Extension, HandlerError, ListenGrant, MethodSpec, Next, RequestContext, SubscriptionFilter,
    ToolCall, ToolReply,
};
use tokio_util::sync::CancellationToken;

use crate::ours::{ours, ours_value};
use crate::passthrough::Passed;
use crate::task_listen::{Followed, MAX_LISTEN_TASK_IDS, topic};
use crate::upstream::Upstream;

/// Between the upstream's name and its task id in the ids the client sees.
const SEPARATOR: char = ':';

/// Which upstream tool a served tool calls (its tool data).
#[derive(Debug, Clone)]
pub(crate) struct Route {
    pub(crate) upstream: Arc<Upstream>,
    /// The tool's name upstream.
    pub(crate) tool: String,
    /// Its SEP-2631 file fields.
    #[cfg(feature = "files")]
    pub(crate) fields: Arc<Vec<smcp_files::FileField>>,
}

/// The tasks extension of the gateway.
#[derive(Debug)]
pub(crate) struct TasksThrough {
    upstreams: Vec<Arc<Upstream>>,
    /// The tasks followed for listeners.
    followed: Arc<Followed>,
    /// Ends the following when the gateway stops.
    stop: CancellationToken,
}

impl TasksThrough {
    pub(crate) fn new(upstreams: Vec<Arc<Upstream>>, stop: CancellationToken) -> Self {
        Self {
            upstreams,
            followed: Arc::default(),
            stop,
        }
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

/// −32021: `what` needs the tasks extension declared.
fn undeclared(what: &str) -> ErrorObject {
    let mut extensions = Map::new();
    extensions.insert(tasks::EXTENSION_ID.to_owned(), Value::Object(Map::new()));
    let mut required = Map::new();
    required.insert("extensions".to_owned(), Value::Object(extensions));
    ErrorObject::missing_required_client_capability(
        format!(
            "{what} needs the {} extension declared",
            tasks::EXTENSION_ID
        ),
        required,
    )
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
            let refusal = undeclared(method);
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
                Passed::Complete(raw) => match ours_value(&raw) {
                    Ok(value) => object(method, qualify(upstream.name(), value)),
                    Err(_) => Err(ErrorObject::internal(format!(
                        "upstream {:?} sent a malformed {method} answer",
                        upstream.name()
                    ))),
                },
                Passed::Task(_) => Err(ErrorObject::internal(format!(
                    "upstream {:?} answered {method} with a task",
                    upstream.name()
                ))),
            }
        })
    }

    fn listens(&self) -> bool {
        true
    }

    fn listen(
        &self,
        ctx: RequestContext,
        requested: SubscriptionFilter,
    ) -> BoxFuture<Result<ListenGrant, ErrorObject>> {
        let Some(ids) = requested.task_ids else {
            return Box::pin(async { Ok(ListenGrant::default()) });
        };
        if !ctx.has_capability(&["extensions", tasks::EXTENSION_ID]) {
            let refusal = undeclared("\"taskIds\" on subscriptions/listen");
            return Box::pin(async move { Err(refusal) });
        }
        if ids.len() > MAX_LISTEN_TASK_IDS {
            let refusal = ErrorObject::invalid_params(format!(
                "\"params.notifications.taskIds\" has {} ids; at most {MAX_LISTEN_TASK_IDS} are \
                 allowed",
                ids.len()
            ));
            return Box::pin(async move { Err(refusal) });
        }
        let Some(server) = ctx.server() else {
            return Box::pin(async { Ok(ListenGrant::default()) });
        };
        let mut answers = Vec::new();
        for qualified in ids {
            // Unknown ids, and those of earlier-revision upstreams, are not acknowledged.
            let Some((upstream, id)) = self.locate(&qualified) else {
                continue;
            };
            if !upstream.stateless() || answers.iter().any(|(q, _, _)| *q == qualified) {
                continue;
            }
            let timeout = upstream.config.timeout;
            let asked = self.followed.follow(
                qualified.clone(),
                Arc::clone(upstream),
                id,
                server.clone(),
                self.stop.clone(),
            );
            answers.push((qualified, timeout, asked));
        }
        Box::pin(async move {
            let answered = futures_util::future::join_all(answers.into_iter().map(
                |(qualified, timeout, asked)| async move {
                    let yes = match asked {
                        None => true,
                        Some(said) => {
                            matches!(tokio::time::timeout(timeout, said).await, Ok(Ok(true)))
                        }
                    };
                    yes.then_some(qualified)
                },
            ))
            .await;
            let granted: Vec<String> = answered.into_iter().flatten().collect();
            Ok(ListenGrant {
                topics: granted.iter().map(|q| topic(q)).collect(),
                honoured: SubscriptionFilter {
                    task_ids: Some(granted),
                    ..SubscriptionFilter::default()
                },
            })
        })
    }

    fn tool_call(&self, mut call: ToolCall, next: Next) -> BoxFuture<ToolOutcome> {
        let route = call.tool_data::<Route>().cloned();
        let declared = call
            .ctx
            .has_capability(&["extensions", tasks::EXTENSION_ID]);
        match route {
            Some(route) if declared && route.upstream.stateless() => Box::pin(async move {
                #[allow(unused_mut, reason = "changed only with the files feature")]
                let mut arguments = std::mem::take(&mut call.arguments);
                #[cfg(feature = "files")]
                if !route.fields.is_empty() && call.input.round() == 0 {
                    crate::files::arguments(&call, &route.upstream, &route.fields, &mut arguments)
                        .await?;
                }
                let mut params = Map::new();
                params.insert("name".to_owned(), Value::String(route.tool));
                params.insert("arguments".to_owned(), Value::Object(arguments));
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
                    Passed::Complete(raw) => {
                        #[allow(unused_mut, reason = "changed only with the files feature")]
                        let mut result = ours::<CallToolResult>(&raw).map_err(|e| {
                            HandlerError::internal(format!(
                                "upstream {:?} sent a malformed tools/call result (at line \
                                     {} column {})",
                                route.upstream.name(),
                                e.line(),
                                e.column()
                            ))
                        })?;
                        #[cfg(feature = "files")]
                        crate::files::outputs(&call, &route.upstream, &mut result).await?;
                        Ok(ToolReply::Complete(result))
                    }
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
