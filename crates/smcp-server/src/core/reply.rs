//! What the core answers, typed, and the one writer that puts it on the wire.
//!
//! Every successful answer is a [`Reply`]: a result type of `smcp-proto`, or the result
//! object of an extension method. `response_bytes` writes the JSON-RPC response for it,
//! with the server's `_meta` entries (`io.modelcontextprotocol/serverInfo`) added to the
//! result's own: when the result has no `_meta`, the server's object — serialized once, when
//! the server was built — is spliced in after the result's members, so the common case costs
//! one serialization of the result and nothing else. Every transport uses this writer.
//!
//! The earlier revisions' sessions (feature `legacy`) use it too, for their `Era`: their
//! results are the same types without what only 2026-07-28 defines (`resultType`, `ttlMs`,
//! `cacheScope`, the `serverInfo` entry of `_meta`). The writer leaves those out as it
//! writes, so a session's reply costs what a 2026-07-28 one does.

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

/// Which revisions a reply is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2026-07-28: results as their types serialize, the server's `_meta` added.
    Stateless,
    /// The earlier revisions' sessions: results without the members only 2026-07-28 defines
    /// ([`ONLY_2026`], the `serverInfo` entry of `_meta`), and no empty `_meta`.
    #[cfg(feature = "legacy")]
    Session,
}

/// The members of a result only 2026-07-28 defines.
const ONLY_2026: &[&str] = &["resultType", "ttlMs", "cacheScope"];

/// The server's `_meta` entries of one era, in both forms the writer needs.
#[derive(Debug, Clone)]
struct Entries {
    map: Map<String, Value>,
    /// `map` as JSON, serialized once.
    json: Box<[u8]>,
}

impl Entries {
    fn new(map: Map<String, Value>) -> Self {
        // Serializing a map of JSON values cannot fail.
        let json = serde_json::to_vec(&map).unwrap_or_else(|_| b"{}".to_vec());
        Self {
            map,
            json: json.into_boxed_slice(),
        }
    }

    /// Adds the server's entries a result's `_meta` lacks (the result's own win).
    fn merge_into(&self, meta: &mut Meta) {
        for (key, value) in &self.map {
            if !meta.contains_key(key) {
                meta.insert(key.clone(), value.clone());
            }
        }
    }
}

/// The server's `_meta` entries: all of them for 2026-07-28, and for the earlier revisions
/// those they define (all but `serverInfo`, which their `initialize` result carries instead).
#[derive(Debug, Clone)]
pub(crate) struct ServerMeta {
    stateless: Entries,
    #[cfg(feature = "legacy")]
    session: Entries,
}

impl ServerMeta {
    pub(crate) fn new(map: Map<String, Value>) -> Self {
        #[cfg(feature = "legacy")]
        let session = {
            let mut earlier = map.clone();
            earlier.shift_remove(smcp_proto::meta::SERVER_INFO);
            Entries::new(earlier)
        };
        Self {
            stateless: Entries::new(map),
            #[cfg(feature = "legacy")]
            session,
        }
    }

