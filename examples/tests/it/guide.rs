//! The guide (`docs/guide/*.md`) and the README are checked against the code:
//!
//! * every ```` ```rust ```` block in the guide and the README is preceded by a marker
//!   `<!-- include: examples/src/bin/FILE.rs#ANCHOR -->` and equals that region of the example
//!   (between `// ANCHOR: name` and `// ANCHOR_END: name`, dedented), which
//!   `cargo build`/`clippy` compile and `tests/it/examples.rs` runs;
//! * every `cargo run -p smcp-examples --bin NAME` in the guide, the README and the
//!   examples' own headers names a program that exists;
//! * every `smcp-*` crate named in a `[dependencies]` block of the guide or the README exists
//!   in `crates/` with the version given;
//! * every relative link in the guide points to a file or directory of the repository;
//! * every row of the CLI error table in `docs/guide/cli.md` names a test that exists in
//!   `crates/smcp/tests/it/` and gives the exit code of the reference table in `docs/cli.md`,
//!   and the guide's exit-code table lists the reference's codes.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};

use smcp_test_support::root;

fn guide_pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs/guide"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    assert!(pages.len() >= 6, "{pages:?}");
    pages
}

/// A fenced block: its language, the line before its opening fence, its text and the line
/// number of the fence.
struct Block {
    lang: String,
    before: String,
    text: String,
    line: usize,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(lang) = lines[i].strip_prefix("```") {
            let start = i;
            let mut body = Vec::new();
            i += 1;
            while i < lines.len() && lines[i] != "```" {
                body.push(lines[i]);
                i += 1;
            }
            assert!(i < lines.len(), "unclosed fence at line {}", start + 1);
            out.push(Block {
                lang: lang.trim().to_owned(),
                before: if start > 0 {
                    lines[start - 1].to_owned()
                } else {
                    String::new()
                },
                text: body.join("\n"),
                line: start + 1,
            });
        }
        i += 1;
    }
    out
}

