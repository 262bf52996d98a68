//! `files-capabilities` and `files-declarations`.

use serde_json::{Value, json};

use crate::report::{Recorder, Status};
use crate::sep;
use crate::wire::{Wire, WireError, files_caps, no_files_caps};

/// The fixture tools every server under test lists.
pub(crate) const FIXTURE_TOOLS: &[&str] = &[
    "files_inline_text",
    "files_upload_only",
    "files_any_image",
    "files_many",
    "files_generate",
    "files_elicit",
];

pub(crate) async fn capabilities(wire: &Wire, rec: &mut Recorder) -> Result<(), WireError> {
    let reply = wire.rpc("server/discover", json!({}), files_caps()).await?;
    let files = reply
        .result()
        .and_then(|r| r.pointer("/capabilities/files"));
    let problem = match files {
        None => Some(format!(
            "server/discover result has no capabilities.files: {}",
            reply.evidence()
        )),
        Some(f) => {
            let https = f
                .get("transports")
                .and_then(Value::as_array)
                .is_some_and(|t| t.iter().any(|x| x == "https"));
            let up = f.get("upload").and_then(Value::as_bool) == Some(true);
            let down = f.get("download").and_then(Value::as_bool) == Some(true);
            (!(https && up && down)).then(|| format!("capabilities.files = {f}, want upload/download true and \"https\" in transports"))
        }
    };
    rec.must(
        "sep2631-server-advertises-files",
        &sep::SERVER_ADVERTISES,
        problem,
    );

    for (method, params) in [
        (
            "files/authorizeUpload",
            json!({"name": "a.txt", "mimeType": "text/plain", "size": 1}),
        ),
        (
            "files/authorizeDownload",
            json!({"uri": "mcp-file://conformance/never-issued"}),
        ),
    ] {
        let reply = wire.rpc(method, params, no_files_caps()).await?;
        let req = reply
            .error_data()
            .and_then(|d| d.pointer("/requiredCapabilities/files"));
        let problem = if reply.status != 400
            || reply.error_code() != Some(smcp_proto::error::MISSING_REQUIRED_CLIENT_CAPABILITY)
        {
            Some(format!(
                "{method} without files capability: want HTTP 400 + -32021, got {}",
                reply.evidence()
            ))
        } else if req.is_none() {
            Some("error.data.requiredCapabilities.files missing".to_owned())
        } else {
            None
        };
        rec.push(
            "sep2631-files-method-requires-capability",
            &sep::REQUIRES_CAPABILITY,
            if problem.is_some() {
                Status::Failure
            } else {
                Status::Success
            },
            problem,
            Some(json!({"method": method, "reply": reply.evidence()})),
        );
    }

    let reply = wire
        .rpc("files/conformanceUnknownMethod", json!({}), files_caps())
        .await?;
    let problem = (reply.status != 404
        || reply.error_code() != Some(smcp_proto::error::METHOD_NOT_FOUND))
    .then(|| format!("want HTTP 404 + -32601, got {}", reply.evidence()));
    rec.must(
        "sep2631-unsupported-files-method",
        &sep::METHOD_NOT_FOUND,
        problem,
    );
    Ok(())
}