    /// One of the server's `_meta` entries.
    #[cfg(feature = "legacy")]
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.stateless.map.get(key)
    }

    fn entries(&self, era: Era) -> &Entries {
        match era {
            Era::Stateless => &self.stateless,
            #[cfg(feature = "legacy")]
            Era::Session => &self.session,
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

/// The JSON-RPC response for `reply` (2026-07-28).
pub(crate) fn response_bytes(server: &ServerMeta, id: &RequestId, reply: Reply) -> Vec<u8> {
    era_response_bytes(Era::Stateless, server, id, reply)
}

/// The JSON-RPC response for `reply`, as `era` defines it.
pub(crate) fn era_response_bytes(
    era: Era,
    server: &ServerMeta,
    id: &RequestId,
    reply: Reply,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    write_json(&mut out, id);
    out.extend_from_slice(br#","result":"#);
    let w = Writer {
        era,
        entries: server.entries(era),
    };
    match reply {
        Reply::Discover(r) => w.result(&mut out, *r),
        Reply::ListTools(r) => w.result(&mut out, r),
        Reply::Tool(r) => w.result(&mut out, r),
        Reply::ListResources(r) => w.result(&mut out, r),
        Reply::ListResourceTemplates(r) => w.result(&mut out, r),
        Reply::ReadResource(r) => w.result(&mut out, r),
        Reply::ListPrompts(r) => w.result(&mut out, r),
        Reply::GetPrompt(r) => w.result(&mut out, r),
        Reply::Complete(r) => w.result(&mut out, r),
        Reply::InputRequired(r) => w.result(&mut out, r),
        Reply::Listen(r) => w.result(&mut out, r),
        Reply::Object(r) => w.object(&mut out, r),
    }
    out.push(b'}');
    out
}

/// The final JSON-RPC message of a request: its result, or its error.
#[cfg(feature = "stdio")]
pub(crate) fn finished_bytes(server: &ServerMeta, id: RequestId, outcome: Finished) -> Vec<u8> {
    era_finished_bytes(Era::Stateless, server, id, outcome)
}

/// The final JSON-RPC message of a request as `era` defines it: its result, or its error.
#[cfg(any(feature = "stdio", feature = "legacy"))]
pub(crate) fn era_finished_bytes(
    era: Era,
    server: &ServerMeta,
    id: RequestId,
    outcome: Finished,
) -> Vec<u8> {
    match outcome {
        Ok(reply) => era_response_bytes(era, server, &id, reply),
        Err(error) => error_bytes(Some(id), error),
    }
}

/// A handler's outcome, with a panic turned into an internal error.
pub(crate) fn caught(
    fut: Pin<Box<dyn Future<Output = Finished> + Send>>,
) -> impl Future<Output = Finished> + Send {
    AssertUnwindSafe(fut)
        .catch_unwind()
        .map(|r| r.unwrap_or_else(|_| panicked()))
}

/// The outcome of a handler that panicked.
pub(crate) fn panicked() -> Finished {
    Err(ErrorObject::internal("the handler panicked"))
}

/// The JSON-RPC error response for `error` (`id` absent when the request's could not be read).
pub(crate) fn error_bytes(id: Option<RequestId>, error: ErrorObject) -> Vec<u8> {
    Message::Error(ErrorResponse { id, error }).to_vec()
}

/// The writer of one result, for one era.
struct Writer<'a> {
    era: Era,
    entries: &'a Entries,
}

impl Writer<'_> {
    /// Whether this era writes what only 2026-07-28 defines.
    fn is_stateless(&self) -> bool {
        self.era == Era::Stateless
    }

    /// A typed result, with the era's server `_meta` entries added to its own `_meta`, or
    /// spliced in when it has none.
    fn result<R: HasMeta>(&self, out: &mut Vec<u8>, mut result: R) {
        if let Some(meta) = result.meta_mut() {
            self.entries.merge_into(meta);
            if !self.is_stateless() {
                drop_2026_meta(result.meta_mut());
            }
        }
        let start = out.len();
        let spliced = result.meta_mut().is_none();
        self.write(out, &result);
        if spliced {
            self.splice_meta(out, start);
        }
    }

    /// A result object (an extension's, or a session method's): for 2026-07-28 `resultType`
    /// added when missing, for the earlier revisions the 2026-only members taken out; the
    /// era's server `_meta` entries merged into its own (or replacing one that is not an
    /// object), and for the earlier revisions no `serverInfo` and no empty `_meta`.
    fn object(&self, out: &mut Vec<u8>, mut result: Map<String, Value>) {
        if self.is_stateless() {
            if !result.contains_key("resultType") {
                result.insert("resultType".to_owned(), Value::from("complete"));
            }
        } else {
            drop_2026_members(&mut result);
        }
        match result.get_mut("_meta") {
            Some(Value::Object(meta)) => self.entries.merge_into(meta),
            Some(other) => *other = Value::Object(self.entries.map.clone()),
            None => {
                let start = out.len();
                write_json(out, &result);
                self.splice_meta(out, start);
                return;
            }
        }
        if !self.is_stateless()
            && let Some(Value::Object(meta)) = result.get_mut("_meta")
        {
            meta.shift_remove(smcp_proto::meta::SERVER_INFO);
            if meta.is_empty() {
                result.shift_remove("_meta");
            }
        }
        write_json(out, &result);
    }

    /// A typed result; for the earlier revisions without the members only 2026-07-28 defines.
    fn write<R: Serialize>(&self, out: &mut Vec<u8>, result: &R) {
        match self.era {
            Era::Stateless => write_json(out, result),
            #[cfg(feature = "legacy")]
            Era::Session => write_json(
                out,
                &super::omit::Without {
                    value: result,
                    skip: ONLY_2026,
                },
            ),
        }
    }

    /// Turns the object written from `start` (`{…}`) into `{…,"_meta":<server>}`; for the
    /// earlier revisions only when the server has entries they define.
    fn splice_meta(&self, out: &mut Vec<u8>, start: usize) {
        if out.len() < start + 2 || out.last() != Some(&b'}') {
            return; // not an object: nothing to add to
        }
        if !self.is_stateless() && self.entries.map.is_empty() {
            return;
        }
        out.pop();
        if out.len() > start + 1 {
            out.push(b',');
        }
        out.extend_from_slice(br#""_meta":"#);
        out.extend_from_slice(&self.entries.json);
        out.push(b'}');
    }
}

/// A typed result's `_meta` for the earlier revisions: without `serverInfo`, and gone when
/// nothing is left.
fn drop_2026_meta(meta: &mut Option<Meta>) {
    if let Some(entries) = meta {
        entries.shift_remove(smcp_proto::meta::SERVER_INFO);
        if entries.is_empty() {
            *meta = None;
        }
    }
}

/// An extension result object without the members only 2026-07-28 defines.
fn drop_2026_members(result: &mut Map<String, Value>) {
    for member in ONLY_2026 {
        result.shift_remove(*member);
    }
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

    /// The reference for the earlier revisions: the 2026-07-28 response as a `Value`,
    /// without the members only 2026-07-28 defines.
    #[cfg(feature = "legacy")]
    fn without_2026(mut message: Value) -> Value {
        if let Some(Value::Object(result)) = message.get_mut("result") {
            for member in ONLY_2026 {
                result.shift_remove(*member);
            }
            if let Some(Value::Object(meta)) = result.get_mut("_meta") {
                meta.shift_remove(smcp_proto::meta::SERVER_INFO);
                if meta.is_empty() {
                    result.shift_remove("_meta");
                }
            }
        }
        message
    }

    /// The server's `_meta` as the builder makes it: `serverInfo` only.
    #[cfg(feature = "legacy")]
    fn built() -> ServerMeta {
        let info = json!({"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}});
        ServerMeta::new(info.as_object().unwrap().clone())
    }

    #[cfg(feature = "legacy")]
    fn session_text(id: i64, reply: Reply) -> String {
        let server = built();
        String::from_utf8(era_response_bytes(
            Era::Session,
            &server,
            &RequestId::from(id),
            reply,
        ))
        .unwrap()
    }

    /// Every reply of the earlier revisions is the 2026-07-28 one without its 2026-only
    /// members, whatever the result's own `_meta` and the server's entries.
    #[cfg(feature = "legacy")]
    #[test]
    fn session_results_are_the_2026_ones_without_their_members() {
        use smcp_proto::server::tools::{ListToolsResult, Tool};
        let object = |v: Value| v.as_object().unwrap().clone();
        let mut own = CallToolResult::text("x");
        own.meta = Some(object(
            json!({"k": 1, "io.modelcontextprotocol/serverInfo": 2}),
        ));
        let mut only_info = CallToolResult::text("ttlMs");
        only_info.meta = Some(object(json!({"io.modelcontextprotocol/serverInfo": {}})));
        let mut list = ListToolsResult::new(vec![Tool::new("t", Tool::empty_input_schema())]);
        list.next_cursor = Some("c".to_owned());
        let replies = [
            Reply::Tool(CallToolResult::text("a _meta, resultType and ttlMs")),
            Reply::Tool(own),
            Reply::Tool(only_info),
            Reply::ListTools(list),
            Reply::ListTools(ListToolsResult::new(vec![])),
            Reply::Object(object(json!({"a": 1}))),
            Reply::Object(object(
                json!({"resultType": "task", "_meta": {"m": 2}, "ttlMs": 5}),
            )),
            Reply::Object(object(json!({"_meta": "not an object", "cacheScope": "x"}))),
            Reply::Object(Map::new()),
        ];
        let mut extra = servers()[0].clone();
        extra.insert("y".to_owned(), json!(true));
        for server in [servers()[0].clone(), servers()[1].clone(), extra] {
            let meta = ServerMeta::new(server);
            for reply in &replies {
                let id = RequestId::from(4);
                let session = era_response_bytes(Era::Session, &meta, &id, reply.clone());
                let stateless = response_bytes(&meta, &id, reply.clone());
                let got: Value = serde_json::from_slice(&session).unwrap();
                let want = without_2026(serde_json::from_slice(&stateless).unwrap());
                assert_eq!(got, want, "{reply:?}");
                let text = String::from_utf8(session).unwrap();
                assert!(!text.contains("serverInfo"), "{text}");
                assert!(!text.contains(r#""resultType":"complete""#), "{text}");
            }
        }
    }

    /// The bytes a session's client gets, pinned: the members of a result keep the order
    /// of its type, less the ones left out.
    #[cfg(feature = "legacy")]
    #[test]
    fn pinned_bytes_of_the_earlier_revisions() {
        use smcp_proto::server::tools::{ListToolsResult, Tool};
        let object = |v: Value| v.as_object().unwrap().clone();
        let mut own = CallToolResult::text("x");
        own.meta = Some(object(json!({"k": 1})));
        let full = |text: &str| {
            let mut full = CallToolResult::text(text);
            full.structured_content = Some(json!({"n": 1}));
            full.is_error = Some(true);
            full
        };
        let mut list = ListToolsResult::new(vec![Tool::new("t", Tool::empty_input_schema())]);
        list.next_cursor = Some("c".to_owned());
        let extension = json!({"resultType": "task", "_meta": {"m": 2}, "b": [], "ttlMs": 5});
        let cases: [(Reply, &str); 10] = [
            (
                Reply::Tool(CallToolResult::text("hi")),
                r#"{"content":[{"type":"text","text":"hi"}]}"#,
            ),
            (
                Reply::Tool(CallToolResult::text("a _meta and ttlMs")),
                r#"{"content":[{"type":"text","text":"a _meta and ttlMs"}]}"#,
            ),
            (
                Reply::Tool(own),
                r#"{"_meta":{"k":1},"content":[{"type":"text","text":"x"}]}"#,
            ),
            (
                Reply::Tool(full("y")),
                r#"{"content":[{"type":"text","text":"y"}],"structuredContent":{"n":1},"isError":true}"#,
            ),
            (
                Reply::Tool(full("ttlMs")),
                r#"{"content":[{"type":"text","text":"ttlMs"}],"structuredContent":{"n":1},"isError":true}"#,
            ),
            (
                Reply::ListTools(list),
                r#"{"tools":[{"name":"t","inputSchema":{"type":"object"}}],"nextCursor":"c"}"#,
            ),
            (Reply::Object(object(json!({"a": 1}))), r#"{"a":1}"#),
            (
                Reply::Object(object(extension)),
                r#"{"_meta":{"m":2},"b":[]}"#,
            ),
            (Reply::Object(Map::new()), r#"{}"#),
            (
                Reply::Object(object(
                    json!({"protocolVersion": "2025-06-18", "capabilities": {},
                    "serverInfo": {"name": "s", "version": "1"}}),
                )),
                r#"{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#,
            ),
        ];
        for (reply, want) in cases {
            assert_eq!(
                session_text(7, reply),
                format!(r#"{{"jsonrpc":"2.0","id":7,"result":{want}}}"#)
            );
        }
        let server = built();
        let error = era_finished_bytes(
            Era::Session,
            &server,
            RequestId::from(7),
            Err(ErrorObject::invalid_params("bad")),
        );
        assert_eq!(
            error,
            br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad"}}"#
        );
        let unread = error_bytes(None, ErrorObject::invalid_request("no"));
        assert_eq!(
            unread,
            br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"no"}}"#
        );
    }
}
