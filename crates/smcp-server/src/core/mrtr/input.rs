//! The MRTR side of one request: the answers it carries, the verified state of earlier
//! rounds, and the construction of the next `InputRequiredResult`.
//!
//! The handler re-runs from the top on every retry. To make that safe, answers the handler
//! consumed in earlier rounds travel inside the sealed state, so asking the same question
//! again on a later round returns the earlier answer without bothering the user; and the
//! handler's own typed state (`set_state` / `state`) travels the same way. Do side effects
//! only after the last `ask`: everything before it runs once per round.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use smcp_proto::error::ErrorObject;
use smcp_proto::patterns::mrtr::{InputRequest, InputRequiredResult, InputResponses};

use super::seal::{self, Envelope, StateError};
use super::{InputRequired, MrtrConfig, digest};
use crate::core::context::RequestContext;
use crate::core::handler::HandlerError;

/// The multi round-trip input of one request (`call.input`).
///
/// # Examples
///
/// See [`Input::ask`], [`Input::set_state`] and the [module docs](crate::mrtr).
#[derive(Clone, Debug)]
pub struct Input {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    ctx: RequestContext,
    /// This request's `inputResponses`.
    responses: Map<String, Value>,
    /// Take an answer only for a key the verified state shows was asked (tools with
    /// single-use state: a confirmation must not be skippable).
    asked_only: bool,
    /// The verified state of the previous round, if the request carried one.
    prior: Option<Envelope>,
    /// Answers consumed during this run (to carry into the next round).
    consumed: Mutex<Map<String, Value>>,
    /// State set by the handler for the next round.
    next_state: Mutex<Option<Value>>,
}

/// What a later round of a call carries when the server itself holds it instead of sealing
/// it into a `requestState` (see [`Input::hold`] and [`Input::resume`]): e.g. a SEP-2663 task
/// whose handler asked for input. Serializable, so a shared task store can keep it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldInput {
    /// How many rounds ended with input required, the last one included.
    pub round: u32,
    /// The keys the last round asked for: the only new answers the next round takes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asked: Vec<String>,
    /// Answers taken in earlier rounds, by key.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub answers: Map<String, Value>,
    /// The handler's own state ([`Input::set_state`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
}

/// What [`Input::prepare`] needs to bind and verify state.
#[derive(Debug)]
pub(crate) struct Binding {
    pub(crate) method: &'static str,
    pub(crate) salient: Salient,
    pub(crate) principal: Option<String>,
}

/// The salient params of a request, which its `requestState` is bound to.
#[derive(Debug)]
pub(crate) enum Salient {
    /// Already built.
    Value(Value),
    /// A `tools/call`, read back from its body (a reference-counted handle, no copy) only
    /// when state is verified or sealed: most calls never take part in a multi round trip,
    /// and copying the arguments for each of them would cost every call.
    ToolCall(Bytes),
}

impl Salient {
    /// A `tools/call`'s salient params, built now (when there is no body to read back).
    pub(crate) fn tool_call(name: &str, arguments: &Map<String, Value>) -> Self {
        let mut salient = Map::with_capacity(2);
        salient.insert("name".to_owned(), Value::from(name));
        salient.insert("arguments".to_owned(), Value::Object(arguments.clone()));
        Self::Value(Value::Object(salient))
    }

    /// A `resources/read`'s salient params.
    pub(crate) fn resource(uri: &str) -> Self {
        let mut salient = Map::with_capacity(1);
        salient.insert("uri".to_owned(), Value::from(uri));
        Self::Value(Value::Object(salient))
    }

    /// A `prompts/get`'s salient params.
    pub(crate) fn prompt(
        name: &str,
        arguments: &std::collections::BTreeMap<String, String>,
    ) -> Self {
        let mut salient = Map::with_capacity(2);
        salient.insert("name".to_owned(), Value::from(name));
        salient.insert(
            "arguments".to_owned(),
            Value::Object(
                arguments
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                    .collect(),
            ),
        );
        Self::Value(Value::Object(salient))
    }

    /// `{"name": …, "arguments": …}` for a tool call, absent or `null` arguments read as `{}`,
    /// as dispatch reads them.
    fn value(&self) -> Value {
        match self {
            Salient::Value(value) => value.clone(),
            Salient::ToolCall(body) => {
                #[derive(serde::Deserialize)]
                struct Body {
                    params: Params,
                }
                #[derive(serde::Deserialize)]
                struct Params {
                    name: String,
                    #[serde(default)]
                    arguments: Option<Map<String, Value>>,
                }
                match serde_json::from_slice::<Body>(body) {
                    Ok(Body { params }) => {
                        let mut salient = Map::with_capacity(2);
                        salient.insert("name".to_owned(), Value::String(params.name));
                        salient.insert(
                            "arguments".to_owned(),
                            Value::Object(params.arguments.unwrap_or_default()),
                        );
                        Value::Object(salient)
                    }
                    // Unreachable for a body that dispatch accepted; binds to nothing a
                    // real call could match.
                    Err(_) => Value::Null,
                }
            }
        }
    }

