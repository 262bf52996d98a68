//! The SEP-2631 prototype: tools and a resource that exercise file transfer on the sample
//! data in `examples/data/`.
//!
//! - `analyze_document` — one file (inline or upload): detected type, size, digest, text
//!   statistics (PDF pages, PNG dimensions).
//! - `compare_documents` — an array of at least two files, upload only.
//! - `summarize_csv` — a CSV in, a generated Markdown report out (a `FileValue`).
//! - `analyze_upload` — asks the user for a file through an MRTR elicitation.
//! - resource `smcp://samples/report.pdf` — file-backed (`FileResourceContents`).

use std::sync::Arc;

use serde_json::{Value, json};
use smcp_files::Files;
use smcp_files::{FileHandle, FilesToolCall as _, file_error_result};
use smcp_proto::client::elicitation::ElicitValue;
use smcp_proto::content::{ContentBlock, ResourceContents};
use smcp_proto::ext::files::{
    FileContent, FileInputDescriptor, FileRef, FileResourceContents, mime_essence,
};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, ServerBuilder, ToolBuilder, mrtr, resource, tool};

/// The file-backed sample resource.
pub const SAMPLE_PDF_URI: &str = "smcp://samples/report.pdf";
const SAMPLE_PDF: &[u8] = include_bytes!("../../../examples/data/report.pdf");
/// Largest file the demo tools accept.
const MAX: u64 = 10 << 20;
/// Largest file the demo reads into memory for statistics.
const READ_LIMIT: u64 = 10 << 20;

fn doc_field(decl: &Value) -> Value {
    json!({"type": "string", "format": "uri", "x-mcp-file": decl})
}

fn accept_docs() -> Value {
    json!([
        "application/pdf",
        "text/plain",
        "text/csv",
        "text/markdown",
        "image/png"
    ])
}

/// The type the content shows: what its magic bytes say ([`smcp_files::sniff::detect`], the
/// sniffing that admitted the file), else plain text when it is UTF-8.
fn detect(bytes: &[u8]) -> &'static str {
    smcp_files::sniff::detect(bytes).unwrap_or_else(|| {
        if std::str::from_utf8(bytes).is_ok() {
            "text/plain"
        } else {
            "application/octet-stream"
        }
    })
}

fn stats(bytes: &[u8]) -> Value {
    let detected = detect(bytes);
    let mut out = json!({"detectedType": detected});
    if detected.starts_with("text/")
        && let Ok(text) = std::str::from_utf8(bytes)
    {
        out["lines"] = json!(text.lines().count());
        out["words"] = json!(text.split_whitespace().count());
        out["characters"] = json!(text.chars().count());
    }
    if detected == "application/pdf" {
        let s = String::from_utf8_lossy(bytes);
        let pages = s.matches("/Type /Page").count() - s.matches("/Type /Pages").count();
        out["pdfPages"] = json!(pages);
    }
    if detected == "image/png" && bytes.len() >= 24 {
        let be =
            |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        out["width"] = json!(be(16));
        out["height"] = json!(be(20));
    }
    out
}

async fn analyze(h: &FileHandle) -> Result<Value, HandlerError> {
    let bytes = h
        .read_to_vec(READ_LIMIT)
        .await
        .map_err(|e| HandlerError::failed(e.to_string()))?;
    let mut v = json!({
        "name": h.name(),
        "mimeType": mime_essence(h.mime_type()),
        "size": h.size(),
        "digest": {"algorithm": h.digest().algorithm, "value": h.digest().value},
        "transfer": if h.is_inline() { "inline" } else { "upload" },
    });
    if let (Some(obj), Value::Object(s)) = (v.as_object_mut(), stats(&bytes)) {
        obj.extend(s);
    }
    Ok(v)
}

fn summary_text(v: &Value) -> String {
    let mut s = format!(
        "{} ({}), {} bytes, sha-256 {}",
        v["name"].as_str().unwrap_or("file"),
        v["detectedType"].as_str().unwrap_or("?"),
        v["size"],
        v["digest"]["value"].as_str().unwrap_or("?")
    );
    if let Some(w) = v.get("words") {
        s.push_str(&format!("; {} lines, {w} words", v["lines"]));
    }
    if let Some(p) = v.get("pdfPages") {
        s.push_str(&format!("; {p} PDF page(s)"));
    }
    if let Some(w) = v.get("width") {
        s.push_str(&format!("; {w}x{} pixels", v["height"]));
    }
    s
}

