//! Raw MCP 2026-07-28 Streamable HTTP requests and SEP-2631 data-plane transfers, spoken by hand
//! so the suite can send anything (including malformed input) and see exactly what came back.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use smcp_proto::sse::SseDecoder;

/// Per-request timeout (control plane and data plane).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);
/// Largest response body the suite reads.
pub const MAX_BODY: usize = 8 * 1024 * 1024;

/// Errors of the wire layer (not protocol failures: those are in [`RpcReply`]).
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// HTTP failed.
    #[error("http: {0}")]
    Http(#[from] reqwest::Error),
    /// The body was not what the transport promises.
    #[error("bad response: {0}")]
    BadResponse(String),
    /// A descriptor points somewhere the suite must not go.
    #[error("refusing descriptor url {0}: not https (and not loopback http in development mode)")]
    InsecureDescriptor(String),
    /// Reading the CA file.
    #[error("ca cert: {0}")]
    Ca(String),
}

/// `_meta["io.modelcontextprotocol/clientCapabilities"]` with the SEP-2631 `files` member.
pub fn files_caps() -> Value {
    json!({"files": {"upload": true, "download": true, "transports": ["https"]}, "elicitation": {}})
}

/// Capabilities without `files`.
pub fn no_files_caps() -> Value {
    json!({"elicitation": {}})
}

/// A JSON-RPC reply plus its HTTP status.
#[derive(Debug, Clone)]
pub struct RpcReply {
    /// HTTP status.
    pub status: u16,
    /// The JSON-RPC response object, when one was found.
    pub body: Option<Value>,
}

impl RpcReply {
    /// `result`, when present.
    pub fn result(&self) -> Option<&Value> {
        self.body.as_ref()?.get("result")
    }
    /// `error.code`, when present.
    pub fn error_code(&self) -> Option<i64> {
        self.body.as_ref()?.get("error")?.get("code")?.as_i64()
    }
    /// `error.data`, when present.
    pub fn error_data(&self) -> Option<&Value> {
        self.body.as_ref()?.get("error")?.get("data")
    }
    /// Short evidence for check details.
    pub fn evidence(&self) -> Value {
        json!({"httpStatus": self.status, "body": self.body.as_ref().map(trim_json)})
    }
}

/// Trims long strings (data: URIs) so evidence stays small and never echoes file bytes.
pub fn trim_json(v: &Value) -> Value {
    match v {
        Value::String(s) if s.len() > 120 => Value::String(format!(
            "{}…[{} chars]",
            s.chars().take(80).collect::<String>(),
            s.len()
        )),
        Value::Array(a) => Value::Array(a.iter().take(20).map(trim_json).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), trim_json(v))).collect())
        }
        other => other.clone(),
    }
}

/// Result of a data-plane request.
#[derive(Debug, Clone)]
pub struct DataReply {
    /// HTTP status.
    pub status: u16,
    /// Response headers (names lower case).
    pub headers: Vec<(String, String)>,
    /// Body bytes (bounded).
    pub bytes: Vec<u8>,
}