    pub(crate) fn digest(&self, method: &str) -> String {
        digest::salient_digest(method, &self.value())
    }
}

fn now_ms(config: &MrtrConfig) -> u64 {
    crate::core::keys::unix_millis(&config.clock)
}

pub(crate) fn state_error(error: StateError) -> ErrorObject {
    ErrorObject::invalid_params(format!("Invalid requestState: {error}"))
        .with_data(json!({"reason": error.to_string()}))
}

impl Input {
    /// Takes the request's `inputResponses` and verifies its `requestState`. Errors are
    /// −32602 and mean the handler must not run.
    pub(crate) fn prepare(
        config: &MrtrConfig,
        binding: &Binding,
        responses: Option<InputResponses>,
        request_state: Option<String>,
        asked_only: bool,
        ctx: RequestContext,
    ) -> Result<Self, ErrorObject> {
        let responses = responses.map(|r| r.0).unwrap_or_default();
        let prior = match request_state {
            None => None,
            Some(token) => {
                let envelope = seal::open(&config.keys, &token, config.max_state_bytes)
                    .map_err(state_error)?;
                if envelope.expires_ms <= now_ms(config) {
                    return Err(state_error(StateError::Expired));
                }
                if envelope.method != binding.method
                    || envelope.digest != binding.salient.digest(binding.method)
                {
                    return Err(state_error(StateError::WrongRequest));
                }
                if envelope.principal != binding.principal {
                    return Err(state_error(StateError::WrongPrincipal));
                }
                Some(envelope)
            }
        };
        Ok(Self {
            shared: Arc::new(Shared {
                ctx,
                responses,
                asked_only,
                prior,
                consumed: Mutex::new(Map::new()),
                next_state: Mutex::new(None),
            }),
        })
    }

    /// What the next round must carry after this one ended asking `ir`: the answers taken so
    /// far (earlier rounds' and this one's), the keys asked and the handler's state — what
    /// `Input::finish` would seal into `requestState`, for a server that holds it itself.
    pub fn hold(&self, ir: &InputRequired) -> HeldInput {
        let mut answers = self
            .shared
            .prior
            .as_ref()
            .map(|p| p.answers.clone())
            .unwrap_or_default();
        answers.extend(
            self.shared
                .consumed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        );
        let state = ir
            .state
            .clone()
            .or_else(|| {
                self.shared
                    .next_state
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone()
            })
            .or_else(|| self.shared.prior.as_ref().and_then(|p| p.state.clone()));
        HeldInput {
            round: self.round() + 1,
            asked: ir.requests.iter().map(|(key, _)| key.clone()).collect(),
            answers,
            state,
        }
    }

    /// The input of a later round from what the server held ([`Input::hold`]) and the new
    /// answers to the keys it asked (`responses`, e.g. collected by `tasks/update`): the
    /// handler, run again from the top, gets earlier answers and its state back as after a
    /// `requestState` retry. `ctx` is the context whose declared capabilities decide which
    /// questions may be asked.
    pub fn resume(ctx: RequestContext, held: HeldInput, responses: Map<String, Value>) -> Self {
        let prior = Envelope {
            method: String::new(),
            digest: String::new(),
            principal: ctx.principal().map(|p| p.0.clone()),
            expires_ms: u64::MAX,
            round: held.round,
            id: String::new(),
            asked: held.asked,
            answers: held.answers,
            state: held.state,
        };
        Self {
            shared: Arc::new(Shared {
                ctx,
                responses,
                asked_only: true,
                prior: Some(prior),
                consumed: Mutex::new(Map::new()),
                next_state: Mutex::new(None),
            }),
        }
    }

    /// The state the handler set on the previous round, if any.
    pub fn state<T: DeserializeOwned>(&self) -> Result<Option<T>, HandlerError> {
        match self.shared.prior.as_ref().and_then(|p| p.state.clone()) {
            None => Ok(None),
            Some(v) => serde_json::from_value(v)
                .map(Some)
                .map_err(|e| HandlerError::internal(format!("requestState content: {e}"))),
        }
    }

