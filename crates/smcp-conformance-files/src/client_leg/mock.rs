//! The mock MCP server and mock upload/download endpoints of the client leg. Plain HTTP on
//! loopback (the client under test gets `SEP2631_ALLOW_LOOPBACK_HTTP=1`); everything the client
//! sends is recorded for the checks.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::files::{
    accept_matches, digest_json, generated_bytes, multipart_decode, parse_data_uri,
};

/// Size of the file `files_generate` produces in the client leg.
pub const GENERATED_SIZE: usize = 1024;
/// Name of that file.
pub const GENERATED_NAME: &str = "generated.bin";
/// Non-loopback, never-routed address (RFC 5737 TEST-NET-1) used by `insecure-descriptor`.
pub const INSECURE_HOST: &str = "192.0.2.1:9";

/// One thing the client did.
#[derive(Debug, Clone)]
pub enum Event {
    /// A JSON-RPC request on the MCP endpoint.
    Rpc {
        /// `method`.
        method: String,
        /// `params`.
        params: Value,
        /// `Mcp-Method` header.
        mcp_method_header: Option<String>,
    },
    /// An upload to a descriptor.
    Upload {
        /// Ticket from the URL.
        ticket: String,
        /// HTTP method.
        method: String,
        /// File bytes (raw body or the `fileField` part).
        bytes: Vec<u8>,
        /// Multipart fields other than the file, when multipart.
        fields: Vec<(String, String)>,
        /// Whether the body was multipart.
        multipart: bool,
    },
    /// A download.
    Download {
        /// File id.
        id: String,
    },
}

/// What the mock remembers.
#[derive(Debug, Default)]
pub struct MockState {
    /// The scenario being served.
    pub scenario: String,
    /// Own address.
    pub addr: Option<SocketAddr>,
    /// Everything the client did, in order.
    pub events: Vec<Event>,
    /// Issued file URIs → bytes (None until uploaded).
    pub files: HashMap<String, Option<Vec<u8>>>,
    /// Upload tickets → file URI (removed when redeemed).
    pub tickets: HashMap<String, String>,
    /// requestState values handed out.
    pub request_states: Vec<String>,
    /// Id counter.
    pub counter: u64,
}

type Shared = Arc<Mutex<MockState>>;

/// The mock's router.
pub fn router(state: Arc<Mutex<MockState>>) -> Router {
    Router::new()
        .route("/mcp", post(mcp))
        .route("/upload/{ticket}", post(upload).put(upload))
        .route("/download/{id}", get(download))
        .with_state(state)
}

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, MockState> {
    s.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn tool(name: &str) -> Value {
    let file = |x: Value| json!({"type": "string", "format": "uri", "description": "The file.", "x-mcp-file": x});
    match name {
        "files_inline_text" => {
            json!({"name": name, "description": "Inline-only text file.", "inputSchema": {"type": "object",
            "properties": {"file": file(json!({"accept": ["text/plain"], "maxSize": 64, "transferModes": ["inline"]}))}, "required": ["file"]}})
        }
        "files_upload_only" => {
            json!({"name": name, "description": "Upload-only file.", "inputSchema": {"type": "object",
            "properties": {"file": file(json!({"maxSize": 1_048_576, "transferModes": ["upload"]}))}, "required": ["file"]}})
        }
        "files_generate" => {
            json!({"name": name, "description": "Generates a file.", "inputSchema": {"type": "object",
            "properties": {"size": {"type": "integer", "minimum": 0, "maximum": 1_048_576}, "name": {"type": "string"}}}})
        }
        _ => {
            json!({"name": "files_elicit", "description": "Asks for a document by MRTR elicitation.", "inputSchema": {"type": "object", "properties": {}}})
        }
    }
}

/// The tool a scenario lists.
pub fn scenario_tool(scenario: &str) -> &'static str {
    match scenario {
        "inline-only-field" => "files_inline_text",
        "upload-only-field" | "upload-multipart-field" | "insecure-descriptor" => {
            "files_upload_only"
        }
        "output-file-correct-digest" | "output-file-wrong-digest" => "files_generate",
        _ => "files_elicit",
    }
}

#[allow(clippy::needless_pass_by_value)]
fn ok(id: &Value, result: Value) -> Response {
    axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

#[allow(clippy::needless_pass_by_value)]
fn err(status: StatusCode, id: &Value, code: i64, message: &str, data: Value) -> Response {
    (status, axum::Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message, "data": data}}))).into_response()
}

#[allow(clippy::needless_pass_by_value)]
fn structured(v: Value) -> Value {
    json!({"resultType": "complete", "content": [{"type": "text", "text": v.to_string()}], "structuredContent": v})
}

fn describe(bytes: &[u8], mime: &str) -> Value {
    json!({"size": bytes.len(), "mimeType": mime, "digest": digest_json(bytes)})
}

