//! The guide's shell blocks, run: every `cargo run -p smcp -- …` line of `docs/guide/cli.md`
//! against the example it names, and the failing call `docs/guide/server.md` shows, with the
//! exit status and message it documents. Each line runs the `smcp` binary built beside this
//! test (`cargo test --workspace` builds it; `$SMCP_BIN` overrides), not `cargo run`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The `smcp` binary, next to this test's executable (or `$SMCP_BIN`).
fn smcp_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("SMCP_BIN") {
        return path.into();
    }
    // target/<profile>/deps/guide_commands-HASH → target/<profile>/smcp
    let exe = std::env::current_exe().unwrap();
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test executable is in target/<profile>/deps");
    let bin = dir.join(format!("smcp{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "the smcp binary is not at {}: build it with `cargo build -p smcp` (cargo test \
         --workspace builds it), or set SMCP_BIN",
        bin.display()
    );
    bin
}

/// A server example on a free port, killed on drop.
struct Server {
    child: std::process::Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(program: &str) -> Server {
    use std::io::BufRead as _;
    let mut child = Command::new(program)
        .args(["--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    Server { child, url }
}

/// Splits a shell command line into words: whitespace, single and double quotes (no escapes,
/// no expansions: the guide's lines use none), and a `#` comment at a word start.
fn words(line: &str) -> Vec<String> {
    let (mut out, mut word, mut quote, mut in_word) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '#') if !in_word => break,
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    assert!(quote.is_none(), "unbalanced quote in {line:?}");
    if in_word {
        out.push(word);
    }
    out
}

/// The `sh` blocks of a guide page, each as its lines.
fn sh_blocks(page: &str) -> Vec<Vec<String>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs/guide")
        .join(page);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut blocks = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in text.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.push(current.take().unwrap()),
            (Some(lines), l) => lines.push(l.to_owned()),
            (None, _) => {}
        }
    }
    blocks
}

/// `cargo run -p smcp -- ARGS` → `ARGS`, for the lines that run the CLI.
fn smcp_args(line: &str) -> Option<Vec<String>> {
    let words = words(line);
    let rest = words.strip_prefix(&["cargo", "run", "-p", "smcp", "--"].map(String::from))?;
    Some(rest.to_vec())
}

fn run(url: &str, args: &[String], for_at_most: Option<Duration>) -> (Option<Output>, String) {
    let mut child = Command::new(smcp_bin())
        .args(args)
        .env("SMCP_URL", url)
        .env(
            "SMCP_CACHE_DIR",
            std::env::temp_dir().join("smcp-guide-cache"),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let shown = args.join(" ");
    if let Some(limit) = for_at_most {
        // A command that runs until Ctrl-C: it must still be running (streaming) after `limit`.
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if let Some(status) = child.try_wait().unwrap() {
                let out = child.wait_with_output().unwrap();
                panic!(
                    "`smcp {shown}` ended early with {status}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        child.kill().unwrap();
        let _ = child.wait();
        return (None, shown);
    }
    (Some(child.wait_with_output().unwrap()), shown)
}

#[test]
fn the_cli_walk_through_runs_against_the_resources_example() {
    let blocks = sh_blocks("cli.md");
    let block = blocks
        .iter()
        .find(|b| b.iter().any(|l| l.starts_with("export SMCP_URL=")))
        .expect("cli.md has the block that explores the resources example");
    let server = start(env!("CARGO_BIN_EXE_resources"));
    let mut ran = 0;
    for line in block {
        let Some(args) = smcp_args(line) else {
            continue;
        };
        let forever = line.contains("until Ctrl-C");
        let (output, shown) = run(
            &server.url,
            &args,
            forever.then_some(Duration::from_secs(2)),
        );
        if let Some(output) = output {
            assert!(
                output.status.success(),
                "`smcp {shown}` failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(!output.stdout.is_empty(), "`smcp {shown}` printed nothing");
        }
        ran += 1;
    }
    assert!(ran >= 7, "only {ran} smcp lines found");
}

#[test]
fn the_cli_stdio_line_runs_the_hello_tool_example() {
    let blocks = sh_blocks("cli.md");
    let line = blocks
        .iter()
        .flatten()
        .find(|l| l.contains("--stdio call"))
        .expect("cli.md shows a stdio call");
    let args: Vec<String> = smcp_args(line)
        .unwrap()
        .into_iter()
        .map(|w| {
            if w.ends_with("/hello_tool") {
                env!("CARGO_BIN_EXE_hello_tool").to_owned()
            } else {
                w
            }
        })
        .collect();
    let (output, shown) = run("http://unused.invalid/mcp", &args, None);
    let output = output.unwrap();
    assert!(
        output.status.success(),
        "`smcp {shown}` failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("Ada"),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

#[test]
fn the_servers_output_schema_failure_is_as_documented() {
    let blocks = sh_blocks("server.md");
    let block = blocks
        .iter()
        .find(|b| b.iter().any(|l| l.contains("call mean")))
        .expect("server.md shows the failing `mean` call");
    let args = smcp_args(&block[0]).unwrap();
    // The documented outcome: the comment lines after the command.
    let documented: String = block[1..]
        .iter()
        .map(|l| l.trim_start_matches('#').trim())
        .collect::<Vec<_>>()
        .join(" ");
    let server = start(env!("CARGO_BIN_EXE_typed_tool"));
    let (output, shown) = run(&server.url, &args, None);
    let output = output.unwrap();
    assert!(
        documented.contains(&format!("exit status {}", output.status.code().unwrap())),
        "`smcp {shown}` exited {} but the guide says: {documented}",
        output.status
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let message = "does not conform to its outputSchema: /mean";
    assert!(documented.contains(message), "{documented}");
    assert!(stderr.contains(message), "{stderr}");
    assert!(stderr.contains("-32603"), "{stderr}");
}

#[test]
fn words_split_like_the_shell() {
    assert_eq!(
        words(r#"a --json-args '{"city": "oslo"}' --json   # comment"#),
        ["a", "--json-args", r#"{"city": "oslo"}"#, "--json"]
    );
    assert_eq!(words("x=1 \"y z\""), ["x=1", "y z"]);
}