    /// Sets the state carried to the next round (sealed; the client cannot read or change it).
    ///
    /// # Examples
    ///
    /// State computed before a question, carried sealed to the retry instead of computed again:
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// let plan = tool("plan").handler(|call| async move {
    ///     let steps: Vec<String> = match call.input.state()? {
    ///         Some(steps) => steps,
    ///         None => {
    ///             let steps = vec!["fetch".to_owned(), "merge".to_owned()]; // expensive
    ///             call.input.set_state(&steps)?;
    ///             steps
    ///         }
    ///     };
    ///     let go = call.input.ask(mrtr::elicit_form(
    ///         "go",
    ///         format!("Run {} steps?", steps.len()),
    ///         serde_json::json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
    ///     ))?;
    ///     Ok(CallToolResult::text(format!("{:?}", go.action)))
    /// });
    /// ```
    pub fn set_state<T: Serialize>(&self, state: &T) -> Result<(), HandlerError> {
        let value = serde_json::to_value(state)
            .map_err(|e| HandlerError::internal(format!("requestState content: {e}")))?;
        *self
            .shared
            .next_state
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(value);
        Ok(())
    }

    /// How many rounds came before this request (0 on the first call).
    pub fn round(&self) -> u32 {
        self.shared.prior.as_ref().map_or(0, |p| p.round)
    }

    /// The random id of the verified state this request carried (stable for that round);
    /// `None` for a first request and for a round the server held ([`Input::resume`]).
    pub fn state_id(&self) -> Option<&str> {
        self.shared
            .prior
            .as_ref()
            .map(|p| p.id.as_str())
            .filter(|id| !id.is_empty())
    }

    /// When the verified state expires.
    pub(crate) fn state_expiry(&self) -> Option<SystemTime> {
        self.shared
            .prior
            .as_ref()
            .map(|p| UNIX_EPOCH + Duration::from_millis(p.expires_ms))
    }

    /// Every `inputResponses` entry the request carried, unvalidated (an intermediary passes
    /// them on as they came).
    pub fn raw_responses(&self) -> &Map<String, Value> {
        &self.shared.responses
    }

    /// The raw `inputResponses` entry for `key`, unvalidated.
    pub fn raw_response(&self, key: &str) -> Option<&Value> {
        self.shared.responses.get(key)
    }

    /// Looks up one answer; records the request in `missing` when there is no valid answer.
    /// `accept` validates a response for the ask, `request` makes the ask's request: the ask
    /// types live in `ask.rs`, above this file.
    pub(crate) fn lookup<T>(
        &self,
        key: &str,
        accept: impl Fn(&Value) -> Option<T>,
        request: impl FnOnce() -> Result<InputRequest, HandlerError>,
        missing: &mut Vec<(String, InputRequest)>,
    ) -> Result<Option<T>, HandlerError> {
        // Where a confirmation must not be skippable, an answer counts only if the sealed
        // state proves this server asked for it on the previous round: not one sent in a
        // first request, nor one for a question of a later round. Elsewhere a well-formed
        // answer is taken when it comes (the spec's SHOULD on information the server can use).
        let asked = !self.shared.asked_only
            || self
                .shared
                .prior
                .as_ref()
                .is_some_and(|p| p.asked.iter().any(|k| k == key));
        let candidates = [
            self.shared.responses.get(key).filter(|_| asked),
            self.shared.prior.as_ref().and_then(|p| p.answers.get(key)),
        ];
        for response in candidates.into_iter().flatten() {
            if let Some(answer) = accept(response) {
                self.shared
                    .consumed
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(key.to_owned(), response.clone());
                return Ok(Some(answer));
            }
        }
        let request = request()?;
        if let Some(caps) = missing_for(&request, &self.shared.ctx) {
            return Err(HandlerError::Rpc(
                ErrorObject::missing_required_client_capability(
                    format!("Input {key:?} needs a client capability this request did not declare"),
                    caps,
                ),
            ));
        }
        missing.push((key.to_owned(), request));
        Ok(None)
    }

    pub(crate) fn input_required(&self, missing: Vec<(String, InputRequest)>) -> HandlerError {
        let mut ir = InputRequired::new();
        for (key, request) in missing {
            ir = ir.request(key, request);
        }
        HandlerError::InputRequired(Box::new(ir))
    }

