//! The client leg's mock server and checks, proven with scripted clients: one that follows
//! SEP-2631 (every check SUCCESS) and one that misbehaves in each scenario (every scenario
//! FAILURE); plus the command path with a client that does nothing (no vacuous pass).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use smcp_conformance_files::client_leg::{
    ClientInvocation, ClientLegOptions, ClientUnderTest, run,
};
use smcp_conformance_files::files::{data_uri_base64, digest_json, sha256_b64url};
use smcp_conformance_files::report::{LegResults, Status};
use smcp_conformance_files::wire::{Wire, files_caps};

fn env<'a>(inv: &'a ClientInvocation, k: &str) -> &'a str {
    inv.env
        .iter()
        .find(|(n, _)| n == k)
        .map(|(_, v)| v.as_str())
        .unwrap()
}

/// Supplies the input file for `decl` (an x-mcp-file): inline when allowed and preferred
/// (`good`) or forced (`bad`), else upload. Returns the URI or an exit code.
async fn supply(w: &Wire, inv: &ClientInvocation, decl: &Value, good: bool) -> Result<String, i32> {
    let bytes = std::fs::read(env(inv, "SEP2631_INPUT_FILE")).unwrap();
    let mime = env(inv, "SEP2631_INPUT_MIME");
    let modes: Vec<&str> = decl
        .get("transferModes")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or(vec!["inline", "upload"]);
    let inline = if good { modes == ["inline"] } else { true };
    if inline {
        return Ok(data_uri_base64(mime, &bytes));
    }
    let r = w
        .rpc("files/authorizeUpload", json!({"name": "input.txt", "mimeType": mime, "size": bytes.len(), "digest": digest_json(&bytes)}), files_caps())
        .await
        .map_err(|_| 2)?;
    let result = r.result().ok_or(2)?;
    let uri = result
        .pointer("/file/uri")
        .and_then(Value::as_str)
        .ok_or(2)?
        .to_owned();
    if good {
        let d = w
            .upload(&result["upload"], &bytes, "input.txt", mime)
            .await
            .map_err(|_| 3)?;
        if !(200..300).contains(&d.status) {
            return Err(3);
        }
    }
    // The bad client skips the (insecure) upload and uses the URI anyway.
    Ok(uri)
}

async fn scripted(inv: ClientInvocation, good: bool) -> i32 {
    let w = Wire::new(
        &inv.url,
        None,
        env(&inv, "SEP2631_ALLOW_LOOPBACK_HTTP") == "1",
    )
    .unwrap();
    let caps = files_caps();
    match inv.scenario.as_str() {
        "output-file-correct-digest" | "output-file-wrong-digest" => {
            let r = w
                .call_tool(
                    "files_generate",
                    json!({"size": 1024, "name": "generated.bin"}),
                    caps.clone(),
                )
                .await
                .unwrap();
            let fv = r.result().unwrap()["structuredContent"]["file"].clone();
            let d = w
                .rpc("files/authorizeDownload", json!({"uri": fv["uri"]}), caps)
                .await
                .unwrap();
            let bytes = w
                .download(&d.result().unwrap()["download"])
                .await
                .unwrap()
                .bytes;
            let ok = fv["size"] == json!(bytes.len())
                && fv["digest"]["value"] == json!(sha256_b64url(&bytes));
            if good && !ok {
                return 4;
            }
            let path = std::path::Path::new(env(&inv, "SEP2631_OUTPUT_DIR"))
                .join(fv["name"].as_str().unwrap());
            std::fs::write(path, bytes).unwrap();
            0
        }
        "mrtr-file-elicitation" => {
            let r1 = w
                .call_tool("files_elicit", json!({}), caps.clone())
                .await
                .unwrap();
            let r1 = r1.result().unwrap().clone();
            let decl = &r1["inputRequests"]["document_request"]["params"]["requestedSchema"]["properties"]
                ["document"]["x-mcp-file"];
            let Ok(value) = supply(&w, &inv, decl, good).await else {
                return 2;
            };
            let mut params = json!({"name": "files_elicit", "arguments": {},
                "inputResponses": {"document_request": {"action": "accept", "content": {"document": value}}}});
            if good {
                params["requestState"] = r1["requestState"].clone();
            }
            let r2 = w.rpc("tools/call", params, caps).await.unwrap();
            i32::from(r2.result().and_then(|r| r.get("isError")) == Some(&json!(true)))
        }
        _ => {
            let list = w.rpc("tools/list", json!({}), caps.clone()).await.unwrap();
            let tool = list.result().unwrap()["tools"][0].clone();
            let decl = &tool["inputSchema"]["properties"]["file"]["x-mcp-file"];
            let value = match supply(&w, &inv, decl, good).await {
                Ok(v) => v,
                Err(code) => return code,
            };
            let r = w
                .call_tool(tool["name"].as_str().unwrap(), json!({"file": value}), caps)
                .await
                .unwrap();
            i32::from(r.result().and_then(|r| r.get("isError")) == Some(&json!(true)))
        }
    }
}

async fn leg(client: ClientUnderTest, tag: &str) -> LegResults {
    let work_dir =
        std::env::temp_dir().join(format!("sep2631-client-{tag}-{}", std::process::id()));
    let r = run(&ClientLegOptions {
        client,
        scenarios: None,
        timeout: Duration::from_secs(20),
        work_dir: work_dir.clone(),
    })
    .await
    .unwrap();
    let _ = std::fs::remove_dir_all(work_dir);
    r
}

#[tokio::test]
async fn correct_client_passes_every_scenario() {
    let r = leg(
        ClientUnderTest::InProcess(Arc::new(|inv| Box::pin(scripted(inv, true)))),
        "good",
    )
    .await;
    let bad: Vec<String> = r
        .iter()
        .flat_map(|(s, cs)| {
            cs.iter()
                .filter(|c| c.status != Status::Success)
                .map(move |c| format!("{s}:{} {:?}", c.id, c.error_message))
        })
        .collect();
    assert_eq!(bad, Vec::<String>::new());
    assert_eq!(r.len(), 7);
    assert!(r.values().all(|cs| !cs.is_empty()));
}

#[tokio::test]
async fn misbehaving_client_is_caught_in_each_scenario() {
    let r = leg(
        ClientUnderTest::InProcess(Arc::new(|inv| Box::pin(scripted(inv, false)))),
        "bad",
    )
    .await;
    for (scenario, id) in [
        (
            "upload-only-field",
            "sep2631-client-upload-file-uri-in-call",
        ),
        ("upload-multipart-field", "sep2631-client-upload-multipart"),
        (
            "output-file-wrong-digest",
            "sep2631-client-rejects-digest-mismatch",
        ),
        (
            "insecure-descriptor",
            "sep2631-client-refuses-insecure-descriptor",
        ),
        (
            "mrtr-file-elicitation",
            "sep2631-client-mrtr-request-state-echoed",
        ),
    ] {
        let st: Vec<Status> = r[scenario]
            .iter()
            .filter(|c| c.id == id)
            .map(|c| c.status)
            .collect();
        assert_eq!(st, [Status::Failure], "{scenario}:{id}");
    }
    // The bad client inlines everything, which is right for the inline-only field.
    assert!(
        r["inline-only-field"]
            .iter()
            .all(|c| c.status == Status::Success)
    );
}

#[tokio::test]
async fn client_that_does_nothing_fails_not_passes() {
    let r = leg(ClientUnderTest::Command("true".into()), "noop").await;
    for (scenario, checks) in &r {
        assert!(
            checks.iter().any(|c| c.status == Status::Failure),
            "{scenario} passed vacuously"
        );
    }
}
