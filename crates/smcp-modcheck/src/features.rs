//! Every cargo feature of a package named in its crate docs: a row `` | `name` | `` of a table
//! in the `//!` comments of `src/lib.rs` (or `src/main.rs` for a binary-only package).

use std::path::Path;

/// The features of the package in `dir` (its `[features]` table, `default` aside) that no table
/// row of its crate docs names, in manifest order.
///
/// # Errors
/// A manifest or crate root that cannot be read.
pub fn undocumented(dir: &Path) -> anyhow::Result<Vec<String>> {
    let manifest = read(&dir.join("Cargo.toml"))?;
    let features = declared(&manifest);
    if features.is_empty() {
        return Ok(features);
    }
    let lib = dir.join("src/lib.rs");
    let root = if lib.is_file() {
        lib
    } else {
        dir.join("src/main.rs")
    };
    let docs = read(&root)?;
    let rows: Vec<&str> = docs
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("//!"))
        .map(str::trim_start)
        .filter(|line| line.starts_with('|'))
        .collect();
    Ok(features
        .into_iter()
        .filter(|name| {
            let cell = format!("| `{name}` |");
            !rows.iter().any(|row| row.starts_with(&cell))
        })
        .collect())
}

/// The keys of the manifest's `[features]` table but `default`.
fn declared(manifest: &str) -> Vec<String> {
    let mut inside = false;
    let mut names = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[features]";
            continue;
        }
        if !inside || line.starts_with('#') {
            continue;
        }
        if let Some((key, _)) = line.split_once('=') {
            let key = key.trim().trim_matches('"');
            if !key.is_empty()
                && key != "default"
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                names.push(key.to_owned());
            }
        }
    }
    names
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).map_err(|err| anyhow::anyhow!("{}: {err}", path.display()))
}