/// Resolves a file argument: data: URI or an uploaded file URI → (bytes, mime).
fn resolve(st: &MockState, value: &str) -> Result<(Vec<u8>, String), &'static str> {
    if value.starts_with("data:") {
        let d = parse_data_uri(value).map_err(|_| "malformedFileUri")?;
        return Ok((d.bytes, d.media_type));
    }
    match st.files.get(value) {
        Some(Some(b)) => Ok((b.clone(), "application/octet-stream".to_owned())),
        _ => Err("fileUnavailable"),
    }
}

async fn mcp(State(s): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let Ok(req) = serde_json::from_slice::<Value>(&body) else {
        return err(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            -32700,
            "parse error",
            json!({}),
        );
    };
    let id = req.get("id").cloned().unwrap_or(Value::Null);
    let method = req
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let params = req.get("params").cloned().unwrap_or(json!({}));
    let mut st = lock(&s);
    st.events.push(Event::Rpc {
        method: method.clone(),
        params: params.clone(),
        mcp_method_header: headers
            .get("mcp-method")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    });
    let addr = st.addr.map(|a| a.to_string()).unwrap_or_default();
    let caps = params
        .pointer("/_meta/io.modelcontextprotocol~1clientCapabilities/files")
        .cloned();
    match method.as_str() {
        "server/discover" => ok(
            &id,
            json!({"resultType": "complete", "supportedVersions": [smcp_proto::PROTOCOL_VERSION],
            "capabilities": {"tools": {}, "files": {"upload": true, "download": true, "transports": ["https"]}},
            "serverInfo": {"name": "sep2631-mock", "version": "1.0.0"}, "ttlMs": 0, "cacheScope": "private"}),
        ),
        "tools/list" => {
            let t = tool(scenario_tool(&st.scenario));
            ok(
                &id,
                json!({"resultType": "complete", "tools": [t], "ttlMs": 0, "cacheScope": "private"}),
            )
        }
        "files/authorizeUpload" | "files/authorizeDownload" if caps.is_none() => err(
            StatusCode::BAD_REQUEST,
            &id,
            -32021,
            "missing required client capability",
            json!({"requiredCapabilities": {"files": {"upload": true, "download": true, "transports": ["https"]}}}),
        ),
        "files/authorizeUpload" => {
            st.counter += 1;
            let n = st.counter;
            let uri = format!("mcp-file://sep2631-mock/file-{n}");
            let ticket = format!("ticket-{n}");
            st.files.insert(uri.clone(), None);
            st.tickets.insert(ticket.clone(), uri.clone());
            let host = if st.scenario == "insecure-descriptor" {
                INSECURE_HOST.to_owned()
            } else {
                addr
            };
            let mut upload = json!({"transport": "https", "method": "PUT", "url": format!("http://{host}/upload/{ticket}"),
                "headers": {"Content-Type": "application/octet-stream"}, "expiresAt": expires_at()});
            if st.scenario == "upload-multipart-field" {
                upload = json!({"transport": "https", "method": "POST", "url": format!("http://{host}/upload/{ticket}"),
                    "headers": {"Content-Type": "multipart/form-data"}, "multipart": {"fileField": "file", "fields": {"token": format!("tok-{n}")}},
                    "expiresAt": expires_at()});
            }
            let mut file = json!({"uri": uri});
            for k in ["name", "mimeType", "size", "digest"] {
                if let Some(v) = params.get(k) {
                    file[k] = v.clone();
                }
            }
            ok(
                &id,
                json!({"resultType": "complete", "file": file, "upload": upload}),
            )
        }
        "files/authorizeDownload" => {
            let uri = params.get("uri").and_then(Value::as_str).unwrap_or("");
            match st.files.get(uri) {
                Some(Some(_)) => {
                    let fid = uri.rsplit('/').next().unwrap_or("").to_owned();
                    ok(
                        &id,
                        json!({"resultType": "complete", "file": file_value(&st.scenario, uri),
                        "download": {"transport": "https", "method": "GET", "url": format!("http://{addr}/download/{fid}"), "expiresAt": expires_at()}}),
                    )
                }
                _ => err(
                    StatusCode::OK,
                    &id,
                    -32602,
                    "file unavailable",
                    json!({"reason": "fileUnavailable"}),
                ),
            }
        }
        "tools/call" => {
            let name = params.get("name").and_then(Value::as_str).unwrap_or("");
            let args = params.get("arguments").cloned().unwrap_or(json!({}));
            call_tool(
                &mut st,
                &id,
                name,
                &args,
                &params,
                caps.is_some_and(|c| c.get("download") == Some(&json!(true))),
            )
        }
        _ => err(
            StatusCode::NOT_FOUND,
            &id,
            -32601,
            "method not found",
            json!({}),
        ),
    }
}