pub(crate) async fn declarations(wire: &Wire, rec: &mut Recorder) -> Result<(), WireError> {
    let reply = wire.rpc("tools/list", json!({}), files_caps()).await?;
    let tools: Vec<Value> = reply
        .result()
        .and_then(|r| r.get("tools"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    let missing: Vec<&&str> = FIXTURE_TOOLS
        .iter()
        .filter(|t| !names.contains(t))
        .collect();
    rec.must(
        "sep2631-fixture-tools-present",
        &sep::FIXTURES,
        (!missing.is_empty()).then(|| format!("tools/list lacks fixture tools {missing:?}")),
    );
    let mut seen = 0usize;
    for tool in &tools {
        let tname = tool.get("name").and_then(Value::as_str).unwrap_or("?");
        let Some(props) = tool
            .pointer("/inputSchema/properties")
            .and_then(Value::as_object)
        else {
            continue;
        };
        for (pname, prop) in props {
            let mut sites = vec![(format!("{tname}.{pname}"), prop, false)];
            if let Some(items) = prop.get("items") {
                sites.push((format!("{tname}.{pname}[]"), items, true));
            }
            for (site, schema, _) in sites {
                let Some(desc) = schema.get("x-mcp-file") else {
                    continue;
                };
                seen += 1;
                let uri_string = schema.get("type") == Some(&json!("string"))
                    && schema.get("format") == Some(&json!("uri"));
                rec.push(
                    "sep2631-x-mcp-file-on-uri-string",
                    &sep::DECL_PLACEMENT,
                    if uri_string { Status::Success } else { Status::Failure },
                    (!uri_string).then(|| format!("{site}: x-mcp-file on a schema that is not {{type: string, format: uri}}")),
                    Some(json!({"site": site})),
                );
                let (status, problem) = descriptor_problem(desc);
                rec.push(
                    "sep2631-x-mcp-file-well-formed",
                    &sep::DECL_SHAPE,
                    status,
                    problem.map(|p| format!("{site}: {p}")),
                    Some(json!({"site": site, "x-mcp-file": desc})),
                );
            }
        }
        // Fixture-specific declarations the rest of the suite relies on.
        let expect = match tname {
            "files_inline_text" => Some((
                "/inputSchema/properties/file/x-mcp-file",
                json!({"accept": ["text/plain"], "maxSize": 64, "transferModes": ["inline"]}),
            )),
            "files_upload_only" => Some((
                "/inputSchema/properties/file/x-mcp-file",
                json!({"maxSize": 1_048_576, "transferModes": ["upload"]}),
            )),
            "files_any_image" => Some((
                "/inputSchema/properties/file/x-mcp-file",
                json!({"accept": ["image/*"], "maxSize": 65536}),
            )),
            "files_many" => Some((
                "/inputSchema/properties/files/items/x-mcp-file",
                json!({"maxSize": 65536}),
            )),
            _ => None,
        };
        if let Some((ptr, want)) = expect {
            let got = tool.pointer(ptr);
            rec.must(
                "sep2631-fixture-declaration",
                &sep::FIXTURES,
                (got != Some(&want)).then(|| format!("{tname}{ptr} = {got:?}, want {want}")),
            );
        }
    }
    if seen == 0 {
        rec.skip(
            "sep2631-x-mcp-file-on-uri-string",
            &sep::DECL_PLACEMENT,
            "no x-mcp-file declaration found",
        );
    }
    Ok(())
}

/// Checks a FileInputDescriptor. Unknown transfer modes are a WARNING (clients ignore them).
fn descriptor_problem(desc: &Value) -> (Status, Option<String>) {
    let Some(o) = desc.as_object() else {
        return (Status::Failure, Some("x-mcp-file is not an object".into()));
    };
    if let Some(a) = o.get("accept")
        && !a.as_array().is_some_and(|v| {
            v.iter().all(|s| {
                s.as_str()
                    .is_some_and(|s| !s.is_empty() && (s.starts_with('.') || s.contains('/')))
            })
        })
    {
        return (
            Status::Failure,
            Some(format!(
                "accept {a} is not a list of MIME types / .extensions"
            )),
        );
    }
    if let Some(m) = o.get("maxSize")
        && m.as_u64().is_none()
    {
        return (
            Status::Failure,
            Some(format!("maxSize {m} is not a non-negative integer")),
        );
    }
    if let Some(t) = o.get("transferModes") {
        let Some(modes) = t.as_array() else {
            return (
                Status::Failure,
                Some(format!("transferModes {t} is not a list")),
            );
        };
        if modes.is_empty() {
            return (
                Status::Failure,
                Some("transferModes is empty: the field is unsatisfiable".into()),
            );
        }
        if let Some(bad) = modes
            .iter()
            .find(|m| !matches!(m.as_str(), Some("inline" | "upload")))
        {
            return (
                Status::Warning,
                Some(format!(
                    "transferModes has {bad}, which this SEP does not define"
                )),
            );
        }
    }
    (Status::Success, None)
}
