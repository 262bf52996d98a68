//! What the core answers, typed, and the one writer that puts it on the wire.
//!
//! Every successful answer is a [`Reply`]: a result type of `smcp-proto`, or the result
//! object of an extension method. `response_bytes` writes the JSON-RPC response for it,
//! with the server's `_meta` entries (`io.modelcontextprotocol/serverInfo`) added to the
//! result's own: when the result has no `_meta`, the server's object — serialized once, when
//! the server was built — is spliced in after the result's members, so the common case costs
//! one serialization of the result and nothing else. Every transport uses this writer.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;

use futures_util::FutureExt as _;
use serde::Serialize;
use serde_json::{Map, Value};
use smcp_proto::basic::Meta;
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::{ErrorResponse, Message, RequestId};
use smcp_proto::patterns::mrtr::InputRequiredResult;
use smcp_proto::patterns::subscriptions::SubscriptionsListenResult;
use smcp_proto::server::discover::DiscoverResult;
use smcp_proto::server::prompts::{GetPromptResult, ListPromptsResult};
use smcp_proto::server::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult,
};
use smcp_proto::server::tools::{CallToolResult, ListToolsResult};
use smcp_proto::server::utilities::completion::CompleteResult;

/// A successful answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `server/discover` (boxed: its capabilities are large, and every other reply small).
    Discover(Box<DiscoverResult>),
    /// `tools/list`.
    ListTools(ListToolsResult),
    /// `tools/call`.
    Tool(CallToolResult),
    /// `resources/list`.
    ListResources(ListResourcesResult),
    /// `resources/templates/list`.
    ListResourceTemplates(ListResourceTemplatesResult),
    /// `resources/read`.
    ReadResource(ReadResourceResult),
    /// `prompts/list`.
    ListPrompts(ListPromptsResult),
    /// `prompts/get`.
    GetPrompt(GetPromptResult),
    /// `completion/complete`.
    Complete(CompleteResult),
    /// `input_required` for one of the multi round-trip methods.
    InputRequired(InputRequiredResult),
    /// The graceful close of `subscriptions/listen`.
    Listen(SubscriptionsListenResult),
    /// The result object of an extension (`resultType` added when missing).
    Object(Map<String, Value>),
}

/// What a request ends with: a reply or a JSON-RPC error.
pub type Finished = Result<Reply, ErrorObject>;

/// The server's `_meta` entries, in both forms the writer needs.
#[derive(Debug, Clone)]
pub(crate) struct ServerMeta {
    map: Map<String, Value>,
    /// `map` as JSON, serialized once.
    json: Box<[u8]>,
}

impl ServerMeta {
    pub(crate) fn new(map: Map<String, Value>) -> Self {
        // Serializing a map of JSON values cannot fail.
        let json = serde_json::to_vec(&map).unwrap_or_else(|_| b"{}".to_vec());
        Self {
            map,
            json: json.into_boxed_slice(),
        }
    }

    /// Adds the server's entries a result's `_meta` lacks (the result's own win).
    /// The server's `_meta` object as the writer splices it in.
    #[cfg(feature = "legacy")]
    pub(crate) fn json(&self) -> &[u8] {
        &self.json
    }

