//! `smcp-modcheck [--allow FILE] [PACKAGE_DIR...]`: fails (exit 1) when the files of any
//! package's crates import each other in a loop, printing each loop with the names that tie it.
//! With no package it checks every package under `crates/` and `examples/` of the current
//! directory. `--allow FILE` names the cycles still to be cut (see `smcp_modcheck::allow`): one
//! that fits a block is reported but accepted, and a block that fits no cycle fails the check.
//! `--max-code-lines N` also fails on any file, outside test code, with more than N lines of code
//! (see `smcp_modcheck::size`), and `--feature-tables` on any cargo feature of a package that no
//! table row of its crate docs names (see `smcp_modcheck::features`).

use std::path::PathBuf;
use std::process::ExitCode;

use smcp_modcheck::allow;

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            #[allow(clippy::print_stderr)] // the tool's report
            {
                eprintln!("smcp-modcheck: {err:#}");
            }
            ExitCode::from(2)
        }
    }
}

#[allow(clippy::print_stdout)] // the tool's report
fn run() -> anyhow::Result<bool> {
    let mut args = std::env::args_os().skip(1).peekable();
    let mut blocks = Vec::new();
    let mut packages: Vec<PathBuf> = Vec::new();
    let mut max_lines: Option<usize> = None;
    let mut feature_tables = false;
    while let Some(arg) = args.next() {
        if arg == "--feature-tables" {
            feature_tables = true;
        } else if arg == "--max-code-lines" {
            let value = args
                .next()
                .and_then(|v| v.to_str().and_then(|v| v.parse().ok()))
                .ok_or_else(|| anyhow::anyhow!("--max-code-lines needs a number"))?;
            max_lines = Some(value);
        } else if arg == "--allow" {
            let file = args
                .next()
                .ok_or_else(|| anyhow::anyhow!("--allow needs a file"))?;
            let text = std::fs::read_to_string(&file)
                .map_err(|err| anyhow::anyhow!("{}: {err}", PathBuf::from(&file).display()))?;
            blocks = allow::parse(&text)?;
        } else {
            packages.push(PathBuf::from(arg));
        }
    }
    if packages.is_empty() {
        for entry in std::fs::read_dir("crates")? {
            packages.push(entry?.path());
        }
        packages.push(PathBuf::from("examples"));
    }
    packages.retain(|dir| dir.join("Cargo.toml").is_file());
    packages.sort();
    let mut clean = true;
    let mut used = vec![false; blocks.len()];
    let mut accepted = 0;
    for package in &packages {
        if feature_tables {
            for feature in smcp_modcheck::features::undocumented(package)? {
                clean = false;
                println!(
                    "{}: feature `{feature}` is in no table of the crate docs (a row starting | `{feature}` |)",
                    package.display()
                );
            }
        }
        if let Some(max) = max_lines {
            for (file, lines) in smcp_modcheck::size::oversized(package, max)? {
                clean = false;
                println!(
                    "{}: {lines} lines of code, more than {max}: split it by concern",
                    file.display()
                );
            }
        }
        for cycle in smcp_modcheck::check_package(package)? {
            let verdict = match allow::accepting(&blocks, &cycle.files) {
                Some(at) => {
                    used[at] = true;
                    accepted += 1;
                    format!("accepted, still to cut: {}", blocks[at].why)
                }
                None => {
                    clean = false;
                    "NOT ACCEPTED".to_owned()
                }
            };
            println!(
                "cycle of {} files in {} ({verdict}):",
                cycle.files.len(),
                package.display()
            );
            for (from, to, names) in &cycle.edges {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                println!(
                    "  {} -> {}: {}",
                    from.display(),
                    to.display(),
                    names.join(", ")
                );
            }
        }
    }
    for (block, used) in blocks.iter().zip(&used) {
        if !used {
            clean = false;
            println!(
                "allowed cycle [{}] is gone: remove its block from the allow file",
                block.why
            );
        }
    }
    if clean {
        if let Some(max) = max_lines {
            println!("no file outside tests over {max} lines of code");
        }
        if feature_tables {
            println!("every cargo feature is in its crate's feature table");
        }
        if accepted == 0 {
            println!("no module cycles in {} packages", packages.len());
        } else {
            println!(
                "{} packages: no module cycle but the {accepted} the allow file lists as still to cut",
                packages.len()
            );
        }
    }
    Ok(clean)
}
