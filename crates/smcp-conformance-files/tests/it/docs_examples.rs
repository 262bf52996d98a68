//! Every fenced ```json block of `docs/files/*.md` is a test fixture: it must be valid JSON,
//! carry a `<!-- example: Def [invalid] -->` marker on the line before the fence, and validate
//! (or, when marked `invalid`, fail to validate) against `docs/files/schema.json#/$defs/Def`.
//! Where the suite has a codec for a value (digests, `data:` URIs) or `smcp-proto` has a type
//! (Tool, ClientCapabilities, ServerCapabilities), the example goes through it too.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::PathBuf;

use serde_json::{Value, json};
use smcp_conformance_files::files::{is_sha256_b64url, parse_data_uri, sha256_b64url};

fn docs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/files")
}

/// The chapter's pages; each must exist.
const PAGES: &[&str] = &[
    "index.md",
    "capabilities.md",
    "inputs.md",
    "inline.md",
    "upload.md",
    "tools.md",
    "outputs.md",
    "resources.md",
    "elicitation.md",
    "errors.md",
    "security.md",
    "open-questions.md",
    "prototype.md",
];

#[derive(Debug)]
struct Example {
    page: String,
    line: usize,
    def: Option<String>,
    invalid: bool,
    text: String,
}

fn examples() -> Vec<Example> {
    let mut out = Vec::new();
    for page in PAGES {
        let text = std::fs::read_to_string(docs_dir().join(page))
            .unwrap_or_else(|e| panic!("docs/files/{page}: {e}"));
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            if lines[i].trim() == "```json" {
                let marker = i
                    .checked_sub(1)
                    .map(|j| lines[j].trim())
                    .and_then(|l| l.strip_prefix("<!-- example:"))
                    .and_then(|l| l.strip_suffix("-->"));
                let (def, invalid) = match marker.map(str::split_whitespace) {
                    Some(mut w) => {
                        let d = w.next().map(str::to_owned);
                        (d, w.next() == Some("invalid"))
                    }
                    None => (None, false),
                };
                let start = i + 1;
                let mut end = start;
                while end < lines.len() && lines[end].trim() != "```" {
                    end += 1;
                }
                out.push(Example {
                    page: (*page).to_owned(),
                    line: start,
                    def,
                    invalid,
                    text: lines[start..end].join("\n"),
                });
                i = end;
            }
            i += 1;
        }
    }
    out
}

fn walk<'a>(v: &'a Value, f: &mut dyn FnMut(&'a Value)) {
    f(v);
    match v {
        Value::Array(a) => a.iter().for_each(|x| walk(x, f)),
        Value::Object(o) => o.values().for_each(|x| walk(x, f)),
        _ => {}
    }
}

#[test]
fn every_json_example_is_valid_and_conforms() {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(docs_dir().join("schema.json")).unwrap())
            .unwrap();
    let all = examples();
    assert!(all.len() >= 30, "only {} JSON examples found", all.len());
    let mut problems = Vec::new();
    for ex in &all {
        let at = format!("docs/files/{}:{}", ex.page, ex.line);
        let value: Value = match serde_json::from_str(&ex.text) {
            Ok(v) => v,
            Err(e) => {
                problems.push(format!("{at}: not valid JSON: {e}"));
                continue;
            }
        };
        let Some(def) = &ex.def else {
            problems.push(format!(
                "{at}: no `<!-- example: Def -->` marker on the line before the fence"
            ));
            continue;
        };
        if schema.pointer(&format!("/$defs/{def}")).is_none() {
            problems.push(format!("{at}: schema.json has no $defs/{def}"));
            continue;
        }
        let mut root = schema.clone();
        root["$ref"] = json!(format!("#/$defs/{def}"));
        let validator = jsonschema::options()
            .offline()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&root)
            .unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        match (ex.invalid, errors.is_empty()) {
            (false, false) => problems.push(format!("{at}: does not match {def}: {errors:?}")),
            (true, true) => problems.push(format!("{at}: marked invalid but matches {def}")),
            _ => {}
        }
        if ex.invalid {
            continue;
        }
        // The suite's codecs: digests and data: URIs must be real.
        walk(&value, &mut |v| {
            if v.get("algorithm") == Some(&json!("sha-256"))
                && let Some(d) = v.get("value").and_then(Value::as_str)
                && !is_sha256_b64url(d)
            {
                problems.push(format!(
                    "{at}: sha-256 digest {d:?} is not 43 base64url chars"
                ));
            }
            if let Some(s) = v.as_str()
                && s.starts_with("data:")
                && parse_data_uri(s).is_err()
            {
                problems.push(format!("{at}: data: URI {s:?} does not parse"));
            }
        });
        // smcp-proto types where they exist: unknown members (x-mcp-file, files) must survive.
        match def.as_str() {
            "ToolWithFileInputs" => {
                let tool: smcp_proto::server::tools::Tool =
                    serde_json::from_value(value.clone()).unwrap();
                assert_eq!(
                    serde_json::to_value(&tool).unwrap()["inputSchema"],
                    value["inputSchema"],
                    "{at}: Tool round-trip lost members"
                );
            }
            "CapabilitiesWithFiles" => {
                let caps = &value["capabilities"];
                let c: smcp_proto::capabilities::ClientCapabilities =
                    serde_json::from_value(caps.clone()).unwrap();
                assert_eq!(
                    serde_json::to_value(&c).unwrap()["files"],
                    caps["files"],
                    "{at}: ClientCapabilities lost files"
                );
                let s: smcp_proto::capabilities::ServerCapabilities =
                    serde_json::from_value(caps.clone()).unwrap();
                assert_eq!(
                    serde_json::to_value(&s).unwrap()["files"],
                    caps["files"],
                    "{at}: ServerCapabilities lost files"
                );
            }
            _ => {}
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn worked_example_digests_match_their_bytes() {
    // inline.md and upload.md use these bytes; their digests must be the real ones.
    assert_eq!(
        sha256_b64url(b"Hello world!"),
        "wFNeS-K3n_2TKRMFQ2v4iTFOSj-uwF7P_Lt98xrZ5Ro"
    );
    let inline = std::fs::read_to_string(docs_dir().join("inline.md")).unwrap();
    assert!(inline.contains("data:text/plain;base64,SGVsbG8gd29ybGQh"));
    assert!(inline.contains("wFNeS-K3n_2TKRMFQ2v4iTFOSj-uwF7P_Lt98xrZ5Ro"));
}

#[test]
fn schema_rejects_the_seps_multipart_content_type_verbatim() {
    // A18.111: the SEP's example header `Content-Type: multipart/form-data` has no boundary.
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(docs_dir().join("schema.json")).unwrap())
            .unwrap();
    let mut root = schema;
    root["$ref"] = json!("#/$defs/UploadDescriptor");
    let v = jsonschema::options()
        .offline()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&root)
        .unwrap();
    let sep = json!({"transport": "https", "method": "POST", "url": "https://upload.example.com/x",
        "headers": {"Content-Type": "multipart/form-data"}, "multipart": {"fileField": "file"}, "expiresAt": "2026-04-20T18:30:00Z"});
    assert!(!v.is_valid(&sep));
}