fn file_value(scenario: &str, uri: &str) -> Value {
    let bytes = generated_bytes(GENERATED_SIZE);
    let digest = if scenario == "output-file-wrong-digest" {
        digest_json(b"not the bytes that will be served")
    } else {
        digest_json(&bytes)
    };
    json!({"uri": uri, "name": GENERATED_NAME, "mimeType": "application/octet-stream", "size": GENERATED_SIZE, "digest": digest})
}

fn call_tool(
    st: &mut MockState,
    id: &Value,
    name: &str,
    args: &Value,
    params: &Value,
    download: bool,
) -> Response {
    let reject = |reason: &str| {
        let v = json!({"argument": "file", "reason": reason});
        json!({"resultType": "complete", "isError": true, "content": [{"type": "text", "text": v.to_string()}], "structuredContent": v})
    };
    match name {
        "files_inline_text" | "files_upload_only" => {
            let value = args.get("file").and_then(Value::as_str).unwrap_or("");
            let inline_only = name == "files_inline_text";
            if inline_only != value.starts_with("data:") {
                return ok(id, reject("transferModeNotAllowed"));
            }
            match resolve(st, value) {
                Ok((b, m)) if inline_only && !accept_matches(&["text/plain".to_owned()], &m) => {
                    let _ = b;
                    ok(id, reject("mimeTypeNotAccepted"))
                }
                Ok((b, _)) if b.len() > if inline_only { 64 } else { 1_048_576 } => {
                    ok(id, reject("maxSizeExceeded"))
                }
                Ok((b, m)) => ok(id, structured(describe(&b, &m))),
                Err(r) => ok(id, reject(r)),
            }
        }
        "files_generate" => {
            st.counter += 1;
            let uri = format!("mcp-file://sep2631-mock/gen-{}", st.counter);
            st.files
                .insert(uri.clone(), Some(generated_bytes(GENERATED_SIZE)));
            let fv = file_value(&st.scenario, &uri);
            let mut content =
                vec![json!({"type": "text", "text": format!("generated {GENERATED_NAME}")})];
            if download {
                content.push(json!({"type": "file", "file": fv}));
            }
            ok(
                id,
                json!({"resultType": "complete", "content": content, "structuredContent": {"file": fv}}),
            )
        }
        _ => {
            let Some(resp) = params.pointer("/inputResponses/document_request") else {
                st.counter += 1;
                let state = format!("mock-state-{}", st.counter);
                st.request_states.push(state.clone());
                return ok(
                    id,
                    json!({"resultType": "input_required", "requestState": state, "inputRequests": {"document_request": {
                    "method": "elicitation/create", "params": {"mode": "form", "message": "Select a document.",
                    "requestedSchema": {"type": "object", "properties": {"document": {"type": "string", "format": "uri", "title": "Document",
                        "x-mcp-file": {"maxSize": 65536}}}, "required": ["document"]}}}}}),
                );
            };
            let value = resp
                .pointer("/content/document")
                .and_then(Value::as_str)
                .unwrap_or("");
            match resolve(st, value) {
                Ok((b, m)) => ok(id, structured(describe(&b, &m))),
                Err(r) => ok(id, reject(r)),
            }
        }
    }
}

async fn upload(
    State(s): State<Shared>,
    Path(ticket): Path<String>,
    method: axum::http::Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let ct = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let multipart = ct.starts_with("multipart/form-data");
    let (bytes, fields) = if multipart {
        let Some(parts) = multipart_decode(&ct, &body) else {
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({"reason": "malformedMultipart"})),
            )
                .into_response();
        };
        let file = parts
            .iter()
            .find(|p| p.name == "file")
            .map(|p| p.data.clone())
            .unwrap_or_default();
        let fields = parts
            .into_iter()
            .filter(|p| p.name != "file")
            .map(|p| (p.name, String::from_utf8_lossy(&p.data).into_owned()))
            .collect();
        (file, fields)
    } else {
        (body.to_vec(), Vec::new())
    };
    let mut st = lock(&s);
    st.events.push(Event::Upload {
        ticket: ticket.clone(),
        method: method.to_string(),
        bytes: bytes.clone(),
        fields,
        multipart,
    });
    let Some(uri) = st.tickets.remove(&ticket) else {
        return (
            StatusCode::CONFLICT,
            axum::Json(json!({"reason": "descriptorExpired"})),
        )
            .into_response();
    };
    st.files.insert(uri, Some(bytes));
    StatusCode::NO_CONTENT.into_response()
}

async fn download(State(s): State<Shared>, Path(fid): Path<String>) -> Response {
    let mut st = lock(&s);
    st.events.push(Event::Download { id: fid.clone() });
    let uri = format!("mcp-file://sep2631-mock/{fid}");
    match st.files.get(&uri) {
        Some(Some(b)) => (
            StatusCode::OK,
            [("content-type", "application/octet-stream")],
            b.clone(),
        )
            .into_response(),
        _ => (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"reason": "fileUnavailable"})),
        )
            .into_response(),
    }
}

fn expires_at() -> String {
    crate::report::rfc3339_at(crate::report::unix_now() + 600)
}
