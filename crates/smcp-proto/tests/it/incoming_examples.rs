//! Every client request example of the specification (`tests/spec/2026-07-28/examples/*Request`
//! folders whose method a client sends a server) reads, as a server reads a body, into the
//! typed request of its method on the one-pass route, with `_meta` set aside raw — and to the
//! same request as the precise route would give.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;
use smcp_proto::jsonrpc::{ClientRequest, Incoming, IncomingRequest, Message};

/// Example folder → whether its requests are client requests (a server reads them).
const CLIENT_REQUEST_FOLDERS: &[&str] = &[
    "CallToolRequest",
    "CompleteRequest",
    "DiscoverRequest",
    "GetPromptRequest",
    "ListPromptsRequest",
    "ListResourceTemplatesRequest",
    "ListResourcesRequest",
    "ListToolsRequest",
    "ReadResourceRequest",
    "SubscriptionsListenRequest",
];

fn variant(request: &ClientRequest) -> &'static str {
    match request {
        ClientRequest::Discover => "server/discover",
        ClientRequest::ListTools(_) => "tools/list",
        ClientRequest::CallTool(_) => "tools/call",
        ClientRequest::ListResources(_) => "resources/list",
        ClientRequest::ListResourceTemplates(_) => "resources/templates/list",
        ClientRequest::ReadResource(_) => "resources/read",
        ClientRequest::ListPrompts(_) => "prompts/list",
        ClientRequest::GetPrompt(_) => "prompts/get",
        ClientRequest::Complete(_) => "completion/complete",
        ClientRequest::Listen(_) => "subscriptions/listen",
        ClientRequest::Other(_) => "other",
    }
}

#[test]
fn every_client_request_example_reads_into_its_typed_request() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/spec/2026-07-28/examples");
    let mut read = 0;
    for folder in CLIENT_REQUEST_FOLDERS {
        let dir = root.join(folder);
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let value: Value = serde_json::from_slice(&bytes).unwrap();
            // Compact, as a client sends it (and as the one-pass route expects to borrow).
            let body = serde_json::to_vec(&value).unwrap();
            let Ok(Incoming::Request(request)) = Incoming::parse(&body) else {
                panic!("{}: not read as a request", path.display());
            };
            let typed = request
                .params
                .as_ref()
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(variant(typed), &*request.method, "{}", path.display());
            if let Some(meta) = value["params"].get("_meta") {
                let raw: Value =
                    serde_json::from_str(request.meta.as_ref().unwrap().get()).unwrap();
                assert_eq!(&raw, meta, "{}", path.display());
            }
            let Ok(Message::Request(untyped)) = Message::from_value(value) else {
                panic!("{}", path.display());
            };
            let precise = IncomingRequest::from_request(untyped);
            assert_eq!(precise.params, request.params, "{}", path.display());
            read += 1;
        }
    }
    assert!(
        read >= CLIENT_REQUEST_FOLDERS.len(),
        "only {read} examples read"
    );
}