fn header_list(resp: &reqwest::Response) -> Vec<(String, String)> {
    resp.headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

impl DataReply {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `reason` from a JSON error body.
    pub fn reason(&self) -> Option<String> {
        let v: Value = serde_json::from_slice(&self.bytes).ok()?;
        v.get("reason")?.as_str().map(str::to_owned)
    }
}

/// An MCP endpoint plus the HTTP client used for it and for descriptors.
#[derive(Debug)]
pub struct Wire {
    http: reqwest::Client,
    url: String,
    next_id: AtomicI64,
    allow_loopback_http: bool,
}

impl Wire {
    /// Builds the client; `ca_pem` adds a trusted root (for self-signed reference servers).
    pub fn new(
        url: &str,
        ca_pem: Option<&[u8]>,
        allow_loopback_http: bool,
    ) -> Result<Self, WireError> {
        let mut b = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy();
        if let Some(pem) = ca_pem {
            for c in reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| WireError::Ca(e.to_string()))?
            {
                b = b.add_root_certificate(c);
            }
        }
        Ok(Self {
            http: b.build()?,
            url: url.to_owned(),
            next_id: AtomicI64::new(1),
            allow_loopback_http,
        })
    }

    /// The MCP endpoint.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Next request id.
    pub fn id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends `method` with `params` (the suite adds `_meta` with `caps`), headers per SH.
    pub async fn rpc(
        &self,
        method: &str,
        params: Value,
        caps: Value,
    ) -> Result<RpcReply, WireError> {
        let mut params = match params {
            Value::Object(o) => o,
            _ => serde_json::Map::new(),
        };
        let meta = params.entry("_meta").or_insert_with(|| json!({}));
        if let Value::Object(m) = meta {
            m.entry("io.modelcontextprotocol/protocolVersion")
                .or_insert(json!(smcp_proto::PROTOCOL_VERSION));
            m.entry("io.modelcontextprotocol/clientInfo").or_insert(
                json!({"name": "smcp-conformance-files", "version": env!("CARGO_PKG_VERSION")}),
            );
            m.insert("io.modelcontextprotocol/clientCapabilities".into(), caps);
        }
        let name = match method {
            "tools/call" | "prompts/get" => params
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_owned),
            "resources/read" => params.get("uri").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        };
        let id = self.id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut req = self
            .http
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", smcp_proto::PROTOCOL_VERSION)
            .header("Mcp-Method", method);
        if let Some(n) = name.filter(|n| n.is_ascii() && !n.chars().any(char::is_control)) {
            req = req.header("Mcp-Name", n);
        }
        let resp = req
            .body(serde_json::to_vec(&body).unwrap_or_default())
            .send()
            .await?;
        let status = resp.status().as_u16();
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let bytes = read_bounded(resp).await?;
        let body = if sse {
            let mut dec = SseDecoder::new();
            dec.feed(&bytes);
            let mut found = None;
            while let Ok(Some(ev)) = dec.next_event() {
                if let Ok(v) = serde_json::from_str::<Value>(&ev.data)
                    && v.get("id").and_then(Value::as_i64) == Some(id)
                    && v.get("method").is_none()
                {
                    found = Some(v);
                    break;
                }
            }
            found
        } else {
            serde_json::from_slice(&bytes).ok()
        };
        Ok(RpcReply { status, body })
    }

    /// `tools/call` and the result (or `None` when the reply had no result).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        caps: Value,
    ) -> Result<RpcReply, WireError> {
        self.rpc(
            "tools/call",
            json!({"name": name, "arguments": arguments}),
            caps,
        )
        .await
    }

    /// Rejects descriptor URLs the suite must not follow.
    pub fn check_descriptor_url(&self, url: &str) -> Result<(), WireError> {
        if url.starts_with("https://") || (self.allow_loopback_http && is_loopback_http(url)) {
            Ok(())
        } else {
            Err(WireError::InsecureDescriptor(url.to_owned()))
        }
    }

    /// Uploads `bytes` exactly as `upload` (a FileTransferDescriptor) says.
    pub async fn upload(
        &self,
        upload: &Value,
        bytes: &[u8],
        name: &str,
        mime: &str,
    ) -> Result<DataReply, WireError> {
        let url = upload
            .get("url")
            .and_then(Value::as_str)
            .unwrap_or_default();
        self.check_descriptor_url(url)?;
        let method = upload
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("PUT");
        let method = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|e| WireError::BadResponse(e.to_string()))?;
        let mut req = self.http.request(method, url);
        let multipart = upload.get("multipart");
        if let Some(Value::Object(h)) = upload.get("headers") {
            for (k, v) in h {
                // A multipart Content-Type needs our boundary (A18.111): never send it verbatim.
                if multipart.is_some() && k.eq_ignore_ascii_case("content-type") {
                    continue;
                }
                if let Some(v) = v.as_str() {
                    req = req.header(k.as_str(), v);
                }
            }
        }
        let req = if let Some(mp) = multipart {
            let file_field = mp
                .get("fileField")
                .and_then(Value::as_str)
                .unwrap_or("file");
            let fields: Vec<(String, String)> = mp
                .get("fields")
                .and_then(Value::as_object)
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| {
                            (
                                k.clone(),
                                v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            let (ct, body) = crate::files::multipart_encode(&fields, file_field, name, mime, bytes);
            req.header("Content-Type", ct).body(body)
        } else {
            req.body(bytes.to_vec())
        };
        let resp = req.send().await?;
        let status = resp.status().as_u16();
        let headers = header_list(&resp);
        Ok(DataReply {
            status,
            headers,
            bytes: read_bounded(resp).await?,
        })
    }

    /// Downloads per a `download` descriptor.
    pub async fn download(&self, download: &Value) -> Result<DataReply, WireError> {
        let url = download
            .get("url")
            .and_then(Value::as_str)
            .unwrap_or_default();
        self.check_descriptor_url(url)?;
        let mut req = self.http.get(url);
        if let Some(Value::Object(h)) = download.get("headers") {
            for (k, v) in h {
                if let Some(v) = v.as_str() {
                    req = req.header(k.as_str(), v);
                }
            }
        }
        let resp = req.send().await?;
        let status = resp.status().as_u16();
        let headers = header_list(&resp);
        Ok(DataReply {
            status,
            headers,
            bytes: read_bounded(resp).await?,
        })
    }
}

/// `http://127.0.0.1…`, `http://[::1]…` or `http://localhost…`.
pub fn is_loopback_http(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = match host.rsplit_once(':') {
        Some((h, p)) if p.bytes().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    };
    host == "localhost" || host == "[::1]" || host.starts_with("127.")
}

async fn read_bounded(mut resp: reqwest::Response) -> Result<Vec<u8>, WireError> {
    let mut out = Vec::new();
    while let Some(chunk) = resp.chunk().await? {
        if out.len() + chunk.len() > MAX_BODY {
            return Err(WireError::BadResponse(format!(
                "body larger than {MAX_BODY} bytes"
            )));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}
