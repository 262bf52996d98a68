//! What the client did on the wire, judged per scenario.

use std::path::Path;

use serde_json::{Value, json};

use super::input::INPUT_BYTES;
use super::mock::{Event, GENERATED_NAME, GENERATED_SIZE, MockState, scenario_tool};
use super::outcome::Outcome;
use crate::files::{generated_bytes, parse_data_uri};
use crate::report::{Check, Recorder, Status};
use crate::sep;

fn rpcs<'a>(st: &'a MockState, method: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    st.events.iter().filter_map(move |e| match e {
        Event::Rpc {
            method: m, params, ..
        } if m == method => Some(params),
        _ => None,
    })
}

fn tool_calls<'a>(st: &'a MockState, tool: &'a str) -> Vec<&'a Value> {
    rpcs(st, "tools/call")
        .filter(|p| p.get("name").and_then(Value::as_str) == Some(tool))
        .collect()
}

/// (method, bytes, multipart, fields) of each upload.
type UploadView<'a> = (&'a str, &'a [u8], bool, &'a [(String, String)]);

fn uploads(st: &MockState) -> Vec<UploadView<'_>> {
    st.events
        .iter()
        .filter_map(|e| match e {
            Event::Upload {
                method,
                bytes,
                multipart,
                fields,
                ..
            } => Some((
                method.as_str(),
                bytes.as_slice(),
                *multipart,
                fields.as_slice(),
            )),
            _ => None,
        })
        .collect()
}

fn files_caps_problem(params: &Value, member: &str) -> Option<String> {
    let f = params.pointer("/_meta/io.modelcontextprotocol~1clientCapabilities/files");
    let ok = f.is_some_and(|f| {
        f.get(member) == Some(&json!(true))
            && f.get("transports")
                .and_then(Value::as_array)
                .is_some_and(|t| t.iter().any(|x| x == "https"))
    });
    (!ok).then(|| format!("_meta clientCapabilities.files = {f:?}, want {member}: true and \"https\" in transports"))
}

fn exit_problem(outcome: &Outcome, want_zero: bool) -> Option<String> {
    match outcome.exit {
        None => Some(format!("client did not finish: {}", outcome.note)),
        Some(0) if want_zero => None,
        Some(c) if want_zero => Some(format!("client exited {c}, want 0")),
        Some(0) => Some("client exited 0, want a non-zero exit (refusal)".into()),
        Some(_) => None,
    }
}

/// Is `value` the input file, either as a data: URI or as an uploaded file URI?
fn is_input(st: &MockState, value: &str) -> Result<&'static str, String> {
    if value.starts_with("data:") {
        return match parse_data_uri(value) {
            Ok(d) if d.bytes == INPUT_BYTES => Ok("inline"),
            Ok(d) => Err(format!(
                "data: URI decodes to {} bytes that are not the input file",
                d.bytes.len()
            )),
            Err(e) => Err(format!("malformed data: URI: {e}")),
        };
    }
    match st.files.get(value) {
        Some(Some(b)) if b == INPUT_BYTES => Ok("upload"),
        Some(Some(_)) => Err("the file URI's uploaded bytes are not the input file".into()),
        Some(None) => Err("file URI sent before its bytes were uploaded".into()),
        None => Err(format!(
            "{value:?} is neither a data: URI nor a file URI the mock issued"
        )),
    }
}

