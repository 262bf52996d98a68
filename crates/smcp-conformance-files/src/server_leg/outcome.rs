//! [`Outcome`]: what a `tools/call` on a file fixture produced, and the expectations the
//! scenarios check it against.

use serde_json::Value;

use crate::wire::RpcReply;

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