fn csv_report(name: &str, text: &str) -> String {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let mut out = format!(
        "# Summary of {name}\n\n{} rows, {} columns\n\n| column | numeric | min | max | mean |\n|---|---|---|---|---|\n",
        rows.len(),
        header.len()
    );
    for (i, col) in header.iter().enumerate() {
        let nums: Vec<f64> = rows
            .iter()
            .filter_map(|r| r.get(i)?.trim().parse().ok())
            .collect();
        if nums.len() == rows.len() && !nums.is_empty() {
            let min = nums.iter().copied().fold(f64::INFINITY, f64::min);
            let max = nums.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mean = nums.iter().sum::<f64>() / nums.len() as f64;
            out.push_str(&format!("| {col} | yes | {min} | {max} | {mean:.2} |\n"));
        } else {
            out.push_str(&format!("| {col} | no | | | |\n"));
        }
    }
    out
}

fn structured(value: Value, text: String) -> CallToolResult {
    let mut r = CallToolResult::text(text);
    r.structured_content = Some(value);
    r
}

/// The file tool that needs no data plane: `analyze_document` taking inline `data:` files only
/// (for a server with [`smcp_files::FilesExtension::inline_only`], e.g. on stdio).
pub fn with_inline_tools(builder: ServerBuilder) -> ServerBuilder {
    builder.tool(analyze_tool(&["inline"]))
}

/// `analyze_document`, accepting files in these transfer modes.
fn analyze_tool(modes: &[&str]) -> ToolBuilder {
    tool("analyze_document")
        .title("Analyze a document")
        .description("Type, size, sha-256 digest and text statistics of one file (PDF, text, CSV, Markdown or PNG; inline or uploaded).")
        .input_schema(json!({"type": "object", "properties": {
            "document": doc_field(&json!({"accept": accept_docs(), "maxSize": MAX, "transferModes": modes}))
        }, "required": ["document"]}))
        .handler(|call| async move {
            let h = call.files().get("document").ok_or_else(|| HandlerError::failed("missing document"))?;
            let v = analyze(h).await?;
            Ok(structured(v.clone(), summary_text(&v)))
        })
}