pub(super) fn check(
    scenario: &str,
    st: &MockState,
    outcome: &Outcome,
    out_dir: &Path,
) -> Vec<Check> {
    let mut rec = Recorder::new();
    let tool = scenario_tool(scenario);
    let calls = tool_calls(st, tool);
    let authorize_uploads: Vec<&Value> = rpcs(st, "files/authorizeUpload").collect();
    let file_args: Vec<&str> = calls
        .iter()
        .filter_map(|p| p.pointer("/arguments/file").and_then(Value::as_str))
        .collect();
    match scenario {
        "inline-only-field" => {
            let p = if file_args.is_empty() {
                Some(format!("no tools/call {tool} with a file argument"))
            } else {
                file_args.iter().find_map(|v| match is_input(st, v) {
                    Ok("inline") => None,
                    Ok(_) => Some("sent a file URI to an inline-only field".to_owned()),
                    Err(e) => Some(e),
                })
            };
            rec.must("sep2631-client-inline-data-uri", &sep::CLIENT_INLINE, p);
            rec.must(
                "sep2631-client-inline-no-authorize-upload",
                &sep::CLIENT_INLINE,
                (!authorize_uploads.is_empty() || !uploads(st).is_empty()).then(|| {
                    "client called files/authorizeUpload / uploaded for an inline-only field"
                        .to_owned()
                }),
            );
            rec.must(
                "sep2631-client-exit-status",
                &sep::CLIENT_INLINE,
                exit_problem(outcome, true),
            );
        }
        "upload-only-field" | "upload-multipart-field" => {
            match authorize_uploads.first() {
                None => rec.must(
                    "sep2631-client-declares-files-capability",
                    &sep::CLIENT_DECLARES,
                    Some("no files/authorizeUpload request".into()),
                ),
                Some(p) => {
                    rec.must(
                        "sep2631-client-declares-files-capability",
                        &sep::CLIENT_DECLARES,
                        files_caps_problem(p, "upload"),
                    );
                    let d = p.pointer("/digest/value").and_then(Value::as_str);
                    let want = crate::files::sha256_b64url(INPUT_BYTES);
                    rec.should(
                        "sep2631-client-sends-digest",
                        &sep::CLIENT_DIGEST_SENT,
                        (d != Some(want.as_str())
                            || p.pointer("/digest/algorithm") != Some(&json!("sha-256")))
                        .then(|| {
                            format!(
                                "authorizeUpload digest = {:?}, want sha-256 {want}",
                                p.get("digest")
                            )
                        }),
                    );
                }
            }
            let ups = uploads(st);
            let multipart = scenario == "upload-multipart-field";
            let p = match ups.first() {
                None => Some("no upload reached the descriptor URL".to_owned()),
                Some((m, b, mp, fields)) => {
                    if *b != INPUT_BYTES {
                        Some(format!(
                            "uploaded {} bytes that are not the input file",
                            b.len()
                        ))
                    } else if multipart
                        && !(*m == "POST"
                            && *mp
                            && fields
                                .iter()
                                .any(|(k, v)| k == "token" && v.starts_with("tok-")))
                    {
                        Some(format!(
                            "multipart descriptor: want POST multipart/form-data with field token and the file under fileField, got {m} multipart={mp} fields={fields:?}"
                        ))
                    } else if !multipart && (*m != "PUT" || *mp) {
                        Some(format!(
                            "raw descriptor: want PUT with the raw body, got {m} multipart={mp}"
                        ))
                    } else {
                        None
                    }
                }
            };
            rec.must(
                if multipart {
                    "sep2631-client-upload-multipart"
                } else {
                    "sep2631-client-upload-raw-put"
                },
                &sep::CLIENT_UPLOAD,
                p,
            );
            let p = if file_args.is_empty() {
                Some(format!("no tools/call {tool} with a file argument"))
            } else {
                file_args.iter().find_map(|v| match is_input(st, v) {
                    Ok("upload") => None,
                    Ok(_) => Some("sent a data: URI to an upload-only field".to_owned()),
                    Err(e) => Some(e),
                })
            };
            rec.must(
                "sep2631-client-upload-file-uri-in-call",
                &sep::CLIENT_UPLOAD,
                p,
            );
            rec.must(
                "sep2631-client-exit-status",
                &sep::CLIENT_UPLOAD,
                exit_problem(outcome, true),
            );
        }
        "output-file-correct-digest" | "output-file-wrong-digest" => {
            let correct = scenario == "output-file-correct-digest";
            match calls.first() {
                None => rec.must(
                    "sep2631-client-declares-files-capability",
                    &sep::CLIENT_DECLARES,
                    Some(format!("no tools/call {tool}")),
                ),
                Some(p) => rec.must(
                    "sep2631-client-declares-files-capability",
                    &sep::CLIENT_DECLARES,
                    files_caps_problem(p, "download"),
                ),
            }
            let dl: Vec<&Value> = rpcs(st, "files/authorizeDownload").collect();
            let downloaded = st
                .events
                .iter()
                .any(|e| matches!(e, Event::Download { .. }));
            rec.must(
                "sep2631-client-downloads-through-authorize-download",
                &sep::CLIENT_VERIFY,
                (dl.is_empty() || !downloaded).then(|| {
                    format!(
                        "authorizeDownload calls: {}, data-plane download: {downloaded}",
                        dl.len()
                    )
                }),
            );
            let saved = std::fs::read(out_dir.join(GENERATED_NAME)).ok();
            if correct {
                let mut p = exit_problem(outcome, true);
                if p.is_none()
                    && saved.as_deref() != Some(generated_bytes(GENERATED_SIZE).as_slice())
                {
                    p = Some(format!(
                        "SEP2631_OUTPUT_DIR/{GENERATED_NAME} missing or not the {GENERATED_SIZE} generated bytes"
                    ));
                }
                rec.must(
                    "sep2631-client-accepts-verified-file",
                    &sep::CLIENT_VERIFY,
                    p,
                );
            } else {
                let mut p = exit_problem(outcome, false);
                if saved.is_some() {
                    p = Some(format!(
                        "client kept {GENERATED_NAME} although its digest does not match"
                    ));
                }
                if !downloaded && p.is_none() {
                    p = Some(
                        "client never downloaded the file, so it cannot have verified it".into(),
                    );
                }
                rec.must(
                    "sep2631-client-rejects-digest-mismatch",
                    &sep::CLIENT_VERIFY,
                    p,
                );
            }
        }
        "insecure-descriptor" => {
            let issued: Vec<String> = st.files.keys().cloned().collect();
            let used = file_args.iter().any(|v| issued.iter().any(|u| u == v));
            let mut p = exit_problem(outcome, false);
            if authorize_uploads.is_empty() {
                p = Some(
                    "client never called files/authorizeUpload, so the refusal was not exercised"
                        .into(),
                );
            } else if used {
                p = Some(
                    "client sent the file URI of an insecure (http://) descriptor in tools/call"
                        .into(),
                );
            } else if !uploads(st).is_empty() {
                p = Some("an upload reached the mock".into());
            }
            rec.must(
                "sep2631-client-refuses-insecure-descriptor",
                &sep::CLIENT_INSECURE,
                p,
            );
        }
        _ => {
            let retry = calls.iter().find(|p| p.get("inputResponses").is_some());
            let p = match retry {
                None => Some("no tools/call retry with inputResponses".to_owned()),
                Some(r) => {
                    let resp = r.pointer("/inputResponses/document_request");
                    let value = resp
                        .and_then(|v| v.pointer("/content/document"))
                        .and_then(Value::as_str);
                    if resp.and_then(|v| v.get("action")) != Some(&json!("accept")) {
                        Some(format!(
                            "inputResponses.document_request = {resp:?}, want action accept"
                        ))
                    } else {
                        match value.map(|v| is_input(st, v)) {
                            Some(Ok(_)) => None,
                            Some(Err(e)) => Some(e),
                            None => Some("content.document missing".into()),
                        }
                    }
                }
            };
            rec.must("sep2631-client-mrtr-retry-with-file", &sep::CLIENT_MRTR, p);
            let echoed = retry
                .and_then(|r| r.get("requestState"))
                .and_then(Value::as_str);
            rec.must(
                "sep2631-client-mrtr-request-state-echoed",
                &sep::CLIENT_MRTR,
                (!echoed.is_some_and(|e| st.request_states.iter().any(|s| s == e)))
                    .then(|| format!("requestState {echoed:?} is not one the mock issued")),
            );
            rec.must(
                "sep2631-client-exit-status",
                &sep::CLIENT_MRTR,
                exit_problem(outcome, true),
            );
        }
    }
    let bad_headers = st.events.iter().filter(|e| matches!(e, Event::Rpc { method, mcp_method_header, .. } if mcp_method_header.as_deref() != Some(method.as_str()))).count();
    if bad_headers > 0 {
        rec.push(
            "sep2631-client-mcp-method-header",
            &sep::CLIENT_DECLARES,
            Status::Warning,
            Some(format!(
                "{bad_headers} request(s) without a matching Mcp-Method header"
            )),
            None,
        );
    }
    rec.into_checks()
}
