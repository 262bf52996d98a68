//! Drives the built `smcp` binary against smcpd (in-process, port 0) as a new user would.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use smcp_test_support::root;
use std::process::{Command, Output};

/// smcpd's demo server on 127.0.0.1:0; the `/mcp` URL.
fn start_smcpd() -> String {
    crate::support::smcpd()
}

fn smcp(url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_smcp"))
        .arg("--url")
        .arg(url)
        .args(args)
        .env_remove("SMCP_URL")
        // The tool list cache goes to a temporary directory, not the home directory.
        .env(
            "SMCP_CACHE_DIR",
            std::env::temp_dir().join("smcp-cli-tests-cache"),
        )
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status,
        stdout(o),
        String::from_utf8_lossy(&o.stderr)
    );
    stdout(o)
}

#[test]
fn a_new_user_session_against_smcpd() {
    let url = start_smcpd();

    let out = ok(&smcp(&url, &["discover"]));
    assert!(out.contains("2026-07-28") && out.contains("tools"), "{out}");

    let out = ok(&smcp(&url, &["tools"]));
    assert!(out.starts_with("NAME"), "{out}");
    assert!(
        out.contains("echo") && out.contains("add") && out.contains("count"),
        "{out}"
    );

    assert_eq!(
        ok(&smcp(&url, &["call", "echo", "--arg", "text=hi"])).trim(),
        "hi"
    );

    let out = ok(&smcp(
        &url,
        &["call", "add", "--arg", "a=1", "--arg", "b=2", "--json"],
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["structuredContent"]["sum"], 3.0);

    let out = ok(&smcp(
        &url,
        &["call", "add", "--json-args", r#"{"a": 2, "b": 5}"#],
    ));
    assert_eq!(out.trim(), "7");

    let out = ok(&smcp(&url, &["resources"]));
    assert!(out.contains("smcp://readme"), "{out}");
    let out = ok(&smcp(&url, &["read", "smcp://readme"]));
    assert!(out.contains("reference server"), "{out}");

    let out = ok(&smcp(&url, &["prompts"]));
    assert!(out.contains("greet") && out.contains("name*"), "{out}");
    let out = ok(&smcp(&url, &["prompt", "greet", "--arg", "name=Ada"]));
    assert!(out.contains("Ada"), "{out}");

    let out = ok(&smcp(
        &url,
        &["call", "count", "--arg", "to=3", "--arg", "delay_ms=0"],
    ));
    assert!(out.contains("counted to 3"), "{out}");
}

#[test]
fn errors_show_the_code_and_exit_non_zero() {
    let url = start_smcpd();
    let o = smcp(&url, &["call", "no_such_tool"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("-32602") && err.contains("HTTP 200"), "{err}");

    let o = smcp(&url, &["call", "add", "--arg", "a=one"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a number"));

    let o = smcp(&url, &["read", "smcp://missing"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("JSON-RPC error"));

    let o = smcp("http://127.0.0.1:9/mcp", &["tools"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("is the server running"));
}

/// The Python SDK's (mcp 2.3.0) interpreter, or `None` when `SMCP_PYTHON_INTEROP=skip`.
fn interop_python() -> Option<std::path::PathBuf> {
    smcp_test_support::python(None)
}

/// `smcp --stdio ARGS -- SERVER…`.
fn smcp_stdio(args: &[&str], server: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_smcp"))
        .arg("--stdio")
        .args(args)
        .arg("--")
        .args(server)
        .env_remove("SMCP_URL")
        .output()
        .unwrap()
}

#[test]
fn stdio_against_the_python_sdk_server() {
    let Some(py) = interop_python() else { return };
    let script = root().join("tests/interop/server.py");
    let server = [py.to_str().unwrap(), script.to_str().unwrap(), "--stdio"];

    let out = ok(&smcp_stdio(&["tools"], &server));
    assert!(out.starts_with("NAME"), "{out}");
    for tool in ["slow_echo", "confirm", "touch"] {
        assert!(out.contains(tool), "{out}");
    }

    let out = ok(&smcp_stdio(
        &["call", "slow_echo", "--arg", "text=hi"],
        &server,
    ));
    assert_eq!(out.trim(), "hi");

    // Global options may come after the subcommand too.
    let out = ok(&smcp_stdio(
        &["call", "slow_echo", "--arg", "text=json", "--json"],
        &server,
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["structuredContent"]["result"], "json");

    let out = ok(&smcp_stdio(&["discover"], &server));
    assert!(out.contains("2026-07-28"), "{out}");
}

/// A scripted 2026-07-28 stdio server in sh: says hello on stderr, answers smcp's era probe
/// (`server/discover`), then the one request that follows with a tool named after `$SMCP_X`,
/// then waits for stdin to close.
const SH_SERVER: &str = r#"echo "hello from the server" >&2; read -r probe; printf '{"jsonrpc":"2.0","id":"smcp-probe","result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}\n'; read -r line; printf '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"x-is-%s","inputSchema":{"type":"object"}}]}}\n' "$SMCP_X"; cat >/dev/null"#;

#[test]
fn stdio_environment_stderr_and_a_dying_server() {
    let o = smcp_stdio(&["--env", "SMCP_X=42", "tools"], &["sh", "-c", SH_SERVER]);
    assert!(ok(&o).contains("x-is-42"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("hello from the server"),
        "stderr is forwarded: {err}"
    );

    let o = smcp_stdio(
        &["--env", "SMCP_X=7", "--quiet-server", "tools"],
        &["sh", "-c", SH_SERVER],
    );
    assert!(ok(&o).contains("x-is-7"));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("hello"));

    let o = smcp_stdio(&["tools"], &["sh", "-c", "read -r line; exit 4"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("exited (exit status: 4)"), "{err}");

    let o = smcp_stdio(&["tools"], &[]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("needs the server's command line"));
}

#[test]
fn tool_templates_complete_and_the_required_marks() {
    let url = start_smcpd();
    let out = ok(&smcp(&url, &["tools"]));
    assert!(
        out.starts_with("NAME") && out.contains("ARGUMENTS (*required)"),
        "{out}"
    );
    let add = out.lines().find(|l| l.starts_with("add ")).unwrap();
    assert!(add.contains("a*, b*"), "{add}");
    let count = out.lines().find(|l| l.starts_with("count ")).unwrap();
    assert!(count.contains("to*, delay_ms"), "{count}");

    let out = ok(&smcp(&url, &["tool", "count"]));
    let row = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} in {out}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(row("to")[..3], ["to", "integer", "yes"]);
    assert_eq!(row("delay_ms"), ["delay_ms", "integer"]);
    assert!(
        out.contains("input schema:") && out.contains("\"maximum\": 1000"),
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&ok(&smcp(&url, &["tool", "add", "--json"]))).unwrap();
    assert_eq!(v["inputSchema"]["required"], serde_json::json!(["a", "b"]));

    let out = ok(&smcp(&url, &["templates"]));
    assert!(out.starts_with("URI TEMPLATE"), "{out}");

    let out = ok(&smcp(&url, &["complete", "--prompt", "greet", "name", "A"]));
    assert_eq!(out.lines().collect::<Vec<_>>(), ["Ada", "Alan"]);
    let v: serde_json::Value = serde_json::from_str(&ok(&smcp(
        &url,
        &["complete", "--prompt", "greet", "name", "g", "--json"],
    )))
    .unwrap();
    assert_eq!(v["completion"]["values"], serde_json::json!(["Grace"]));
    // A reference is required.
    assert_eq!(
        smcp(&url, &["complete", "name", "A"]).status.code(),
        Some(2)
    );
}

#[test]
fn log_level_prints_the_servers_log_lines_on_stderr() {
    let url = start_smcpd();
    let o = smcp(
        &url,
        &[
            "call",
            "count",
            "--arg",
            "to=2",
            "--arg",
            "delay_ms=0",
            "--log-level",
            "debug",
        ],
    );
    assert_eq!(ok(&o).trim(), "counted to 2");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(r#"server debug count: {"step":1}"#), "{err}");
    assert!(err.contains(r#"server debug count: {"step":2}"#), "{err}");
    // Without it the server sends none.
    let o = smcp(
        &url,
        &["call", "count", "--arg", "to=2", "--arg", "delay_ms=0"],
    );
    ok(&o);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("server debug"));
    // An unknown level is a usage error.
    let o = smcp(&url, &["call", "count", "--log-level", "loud"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn bare_listen_follows_every_list_the_server_offers() {
    use std::io::BufRead as _;
    let url = start_smcpd();
    let mut child = Command::new(env!("CARGO_BIN_EXE_smcp"))
        .args(["--url", &url, "listen"])
        .env_remove("SMCP_URL")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    // smcpd announces tools.listChanged (and neither prompts nor resources listChanged).
    assert_eq!(first, r#"subscribed: {"toolsListChanged":true}"#);
    ok(&smcp(&url, &["call", "toggle_extra"]));
    assert_eq!(lines.next().unwrap().unwrap(), "tools list changed");
    ok(&smcp(&url, &["call", "toggle_extra"]));
    let _ = child.kill();
    let _ = child.wait();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(err.contains("following changes of: tools"), "{err}");
}

#[test]
fn completions_and_the_man_page() {
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_smcp"))
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let bash = run(&["completions", "bash"]);
    assert!(
        bash.contains("_smcp()") && bash.contains("complete -F _smcp"),
        "{bash}"
    );
    for sub in ["templates", "complete", "completions", "tool", "listen"] {
        assert!(bash.contains(sub), "{sub} in the bash completion");
    }
    assert!(run(&["completions", "zsh"]).starts_with("#compdef smcp"));
    assert!(run(&["completions", "fish"]).contains("complete -c smcp"));
    let man = run(&["man"]);
    assert!(man.contains(".TH smcp 1"), "{man}");
    assert!(
        man.contains("completions") && man.contains("Exit codes"),
        "{man}"
    );
    let help = run(&["--help"]);
    assert!(
        help.contains("Examples:") && help.contains("Exit codes:"),
        "{help}"
    );
    assert!(help.contains("130  cancelled"), "{help}");
    assert!(
        run(&["-h"]).contains("smcp --help"),
        "short help points to the long one"
    );
}

/// The Python SDK `mcp` 1.30.0 server (`tests/interop/server_2025.py`, stateful 2025-11-25)
/// driven by the CLI: every command finds the older revision by itself. Honours
/// `SMCP_PYTHON_INTEROP=skip` like the client's interop tests.
#[test]
fn every_command_works_against_a_2025_11_25_server() {
    let Some(py) = smcp_test_support::python(Some("1.30.0")) else {
        return;
    };
    let root = root();
    let port = smcp_test_support::free_port();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _server = Kill(
        Command::new(py)
            .arg(root.join("tests/interop/server_2025.py"))
            .arg(port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let started = (0..150).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(started, "the Python server did not start");
    let url = format!("http://127.0.0.1:{port}/mcp");

    let out = ok(&smcp(&url, &["discover"]));
    assert!(
        out.contains("protocol:  2025-11-25 (stateful session"),
        "{out}"
    );
    assert!(out.contains("py-legacy-interop"), "{out}");
    let out = ok(&smcp(&url, &["tools"]));
    assert!(
        out.contains("slow_echo") && out.contains("confirm"),
        "{out}"
    );
    let out = ok(&smcp(
        &url,
        &["call", "slow_echo", "--arg", "text=hi there"],
    ));
    assert!(out.contains("hi there"), "{out}");
    let out = ok(&smcp(&url, &["resources"]));
    assert!(out.contains("note://greeting"), "{out}");
    let out = ok(&smcp(&url, &["read", "note://greeting"]));
    assert!(out.contains("hello from python"), "{out}");
    let out = ok(&smcp(&url, &["prompts"]));
    assert!(out.contains("greet"), "{out}");
    let out = ok(&smcp(&url, &["prompt", "greet", "--arg", "name=Ada"]));
    assert!(out.contains("Say hello to Ada."), "{out}");
    let out = ok(&smcp(&url, &["complete", "--prompt", "greet", "name", "A"]));
    assert!(out.contains("Ada") && out.contains("Alan"), "{out}");
    let out = ok(&smcp(
        &url,
        &["--protocol-version", "2025-06-18", "--json", "discover"],
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["protocolVersion"], "2025-06-18");
    // Pinned to 2026-07-28: no fallback, and the error says so.
    let o = smcp(&url, &["--protocol-version", "2026-07-28", "tools"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("pinned to 2026-07-28"), "{err}");
}
