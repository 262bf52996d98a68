//! Gateway instances that reach each other ([`Peers`]): a retry that lands on an instance
//! other than the one holding its call is forwarded there, and the client gets what comes
//! back (the result, the question asked again, the error); an instance that is gone is
//! named. The instances here reach each other in process (`Mesh`); `RedisPeers` carries the
//! same over Redis (smcpd's cluster tests).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use smcp_gateway::{EventSink, ForwardedOutcome, ForwardedRetry, PeerError, PeerHandler, Peers};
use smcp_server::tools::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::common;
use crate::rounds::{accept, asking_upstream, config, first_round};

/// Instances in one process, each serving the retries forwarded to it.
#[derive(Clone, Default)]
struct Mesh(Arc<Mutex<HashMap<String, PeerHandler>>>);

struct InMesh {
    id: String,
    mesh: Mesh,
}

impl Mesh {
    fn peer(&self, id: &str) -> Arc<dyn Peers> {
        Arc::new(InMesh {
            id: id.to_owned(),
            mesh: self.clone(),
        })
    }

    /// `id` leaves: retries for it find nobody.
    fn leave(&self, id: &str) {
        self.0.lock().unwrap().remove(id);
    }
}

impl Peers for InMesh {
    fn instance(&self) -> &str {
        &self.id
    }

    fn serve(&self, handler: PeerHandler) {
        self.mesh.0.lock().unwrap().insert(self.id.clone(), handler);
    }

    fn forward(
        &self,
        instance: &str,
        retry: ForwardedRetry,
        within: Duration,
        cancel: CancellationToken,
        events: EventSink,
    ) -> BoxFuture<Result<ForwardedOutcome, PeerError>> {
        let handler = self.mesh.0.lock().unwrap().get(instance).cloned();
        Box::pin(async move {
            let handler = handler.ok_or(PeerError::Gone)?;
            // A JSON round trip, as on the wire.
            let retry = serde_json::from_value(serde_json::to_value(retry).unwrap()).unwrap();
            let there = CancellationToken::new();
            tokio::select! {
                outcome = handler(retry, there.clone(), events) => {
                    Ok(serde_json::from_value(serde_json::to_value(outcome).unwrap()).unwrap())
                }
                () = tokio::time::sleep(within) => Err(PeerError::Timeout(within)),
                () = cancel.cancelled() => {
                    there.cancel();
                    Err(PeerError::Cancelled)
                }
            }
        })
    }
}

