//! SEP-2631 files through the gateway (feature `files`): a client uploads to the gateway,
//! which hands the file to an upstream that only takes `data:` URIs inline (within the
//! tool's `maxSize`) and uploads it again to an upstream that speaks SEP-2631; an upstream's
//! file output is stored by the gateway and downloaded from it.

use std::sync::Arc;

use serde_json::{Value, json};
use smcp_client::Client;
use smcp_client::files::{FileTransfer, UploadMeta, output_files};
use smcp_files::{Files, FilesConfig, FilesExtension, FilesToolCall as _, LocalFileStore};
use smcp_proto::content::ContentBlock;
use smcp_proto::ext::files::FileContent;
use smcp_server::proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, Server, tool};

use crate::common::{self, Served};

/// A file service over a fresh directory, its URIs under `authority`.
fn files(authority: &str) -> (Files, TempDir) {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "smcp-gateway-files-{}-{authority}-{n}",
        std::process::id()
    ));
    let files = Files::new(
        Arc::new(LocalFileStore::open(&dir).unwrap()),
        smcp_server::KeyRing::ephemeral().unwrap(),
        FilesConfig {
            authority: authority.to_owned(),
            allow_insecure_loopback: true,
            ..FilesConfig::default()
        },
    )
    .unwrap();
    (files, TempDir(dir))
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `size_of`: the size and media type of its `doc`, declared with `declaration`.
fn size_of(declaration: Value) -> smcp_server::ToolBuilder {
    tool("size_of")
        .input_schema(json!({"type": "object", "properties": {
            "doc": {"type": "string", "format": "uri", "x-mcp-file": declaration}},
            "required": ["doc"]}))
        .handler(|call| async move {
            let doc = call.files().get("doc").expect("resolved by the extension");
            Ok::<_, HandlerError>(CallToolResult::text(format!(
                "{} {}",
                doc.size(),
                doc.mime_type()
            )))
        })
}

/// An upstream that takes files only inline, at most 64 bytes.
async fn inline_upstream() -> Served {
    let server = Server::builder("inline", "1")
        .extension(FilesExtension::inline_only())
        .tool(size_of(json!({"transferModes": ["inline"], "maxSize": 64})))
        .build()
        .unwrap();
    common::serve_server(&server).await
}

/// An upstream speaking SEP-2631 that takes files only by upload, and makes one.
async fn uploading_upstream() -> (Served, TempDir) {
    let (files, dir) = files("upstream");
    let server = Server::builder("uploads", "1")
        .extension(FilesExtension::new(files.clone()))
        .tool(size_of(json!({"transferModes": ["upload"]})))
        .tool(tool("make").handler(|call| async move {
            let file = call
                .files()
                .output("hello.txt", "text/plain", b"hello from upstream".to_vec())
                .await?;
            Ok::<_, HandlerError>(CallToolResult {
                content: vec![ContentBlock::File(FileContent::new(file))],
                ..CallToolResult::text("")
            })
        }))
        .build()
        .unwrap();
    let served = common::serve(server.endpoint("/mcp").fallback(files.router())).await;
    files
        .set_base_url(served.url.trim_end_matches("/mcp"))
        .unwrap();
    (served, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_reach_each_upstream_as_it_takes_them_and_outputs_come_from_the_gateway() {
    let inline = inline_upstream().await;
    let (uploads, _upstream_dir) = uploading_upstream().await;
    let config = smcp_gateway::GatewayConfig::parse(&format!(
        "[[upstream]]\nname = \"inline\"\nurl = \"{}\"\n\n[[upstream]]\nname = \"up\"\nurl = \"{}\"\n",
        inline.url, uploads.url
    ))
    .unwrap();
    let gateway = smcp_gateway::Gateway::start(config).await.unwrap();
    let (gateway_files, _gateway_dir) = files("gateway");
    gateway.serve_files(gateway_files.clone());
    let front = gateway
        .configure(Server::builder("gw", "1"))
        .build()
        .unwrap();
    gateway.attach(&front);
    let served = common::serve(front.endpoint("/mcp").fallback(gateway_files.router())).await;
    gateway_files
        .set_base_url(served.url.trim_end_matches("/mcp"))
        .unwrap();
    let client = Client::builder(&served.url)
        .files(FileTransfer {
            allow_insecure_loopback: true,
            ..FileTransfer::default()
        })
        .build()
        .unwrap();

    // The served declaration lets the client upload to the gateway.
    let tools = client.list_tools().await.unwrap();
    let inline_tool = tools.iter().find(|t| t.name == "inline_size_of").unwrap();
    assert_eq!(
        inline_tool.input_schema["properties"]["doc"]["x-mcp-file"],
        json!({"transferModes": ["inline", "upload"], "maxSize": 64})
    );

    let forty = bytes::Bytes::from(vec![b'x'; 40]);
    let uploaded = client
        .upload_bytes(forty, UploadMeta::new(40).mime_type("text/plain"), None)
        .await
        .unwrap();
    assert!(
        uploaded.uri.starts_with("mcp-file://gateway/"),
        "{}",
        uploaded.uri
    );

    // Inline to the upstream that only takes `data:`.
    let sized = client
        .call_tool("inline_size_of", json!({"doc": uploaded.uri}))
        .await
        .unwrap();
    assert_eq!(sized.text_content(), "40 text/plain", "{sized:?}");
    // Uploaded again to the one that speaks SEP-2631.
    let sized = client
        .call_tool("up_size_of", json!({"doc": uploaded.uri}))
        .await
        .unwrap();
    assert_eq!(sized.text_content(), "40 text/plain", "{sized:?}");
    // Its field takes uploads only, and so does the gateway's.
    let refused = client
        .call_tool(
            "up_size_of",
            json!({"doc": "data:text/plain;base64,aGVsbG8="}),
        )
        .await
        .unwrap();
    assert!(refused.is_error(), "{refused:?}");
    let structured = refused.structured_content.unwrap();
    assert_eq!(
        structured["reason"], "transferModeNotAllowed",
        "{structured}"
    );

    // Past the tool's maxSize: refused by the gateway as the upstream would, naming the
    // argument.
    let big = client
        .upload_bytes(
            bytes::Bytes::from(vec![b'y'; 100]),
            UploadMeta::new(100).mime_type("text/plain"),
            None,
        )
        .await
        .unwrap();
    let refused = client
        .call_tool("inline_size_of", json!({"doc": big.uri}))
        .await
        .unwrap();
    assert!(refused.is_error(), "{refused:?}");
    let structured = refused.structured_content.unwrap();
    assert_eq!(structured["argument"], "doc", "{structured}");
    assert_eq!(structured["reason"], "maxSizeExceeded", "{structured}");

    // An upstream's output, stored by the gateway: downloaded from it.
    let made = client.call_tool("up_make", json!({})).await.unwrap();
    let outputs = output_files(&made);
    assert_eq!(outputs.len(), 1, "{made:?}");
    assert!(
        outputs[0].uri.starts_with("mcp-file://gateway/"),
        "{:?}",
        outputs[0]
    );
    let mut bytes = Vec::new();
    client
        .download_file_into(&outputs[0], &mut bytes, None)
        .await
        .unwrap();
    assert_eq!(bytes, b"hello from upstream");
}