/// Adds the prototype tools and the file-backed resource, on a server with a file service
/// (and its data plane).
pub fn with_tools(builder: ServerBuilder, files: &Files) -> ServerBuilder {
    let sample = Arc::new(tokio::sync::OnceCell::new());
    let files = files.clone();
    builder
        .tool(analyze_tool(&["inline", "upload"]))
        .tool(
            tool("compare_documents")
                .title("Compare documents")
                .description("Compares two or more uploaded files: sizes, digests, identical or not, shared lines.")
                .input_schema(json!({"type": "object", "properties": {
                    "documents": {"type": "array", "minItems": 2, "items":
                        doc_field(&json!({"accept": accept_docs(), "maxSize": MAX, "transferModes": ["upload"]}))}
                }, "required": ["documents"]}))
                .handler(|call| async move {
                    let docs = call.files().all("documents");
                    let mut each = Vec::new();
                    let mut line_sets = Vec::new();
                    for h in docs {
                        each.push(analyze(h).await?);
                        let bytes = h.read_to_vec(READ_LIMIT).await.map_err(|e| HandlerError::failed(e.to_string()))?;
                        let set: std::collections::BTreeSet<String> =
                            String::from_utf8_lossy(&bytes).lines().map(str::to_owned).collect();
                        line_sets.push(set);
                    }
                    let identical = docs.windows(2).all(|w| w[0].digest() == w[1].digest());
                    let shared = line_sets.iter().skip(1).fold(line_sets.first().cloned().unwrap_or_default(), |acc, s| acc.intersection(s).cloned().collect());
                    let v = json!({"documents": each, "identical": identical, "sharedLines": shared.len()});
                    let text = format!("{} documents; identical: {identical}; {} shared line(s)", docs.len(), shared.len());
                    Ok(structured(v, text))
                }),
        )
        .tool(
            tool("summarize_csv")
                .title("Summarize a CSV table")
                .description("Reads a CSV file and returns a generated Markdown report as a file.")
                .input_schema(json!({"type": "object", "properties": {
                    "table": doc_field(&json!({"accept": ["text/csv", "text/plain"], "maxSize": MAX}))
                }, "required": ["table"]}))
                .handler(|call| async move {
                    let h = call.files().get("table").ok_or_else(|| HandlerError::failed("missing table"))?;
                    let bytes = h.read_to_vec(READ_LIMIT).await.map_err(|e| HandlerError::failed(e.to_string()))?;
                    let name = h.name().unwrap_or("table.csv").to_owned();
                    let report = csv_report(&name, &String::from_utf8_lossy(&bytes));
                    let out_name = format!("{}-summary.md", name.trim_end_matches(".csv"));
                    let file = call.files().output(&out_name, "text/markdown", report.into_bytes()).await?;
                    let mut r = CallToolResult::new(vec![
                        ContentBlock::text(format!("Generated {out_name} ({} bytes)", file.size.unwrap_or_default())),
                        ContentBlock::File(FileContent::new(file.clone())),
                    ]);
                    r.structured_content = Some(json!({"report": file}));
                    Ok(r)
                }),
        )
        .tool(
            tool("analyze_upload")
                .title("Analyze a file the user picks")
                .description("Asks the user for a file (MRTR elicitation with an x-mcp-file field), then analyzes it.")
                .handler(|call| async move {
                    let answer = call.input.ask(mrtr::elicit_form(
                        "document_request",
                        "Select a document to analyze.",
                        json!({"type": "object", "properties": {"document": {
                            "type": "string", "format": "uri", "title": "Document",
                            "x-mcp-file": {"accept": accept_docs(), "maxSize": MAX}}}, "required": ["document"]}),
                    ))?;
                    let Some(ElicitValue::String(value)) = answer.content.as_ref().and_then(|c| c.get("document")) else {
                        return Ok(CallToolResult::text("No document selected."));
                    };
                    let descriptor = FileInputDescriptor { max_size: Some(MAX), accept: serde_json::from_value(accept_docs()).ok(), ..Default::default() };
                    match call.files().resolve(value, &descriptor).await {
                        Ok(h) => {
                            let v = analyze(&h).await?;
                            Ok(structured(v.clone(), summary_text(&v)))
                        }
                        Err(e) => Ok(file_error_result("document", &e)),
                    }
                }),
        )
        .resource(
            resource(SAMPLE_PDF_URI, "sample report")
                .title("Sample report (file-backed)")
                .description("A PDF whose bytes move out of band: resolve content.uri with files/authorizeDownload.")
                .mime_type("application/pdf")
                .handler(move |read| {
                    let files = files.clone();
                    let sample = sample.clone();
                    async move {
                        let file = sample
                            .get_or_try_init(|| files.create_bytes(Some("report.pdf".into()), "application/pdf", SAMPLE_PDF, None))
                            .await
                            .map_err(|e| HandlerError::Rpc(e.to_error_object()))?;
                        Ok(vec![ResourceContents::File(FileResourceContents {
                            uri: read.uri,
                            mime_type: Some("application/pdf".into()),
                            content: FileRef { uri: file.uri.clone() },
                            meta: None,
                        })])
                    }
                }),
        )
}

#[cfg(test)]
mod tests {
    use super::{SAMPLE_PDF, stats};

    #[test]
    fn statistics_follow_the_sniffed_type() {
        let pdf = stats(SAMPLE_PDF);
        assert_eq!(pdf["detectedType"], "application/pdf");
        assert!(pdf["pdfPages"].as_u64() >= Some(1), "{pdf}");
        assert!(pdf.get("words").is_none());

        let text = stats(b"two words\nand two more\n");
        assert_eq!(text["detectedType"], "text/plain");
        assert_eq!(
            (text["lines"].as_u64(), text["words"].as_u64()),
            (Some(2), Some(5))
        );

        // A text type the magic bytes show is still counted as text.
        let html = stats(b"<!DOCTYPE html><html><body>hello there</body></html>");
        assert_eq!(html["detectedType"], "text/html");
        assert_eq!(html["words"].as_u64(), Some(3));

        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend(3u32.to_be_bytes());
        png.extend(2u32.to_be_bytes());
        let png = stats(&png);
        assert_eq!(png["detectedType"], "image/png");
        assert_eq!(
            (png["width"].as_u64(), png["height"].as_u64()),
            (Some(3), Some(2))
        );

        let binary = stats(&[0xc3, 0x28, 0xa0, 0xa1]);
        assert_eq!(binary["detectedType"], "application/octet-stream");
    }
}
