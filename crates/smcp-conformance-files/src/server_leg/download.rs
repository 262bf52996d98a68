//! `files-download` (generated outputs through `files/authorizeDownload`) and
//! `files-elicitation` (MRTR file elicitation).

use serde_json::{Value, json};

use super::outcome::{Outcome, expect_file_result};
use super::upload_call::upload_file;
use crate::files::{data_uri_base64, generated_bytes, is_sha256_b64url, sha256_b64url};
use crate::report::Recorder;
use crate::sep;
use crate::server_leg::upload::descriptor_problems;
use crate::wire::{Wire, WireError, files_caps, no_files_caps};

fn has_file_block(result: Option<&Value>) -> bool {
    result
        .and_then(|r| r.get("content"))
        .and_then(Value::as_array)
        .is_some_and(|c| c.iter().any(|b| b.get("type") == Some(&json!("file"))))
}

pub(crate) async fn download(wire: &Wire, rec: &mut Recorder) -> Result<(), WireError> {
    let size = 70_000usize;
    let want = generated_bytes(size);
    let reply = wire
        .call_tool(
            "files_generate",
            json!({"size": size, "name": "pattern.bin"}),
            files_caps(),
        )
        .await?;
    let fv = reply
        .result()
        .and_then(|r| r.pointer("/structuredContent/file"))
        .cloned();
    let problem = match &fv {
        None => Some(format!("no structuredContent.file: {}", reply.evidence())),
        Some(f) => {
            let uri_ok = f
                .get("uri")
                .and_then(Value::as_str)
                .is_some_and(|u| u.contains(':'));
            let size_ok = f.get("size").and_then(Value::as_u64) == Some(size as u64);
            let dig = f.pointer("/digest/value").and_then(Value::as_str);
            let alg_ok = f.pointer("/digest/algorithm") == Some(&json!("sha-256"));
            (!(uri_ok && size_ok && alg_ok && dig.is_some_and(is_sha256_b64url) && dig == Some(sha256_b64url(&want).as_str())))
                .then(|| format!("FileValue {f} does not describe {size} bytes of the i % 251 pattern (uri, size, sha-256 digest)"))
        }
    };
    rec.must("sep2631-generate-file-value", &sep::OUTPUT_VALUE, problem);
    rec.must(
        "sep2631-file-content-for-download-clients",
        &sep::OUTPUT_CONTENT,
        (!has_file_block(reply.result())).then(|| {
            "no {type: file} content block for a client that declared files.download".to_owned()
        }),
    );
    let plain = wire
        .call_tool(
            "files_generate",
            json!({"size": 16, "name": "p.bin"}),
            no_files_caps(),
        )
        .await?;
    rec.must(
        "sep2631-no-file-content-without-download",
        &sep::OUTPUT_CONTENT,
        if plain.result().is_none() {
            Some(format!("files_generate failed for a client without files: {}", plain.evidence()))
        } else {
            has_file_block(plain.result()).then(|| "a {type: file} content block was sent to a client that did not declare files.download".to_owned())
        },
    );
    let Some(uri) = fv
        .as_ref()
        .and_then(|f| f.get("uri"))
        .and_then(Value::as_str)
    else {
        rec.skip(
            "sep2631-authorize-download-result-shape",
            &sep::DOWNLOAD_SHAPE,
            "no generated file URI",
        );
        return Ok(());
    };
    let reply = wire
        .rpc("files/authorizeDownload", json!({"uri": uri}), files_caps())
        .await?;
    let result = reply.result().cloned().unwrap_or(Value::Null);
    let mut p = descriptor_problems(result.get("download"), &["GET"], true)
        .into_iter()
        .map(|x| format!("download.{x}"))
        .collect::<Vec<_>>();
    if result.get("resultType").and_then(Value::as_str) != Some("complete") {
        p.push(format!("resultType = {:?}", result.get("resultType")));
    }
    if result.pointer("/file/uri").and_then(Value::as_str) != Some(uri) {
        p.push(format!(
            "file.uri {:?} differs from the requested {uri}",
            result.pointer("/file/uri")
        ));
    }
    rec.must(
        "sep2631-authorize-download-result-shape",
        &sep::DOWNLOAD_SHAPE,
        (!p.is_empty()).then(|| p.join("; ")),
    );
    let Some(desc) = result.get("download") else {
        return Ok(());
    };
    let downloaded = wire.download(desc).await;
    if let Ok(d) = &downloaded
        && d.status == 200
    {
        let mut p = Vec::new();
        if !d
            .header("x-content-type-options")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("nosniff"))
        {
            p.push(format!(
                "X-Content-Type-Options = {:?}, want nosniff",
                d.header("x-content-type-options")
            ));
        }
        if !d.header("content-disposition").is_some_and(|v| {
            v.trim_start()
                .get(..10)
                .is_some_and(|a| a.eq_ignore_ascii_case("attachment"))
        }) {
            p.push(format!(
                "Content-Disposition = {:?}, want attachment",
                d.header("content-disposition")
            ));
        }
        rec.should(
            "sep2631-download-served-as-attachment",
            &sep::DOWNLOAD_INERT,
            (!p.is_empty()).then(|| p.join("; ")),
        );
    }
    let problem = match downloaded {
        Ok(d) if d.status == 200 && d.bytes == want => None,
        Ok(d) if d.status == 200 => Some(format!(
            "downloaded {} bytes with digest {}, want {size} bytes with {}",
            d.bytes.len(),
            sha256_b64url(&d.bytes),
            sha256_b64url(&want)
        )),
        Ok(d) => Some(format!("download answered HTTP {}", d.status)),
        Err(e) => Some(e.to_string()),
    };
    rec.must(
        "sep2631-downloaded-bytes-match",
        &sep::DOWNLOAD_BYTES,
        problem,
    );
    let reply = wire
        .call_tool(
            "files_generate",
            json!({"size": 0, "name": "empty.bin"}),
            files_caps(),
        )
        .await?;
    let empty = reply
        .result()
        .and_then(|r| r.pointer("/structuredContent/file/digest/value"))
        .and_then(Value::as_str);
    rec.must(
        "sep2631-generate-empty-file",
        &sep::DOWNLOAD_BYTES,
        (empty != Some(sha256_b64url(b"").as_str()))
            .then(|| format!("empty file digest {empty:?}, want the sha-256 of no bytes")),
    );
    Ok(())
}