    /// One of the server's `_meta` entries.
    #[cfg(feature = "legacy")]
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.map.get(key)
    }

    fn merge_into(&self, meta: &mut Meta) {
        for (key, value) in &self.map {
            if !meta.contains_key(key) {
                meta.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Result types with a `_meta` member.
trait HasMeta: Serialize {
    fn meta_mut(&mut self) -> &mut Option<Meta>;
}

macro_rules! has_meta {
    ($($t:ty),* $(,)?) => {
        $(impl HasMeta for $t {
            fn meta_mut(&mut self) -> &mut Option<Meta> {
                &mut self.meta
            }
        })*
    };
}

has_meta!(
    DiscoverResult,
    ListToolsResult,
    CallToolResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult,
    ListPromptsResult,
    GetPromptResult,
    CompleteResult,
    InputRequiredResult,
    SubscriptionsListenResult,
);

/// The JSON-RPC response for `reply`.
pub(crate) fn response_bytes(server: &ServerMeta, id: &RequestId, reply: Reply) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    write_json(&mut out, id);
    out.extend_from_slice(br#","result":"#);
    let meta = server;
    match reply {
        Reply::Discover(r) => write_result(&mut out, meta, *r),
        Reply::ListTools(r) => write_result(&mut out, meta, r),
        Reply::Tool(r) => write_result(&mut out, meta, r),
        Reply::ListResources(r) => write_result(&mut out, meta, r),
        Reply::ListResourceTemplates(r) => write_result(&mut out, meta, r),
        Reply::ReadResource(r) => write_result(&mut out, meta, r),
        Reply::ListPrompts(r) => write_result(&mut out, meta, r),
        Reply::GetPrompt(r) => write_result(&mut out, meta, r),
        Reply::Complete(r) => write_result(&mut out, meta, r),
        Reply::InputRequired(r) => write_result(&mut out, meta, r),
        Reply::Listen(r) => write_result(&mut out, meta, r),
        Reply::Object(r) => write_object(&mut out, meta, r),
    }
    out.push(b'}');
    out
}

/// The final JSON-RPC message of a request: its result, or its error.
#[cfg(feature = "stdio")]
pub(crate) fn finished_bytes(server: &ServerMeta, id: RequestId, outcome: Finished) -> Vec<u8> {
    match outcome {
        Ok(reply) => response_bytes(server, &id, reply),
        Err(error) => error_bytes(Some(id), error),
    }
}

/// A handler's outcome, with a panic turned into an internal error.
pub(crate) fn caught(
    fut: Pin<Box<dyn Future<Output = Finished> + Send>>,
) -> impl Future<Output = Finished> + Send {
    AssertUnwindSafe(fut)
        .catch_unwind()
        .map(|r| r.unwrap_or_else(|_| Err(ErrorObject::internal("the handler panicked"))))
}

/// The JSON-RPC error response for `error` (`id` absent when the request's could not be read).
pub(crate) fn error_bytes(id: Option<RequestId>, error: ErrorObject) -> Vec<u8> {
    Message::Error(ErrorResponse { id, error }).to_vec()
}

fn write_result<R: HasMeta>(out: &mut Vec<u8>, server: &ServerMeta, mut result: R) {
    if let Some(meta) = result.meta_mut() {
        server.merge_into(meta);
        write_json(out, &result);
        return;
    }
    let start = out.len();
    write_json(out, &result);
    splice_meta(out, start, server);
}

/// An extension's result object: `resultType` added when missing, the server's `_meta`
/// merged into its own (or replacing one that is not an object).
fn write_object(out: &mut Vec<u8>, server: &ServerMeta, mut result: Map<String, Value>) {
    if !result.contains_key("resultType") {
        result.insert("resultType".to_owned(), Value::from("complete"));
    }
    match result.get_mut("_meta") {
        Some(Value::Object(meta)) => server.merge_into(meta),
        Some(other) => *other = Value::Object(server.map.clone()),
        None => {
            let start = out.len();
            write_json(out, &result);
            splice_meta(out, start, server);
            return;
        }
    }
    write_json(out, &result);
}

/// Turns the object written from `start` (`{…}`) into `{…,"_meta":<server>}`.
fn splice_meta(out: &mut Vec<u8>, start: usize, server: &ServerMeta) {
    if out.len() < start + 2 || out.last() != Some(&b'}') {
        return; // not an object: nothing to add to
    }
    out.pop();
    if out.len() > start + 1 {
        out.push(b',');
    }
    out.extend_from_slice(br#""_meta":"#);
    out.extend_from_slice(&server.json);
    out.push(b'}');
}

fn write_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Writing protocol types and JSON values into a Vec cannot fail.
    let _ = serde_json::to_writer(out, value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use smcp_proto::jsonrpc::ResultResponse;

    /// The reference: the result as a `Value`, the additions inserted, the message serialized.
    fn via_value(server: &Map<String, Value>, id: &RequestId, result: Value) -> Value {
        let mut result = result;
        if let Value::Object(obj) = &mut result {
            obj.entry("resultType")
                .or_insert_with(|| Value::from("complete"));
            match obj.get_mut("_meta") {
                Some(Value::Object(meta)) => {
                    for (k, v) in server {
                        meta.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                _ => {
                    obj.insert("_meta".to_owned(), Value::Object(server.clone()));
                }
            }
        }
        serde_json::to_value(Message::Result(ResultResponse {
            id: id.clone(),
            result,
        }))
        .unwrap()
    }

    fn servers() -> [Map<String, Value>; 2] {
        [
            json!({"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}, "x": 1})
                .as_object()
                .unwrap()
                .clone(),
            Map::new(),
        ]
    }

    #[test]
    fn typed_results_get_the_server_meta() {
        let mut with_meta = CallToolResult::text("a\"b\nc");
        with_meta.meta = Some(
            json!({"x": 2, "y": [1.5, null]})
                .as_object()
                .unwrap()
                .clone(),
        );
        let mut structured = CallToolResult::text("one");
        structured.structured_content = Some(json!({"n": 1, "s": "ü"}));
        structured.is_error = Some(true);
        let results = [
            CallToolResult::text("hello"),
            with_meta,
            structured,
            CallToolResult::new(vec![]),
        ];
        for server in servers() {
            let meta = ServerMeta::new(server.clone());
            for id in [RequestId::from(3), RequestId::from("x")] {
                for result in &results {
                    let bytes = response_bytes(&meta, &id, Reply::Tool(result.clone()));
                    let got: Value = serde_json::from_slice(&bytes).unwrap();
                    let want = via_value(&server, &id, serde_json::to_value(result).unwrap());
                    assert_eq!(got, want, "{result:?}");
                }
            }
        }
    }

    #[test]
    fn a_result_without_meta_is_written_once_and_spliced() {
        let meta = ServerMeta::new(servers()[0].clone());
        let bytes = response_bytes(
            &meta,
            &RequestId::from(1),
            Reply::Tool(CallToolResult::text("hi")),
        );
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hi"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"x":1}}}"#
        );
    }

    #[test]
    fn extension_objects_get_result_type_and_meta() {
        let objects = [
            json!({"a": 1}),
            json!({"resultType": "task", "taskId": "t"}),
            json!({"_meta": {"x": 2}, "b": []}),
            json!({"_meta": "not an object"}),
            json!({}),
        ];
        for server in servers() {
            let meta = ServerMeta::new(server.clone());
            for object in &objects {
                let bytes = response_bytes(
                    &meta,
                    &RequestId::from(9),
                    Reply::Object(object.as_object().unwrap().clone()),
                );
                let got: Value = serde_json::from_slice(&bytes).unwrap();
                assert_eq!(got, via_value(&server, &RequestId::from(9), object.clone()));
            }
        }
    }
}
