//! The SEP-2631 fixture contract over real HTTPS (rustls, throwaway CA): every tool, the
//! control plane, the data plane, and the bad-input list of issue #6 at the MCP level.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;

use anyhow::{Context, Result};
use base64::Engine as _;
use serde_json::{Value, json};
use smcp_files::{Files, FilesConfig, FilesExtension, LocalFileStore};
use smcp_proto::ext::files::FileDigest;
use smcp_server::ServeOptions;
use smcp_server::http::tls;

struct Fixture {
    base: String,
    http: reqwest::Client,
    _stop: tokio::sync::oneshot::Sender<()>,
}

const FILES_CAPS: &str = r#"{"files": {"upload": true, "download": true, "transports": ["https"]}, "elicitation": {"form": {}}}"#;

async fn start(tag: &str, skip_digest: bool) -> Result<Fixture> {
    let dir = std::env::temp_dir().join(format!("smcp-fixture-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let certs = tls::write_dev_certificates(&dir.join("tls"), &["127.0.0.1", "localhost"])?;
    let tls_config = tls::config_from_files(&certs.cert, &certs.key)?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let files = Files::new(
        Arc::new(LocalFileStore::open(dir.join("store"))?),
        smcp_server::KeyRing::ephemeral()?,
        FilesConfig {
            skip_digest_check: skip_digest,
            ..FilesConfig::default()
        },
    )?;
    files.set_base_url(&format!("https://{addr}"))?;
    let server = smcpd::sep2631_fixtures::with_files(
        smcp_server::Server::builder("sep2631-fixtures", "0")
            .extension(FilesExtension::new(files.clone())),
    )
    .build()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(smcp_server::serve(
        listener,
        server.router("/mcp").merge(files.router()),
        ServeOptions {
            tls: Some(tls_config),
            ..ServeOptions::default()
        },
        async move {
            let _ = stopped.await;
        },
    ));
    let ca = reqwest::Certificate::from_pem(&std::fs::read(&certs.ca_cert)?)?;
    let http = reqwest::Client::builder()
        .add_root_certificate(ca)
        .build()?;
    Ok(Fixture {
        base: format!("https://{addr}"),
        http,
        _stop: stop,
    })
}

fn last_message(content_type: &str, text: &str) -> Result<Value> {
    if content_type.starts_with("text/event-stream") {
        let data = text
            .lines()
            .rev()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .find(|v| v.get("result").is_some() || v.get("error").is_some());
        return data.context("no response event");
    }
    Ok(serde_json::from_str(text)?)
}

impl Fixture {
    async fn rpc(&self, method: &str, mut params: Value, caps: &str) -> Result<(u16, Value)> {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "fixture-test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": serde_json::from_str::<Value>(caps)?,
        });
        let mut req = self
            .http
            .post(format!("{}/mcp", self.base))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(name) = params
            .get("name")
            .or_else(|| params.get("uri"))
            .and_then(Value::as_str)
        {
            req = req.header("mcp-name", name);
        }
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let resp = req.json(&body).send().await?;
        let status = resp.status().as_u16();
        let ct = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let text = resp.text().await?;
        Ok((status, last_message(&ct, &text)?))
    }

    async fn call(&self, tool: &str, args: Value, caps: &str) -> Result<Value> {
        let (status, v) = self
            .rpc("tools/call", json!({"name": tool, "arguments": args}), caps)
            .await?;
        assert_eq!(status, 200, "{v}");
        v.get("result")
            .cloned()
            .with_context(|| format!("no result: {v}"))
    }

    async fn upload(
        &self,
        bytes: &[u8],
        mime: &str,
        digest: Option<FileDigest>,
    ) -> Result<(String, u16, Value)> {
        let (_, v) = self
            .rpc(
                "files/authorizeUpload",
                json!({"name": "x.bin", "mimeType": mime, "size": bytes.len(), "digest": digest}),
                FILES_CAPS,
            )
            .await?;
        let r = &v["result"];
        assert_eq!(r["resultType"], "complete", "{v}");
        assert!(r["upload"]["expiresAt"].is_string());
        let url = r["upload"]["url"].as_str().context("url")?;
        assert!(url.starts_with("https://"));
        let resp = self
            .http
            .put(url)
            .header("content-type", mime)
            .body(bytes.to_vec())
            .send()
            .await?;
        let status = resp.status().as_u16();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        Ok((
            r["file"]["uri"].as_str().context("uri")?.to_owned(),
            status,
            body,
        ))
    }
}