pub(crate) async fn elicitation(wire: &Wire, rec: &mut Recorder) -> Result<(), WireError> {
    let bytes = b"%PDF-1.4 conformance document\n".to_vec();
    for (label, via_upload) in [("inline", false), ("file-uri", true)] {
        let first = wire
            .call_tool("files_elicit", json!({}), files_caps())
            .await?;
        let r = first.result().cloned().unwrap_or(Value::Null);
        let field =
            r.pointer("/inputRequests/document_request/params/requestedSchema/properties/document");
        let mut p = Vec::new();
        if r.get("resultType") != Some(&json!("input_required")) {
            p.push(format!(
                "round 1 resultType {:?}, want input_required",
                r.get("resultType")
            ));
        }
        if r.pointer("/inputRequests/document_request/method") != Some(&json!("elicitation/create"))
        {
            p.push("inputRequests.document_request is not elicitation/create".into());
        }
        if field.and_then(|f| f.get("x-mcp-file")).is_none()
            || field.and_then(|f| f.get("format")) != Some(&json!("uri"))
            || field.and_then(|f| f.get("type")) != Some(&json!("string"))
        {
            p.push(format!(
                "requestedSchema.properties.document = {field:?}, want a URI string with x-mcp-file"
            ));
        }
        rec.must(
            "sep2631-mrtr-file-elicitation-requested",
            &sep::MRTR,
            (!p.is_empty()).then(|| p.join("; ")),
        );
        if !p.is_empty() {
            return Ok(());
        }
        let value = if via_upload {
            match upload_file(wire, &bytes, "doc.pdf", "application/pdf").await? {
                Ok((uri, _)) => uri,
                Err(e) => {
                    rec.must("sep2631-mrtr-retry-with-file-uri", &sep::MRTR, Some(e));
                    continue;
                }
            }
        } else {
            data_uri_base64("application/pdf", &bytes)
        };
        let mut params = json!({
            "name": "files_elicit", "arguments": {},
            "inputResponses": {"document_request": {"action": "accept", "content": {"document": value}}},
        });
        if let Some(state) = r.get("requestState") {
            params["requestState"] = state.clone();
        }
        let second = wire.rpc("tools/call", params, files_caps()).await?;
        let problem = expect_file_result(&Outcome::of(&second), &bytes, "application/pdf");
        rec.must(
            if label == "inline" {
                "sep2631-mrtr-retry-with-data-uri"
            } else {
                "sep2631-mrtr-retry-with-file-uri"
            },
            &sep::MRTR,
            problem,
        );
    }
    Ok(())
}
