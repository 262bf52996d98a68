//! A minimal in-test reference server implementing the suite's wire contract (README §Server
//! fixtures), over plain loopback HTTP. `skip_digest_check` reproduces the broken fixture of
//! `smcp-conformance-server --broken-skip-digest-check`.

#![allow(clippy::needless_pass_by_value)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use smcp_conformance_files::files::{
    accept_matches, digest_json, generated_bytes, is_sha256_b64url, multipart_decode,
    parse_data_uri, sha256_b64url,
};

/// Variants of the reference server.
#[derive(Debug, Clone, Copy, Default)]
pub struct RefOptions {
    /// Accept uploads whose bytes do not match the authorized digest (the broken fixture).
    pub skip_digest_check: bool,
    /// Issue multipart POST descriptors instead of raw PUT.
    pub multipart: bool,
    /// Upload descriptors expire this many seconds after issue (default: far future).
    pub expires_in_secs: Option<i64>,
}

#[derive(Debug, Clone)]
struct Pending {
    uri: String,
    size: Option<u64>,
    digest: Option<String>,
    expires: i64,
}

#[derive(Debug, Default)]
struct St {
    opts: RefOptions,
    addr: String,
    files: HashMap<String, (Vec<u8>, String)>,
    tickets: HashMap<String, Pending>,
    mimes: HashMap<String, String>,
    n: u64,
}

type Shared = Arc<Mutex<St>>;

/// Starts the server on 127.0.0.1:0; returns its MCP URL.
pub async fn start(opts: RefOptions) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let st = Arc::new(Mutex::new(St {
        opts,
        addr: addr.to_string(),
        ..St::default()
    }));
    let app = Router::new()
        .route("/mcp", post(mcp))
        .route("/upload/{t}", post(upload).put(upload))
        .route("/download/{id}", get(download))
        .layer(DefaultBodyLimit::max(4 * 1024 * 1024))
        .with_state(st);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/mcp")
}

fn ok(id: &Value, result: Value) -> Response {
    axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}
fn rpc_err(status: StatusCode, id: &Value, code: i64, data: Value) -> Response {
    (status, axum::Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "error", "data": data}}))).into_response()
}
fn reject(reason: &str, arg: &str) -> Value {
    let v = json!({"argument": arg, "reason": reason});
    json!({"resultType": "complete", "isError": true, "content": [{"type": "text", "text": v.to_string()}], "structuredContent": v})
}
fn describe(bytes: &[u8], mime: &str) -> Value {
    json!({"size": bytes.len(), "mimeType": mime, "digest": digest_json(bytes)})
}
fn complete(v: Value) -> Value {
    json!({"resultType": "complete", "content": [{"type": "text", "text": v.to_string()}], "structuredContent": v})
}
fn expires() -> String {
    "2999-01-01T00:00:00Z".to_owned()
}
fn upload_expiry(opts: RefOptions) -> i64 {
    opts.expires_in_secs
        .map_or(i64::MAX, |s| smcp_conformance_files::report::unix_now() + s)
}
fn rfc(t: i64) -> String {
    if t == i64::MAX {
        expires()
    } else {
        smcp_conformance_files::report::rfc3339_at(t)
    }
}

fn tools() -> Value {
    let f = |x: Value| json!({"type": "string", "format": "uri", "x-mcp-file": x});
    json!([
        {"name": "files_inline_text", "description": "d", "inputSchema": {"type": "object", "properties": {"file": f(json!({"accept": ["text/plain"], "maxSize": 64, "transferModes": ["inline"]}))}, "required": ["file"]}},
        {"name": "files_upload_only", "description": "d", "inputSchema": {"type": "object", "properties": {"file": f(json!({"maxSize": 1_048_576, "transferModes": ["upload"]}))}, "required": ["file"]}},
        {"name": "files_any_image", "description": "d", "inputSchema": {"type": "object", "properties": {"file": f(json!({"accept": ["image/*"], "maxSize": 65536}))}, "required": ["file"]}},
        {"name": "files_many", "description": "d", "inputSchema": {"type": "object", "properties": {"files": {"type": "array", "items": f(json!({"maxSize": 65536}))}}, "required": ["files"]}},
        {"name": "files_generate", "description": "d", "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}, "name": {"type": "string"}}}},
        {"name": "files_elicit", "description": "d", "inputSchema": {"type": "object", "properties": {}}},
    ])
}

/// Validates one file value against (accept, maxSize, modes) → (bytes, mime) or reason.
fn validate(
    st: &St,
    v: &str,
    accept: &[&str],
    max: usize,
    inline: bool,
    upload: bool,
) -> Result<(Vec<u8>, String), &'static str> {
    let (bytes, mime) = if v.starts_with("data:") {
        if !inline {
            return Err("transferModeNotAllowed");
        }
        let d = parse_data_uri(v).map_err(|_| "malformedFileUri")?;
        (d.bytes, d.media_type)
    } else if let Some(rest) = v.strip_prefix("mcp-file://ref/") {
        if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err("malformedFileUri");
        }
        if !upload {
            return Err("transferModeNotAllowed");
        }
        st.files.get(v).cloned().ok_or("fileUnavailable")?
    } else if v.starts_with("mcp-file:") {
        return Err("malformedFileUri");
    } else if v
        .split_once(':')
        .is_some_and(|(s, _)| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphabetic()))
    {
        return Err("unsupportedScheme");
    } else {
        return Err("malformedFileUri");
    };
    let acc: Vec<String> = accept.iter().map(|s| (*s).to_owned()).collect();
    if !accept_matches(&acc, &mime) {
        return Err("mimeTypeNotAccepted");
    }
    // The content decides too: an executable (PE `MZ`, ELF) is no image or document.
    let executable = bytes.starts_with(b"MZ") || bytes.starts_with(b"\x7fELF");
    if executable && !accept.is_empty() && !accept_matches(&acc, "application/octet-stream") {
        return Err("mimeTypeNotAccepted");
    }
    if bytes.len() > max {
        return Err("maxSizeExceeded");
    }
    Ok((bytes, mime))
}

