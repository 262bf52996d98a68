//! Human-readable output: simple aligned tables and rendered content blocks. Text is printed;
//! images and audio are summarised, or written to files with `--save DIR`.

use std::path::Path;

use base64::Engine as _;
use smcp_client::proto::content::{ContentBlock, ResourceContents};

/// Prints rows as an aligned table with a header; long cells are cut to keep one line per row.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) {
    const MAX_CELL: usize = 70;
    let cut = |s: &str| -> String {
        let one_line = s.replace(['\n', '\r'], " ");
        if one_line.chars().count() > MAX_CELL {
            let mut t: String = one_line.chars().take(MAX_CELL - 1).collect();
            t.push('…');
            t
        } else {
            one_line
        }
    };
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| cut(c)).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let line = |cells: Vec<String>| {
        let mut out = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                out.push_str(c);
            } else {
                let pad = widths[i] - c.chars().count();
                out.push_str(c);
                out.push_str(&" ".repeat(pad + 2));
            }
        }
        println!("{}", out.trim_end());
    };
    line(header.iter().map(|h| (*h).to_owned()).collect());
    for row in rows {
        line(row);
    }
    if header.is_empty() {}
}

/// Writes decoded media to `dir` (or summarises it) and returns the line to print.
fn media(kind: &str, mime: &str, data: &str, index: usize, save: Option<&Path>) -> String {
    let bytes = base64::engine::general_purpose::STANDARD.decode(data.as_bytes());
    let Ok(bytes) = bytes else {
        return format!("[{kind} {mime}: invalid base64]");
    };
    let Some(dir) = save else {
        return format!(
            "[{kind} {mime}, {} bytes; use --save DIR to write it]",
            bytes.len()
        );
    };
    let ext = mime.rsplit('/').next().unwrap_or("bin");
    let path = dir.join(format!("{kind}-{index}.{ext}"));
    match std::fs::write(&path, &bytes) {
        Ok(()) => format!(
            "[{kind} {mime}, {} bytes, saved to {}]",
            bytes.len(),
            path.display()
        ),
        Err(e) => format!("[{kind} {mime}: cannot write {}: {e}]", path.display()),
    }
}

/// Prints one resource's contents.
pub(crate) fn resource_contents(c: &ResourceContents, index: usize, save: Option<&Path>) {
    match c {
        ResourceContents::Text(t) => println!("{}", t.text),
        ResourceContents::Blob(b) => {
            let mime = b.mime_type.as_deref().unwrap_or("application/octet-stream");
            println!("{}", media("blob", mime, &b.blob, index, save));
        }
        ResourceContents::File(f) => println!(
            "[file-backed resource {} -> {} (use `smcp download`)]",
            f.uri, f.content.uri
        ),
    }
}

/// Prints content blocks in order.
pub(crate) fn content(blocks: &[ContentBlock], save: Option<&Path>) {
    for (i, block) in blocks.iter().enumerate() {
        match block {
            ContentBlock::Text(t) => println!("{}", t.text),
            ContentBlock::Image(m) => {
                println!("{}", media("image", &m.mime_type, &m.data, i, save));
            }
            ContentBlock::Audio(m) => {
                println!("{}", media("audio", &m.mime_type, &m.data, i, save));
            }
            ContentBlock::ResourceLink(l) => println!("[resource link {} ({})]", l.uri, l.name),
            ContentBlock::File(f) => println!(
                "[file {} ({}, {} bytes)]",
                f.file.uri,
                f.file.mime_type.as_deref().unwrap_or("?"),
                f.file
                    .size
                    .map_or_else(|| "?".to_owned(), |s| s.to_string())
            ),
            ContentBlock::Resource(r) => {
                println!("[embedded resource {}]", r.resource.uri());
                resource_contents(&r.resource, i, save);
            }
        }
    }
}