    /// Builds the `InputRequiredResult` for `ir`: checks each request against the client's
    /// declared capabilities and the round cap, and seals the next state.
    pub(crate) fn finish(
        &self,
        config: &MrtrConfig,
        binding: &Binding,
        ir: InputRequired,
    ) -> Result<InputRequiredResult, ErrorObject> {
        let round = self.round() + 1;
        if round > config.max_rounds {
            return Err(ErrorObject::invalid_params(format!(
                "Multi round-trip limit reached: this request needed more than {} rounds",
                config.max_rounds
            ))
            .with_data(json!({"reason": "roundLimit", "maxRounds": config.max_rounds})));
        }
        for (key, request) in &ir.requests {
            if let Some(caps) = missing_for(request, &self.shared.ctx) {
                return Err(ErrorObject::missing_required_client_capability(
                    format!("Input {key:?} needs a client capability this request did not declare"),
                    caps,
                ));
            }
        }
        let mut answers = self
            .shared
            .prior
            .as_ref()
            .map(|p| p.answers.clone())
            .unwrap_or_default();
        answers.extend(
            self.shared
                .consumed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        );
        let state = ir
            .state
            .or_else(|| {
                self.shared
                    .next_state
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take()
            })
            .or_else(|| self.shared.prior.as_ref().and_then(|p| p.state.clone()));
        let id = crate::core::keys::random_hex::<16>()
            .map_err(|e| ErrorObject::internal(e.to_string()))?;
        let ttl_ms = u64::try_from(config.state_ttl.as_millis()).unwrap_or(u64::MAX);
        let asked = ir.requests.iter().map(|(key, _)| key.clone()).collect();
        let envelope = Envelope {
            asked,
            method: binding.method.to_owned(),
            digest: binding.salient.digest(binding.method),
            principal: binding.principal.clone(),
            expires_ms: now_ms(config).saturating_add(ttl_ms),
            round,
            id,
            answers,
            state,
        };
        let token = seal::seal(&config.keys, &envelope).map_err(ErrorObject::internal)?;
        if token.len() > config.max_state_bytes {
            return Err(ErrorObject::internal(format!(
                "requestState would be {} bytes, above the limit of {}",
                token.len(),
                config.max_state_bytes
            )));
        }
        let mut result = InputRequiredResult::new().with_state(token);
        if !ir.requests.is_empty() {
            result.input_requests = Some(ir.requests.into_iter().collect());
        }
        Ok(result)
    }
}

/// The capability `request` needs, if the client did not declare it, as the
/// `requiredCapabilities` of a −32021 error.
fn missing_for(request: &InputRequest, ctx: &RequestContext) -> Option<Map<String, Value>> {
    use smcp_proto::capabilities::{
        ClientCapabilities, ElicitationCapability, RootsCapability, SamplingCapability,
    };
    use smcp_proto::client::elicitation::ElicitRequestParams;
    let mut need = ClientCapabilities::default();
    let declared = match request {
        InputRequest::Elicit(ElicitRequestParams::Url(_)) => {
            need.elicitation = Some(ElicitationCapability {
                url: Some(Map::new()),
                ..Default::default()
            });
            ctx.has_capability(&["elicitation", "url"])
        }
        InputRequest::Elicit(_) => {
            need.elicitation = Some(ElicitationCapability::default());
            // Declaring only URL mode (`{"elicitation": {"url": {}}}`) is not form support.
            match ctx.client_capabilities().get("elicitation") {
                Some(Value::Object(e)) => e.is_empty() || e.contains_key("form"),
                _ => false,
            }
        }
        InputRequest::CreateMessage(p) if p.tools.is_some() => {
            need.sampling = Some(SamplingCapability {
                tools: Some(Map::new()),
                ..Default::default()
            });
            ctx.has_capability(&["sampling", "tools"])
        }
        InputRequest::CreateMessage(_) => {
            need.sampling = Some(SamplingCapability::default());
            ctx.has_capability(&["sampling"])
        }
        InputRequest::ListRoots(_) => {
            need.roots = Some(RootsCapability::default());
            ctx.has_capability(&["roots"])
        }
    };
    if declared {
        return None;
    }
    match serde_json::to_value(need) {
        Ok(Value::Object(caps)) => Some(caps),
        _ => Some(Map::new()),
    }
}

#[cfg(test)]
mod salient_tests {
    use super::*;

    /// A tool call's salient params read back from its body digest exactly like the value
    /// dispatch would have built from the same call.
    #[test]
    fn tool_call_body_digests_like_the_built_value() {
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{},"name":"echo","arguments":{"text":"hi","n":[1,{"b":2,"a":1}]},"requestState":"x","inputResponses":{}}}"#,
                json!({"name": "echo", "arguments": {"n": [1, {"a": 1, "b": 2}], "text": "hi"}}),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"t"}}"#,
                json!({"name": "t", "arguments": {}}),
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":null,"name":"t"}}"#,
                json!({"name": "t", "arguments": {}}),
            ),
        ];
        for (body, built) in cases {
            let lazy = Salient::ToolCall(Bytes::from_static(body.as_bytes()));
            assert_eq!(
                lazy.digest("tools/call"),
                Salient::Value(built).digest("tools/call"),
                "{body}"
            );
        }
        // Other arguments, another name: another digest.
        let a = Salient::ToolCall(Bytes::from_static(
            br#"{"params":{"name":"t","arguments":{"x":1}}}"#,
        ));
        let b = Salient::ToolCall(Bytes::from_static(
            br#"{"params":{"name":"t","arguments":{"x":2}}}"#,
        ));
        let c = Salient::ToolCall(Bytes::from_static(
            br#"{"params":{"name":"u","arguments":{"x":1}}}"#,
        ));
        assert_ne!(a.digest("tools/call"), b.digest("tools/call"));
        assert_ne!(a.digest("tools/call"), c.digest("tools/call"));
    }
}