async fn mcp(State(s): State<Shared>, body: Bytes) -> Response {
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = req.get("id").cloned().unwrap_or(Value::Null);
    let method = req
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let params = req.get("params").cloned().unwrap_or(json!({}));
    let files_cap = params
        .pointer("/_meta/io.modelcontextprotocol~1clientCapabilities/files")
        .cloned();
    let download_cap = files_cap
        .as_ref()
        .is_some_and(|f| f.get("download") == Some(&json!(true)));
    let mut st = s.lock().unwrap();
    let addr = st.addr.clone();
    match method.as_str() {
        "server/discover" => ok(
            &id,
            json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}, "resources": {},
            "files": {"upload": true, "download": true, "transports": ["https"]}}, "serverInfo": {"name": "ref", "version": "0"}, "ttlMs": 0, "cacheScope": "private"}),
        ),
        "tools/list" => ok(
            &id,
            json!({"resultType": "complete", "tools": tools(), "ttlMs": 0, "cacheScope": "private"}),
        ),
        "resources/list" => ok(
            &id,
            json!({"resultType": "complete", "resources": [{"uri": "mcp-resource://ref/readme", "name": "readme"}], "ttlMs": 0, "cacheScope": "private"}),
        ),
        "resources/read" => rpc_err(
            StatusCode::OK,
            &id,
            -32602,
            json!({"reason": "resourceNotFound"}),
        ),
        m if m.starts_with("files/")
            && files_cap.is_none()
            && (m == "files/authorizeUpload" || m == "files/authorizeDownload") =>
        {
            rpc_err(
                StatusCode::BAD_REQUEST,
                &id,
                -32021,
                json!({"requiredCapabilities": {"files": {"upload": true, "download": true, "transports": ["https"]}}}),
            )
        }
        "files/authorizeUpload" => {
            if params
                .get("size")
                .is_some_and(|v| !v.is_null() && v.as_u64().is_none())
            {
                return rpc_err(
                    StatusCode::OK,
                    &id,
                    -32602,
                    json!({"reason": "invalidSize"}),
                );
            }
            let digest = match params.get("digest") {
                None => None,
                Some(d) if d.get("algorithm") != Some(&json!("sha-256")) => {
                    return rpc_err(
                        StatusCode::OK,
                        &id,
                        -32602,
                        json!({"reason": "unsupportedDigestAlgorithm"}),
                    );
                }
                Some(d) => match d.get("value").and_then(Value::as_str) {
                    Some(v) if is_sha256_b64url(v) => Some(v.to_owned()),
                    _ => {
                        return rpc_err(
                            StatusCode::OK,
                            &id,
                            -32602,
                            json!({"reason": "invalidDigest"}),
                        );
                    }
                },
            };
            st.n += 1;
            let n = st.n;
            let uri = format!("mcp-file://ref/f{n}");
            let ticket = format!("t{n}");
            let mime = params
                .get("mimeType")
                .and_then(Value::as_str)
                .unwrap_or("application/octet-stream")
                .to_owned();
            st.mimes.insert(uri.clone(), mime);
            let exp = upload_expiry(st.opts);
            st.tickets.insert(
                ticket.clone(),
                Pending {
                    uri: uri.clone(),
                    size: params.get("size").and_then(Value::as_u64),
                    digest,
                    expires: exp,
                },
            );
            let url = format!("http://{addr}/upload/{ticket}");
            let upload = if st.opts.multipart {
                json!({"transport": "https", "method": "POST", "url": url, "multipart": {"fileField": "file", "fields": {"token": ticket}}, "expiresAt": rfc(exp)})
            } else {
                json!({"transport": "https", "method": "PUT", "url": url, "headers": {"Content-Type": "application/octet-stream"}, "expiresAt": rfc(exp)})
            };
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
                Some((b, m)) => {
                    let fid = uri.rsplit('/').next().unwrap_or("");
                    ok(
                        &id,
                        json!({"resultType": "complete", "file": {"uri": uri, "mimeType": m, "size": b.len(), "digest": digest_json(b)},
                        "download": {"transport": "https", "method": "GET", "url": format!("http://{addr}/download/{fid}"), "expiresAt": expires()}}),
                    )
                }
                None => rpc_err(
                    StatusCode::OK,
                    &id,
                    -32602,
                    json!({"reason": "fileUnavailable"}),
                ),
            }
        }
        "tools/call" => {
            let name = params.get("name").and_then(Value::as_str).unwrap_or("");
            let args = params.get("arguments").cloned().unwrap_or(json!({}));
            let file = args.get("file").and_then(Value::as_str).unwrap_or("");
            let r = match name {
                "files_inline_text" => validate(&st, file, &["text/plain"], 64, true, false)
                    .map(|(b, m)| complete(describe(&b, &m))),
                "files_upload_only" => validate(&st, file, &[], 1_048_576, false, true)
                    .map(|(b, m)| complete(describe(&b, &m))),
                "files_any_image" => validate(&st, file, &["image/*"], 65536, true, true)
                    .map(|(b, m)| complete(describe(&b, &m))),
                "files_many" => {
                    let mut out = Vec::new();
                    for v in args
                        .get("files")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default()
                    {
                        match validate(&st, v.as_str().unwrap_or(""), &[], 65536, true, true) {
                            Ok((b, m)) => out.push(describe(&b, &m)),
                            Err(e) => return ok(&id, reject(e, "files")),
                        }
                    }
                    Ok(complete(json!({"files": out})))
                }
                "files_generate" => {
                    let size = args.get("size").and_then(Value::as_u64).unwrap_or(0) as usize;
                    let bytes = generated_bytes(size);
                    st.n += 1;
                    let uri = format!("mcp-file://ref/g{}", st.n);
                    let fv = json!({"uri": uri, "name": args.get("name").cloned().unwrap_or(json!("generated.bin")),
                        "mimeType": "application/octet-stream", "size": size, "digest": digest_json(&bytes)});
                    st.files
                        .insert(uri, (bytes, "application/octet-stream".to_owned()));
                    let mut content = vec![json!({"type": "text", "text": fv.to_string()})];
                    if download_cap {
                        content.push(json!({"type": "file", "file": fv}));
                    }
                    Ok(
                        json!({"resultType": "complete", "content": content, "structuredContent": {"file": fv}}),
                    )
                }
                _ => match params
                    .pointer("/inputResponses/document_request/content/document")
                    .and_then(Value::as_str)
                {
                    None => Ok(
                        json!({"resultType": "input_required", "requestState": "s1", "inputRequests": {"document_request": {"method": "elicitation/create",
                        "params": {"mode": "form", "message": "Select a document.", "requestedSchema": {"type": "object",
                            "properties": {"document": {"type": "string", "format": "uri", "x-mcp-file": {"maxSize": 65536}}}, "required": ["document"]}}}}}),
                    ),
                    Some(v) => validate(&st, v, &[], 65536, true, true)
                        .map(|(b, m)| complete(describe(&b, &m))),
                },
            };
            let arg = if name == "files_elicit" {
                "document"
            } else {
                "file"
            };
            ok(&id, r.unwrap_or_else(|e| reject(e, arg)))
        }
        _ => rpc_err(StatusCode::NOT_FOUND, &id, -32601, json!({})),
    }
}

