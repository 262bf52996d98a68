//! SEP-2631 files through `smcpd gateway` (the real binaries): the gateway stores its
//! clients' uploads and hands each file to an upstream as it takes it: inline `data:` to an
//! smcpd on stdio without a data plane, uploaded again to one with a data plane beside its
//! stdio; the second's generated file is stored by the gateway and downloaded from it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use smcp_client::Client;
use smcp_client::files::{FileTransfer, UploadMeta, output_files};

use crate::gateway_support::config;
use crate::support::Smcpd;

const TWO: &str = r#"
[[upstream]]
name = "inline"
command = ["{smcpd}", "--stdio", "--log", "warn"]

[[upstream]]
name = "full"
command = ["{smcpd}", "--stdio", "--log", "warn", "--insecure-http-files", "--listen", "127.0.0.1:0"]
resources.deny = ["smcp://readme", "smcp://clock"]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_reaches_an_inline_and_an_uploading_upstream_and_an_output_comes_back() {
    let (_dir, path) = config(TWO);
    let gateway = Smcpd::start_gateway(&path, &["--insecure-http-files"], "smcpd=info");
    let client = Client::builder(format!("http://{}/mcp", gateway.addr))
        .files(FileTransfer {
            allow_insecure_loopback: true,
            ..FileTransfer::default()
        })
        .build()
        .unwrap();
    let csv = bytes::Bytes::from_static(b"name,qty\napples,3\npears,5\n");
    let uploaded = client
        .upload_bytes(
            csv,
            UploadMeta::new(0).name("fruit.csv").mime_type("text/csv"),
            None,
        )
        .await
        .unwrap();

    // The inline-only upstream gets it as a data: URI.
    let analyzed = client
        .call_tool("inline_analyze_document", json!({"document": uploaded.uri}))
        .await
        .unwrap();
    assert!(!analyzed.is_error(), "{analyzed:?}");
    // The gateway answers, not the upstream.
    let meta = analyzed.meta.as_ref().unwrap();
    assert_eq!(
        meta["io.modelcontextprotocol/serverInfo"]["name"], "smcp-gateway",
        "{meta:?}"
    );
    let facts = analyzed.structured_content.unwrap();
    assert_eq!(facts["size"], 26, "{facts}");
    assert_eq!(
        facts["digest"]["value"],
        uploaded.digest.as_ref().unwrap().value
    );

    // The upstream with a data plane gets it uploaded, and generates a file.
    let summarized = client
        .call_tool("full_summarize_csv", json!({"table": uploaded.uri}))
        .await
        .unwrap();
    assert!(!summarized.is_error(), "{summarized:?}");
    let outputs = output_files(&summarized);
    assert_eq!(outputs.len(), 1, "{summarized:?}");
    let prefix = "mcp-file://smcpd/";
    assert!(outputs[0].uri.starts_with(prefix), "{:?}", outputs[0]);
    let mut summary = Vec::new();
    let got = client
        .download_file_into(&outputs[0], &mut summary, None)
        .await
        .unwrap();
    assert_eq!(got.uri, outputs[0].uri, "downloaded from the gateway");
    let text = String::from_utf8(summary).unwrap();
    assert!(text.contains("qty"), "{text}");
}
