//! One round of a request that may need input, its questions left unanswered: for an
//! intermediary (a gateway) that passes a 2026-07-28 server's `InputRequiredResult` on to its
//! own client and sends the answers back on the retry, holding nothing in between; and, for
//! the same intermediary, a `CreateTaskResult` and the SEP-2663 task methods passed through
//! as the server sent them.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use smcp_proto::capabilities::ClientCapabilities;
use smcp_proto::ext::tasks;
use smcp_proto::jsonrpc::{Notification, RawResult};
use smcp_proto::messages::method;
use smcp_proto::meta;
use smcp_proto::patterns::mrtr::InputRequiredResult;
use tokio_util::sync::CancellationToken;

use super::handle::Client;
use super::result::{ResultKind, decode, result_kind, unexpected_task, within};
use crate::error::{Error, Kind, Result};

type NotificationFn = Arc<dyn Fn(Notification) + Send + Sync>;

/// What one round ended with.
///
/// A result comes as the text the server sent: decode it into its type
/// (`serde_json::from_str(result.get())`) or pass it on as it is; its JSON syntax is checked,
/// its strings and numbers are checked by whatever decodes it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum RoundOutcome {
    /// The final result, as the server sent it (a `CallToolResult`, `GetPromptResult` or
    /// `ReadResourceResult`).
    Complete(RawResult),
    /// The server needs input first: its `inputRequests` and `requestState`, as sent.
    InputRequired(InputRequiredResult),
    /// The server runs the `tools/call` as a task (SEP-2663; only when the round declared the
    /// tasks extension): its `CreateTaskResult`, as sent.
    Task(RawResult),
}

/// One round of `tools/call`, `prompts/get` or `resources/read` ([`Client::round`]).
#[must_use = "a Round does nothing until sent"]
pub struct Round {
    client: Client,
    method: &'static str,
    params: Map<String, Value>,
    on_notification: Option<NotificationFn>,
    timeout: Option<Duration>,
    cancel: Option<CancellationToken>,
    /// Headers of this request only (over HTTP).
    headers: Vec<(http::HeaderName, http::HeaderValue)>,
}

impl std::fmt::Debug for Round {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Round")
            .field("method", &self.method)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// One round of `method` (`tools/call`, `prompts/get` or `resources/read`) with `params`
    /// (a retry's `inputResponses` and `requestState` among them), without the MRTR loop: an
    /// `InputRequiredResult` is returned as it came, for the caller to put to its own client.
    /// SEP-2663's `tasks/get`, `tasks/update` and `tasks/cancel`, and `completion/complete`,
    /// are sent the same way, their answers returned as sent ([`RoundOutcome::Complete`]): for
    /// a proxy relaying a request with its own capabilities or token.
    /// Only a 2026-07-28 server asks this way; against a server of an earlier revision the
    /// round fails with [`ErrorKind::UnsupportedInEra`](crate::ErrorKind::UnsupportedInEra)
    /// (its questions are requests the [`InputHandler`](crate::InputHandler) answers).
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// use smcp_client::RoundOutcome;
    /// let params = serde_json::json!({"name": "confirm", "arguments": {}});
    /// match client.round("tools/call", params)?.send().await? {
    ///     RoundOutcome::Complete(result) => println!("{result}"),
    ///     RoundOutcome::InputRequired(asked) => println!("asks {:?}", asked.input_requests),
    ///     _ => {}
    /// }
    /// # Ok(()) }
    /// ```
    pub fn round(&self, method_name: &str, params: Value) -> Result<Round> {
        let method = match method_name {
            method::TOOLS_CALL => method::TOOLS_CALL,
            method::PROMPTS_GET => method::PROMPTS_GET,
            method::RESOURCES_READ => method::RESOURCES_READ,
            tasks::METHOD_GET => tasks::METHOD_GET,
            tasks::METHOD_UPDATE => tasks::METHOD_UPDATE,
            tasks::METHOD_CANCEL => tasks::METHOD_CANCEL,
            method::COMPLETE => method::COMPLETE,
            other => {
                return Err(Error::config(format!(
                    "a round is of tools/call, prompts/get, resources/read, \
                     completion/complete or a tasks method, not {other}"
                )));
            }
        };
        let Value::Object(params) = params else {
            return Err(Error::config(format!(
                "{method} params must be a JSON object"
            )));
        };
        Ok(Round {
            client: self.clone(),
            method,
            params,
            on_notification: None,
            timeout: self.inner.timeout,
            cancel: None,
            headers: Vec::new(),
        })
    }
}