#[tokio::test]
async fn a_retry_on_another_instance_is_forwarded_to_the_one_holding_the_call() {
    let (_upstream, served) = asking_upstream().await;
    let mesh = Mesh::default();
    let (a, first) = common::gateway_in_cluster(&config(&served.url), mesh.peer("a")).await;
    let (b, second) = common::gateway_in_cluster(&config(&served.url), mesh.peer("b")).await;
    let state = first_round(&first.service()).await;
    assert_eq!((a.held_calls(), b.held_calls()), (1, 0));

    // A retry without the answer is asked again, the call still held by the first.
    let (status, body) = common::call(
        &second.service(),
        "up_confirm",
        json!({"arguments": {"action": "deploy"}, "requestState": state}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["resultType"], "input_required", "{body}");
    assert_eq!(
        body["result"]["inputRequests"]["upstream"]["params"]["message"],
        "Really deploy?"
    );
    let again = body["result"]["requestState"].as_str().unwrap().to_owned();
    assert_eq!((a.held_calls(), b.held_calls()), (1, 0));

    // The answer, on the second instance again: forwarded, and the call goes on there.
    let (status, body) = common::call(
        &second.service(),
        "up_confirm",
        json!({"arguments": {"action": "deploy"}, "inputResponses": accept(), "requestState": again}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"], "done: deploy",
        "{body}"
    );
    assert_eq!((a.held_calls(), b.held_calls()), (0, 0));

    // The same state once more: the call is over, as the holding instance says.
    let (_, body) = common::call(
        &second.service(),
        "up_confirm",
        json!({"arguments": {"action": "deploy"}, "inputResponses": accept(), "requestState": again}),
    )
    .await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert_eq!(body["error"]["data"]["reason"], "held-call-gone", "{body}");
}

#[tokio::test]
async fn an_answer_that_does_not_fit_is_refused_by_the_holding_instance() {
    let (_upstream, served) = asking_upstream().await;
    let mesh = Mesh::default();
    let (a, first) = common::gateway_in_cluster(&config(&served.url), mesh.peer("a")).await;
    let (_b, second) = common::gateway_in_cluster(&config(&served.url), mesh.peer("b")).await;
    let state = first_round(&first.service()).await;
    let (_, body) = common::call(
        &second.service(),
        "up_confirm",
        json!({"arguments": {"action": "deploy"},
               "inputResponses": {"upstream": {"action": "maybe"}},
               "requestState": state}),
    )
    .await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("inputResponses.upstream"), "{message}");
    assert_eq!(a.held_calls(), 0, "nothing stays held");
}

#[tokio::test]
async fn a_retry_for_an_instance_that_is_gone_names_it() {
    let (_upstream, served) = asking_upstream().await;
    let mesh = Mesh::default();
    let (_a, first) = common::gateway_in_cluster(&config(&served.url), mesh.peer("a")).await;
    let (_b, second) = common::gateway_in_cluster(&config(&served.url), mesh.peer("b")).await;
    let state = first_round(&first.service()).await;
    mesh.leave("a");
    let (_, body) = common::call(
        &second.service(),
        "up_confirm",
        json!({"arguments": {"action": "deploy"}, "inputResponses": accept(), "requestState": state}),
    )
    .await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert_eq!(body["error"]["data"]["reason"], "held-call-gone", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("instance holding the upstream request is gone"),
        "{message}"
    );
}

/// An upstream at 2025-11-25 whose `confirm` asks, then reports progress, then answers.
async fn progressing_upstream() -> (smcp_server::Server, common::Served) {
    use smcp_proto::server::tools::CallToolResult;
    use smcp_server::{HandlerError, mrtr, tool};
    let server = smcp_server::Server::builder("upstream", "1")
        .tool(
            tool("confirm")
                .input_schema(json!({"type": "object"}))
                .handler(|call| async move {
                    call.input.ask(mrtr::elicit_form(
                        "ok",
                        "Go on?",
                        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                    ))?;
                    call.ctx.progress(1.0, Some(2.0), Some("half way")).await?;
                    Ok::<_, HandlerError>(CallToolResult::text("went on"))
                }),
        )
        .build()
        .unwrap();
    let served = common::serve_server(&server).await;
    (server, served)
}

#[tokio::test]
async fn the_progress_of_a_forwarded_call_reaches_the_client_of_the_retry() {
    use http_body_util::BodyExt as _;

    let (_upstream, served) = progressing_upstream().await;
    let mesh = Mesh::default();
    let (_a, first) = common::gateway_in_cluster(&config(&served.url), mesh.peer("a")).await;
    let (_b, second) = common::gateway_in_cluster(&config(&served.url), mesh.peer("b")).await;
    // The first round asks for progress too: the upstream request it opens carries a token.
    let mut first_meta = common::meta(json!({"elicitation": {}}));
    first_meta["progressToken"] = json!("first-1");
    let (_, body) = common::call(
        &first.service(),
        "up_confirm",
        json!({"arguments": {}, "_meta": first_meta}),
    )
    .await;
    let state = body["result"]["requestState"].as_str().unwrap().to_owned();

    // The retry on the other instance, asking for progress: its stream carries the
    // upstream's progress under the retry's own token, then the result.
    let mut meta = common::meta(json!({"elicitation": {}}));
    meta["progressToken"] = json!("retry-7");
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "up_confirm", "arguments": {}, "_meta": meta,
        "inputResponses": {"upstream": {"action": "accept", "content": {"ok": true}}},
        "requestState": state}});
    let request = http::Request::post("http://localhost/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "up_confirm")
        .body(http_body_util::Full::new(bytes::Bytes::from(
            body.to_string(),
        )))
        .unwrap();
    let response = second.service().handle(request).await;
    let text = String::from_utf8(
        response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec(),
    )
    .unwrap();
    let messages: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let progress = messages
        .iter()
        .find(|m| m["method"] == "notifications/progress")
        .unwrap_or_else(|| panic!("no progress in {text}"));
    assert_eq!(progress["params"]["progressToken"], "retry-7", "{progress}");
    assert_eq!(progress["params"]["message"], "half way", "{progress}");
    let last = messages.last().unwrap();
    assert_eq!(last["result"]["content"][0]["text"], "went on", "{text}");
}