fn data_b64(mime: &str, bytes: &[u8]) -> String {
    format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

fn refusal(result: &Value) -> (String, String) {
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    let arg = result["structuredContent"]["argument"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let reason = result["structuredContent"]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        text.contains(&arg) && text.contains(&reason),
        "text names both: {text}"
    );
    (arg, reason)
}

fn summary(bytes: &[u8], mime: &str) -> Value {
    json!({"size": bytes.len(), "mimeType": mime,
           "digest": {"algorithm": "sha-256", "value": FileDigest::sha256(bytes).value}})
}

#[tokio::test]
async fn discover_advertises_files() -> Result<()> {
    let f = start("discover", false).await?;
    let (_, v) = f.rpc("server/discover", json!({}), "{}").await?;
    assert_eq!(
        v["result"]["capabilities"]["files"],
        json!({"upload": true, "download": true, "transports": ["https"]})
    );
    Ok(())
}

#[tokio::test]
async fn inline_text_boundaries_and_refusals() -> Result<()> {
    let f = start("inline", false).await?;
    let ok64 = vec![b'a'; 64];
    let r = f
        .call(
            "files_inline_text",
            json!({"file": data_b64("text/plain", &ok64)}),
            "{}",
        )
        .await?;
    assert_eq!(r["structuredContent"], summary(&ok64, "text/plain"), "{r}");
    assert_eq!(r["content"][0]["text"], r["structuredContent"].to_string());
    // Percent form, default media type, parameters and case ignored.
    let r = f
        .call(
            "files_inline_text",
            json!({"file": "data:,A%20brief%20note"}),
            "{}",
        )
        .await?;
    assert_eq!(
        r["structuredContent"],
        summary(b"A brief note", "text/plain")
    );
    let r = f
        .call(
            "files_inline_text",
            json!({"file": "data:Text/Plain;charset=utf-8;base64,aGk="}),
            "{}",
        )
        .await?;
    assert_eq!(r["structuredContent"]["mimeType"], "text/plain");
    let cases = [
        (data_b64("text/plain", &[b'a'; 65]), "maxSizeExceeded"),
        (data_b64("image/png", b"png"), "mimeTypeNotAccepted"),
        ("data:text/plain;base64,A".to_owned(), "malformedFileUri"),
        ("data:text/plain".to_owned(), "malformedFileUri"),
        ("https://example.com/a.txt".to_owned(), "unsupportedScheme"),
        ("file:///etc/passwd".to_owned(), "unsupportedScheme"),
        (
            "mcp-file://smcp/file_00000000000000000000000000000000".to_owned(),
            "transferModeNotAllowed",
        ),
    ];
    for (value, reason) in cases {
        let r = f
            .call("files_inline_text", json!({"file": value}), "{}")
            .await?;
        assert_eq!(
            refusal(&r),
            ("file".to_owned(), reason.to_owned()),
            "{value}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn upload_only_flow_and_refusals() -> Result<()> {
    let f = start("upload", false).await?;
    let bytes = b"%PDF-1.4 tiny".to_vec();
    // Inline is refused for an upload-only field.
    let r = f
        .call(
            "files_upload_only",
            json!({"file": data_b64("application/pdf", &bytes)}),
            "{}",
        )
        .await?;
    assert_eq!(refusal(&r).1, "transferModeNotAllowed");
    // Authorize without the capability → 400 / −32021.
    let (status, v) = f
        .rpc("files/authorizeUpload", json!({"size": 3}), "{}")
        .await?;
    assert_eq!(
        (status, v["error"]["code"].clone()),
        (400, json!(-32021)),
        "{v}"
    );
    assert!(
        v["error"]["data"]["requiredCapabilities"]["files"].is_object(),
        "{v}"
    );
    // Upload with the right digest, then call with the URI.
    let (uri, status, body) = f
        .upload(&bytes, "application/pdf", Some(FileDigest::sha256(&bytes)))
        .await?;
    assert_eq!(status, 200, "{body}");
    let r = f
        .call("files_upload_only", json!({"file": uri}), "{}")
        .await?;
    assert_eq!(
        r["structuredContent"],
        summary(&bytes, "application/pdf"),
        "{r}"
    );
    // The same URI in an inline-only field.
    let r = f
        .call("files_inline_text", json!({"file": uri}), "{}")
        .await?;
    assert_eq!(refusal(&r).1, "transferModeNotAllowed");
    // accept applies to uploaded files too.
    let r = f
        .call("files_any_image", json!({"file": uri}), "{}")
        .await?;
    assert_eq!(refusal(&r).1, "mimeTypeNotAccepted");
    // Digest mismatch: 422 and the URI never resolves.
    let (bad_uri, status, body) = f
        .upload(
            &bytes,
            "application/pdf",
            Some(FileDigest::sha256(b"other")),
        )
        .await?;
    assert_eq!(
        (status, body["reason"].clone()),
        (422, json!("digestMismatch"))
    );
    let r = f
        .call("files_upload_only", json!({"file": bad_uri}), "{}")
        .await?;
    assert_eq!(refusal(&r).1, "fileUnavailable");
    // Unknown and malformed file URIs.
    let r = f
        .call(
            "files_upload_only",
            json!({"file": "mcp-file://smcp/file_0123456789abcdef0123456789abcdef"}),
            "{}",
        )
        .await?;
    assert_eq!(refusal(&r).1, "fileUnavailable");
    let r = f
        .call(
            "files_upload_only",
            json!({"file": "mcp-file://smcp/../../etc"}),
            "{}",
        )
        .await?;
    assert_eq!(refusal(&r).1, "malformedFileUri");
    // A file URI is not a resource.
    let (_, v) = f.rpc("resources/read", json!({"uri": uri}), "{}").await?;
    assert!(v.get("error").is_some(), "{v}");
    Ok(())
}

#[tokio::test]
async fn broken_fixture_accepts_digest_mismatch() -> Result<()> {
    let f = start("broken", true).await?;
    let (_, status, _) = f
        .upload(b"hello", "text/plain", Some(FileDigest::sha256(b"world")))
        .await?;
    assert_eq!(status, 200);
    Ok(())
}

#[tokio::test]
async fn many_files_and_max_size_boundary() -> Result<()> {
    let f = start("many", false).await?;
    let a = vec![1u8; 65536];
    let (uri, status, _) = f.upload(&a, "application/octet-stream", None).await?;
    assert_eq!(status, 200);
    let r = f
        .call(
            "files_many",
            json!({"files": [uri, data_b64("text/csv", b"a,b\n")]}),
            "{}",
        )
        .await?;
    assert_eq!(
        r["structuredContent"]["files"][0],
        summary(&a, "application/octet-stream"),
        "{r}"
    );
    assert_eq!(
        r["structuredContent"]["files"][1],
        summary(b"a,b\n", "text/csv")
    );
    let big = vec![1u8; 65537];
    let (uri, _, _) = f.upload(&big, "application/octet-stream", None).await?;
    let r = f.call("files_many", json!({"files": [uri]}), "{}").await?;
    assert_eq!(
        refusal(&r),
        ("files".to_owned(), "maxSizeExceeded".to_owned())
    );
    let r = f
        .call(
            "files_any_image",
            json!({"file": data_b64("image/png", &vec![0; 65537])}),
            "{}",
        )
        .await?;
    assert_eq!(refusal(&r).1, "maxSizeExceeded");
    Ok(())
}

#[tokio::test]
async fn generate_then_download_and_gating() -> Result<()> {
    let f = start("generate", false).await?;
    let size = 100_000u64;
    let r = f
        .call(
            "files_generate",
            json!({"size": size, "name": "gen.bin"}),
            FILES_CAPS,
        )
        .await?;
    let file = r["structuredContent"]["file"].clone();
    assert_eq!(r["content"][0]["type"], "file", "{r}");
    assert_eq!(r["content"][0]["file"], file);
    assert_eq!(file["mimeType"], "application/octet-stream");
    let expected: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    assert_eq!(file["digest"]["value"], FileDigest::sha256(&expected).value);
    // Old client: no type "file" anywhere.
    let r2 = f
        .call("files_generate", json!({"size": 3, "name": "x"}), "{}")
        .await?;
    assert!(
        r2["content"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["type"] != "file"),
        "{r2}"
    );
    assert!(r2["structuredContent"]["file"]["uri"].is_string());
    // Download.
    let (status, v) = f
        .rpc("files/authorizeDownload", json!({"uri": file["uri"]}), "{}")
        .await?;
    assert_eq!((status, v["error"]["code"].clone()), (400, json!(-32021)));
    let (_, v) = f
        .rpc(
            "files/authorizeDownload",
            json!({"uri": file["uri"]}),
            FILES_CAPS,
        )
        .await?;
    let url = v["result"]["download"]["url"]
        .as_str()
        .context("download url")?;
    let resp = f.http.get(url).send().await?;
    assert_eq!(resp.content_length(), Some(size));
    let got = resp.bytes().await?;
    assert_eq!(&got[..], &expected[..]);
    // Unknown → −32602 fileUnavailable.
    let (_, v) = f
        .rpc(
            "files/authorizeDownload",
            json!({"uri": "mcp-file://smcp/file_0123456789abcdef0123456789abcdef"}),
            FILES_CAPS,
        )
        .await?;
    assert_eq!(
        (
            v["error"]["code"].clone(),
            v["error"]["data"]["reason"].clone()
        ),
        (json!(-32602), json!("fileUnavailable"))
    );
    Ok(())
}

#[tokio::test]
async fn elicit_file_over_mrtr() -> Result<()> {
    let f = start("elicit", false).await?;
    let r = f.call("files_elicit", json!({}), FILES_CAPS).await?;
    assert_eq!(r["resultType"], "input_required", "{r}");
    let ask = &r["inputRequests"]["document_request"];
    assert_eq!(ask["method"], "elicitation/create", "{r}");
    assert_eq!(
        ask["params"]["requestedSchema"]["properties"]["document"]["x-mcp-file"],
        json!({"maxSize": 65536})
    );
    let state = r["requestState"].clone();
    let retry = |doc: &str| {
        json!({"name": "files_elicit", "arguments": {},
        "inputResponses": {"document_request": {"action": "accept", "content": {"document": doc}}},
        "requestState": state.clone()})
    };
    let (_, v) = f
        .rpc(
            "tools/call",
            retry(&data_b64("text/plain", b"hello")),
            FILES_CAPS,
        )
        .await?;
    assert_eq!(
        v["result"]["structuredContent"],
        summary(b"hello", "text/plain"),
        "{v}"
    );
    let (_, v) = f
        .rpc("tools/call", retry("https://evil.example/x"), FILES_CAPS)
        .await?;
    assert_eq!(
        refusal(&v["result"]),
        ("document".to_owned(), "unsupportedScheme".to_owned())
    );
    Ok(())
}
