//! SEP-2631 file transfer, both sides in one program: a server whose tool takes a file and
//! returns a generated one, and a client that uploads a local file, calls the tool and
//! downloads the result with its size and sha-256 digest verified; then the same from memory
//! (bytes uploaded, the result downloaded into a `Vec<u8>`).
//!
//! ```sh
//! cargo run -p smcp-examples --bin files                              # uploads examples/data/notes.txt
//! cargo run -p smcp-examples --bin files -- --file examples/data/sales.csv
//! ```
//!
//! Development set-up: plain HTTP on loopback (`allow_insecure_loopback` on both sides).
//! File descriptors are bearer capabilities, so anywhere else serve HTTPS
//! (`ServeOptions::tls`, see `docs/guide/deployment.md` and `docs/files/`).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use smcp_client::files::{UploadMeta, output_files};
use smcp_client::{Client, FileTransfer};
use smcp_files::{Files, FilesConfig, FilesExtension, FilesToolCall as _, LocalFileStore};
use smcp_server::proto::content::ContentBlock;
use smcp_server::proto::ext::files::FileContent;
use smcp_server::proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, KeyRing, ServeOptions, Server, tool};

/// Largest file the tool accepts.
const MAX_SIZE: u64 = 1 << 20;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    smcp_examples::init_logging();
    let default_file = concat!(env!("CARGO_MANIFEST_DIR"), "/data/notes.txt");
    let input = PathBuf::from(smcp_examples::option(
        "--file",
        "SMCP_EXAMPLE_FILE",
        default_file,
    ));
    let work = std::env::temp_dir().join(format!("smcp-example-files-{}", std::process::id()));

    // ---- The server -------------------------------------------------------------------
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    // ANCHOR: server
    // Where files live (content-addressed on disk; `ObjectStoreFileStore` for S3 and the
    // like), the keys that sign transfer tokens, and the limits.
    let files = Files::new(
        Arc::new(LocalFileStore::open(work.join("store"))?),
        KeyRing::ephemeral()?,
        FilesConfig {
            allow_insecure_loopback: true, // development only: http:// descriptors on loopback
            max_size: MAX_SIZE,
            ..FilesConfig::default()
        },
    )?;
    // The base of the upload and download URLs the server hands out.
    files.set_base_url(&format!("http://{addr}"))?;
    let server = Server::builder("files", "1.0.0")
        .extension(FilesExtension::new(files.clone()))
        .tool(
            tool("shout")
                .description("Returns the text file it is given in capitals, as a new file")
                // `x-mcp-file` marks a file argument: the client sends a data: URI or the URI
                // of an upload; the extension checks it before the handler runs.
                .input_schema(json!({
                    "type": "object",
                    "properties": {"document": {
                        "type": "string", "format": "uri",
                        "x-mcp-file": {"accept": ["text/plain", "text/csv", "text/markdown"], "maxSize": MAX_SIZE}
                    }},
                    "required": ["document"]
                }))
                .handler(|call| async move {
                    let document = call.files().get("document").ok_or_else(|| HandlerError::failed("no document"))?;
                    let bytes = document
                        .read_to_vec(MAX_SIZE)
                        .await
                        .map_err(|e| HandlerError::failed(e.to_string()))?;
                    let loud = String::from_utf8_lossy(&bytes).to_uppercase();
                    let name = format!("loud-{}", document.name().unwrap_or("document.txt"));
                    // A generated file: stored, and returned as a FileValue the client downloads.
                    let file = call.files().output(&name, "text/plain", loud.into_bytes()).await?;
                    Ok(CallToolResult::new(vec![
                        ContentBlock::text(format!("{name}: {} bytes", file.size.unwrap_or_default())),
                        ContentBlock::File(FileContent::new(file)),
                    ]))
                }),
        )
        .build()?;
    // The MCP endpoint at /mcp, the upload and download endpoints on the other paths.
    let endpoint = server.endpoint("/mcp").fallback(files.router());
    // ANCHOR_END: server
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(smcp_server::serve(
        listener,
        endpoint,
        ServeOptions::default(),
        async move {
            let _ = stopped.await;
        },
    ));

    // ---- The client -------------------------------------------------------------------
    // ANCHOR: client
    let client = Client::builder(format!("http://{addr}/mcp"))
        .files(FileTransfer {
            inline_threshold: 0,           // always upload, to show the out-of-band path
            allow_insecure_loopback: true, // development only, as on the server
            ..FileTransfer::default()
        })
        .build()?;
    // files/authorizeUpload, then the upload itself (streamed from disk, digest checked).
    let uploaded = client.upload_path(&input, None, None).await?;
    println!("uploaded {} as {}", input.display(), uploaded.uri);
    let result = client
        .call_tool("shout", json!({"document": uploaded.uri}))
        .await?;
    if result.is_error() {
        anyhow::bail!("the tool failed: {:?}", result.content);
    }
    // File outputs come as `file` content blocks; download each one, verified.
    for file in output_files(&result) {
        let (path, meta) = client.download_file(&file, &work, None).await?;
        println!(
            "downloaded {} ({} bytes)",
            path.display(),
            meta.size.unwrap_or_default()
        );
        let text = std::fs::read_to_string(&path)?;
        println!("{}", text.lines().next().unwrap_or_default());
    }
    // ANCHOR_END: client

    // ANCHOR: memory
    // The same from memory. `upload_bytes` computes the size and digest itself (the size
    // given to `UploadMeta::new` is replaced); `upload_reader` streams any `AsyncRead` of a
    // known size instead.
    let memo = "made in memory\n";
    let uploaded = client
        .upload_bytes(memo.into(), UploadMeta::new(0).name("memo.txt"), None)
        .await?;
    let result = client
        .call_tool("shout", json!({"document": uploaded.uri}))
        .await?;
    for file in output_files(&result) {
        // Into any `AsyncWrite`, here a `Vec<u8>`. The bytes reach the writer before they
        // can be verified: on `Err` (a size or digest mismatch), discard what was written.
        let mut loud = Vec::new();
        let meta = client.download_file_into(&file, &mut loud, None).await?;
        println!(
            "downloaded {} into memory: {}",
            meta.name.as_deref().unwrap_or("a file"),
            String::from_utf8_lossy(&loud).trim_end()
        );
    }
    // ANCHOR_END: memory

    let _ = stop.send(());
    serving.await??;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