impl Round {
    /// Declares these capabilities for this request instead of the client's own (an
    /// intermediary declares its client's, so that the server asks only what can be answered).
    pub fn client_capabilities(self, capabilities: &ClientCapabilities) -> Self {
        match serde_json::to_value(capabilities) {
            Ok(Value::Object(capabilities)) => self.client_capabilities_json(capabilities),
            _ => self.client_capabilities_json(Map::new()),
        }
    }

    /// [`Self::client_capabilities`] as JSON, sent as given: for a proxy or gateway that
    /// relays the capabilities its own client declared, without a round trip through
    /// [`ClientCapabilities`].
    pub fn client_capabilities_json(mut self, capabilities: Map<String, Value>) -> Self {
        let meta = self
            .params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = meta {
            m.insert(
                meta::CLIENT_CAPABILITIES.to_owned(),
                Value::Object(capabilities),
            );
        }
        self
    }

    /// Calls `f` with each notification on the request's stream (progress, log lines).
    pub fn on_notification(mut self, f: impl Fn(Notification) + Send + Sync + 'static) -> Self {
        self.on_notification = Some(Arc::new(f));
        self
    }

    /// Overrides the client's timeout for this round (`None`: no timeout).
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Cancels the round (closing its stream, or over stdio `notifications/cancelled`) when
    /// `token` is cancelled.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Sends `Authorization: Bearer <token>` with this round only, over HTTP, in place of
    /// the client's own ([`crate::ClientBuilder::bearer_token`]): a token obtained for this
    /// request, e.g. by an RFC 8693 exchange. Over stdio it is not sent.
    ///
    /// # Errors
    ///
    /// A token that cannot be a header value (a control character, a line break).
    pub fn bearer_token(mut self, token: &str) -> Result<Self> {
        let mut value = http::HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| Error::config("the round's bearer token is not a valid header value"))?;
        value.set_sensitive(true);
        self.headers.push((http::header::AUTHORIZATION, value));
        Ok(self)
    }

    /// Sends the round.
    pub async fn send(self) -> Result<RoundOutcome> {
        let Round {
            client,
            method,
            mut params,
            on_notification,
            timeout,
            cancel,
            headers,
        } = self;
        if let Some(era) = client.era()
            && era != crate::Era::Stateless
        {
            return Err(Error::new(Kind::NotInEra {
                feature: "a round with its InputRequiredResult returned".to_owned(),
                version: client.protocol_version(),
            }));
        }
        let tool = params
            .get("name")
            .and_then(Value::as_str)
            .filter(|_| method == method::TOOLS_CALL)
            .map(str::to_owned);
        let header_params = match &tool {
            Some(name) if client.knows_tool(name) => client.catalog().params_for(name)?,
            _ => Vec::new(),
        };
        let mut sink = move |n: Notification| match &on_notification {
            Some(f) => f(n),
            None => tracing::debug!(method = %n.method, "notification"),
        };
        let result = within(
            timeout,
            cancel,
            client.exchange(method, &mut params, &header_params, &headers, &mut sink),
        )
        .await?;
        match result_kind(&result)? {
            ResultKind::Complete => Ok(RoundOutcome::Complete(result)),
            ResultKind::InputRequired => {
                let asked: InputRequiredResult = decode(method, &result)?;
                if asked.input_requests.is_none() && asked.request_state.is_none() {
                    return Err(Error::protocol(
                        "an InputRequiredResult must carry inputRequests or requestState",
                    ));
                }
                Ok(RoundOutcome::InputRequired(asked))
            }
            ResultKind::Task => {
                let declared = params_declare_tasks(&params);
                if method != method::TOOLS_CALL || !declared {
                    return Err(unexpected_task(method, declared));
                }
                Ok(RoundOutcome::Task(result))
            }
        }
    }
}

/// Whether the capabilities a round declares name the tasks extension.
fn params_declare_tasks(params: &Map<String, Value>) -> bool {
    params
        .get("_meta")
        .and_then(|m| m.get(meta::CLIENT_CAPABILITIES))
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(tasks::EXTENSION_ID))
        .is_some_and(Value::is_object)
}
