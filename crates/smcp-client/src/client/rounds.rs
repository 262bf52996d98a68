//! One logical call: the cache, the MRTR rounds (A6 items 59–60, 63), the one-time tool list
//! refresh after a −32020 caused by `Mcp-Param-*` headers, and a `CreateTaskResult` ending a
//! `tools/call` that declared the tasks extension.

use serde_json::{Map, Value};
use smcp_proto::error::HEADER_MISMATCH;
use smcp_proto::ext::tasks::CreateTaskResult;
use smcp_proto::jsonrpc::{Notification, RawResult};
use smcp_proto::messages::method;
use smcp_proto::patterns::mrtr::InputRequiredResult;

use super::handle::Client;
use super::result::{Reply, ResultKind, decode, result_kind, unexpected_task};
use crate::error::{Error, Kind, Result};
use crate::mrtr::{ElicitedFiles, fulfil};
use crate::response::Sink;

impl Client {
    /// A request whose method may never return `InputRequiredResult` (lists, discover,
    /// completion), with caching.
    pub(crate) async fn request(
        &self,
        method_name: &str,
        mut params: Map<String, Value>,
    ) -> Result<RawResult> {
        if let Some(cache) = &self.inner.cache
            && let Some(hit) = cache.get(method_name, &params, &self.inner.auth_context)
        {
            tracing::debug!(method = %method_name, "served from cache");
            return Ok(hit);
        }
        let mut sink = |n: Notification| tracing::debug!(method = %n.method, "notification");
        let result = self
            .exchange(method_name, &mut params, &[], &[], &mut sink)
            .await?;
        match result_kind(&result)? {
            ResultKind::Complete => {}
            ResultKind::InputRequired => {
                return Err(Error::protocol(format!(
                    "{method_name} returned an InputRequiredResult, which only tools/call, \
                     resources/read and prompts/get may return"
                )));
            }
            ResultKind::Task => {
                return Err(unexpected_task(
                    method_name,
                    self.declares_tasks(method_name, Some(&params)),
                ));
            }
        }
        if let Some(cache) = &self.inner.cache {
            cache.put(method_name, &params, &self.inner.auth_context, &result);
        }
        Ok(result)
    }

    /// A request that may need input (`tools/call`, `resources/read`, `prompts/get`): the MRTR
    /// loop (A6 items 59–60, 63) plus the one-time tool list refresh after −32020. A
    /// `tools/call` that declared the tasks extension may end with a task (SEP-2663: MRTR
    /// rounds first, then the `CreateTaskResult`); any other method that returns one is refused.
    pub(crate) async fn request_with_input(
        &self,
        method_name: &str,
        params: Map<String, Value>,
        tool: Option<&str>,
        sink: Sink<'_>,
    ) -> Result<Reply> {
        let cache = self.inner.cache.as_ref();
        if let Some(hit) = cache.and_then(|c| c.get(method_name, &params, &self.inner.auth_context))
        {
            return Ok(Reply::Complete(hit));
        }
        let mut header_params = match tool {
            Some(name) => self.catalog().params_for(name)?,
            None => Vec::new(),
        };
        let mut refreshed = false;
        let mut retry = params.clone();
        let mut rounds = 0u32;
        loop {
            let result = match self
                .exchange(method_name, &mut retry, &header_params, &[], sink)
                .await
            {
                Err(e)
                    if e.jsonrpc_code() == Some(HEADER_MISMATCH)
                        && !refreshed
                        && self.inner.transport.is_http()
                        && let Some(name) = tool =>
                {
                    // The schema may have changed since we built the Mcp-Param-* headers.
                    tracing::info!(tool = %name, error = %e, "header mismatch; refreshing the tool list once");
                    refreshed = true;
                    self.list_tools().await?;
                    header_params = self.catalog().params_for(name)?;
                    continue;
                }
                other => other?,
            };
            match result_kind(&result)? {
                ResultKind::Complete => {
                    if rounds == 0
                        && let Some(c) = cache
                    {
                        c.put(method_name, &params, &self.inner.auth_context, &result);
                    }
                    return Ok(Reply::Complete(result));
                }
                ResultKind::Task => {
                    let declared = self.declares_tasks(method_name, Some(&retry));
                    if method_name != method::TOOLS_CALL || !declared {
                        return Err(unexpected_task(method_name, declared));
                    }
                    let created: CreateTaskResult =
                        serde_json::from_str(result.get()).map_err(|e| {
                            Error::protocol(format!(
                                "malformed CreateTaskResult for {method_name}: {e}"
                            ))
                        })?;
                    return Ok(Reply::Task(created));
                }
                ResultKind::InputRequired => {}
            }
            if rounds >= self.inner.max_rounds {
                return Err(Error::new(Kind::MrtrLimit(rounds + 1)));
            }
            rounds += 1;
            let input: InputRequiredResult = decode(method_name, &result)?;
            if input.input_requests.is_none() && input.request_state.is_none() {
                return Err(Error::protocol(
                    "an InputRequiredResult must carry inputRequests or requestState",
                ));
            }
            // Each retry starts from the original params: responses and state are used on
            // this retry only, never carried further (A6 item 60).
            retry = params.clone();
            if let Some(requests) = input.input_requests {
                let handler = self.inner.handler.as_ref().map(|h| &*h.0);
                let responses = fulfil(handler, requests, Some(self as &dyn ElicitedFiles)).await?;
                retry.insert("inputResponses".to_owned(), Value::Object(responses));
            }
            if let Some(state) = input.request_state {
                retry.insert("requestState".to_owned(), Value::String(state));
            }
            tracing::debug!(method = %method_name, round = rounds, "retrying with input");
        }
    }
}
