//! The server leg: drives any server URL that exposes the documented fixture tools (README
//! §Server fixtures) and checks the SEP-2631 server behaviour.

mod declarations;
mod download;
mod inline;
mod upload;

use serde_json::{Value, json};

use crate::report::{LegResults, Recorder};
use crate::wire::{RpcReply, Wire, WireError, files_caps};

/// Options of `smcp-conformance-files server`.
#[derive(Debug, Clone, Default)]
pub struct ServerLegOptions {
    /// The MCP endpoint, e.g. `https://127.0.0.1:8443/mcp`.
    pub url: String,
    /// PEM of the CA that signed the server's (and its descriptors') certificate.
    pub ca_pem: Option<Vec<u8>>,
    /// Allow `http://127.0.0.1` descriptors (development only).
    pub insecure_loopback_http: bool,
    /// How long the suite may wait for an upload descriptor to expire to test that it is then
    /// refused; zero (the default) reports that check as SKIPPED.
    pub max_expiry_wait: std::time::Duration,
}

/// Scenario names of the server leg, in run order.
pub const SCENARIOS: &[&str] = &[
    "files-capabilities",
    "files-declarations",
    "files-inline",
    "files-upload",
    "files-upload-integrity",
    "files-uris",
    "files-download",
    "files-elicitation",
];

/// Runs every scenario and returns the checks per scenario.
pub async fn run(opts: &ServerLegOptions) -> Result<LegResults, WireError> {
    let wire = Wire::new(
        &opts.url,
        opts.ca_pem.as_deref(),
        opts.insecure_loopback_http,
    )?;
    let mut out = LegResults::new();
    for name in SCENARIOS {
        let mut rec = Recorder::new();
        let res = match *name {
            "files-capabilities" => declarations::capabilities(&wire, &mut rec).await,
            "files-declarations" => declarations::declarations(&wire, &mut rec).await,
            "files-inline" => inline::run(&wire, &mut rec).await,
            "files-upload" => upload::upload(&wire, &mut rec, opts.max_expiry_wait).await,
            "files-upload-integrity" => upload::integrity(&wire, &mut rec).await,
            "files-uris" => upload::uris(&wire, &mut rec).await,
            "files-download" => download::download(&wire, &mut rec).await,
            _ => download::elicitation(&wire, &mut rec).await,
        };
        if let Err(e) = res {
            rec.push(
                "sep2631-scenario-completed",
                &crate::sep::FIXTURES,
                crate::report::Status::Failure,
                Some(format!("scenario aborted: {e}")),
                None,
            );
        }
        out.insert((*name).to_owned(), rec.into_checks());
    }
    Ok(out)
}

/// What a `tools/call` on a file fixture produced.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// `isError` absent/false: the `structuredContent`.
    Ok(Value),
    /// `isError: true` with `structuredContent.reason` (empty when missing).
    ToolError {
        argument: Option<String>,
        reason: String,
    },
    /// A JSON-RPC error (code, data.reason).
    Rpc { code: i64, reason: Option<String> },
    /// Nothing parseable.
    Broken(String),
}

impl Outcome {
    pub(crate) fn of(reply: &RpcReply) -> Self {
        if let Some(code) = reply.error_code() {
            let reason = reply
                .error_data()
                .and_then(|d| d.get("reason"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            return Self::Rpc { code, reason };
        }
        let Some(result) = reply.result() else {
            return Self::Broken(format!("HTTP {} without a JSON-RPC response", reply.status));
        };
        let sc = result
            .get("structuredContent")
            .cloned()
            .unwrap_or(Value::Null);
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            return Self::ToolError {
                argument: sc
                    .get("argument")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                reason: sc
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            };
        }
        Self::Ok(sc)
    }

    /// Reason of a rejection, if any.
    pub(crate) fn reason(&self) -> Option<&str> {
        match self {
            Self::ToolError { reason, .. } => Some(reason),
            Self::Rpc { reason, .. } => reason.as_deref(),
            _ => None,
        }
    }
}

/// `None` when `outcome` is an accepted file whose structured result names `bytes` and `mime`.
pub(crate) fn expect_file_result(outcome: &Outcome, bytes: &[u8], mime: &str) -> Option<String> {
    let Outcome::Ok(sc) = outcome else {
        return Some(format!("expected the file to be accepted, got {outcome:?}"));
    };
    let want = crate::files::sha256_b64url(bytes);
    let size = sc.get("size").and_then(Value::as_u64);
    let digest = sc.pointer("/digest/value").and_then(Value::as_str);
    let got_mime = sc
        .get("mimeType")
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase);
    if size != Some(bytes.len() as u64) {
        return Some(format!(
            "structuredContent.size = {size:?}, want {}",
            bytes.len()
        ));
    }
    if digest != Some(want.as_str()) {
        return Some(format!(
            "structuredContent.digest.value = {digest:?}, want {want}"
        ));
    }
    if got_mime.as_deref() != Some(mime) {
        return Some(format!(
            "structuredContent.mimeType = {got_mime:?}, want {mime}"
        ));
    }
    None
}

/// `None` when `outcome` is a rejection with `reason` (a tool error naming `argument`).
pub(crate) fn expect_rejected(
    outcome: &Outcome,
    argument: &str,
    reasons: &[&str],
) -> Option<String> {
    match outcome {
        Outcome::ToolError {
            argument: a,
            reason,
        } => {
            if a.as_deref() != Some(argument) {
                Some(format!(
                    "isError result names argument {a:?}, want {argument:?}"
                ))
            } else if !reasons.is_empty() && !reasons.contains(&reason.as_str()) {
                Some(format!("reason {reason:?}, want one of {reasons:?}"))
            } else {
                None
            }
        }
        other => Some(format!(
            "expected CallToolResult isError:true with reason {reasons:?}, got {other:?}"
        )),
    }
}

/// `files/authorizeUpload` for `bytes` (name, mimeType, size, digest) with the files capability.
pub(crate) async fn authorize_upload(
    wire: &Wire,
    bytes: &[u8],
    name: &str,
    mime: &str,
) -> Result<RpcReply, WireError> {
    let params = json!({
        "name": name, "mimeType": mime, "size": bytes.len(),
        "digest": crate::files::digest_json(bytes),
    });
    wire.rpc("files/authorizeUpload", params, files_caps())
        .await
}

/// Authorizes and uploads `bytes`; returns the file URI or why it failed.
pub(crate) async fn upload_file(
    wire: &Wire,
    bytes: &[u8],
    name: &str,
    mime: &str,
) -> Result<Result<(String, Value), String>, WireError> {
    let reply = authorize_upload(wire, bytes, name, mime).await?;
    let Some(result) = reply.result() else {
        return Ok(Err(format!(
            "files/authorizeUpload failed: {}",
            reply.evidence()
        )));
    };
    let (Some(uri), Some(upload)) = (
        result.pointer("/file/uri").and_then(Value::as_str),
        result.get("upload"),
    ) else {
        return Ok(Err(format!(
            "files/authorizeUpload result lacks file.uri/upload: {}",
            reply.evidence()
        )));
    };
    let data = match wire.upload(upload, bytes, name, mime).await {
        Ok(d) => d,
        Err(WireError::InsecureDescriptor(u)) => {
            return Ok(Err(format!("descriptor url {u} is not https")));
        }
        Err(e) => return Err(e),
    };
    if !(200..300).contains(&data.status) {
        return Ok(Err(format!(
            "upload answered HTTP {} {:?}",
            data.status,
            data.reason()
        )));
    }
    Ok(Ok((uri.to_owned(), upload.clone())))
}
