//! The in-process HTTP service: any request head and body, against a small server with
//! tools (one mirrored into headers, one asking the user), a resource template and a prompt.
//! It never panics and always answers well-formed HTTP: a JSON body is one JSON-RPC response,
//! an SSE body is events each holding one JSON-RPC message, a 202 has no body.

#![no_main]

use std::sync::LazyLock;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request};
use http_body_util::{BodyExt, Full};
use libfuzzer_sys::fuzz_target;
use serde_json::json;
use smcp_proto::content::TextResourceContents;
use smcp_proto::jsonrpc::Message;
use smcp_proto::server::prompts::{GetPromptResult, PromptMessage};
use smcp_proto::server::tools::CallToolResult;
use smcp_proto::sse::SseDecoder;
use smcp_server::{HandlerError, McpService, Server, mrtr, prompt, resource_template, tool};

struct Harness {
    runtime: tokio::runtime::Runtime,
    service: McpService,
}

static HARNESS: LazyLock<Harness> = LazyLock::new(|| {
    // A paused clock: an open SSE stream (a listen) costs no wall time to give up on.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let entered = runtime.enter();
    let server = Server::builder("fuzz", "1.0.0")
        .logging(true)
        .tool(
            tool("echo")
                .input_schema(json!({"type": "object", "properties": {
                    "text": {"type": "string", "x-mcp-header": "Text"},
                    "n": {"type": "integer", "x-mcp-header": "N"},
                    "t": {"type": "object", "properties": {"on": {"type": "boolean", "x-mcp-header": "On"}}}
                }}))
                .handler(|call| async move {
                    call.ctx.progress(1.0, None, None).await.ok();
                    Ok::<_, HandlerError>(CallToolResult::text(
                        serde_json::to_string(&call.arguments).unwrap_or_default(),
                    ))
                }),
        )
        .tool(tool("confirm").requires_client_capability("elicitation").handler(|call| async move {
            call.input.ask(mrtr::elicit_form(
                "ok",
                "Sure?",
                json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
            ))?;
            Ok::<_, HandlerError>(CallToolResult::text("done"))
        }))
        .resource(resource_template("mem://item/{id}/{+rest}", "item").handler(|read| async move {
            let id = read.variables.get("id").cloned().unwrap_or_default();
            Ok(vec![TextResourceContents::new(read.uri, id).into()])
        }))
        .prompt(prompt("greet").argument("who", "who", true).handler(|get| async move {
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                get.arg("who").unwrap_or_default(),
            )]))
        }))
        .build()
        .unwrap_or_else(|e| panic!("server: {e}"));
    let service = server.service();
    drop(entered);
    Harness { runtime, service }
});

/// `METHOD PATH` on the first line, `name: value` lines, an empty line, the body. Without a
/// head line, a POST to `/mcp` with the usual headers and the whole input as its body.
fn request(data: &[u8]) -> Option<Request<Full<Bytes>>> {
    let standard = || {
        Request::post("/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
    };
    let Some(split) = data.windows(2).position(|w| w == b"\n\n") else {
        return standard()
            .body(Full::new(Bytes::copy_from_slice(data)))
            .ok();
    };
    let (head, body) = (&data[..split], &data[split + 2..]);
    let mut lines = head.split(|&b| b == b'\n');
    let first = lines.next().unwrap_or_default();
    let mut words = first.splitn(2, |&b| b == b' ');
    let method = Method::from_bytes(words.next().unwrap_or_default()).ok()?;
    let path = std::str::from_utf8(words.next().unwrap_or(b"/mcp")).ok()?;
    let mut builder = Request::builder().method(method).uri(path);
    let mut any_header = false;
    for line in lines {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(name),
            http::HeaderValue::from_bytes(value),
        ) {
            builder = builder.header(name, value);
            any_header = true;
        }
    }
    if !any_header {
        builder = standard()
            .method(builder.method_ref()?.clone())
            .uri(builder.uri_ref()?.clone());
    }
    builder.body(Full::new(Bytes::copy_from_slice(body))).ok()
}

fn check_json_rpc(bytes: &[u8]) {
    match Message::from_slice(bytes) {
        Ok(Message::Result(_) | Message::Error(_)) => {}
        other => panic!(
            "not one JSON-RPC response: {other:?}: {}",
            String::from_utf8_lossy(bytes)
        ),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(request) = request(data) else {
        return;
    };
    let harness = &*HARNESS;
    harness.runtime.block_on(async {
        let response = harness.service.handle(request).await;
        let status = response.status();
        let content_type = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let mut body = response.into_body();
        let mut bytes = Vec::new();
        // A listen stream stays open: read what comes for a while of the paused clock, which
        // jumps ahead whenever nothing else can run.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while let Ok(Some(frame)) = tokio::time::timeout_at(deadline, body.frame()).await {
            let frame = frame.unwrap_or_else(|e| panic!("body error: {e}"));
            if let Ok(data) = frame.into_data() {
                bytes.extend_from_slice(&data);
            }
        }
        if status == http::StatusCode::ACCEPTED {
            assert!(bytes.is_empty(), "a 202 with a body");
        } else if content_type.starts_with("text/event-stream") {
            assert_eq!(status, http::StatusCode::OK);
            let mut decoder = SseDecoder::new();
            decoder.feed(&bytes);
            while let Some(event) = decoder.next_event().unwrap_or_else(|e| panic!("SSE: {e}")) {
                Message::from_slice(event.data.as_bytes())
                    .unwrap_or_else(|e| panic!("an SSE event that is no message: {e}"));
            }
        } else if content_type.starts_with("application/json") {
            check_json_rpc(&bytes);
        } else if !bytes.is_empty() {
            // Whatever else the endpoint answers (405, 404 off the MCP path) is short text.
            assert!(
                status.is_client_error() || status.is_server_error(),
                "{status} {content_type}"
            );
        }
    });
});
