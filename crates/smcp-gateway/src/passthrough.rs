//! A request to a 2026-07-28 upstream, one round at a time, holding nothing: the client's
//! capabilities go up with it (so the upstream asks only what the client can answer), an
//! upstream's `InputRequiredResult` comes back to the client with its questions and keys as
//! sent and the upstream's `requestState` sealed inside the gateway's own, and the retry's
//! answers go up with the upstream's state. Any instance sharing the gateway's keys can take
//! the retry.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smcp_client::{Client, RoundOutcome};
use smcp_proto::jsonrpc::{Notification, RawResult};
use smcp_proto::messages::method;
use smcp_proto::meta;
use smcp_proto::patterns::progress::ProgressNotificationParams;
use smcp_proto::server::utilities::logging::LoggingMessageNotificationParams;
use smcp_server::mrtr::{Input, InputRequired};
use smcp_server::{HandlerError, RequestContext};
use tokio::sync::mpsc;

/// The notifications of one round waiting to be passed on; past it, dropped.
const NOTIFICATION_ROOM: usize = 256;

/// How a round goes up beyond the client's request.
#[derive(Debug, Default)]
pub(crate) struct Offer {
    /// The client's declaration of the tasks extension goes up too.
    pub(crate) tasks: bool,
    /// The gateway stores files: the upstream is told the client takes and sends them (the
    /// gateway moves them); without, that it takes none.
    pub(crate) files: bool,
    /// A token for this round in place of the upstream client's own (an exchanged one).
    pub(crate) bearer: Option<String>,
}

/// What the gateway's `requestState` carries for a passed-through round.
#[derive(Debug, Serialize, Deserialize)]
struct PassedState {
    /// The upstream's `requestState`, if it sent one.
    upstream: Option<String>,
}

/// What a passed-through round ended with, for the client.
#[derive(Debug)]
pub(crate) enum Passed {
    /// The result, as the upstream sent it: [`crate::ours::ours`] decodes it as the
    /// gateway's answer.
    Complete(RawResult),
    /// A `CreateTaskResult` (only when `tasks` allowed it), as the upstream sent it but for
    /// its `serverInfo`.
    Task(Value),
}

/// One round of `method` (`params` as the upstream knows them) for the client request of
/// `ctx` and `input`: the result, or an `InputRequiredResult` for the client. With `tasks`,
/// the client's declaration of the tasks extension goes up too, and the upstream may answer
/// with a task (see [`Offer`]).
pub(crate) async fn round(
    client: Client,
    ctx: &RequestContext,
    input: Option<&Input>,
    method_name: &str,
    mut params: Map<String, Value>,
    offer: Offer,
) -> Result<Result<Passed, HandlerError>, smcp_client::Error> {
    let Offer {
        tasks,
        files,
        bearer,
    } = offer;
    // The answers go up as they came, unknown keys included (the upstream ignores what it
    // did not ask); a first request may carry answers too.
    if let Some(input) = input
        && !input.raw_responses().is_empty()
    {
        params.insert(
            "inputResponses".to_owned(),
            Value::Object(input.raw_responses().clone()),
        );
    }
    if let Some(input) = input
        && input.round() > 0
    {
        let state: PassedState = match input.state() {
            Ok(Some(state)) => state,
            Ok(None) => {
                return Ok(Err(HandlerError::invalid_params(
                    "requestState: missing on a retry of a gateway request",
                )));
            }
            Err(e) => return Ok(Err(e)),
        };
        if let Some(upstream_state) = state.upstream {
            params.insert("requestState".to_owned(), Value::String(upstream_state));
        }
    }
    // Progress and log notifications go up only where the client asked for them; without
    // either the upstream sends none (a log line needs `logLevel`: logging.mdx), and the
    // round has nothing to pass on.
    let mut up_meta = Map::new();
    let progress = ctx.progress_token().is_some();
    if progress {
        up_meta.insert(
            meta::PROGRESS_TOKEN.to_owned(),
            Value::String("gateway".to_owned()),
        );
    }
    let level = ctx.log_level();
    if let Some(level) = level {
        up_meta.insert(meta::LOG_LEVEL.to_owned(), Value::from(level.as_str()));
    }
    params.insert("_meta".to_owned(), Value::Object(up_meta));
    let mut round = client.round(method_name, Value::Object(params))?;
    if let Some(bearer) = &bearer {
        round = round.bearer_token(bearer)?;
    }
    let round = round
        .client_capabilities_json(capabilities_of(ctx, tasks, files))
        .cancellation(ctx.cancellation_token());
    let outcome = if progress || level.is_some() {
        let (tx, mut rx) = mpsc::channel::<Notification>(NOTIFICATION_ROOM);
        let sent = round
            .on_notification(move |n| {
                let _ = tx.try_send(n);
            })
            .send();
        tokio::pin!(sent);
        let outcome = loop {
            tokio::select! {
                biased;
                Some(n) = rx.recv() => pass_on(ctx, n).await,
                outcome = &mut sent => break outcome?,
            }
        };
        while let Ok(n) = rx.try_recv() {
            pass_on(ctx, n).await;
        }
        outcome
    } else {
        round.send().await?
    };
    Ok(match outcome {
        RoundOutcome::Complete(result) => Ok(Passed::Complete(result)),
        RoundOutcome::Task(created) => match crate::ours::ours_value(&created) {
            Ok(created) => Ok(Passed::Task(created)),
            Err(e) => Err(HandlerError::internal(format!(
                "{method_name}: a malformed CreateTaskResult from the upstream (at line {} \
                 column {})",
                e.line(),
                e.column()
            ))),
        },
        RoundOutcome::InputRequired(asked) => {
            let requests = asked.input_requests.unwrap_or_default();
            let state = PassedState {
                upstream: asked.request_state,
            };
            let mut required = InputRequired::new();
            for (key, request) in requests {
                required = required.request(key, request);
            }
            match required.state(&state) {
                Ok(required) => Err(HandlerError::from(required)),
                Err(e) => Err(e),
            }
        }
        _ => Err(HandlerError::internal(format!(
            "{method_name}: an upstream answer the gateway does not know"
        ))),
    })
}

/// The client's declared capabilities, as sent up; without `tasks`, all but the tasks
/// extension (the upstream must answer inline). Files are the gateway's to move: `files`
/// says whether it can (then it declares them, whatever the client did).
fn capabilities_of(ctx: &RequestContext, tasks: bool, files: bool) -> Map<String, Value> {
    let mut declared = ctx.client_capabilities().clone();
    if !tasks && let Some(Value::Object(extensions)) = declared.get_mut("extensions") {
        extensions.remove(smcp_proto::ext::tasks::EXTENSION_ID);
    }
    declared.remove("files");
    if files {
        declared.insert(
            "files".to_owned(),
            serde_json::json!({"upload": true, "download": true, "transports": ["https"]}),
        );
    }
    declared
}

/// A progress or log notification of the upstream's, passed on under the client's own
/// progress token.
async fn pass_on(ctx: &RequestContext, n: Notification) {
    let params = n.params.unwrap_or(Value::Null);
    match n.method.as_str() {
        method::PROGRESS => {
            if let Ok(p) = serde_json::from_value::<ProgressNotificationParams>(params) {
                let _ = ctx
                    .progress(p.progress, p.total, p.message.as_deref())
                    .await;
            }
        }
        method::MESSAGE => {
            if let Ok(line) = serde_json::from_value::<LoggingMessageNotificationParams>(params) {
                let _ = ctx.log(line.level, line.logger.as_deref(), line.data).await;
            }
        }
        other => tracing::debug!(method = other, "upstream notification not passed on"),
    }
}