async fn upload(
    State(s): State<Shared>,
    Path(t): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let ct = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let mut st = s.lock().unwrap();
    let fail = |code: StatusCode, reason: &str| {
        (code, axum::Json(json!({"reason": reason}))).into_response()
    };
    let Some(p) = st.tickets.remove(&t) else {
        return fail(StatusCode::GONE, "descriptorExpired");
    };
    if smcp_conformance_files::report::unix_now() > p.expires {
        return fail(StatusCode::GONE, "descriptorExpired");
    }
    let bytes = if st.opts.multipart {
        let parts = multipart_decode(&ct, &body).unwrap_or_default();
        if !parts
            .iter()
            .any(|x| x.name == "token" && x.data == t.as_bytes())
        {
            return fail(StatusCode::BAD_REQUEST, "malformedUpload");
        }
        parts
            .into_iter()
            .find(|x| x.name == "file")
            .map(|x| x.data)
            .unwrap_or_default()
    } else {
        body.to_vec()
    };
    if p.size.is_some_and(|n| n != bytes.len() as u64) {
        return fail(StatusCode::PAYLOAD_TOO_LARGE, "sizeMismatch");
    }
    if !st.opts.skip_digest_check
        && p.digest
            .as_ref()
            .is_some_and(|d| *d != sha256_b64url(&bytes))
    {
        return fail(StatusCode::UNPROCESSABLE_ENTITY, "digestMismatch");
    }
    let mime = st.mimes.get(&p.uri).cloned().unwrap_or_default();
    st.files.insert(p.uri, (bytes, mime));
    StatusCode::CREATED.into_response()
}

async fn download(State(s): State<Shared>, Path(id): Path<String>) -> Response {
    let st = s.lock().unwrap();
    match st.files.get(&format!("mcp-file://ref/{id}")) {
        Some((b, _)) => (
            StatusCode::OK,
            [
                ("x-content-type-options", "nosniff"),
                ("content-disposition", "attachment"),
            ],
            b.clone(),
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
