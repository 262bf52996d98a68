//! `smcp-modcheck [PACKAGE_DIR...]`: fails (exit 1) when the files of any package's crates
//! import each other in a loop, printing each loop with the names that tie it. With no argument
//! it checks every package under `crates/` and `examples/` of the current directory.

use std::path::PathBuf;
use std::process::ExitCode;

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
    let mut packages: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    if packages.is_empty() {
        for entry in std::fs::read_dir("crates")? {
            packages.push(entry?.path());
        }
        packages.push(PathBuf::from("examples"));
    }
    packages.retain(|dir| dir.join("Cargo.toml").is_file());
    packages.sort();
    let mut clean = true;
    for package in &packages {
        let cycles = smcp_modcheck::check_package(package)?;
        for cycle in &cycles {
            clean = false;
            println!(
                "cycle of {} files in {}:",
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
    if clean {
        println!("no module cycles in {} packages", packages.len());
    }
    Ok(clean)
}