/// The region `anchor` of `file`, without nested anchor lines, dedented.
fn region(file: &Path, anchor: &str) -> String {
    let source =
        std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let begin = format!("// ANCHOR: {anchor}");
    let end = format!("// ANCHOR_END: {anchor}");
    let lines: Vec<&str> = source.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim() == begin)
        .unwrap_or_else(|| panic!("{} has no {begin}", file.display()));
    let stop = lines[start..]
        .iter()
        .position(|l| l.trim() == end)
        .unwrap_or_else(|| panic!("{} has no {end}", file.display()))
        + start;
    let body: Vec<&str> = lines[start + 1..stop]
        .iter()
        .filter(|l| !l.trim_start().starts_with("// ANCHOR"))
        .copied()
        .collect();
    let indent = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    body.iter()
        .map(|l| {
            if l.len() >= indent {
                &l[indent..]
            } else {
                l.trim()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Checks every rust block of `page` against the region its marker names; returns how many.
fn check_rust_blocks(page: &Path) -> usize {
    let mut checked = 0;
    let markdown = std::fs::read_to_string(page).unwrap();
    for block in blocks(&markdown).into_iter().filter(|b| b.lang == "rust") {
        let marker = block
            .before
            .trim()
            .strip_prefix("<!-- include: ")
            .and_then(|m| m.strip_suffix(" -->"))
            .unwrap_or_else(|| {
                panic!(
                    "{}:{}: a rust block needs `<!-- include: examples/src/bin/FILE.rs#ANCHOR -->` on the line before",
                    page.display(),
                    block.line
                )
            });
        let (file, anchor) = marker.split_once('#').unwrap();
        let expected = region(&root().join(file), anchor);
        pretty_assertions::assert_eq!(
            block.text,
            expected,
            "{}:{}: the block differs from {marker}",
            page.display(),
            block.line
        );
        checked += 1;
    }
    checked
}

#[test]
fn every_rust_block_of_the_guide_is_a_region_of_an_example() {
    let checked: usize = guide_pages().iter().map(|p| check_rust_blocks(p)).sum();
    assert!(checked >= 15, "only {checked} blocks checked");
}

#[test]
fn every_rust_block_of_the_readme_is_a_region_of_an_example() {
    // The quick start is the typed tool: its types, the tool and the server.
    let checked = check_rust_blocks(&root().join("README.md"));
    assert!(checked >= 2, "only {checked} blocks checked");
}

/// Every `cargo run -p smcp-examples --bin NAME` in `text`.
fn example_commands(text: &str) -> Vec<String> {
    text.split("cargo run -p smcp-examples --bin ")
        .skip(1)
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn every_example_command_names_a_program_that_exists() {
    let mut sources: Vec<PathBuf> = guide_pages();
    sources.push(root().join("README.md"));
    sources.push(root().join("examples/README.md"));
    for entry in std::fs::read_dir(root().join("examples/src/bin")).unwrap() {
        sources.push(entry.unwrap().path());
    }
    let mut seen = 0;
    for source in sources {
        let text = std::fs::read_to_string(&source).unwrap();
        for name in example_commands(&text) {
            let program = root().join("examples/src/bin").join(format!("{name}.rs"));
            assert!(
                program.is_file(),
                "{}: no example program {name:?}",
                source.display()
            );
            seen += 1;
        }
    }
    assert!(seen >= 20, "only {seen} commands found");
}

#[test]
fn dependency_blocks_name_crates_that_exist_at_their_version() {
    let workspace = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let version = workspace
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .unwrap();
    let mut pages = guide_pages();
    pages.push(root().join("README.md"));
    let mut seen = 0;
    for page in pages {
        let markdown = std::fs::read_to_string(&page).unwrap();
        for block in blocks(&markdown).into_iter().filter(|b| b.lang == "toml") {
            for line in block.text.lines().filter(|l| l.starts_with("smcp")) {
                let name = line.split_whitespace().next().unwrap();
                assert!(
                    root().join("crates").join(name).is_dir(),
                    "{}: no crate {name}",
                    page.display()
                );
                if let Some(v) = line
                    .split("version = \"")
                    .nth(1)
                    .and_then(|v| v.split('"').next())
                {
                    assert!(
                        version.starts_with(v),
                        "{}: {name} version {v} but the workspace is {version}",
                        page.display()
                    );
                }
                seen += 1;
            }
        }
    }
    assert!(seen >= 4, "only {seen} dependency lines found");
}

#[test]
fn relative_links_of_the_guide_resolve() {
    for page in guide_pages() {
        let markdown = std::fs::read_to_string(&page).unwrap();
        for target in markdown
            .split("](")
            .skip(1)
            .filter_map(|rest| rest.split(')').next())
        {
            let path = target.split('#').next().unwrap();
            if path.is_empty() || path.contains("://") {
                continue;
            }
            let resolved = page.parent().unwrap().join(path);
            assert!(
                resolved.exists(),
                "{}: broken link {target:?}",
                page.display()
            );
        }
    }
}

/// The rows of the markdown table whose header line starts with `header`, split into cells.
fn table_rows(markdown: &str, header: &str) -> Vec<Vec<String>> {
    let mut lines = markdown.lines().skip_while(|l| !l.starts_with(header));
    assert!(lines.next().is_some(), "no table headed {header:?}");
    lines
        .skip(1) // the |---| line
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect()
}

/// The first `code span` of `cell`.
fn code_span(cell: &str) -> &str {
    cell.split('`').nth(1).unwrap_or_default()
}

#[test]
fn every_row_of_the_guides_cli_error_table_is_a_test_with_the_reference_exit_code() {
    let guide = std::fs::read_to_string(root().join("docs/guide/cli.md")).unwrap();
    let reference = std::fs::read_to_string(root().join("docs/cli.md")).unwrap();
    let mut tests = String::new();
    for entry in std::fs::read_dir(root().join("crates/smcp/tests/it")).unwrap() {
        tests.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    let reference_rows = table_rows(&reference, "| cause | message");
    let rows = table_rows(&guide, "| cause | message");
    assert!(rows.len() >= 10, "only {} rows", rows.len());
    for row in &rows {
        let [cause, _message, exit, test] = &row[..] else {
            panic!("a row of four cells: {row:?}");
        };
        let test = code_span(test);
        assert!(
            tests.contains(&format!("fn {test}(")),
            "{cause}: no test fn {test} in crates/smcp/tests/it"
        );
        // The reference's row that names the same test gives the same exit code.
        let reference_exit = reference_rows
            .iter()
            .find(|r| r.last().is_some_and(|t| t.contains(&format!("`{test}`"))))
            .map(|r| r[r.len() - 2].clone())
            .unwrap_or_else(|| panic!("docs/cli.md's error table has no row for {test}"));
        assert_eq!(exit, &reference_exit, "{cause}");
    }
    // And the exit-code table is the reference's, code for code.
    let codes = |rows: Vec<Vec<String>>| -> Vec<String> {
        rows.into_iter().map(|r| r[0].clone()).collect()
    };
    assert_eq!(
        codes(table_rows(&guide, "| exit | class |")),
        codes(table_rows(&reference, "| code | class |"))
    );
}
