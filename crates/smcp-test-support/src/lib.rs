//! Helpers shared by the integration tests of the smcp workspace (a dev-dependency only,
//! never published).
//!
//! - [`root`]: the workspace root, where `scripts/` and `tests/interop/` are.
//! - [`free_port`]: a loopback port nobody listens on.
//! - [`require_service`] and [`provide`]: the one rule for tests on a real service (Python,
//!   Redis, SeaweedFS, nginx, the OpenID provider), see below.
//! - [`python`]: the Python SDK's interpreter from `scripts/python-interop-env`.
//! - [`redis`]: a real `redis-server` on a free port (`SMCP_REDIS=skip` skips its tests).
//! - [`jsonrpc`]: 2026-07-28 request bodies with the `_meta` every request carries.
//!
//! # Tests on real services
//!
//! A test that needs a real service asks [`require_service`] first. It is skipped only when the
//! service's variable says so (`SMCP_REDIS=skip` and the like; the list is in the README,
//! section Testing). Otherwise the service is installed or started through its script
//! ([`provide`]), and when that cannot be done the test **fails**, with `CI=true` as on a
//! workstation: a missing service never turns into a green test.
//!
//! Failing here means panicking, as a test does: these helpers are test code.

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

pub mod redis;

/// The workspace root (the directory of the top-level `Cargo.toml`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A free loopback port (the probing listener is closed before the caller binds it).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free loopback port: {e}"))
}

/// Whether a test on the real `service` runs: `false` when `var` is `skip` (said on stderr),
/// `true` otherwise. `var` is the service's documented `SMCP_*` variable.
///
/// When this returns `true` the test must not skip later: getting the service goes through
/// [`provide`] (or asserts of its own), which fails the test when it cannot be had.
pub fn require_service(service: &str, var: &str) -> bool {
    let skip = std::env::var(var).is_ok_and(|v| v == "skip");
    if skip {
        #[allow(clippy::print_stderr)] // the one trace a skipped test leaves
        {
            eprintln!("{service} tests skipped: {var}=skip");
        }
    }
    !skip
}

/// Runs `cmd`, the script that installs or locates `service` (its stderr goes to the test's),
/// and returns its trimmed stdout (typically a path). Panics, naming `var`, when the script
/// cannot run or fails: a test whose service cannot be had fails unless `var=skip`.
pub fn provide(service: &str, var: &str, cmd: &mut Command) -> String {
    let ci = if std::env::var("CI").is_ok_and(|v| v == "true") {
        " (CI=true)"
    } else {
        ""
    };
    let out = cmd.stderr(Stdio::inherit()).output().unwrap_or_else(|e| {
        panic!("{service}: cannot run {cmd:?}: {e}{ci}; {var}=skip skips these tests")
    });
    assert!(
        out.status.success(),
        "{service}: {cmd:?} failed ({}){ci}; {var}=skip skips these tests",
        out.status
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The interpreter of the Python SDK venv made by `scripts/python-interop-env [VERSION]`
/// (`None`: the default mcp version, 2.3.0; `Some("1.30.0")`: the 2025-11-25 one), or `None`
/// when `SMCP_PYTHON_INTEROP=skip`. Installed once per version and process.
pub fn python(version: Option<&str>) -> Option<PathBuf> {
    static FOUND: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);
    if !require_service("Python SDK interop", "SMCP_PYTHON_INTEROP") {
        return None;
    }
    let key = version.unwrap_or_default().to_owned();
    let mut found = FOUND
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(py) = found.get_or_insert_with(HashMap::new).get(&key) {
        return Some(py.clone());
    }
    let mut cmd = Command::new(root().join("scripts/python-interop-env"));
    cmd.args(version);
    let py = PathBuf::from(provide(
        "Python SDK interop",
        "SMCP_PYTHON_INTEROP",
        &mut cmd,
    ));
    found
        .get_or_insert_with(HashMap::new)
        .insert(key, py.clone());
    Some(py)
}

/// JSON-RPC request bodies of the 2026-07-28 revision.
pub mod jsonrpc {
    use serde_json::{Value, json};

    /// The `_meta` every 2026-07-28 request carries: protocol version, client info
    /// (`test` 1) and no client capabilities.
    pub fn meta() -> Value {
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        })
    }

    /// A well-formed request: `params` gets [`meta`] as its `_meta` unless it has one.
    pub fn request(id: Value, method: &str, mut params: Value) -> Value {
        if params.get("_meta").is_none() {
            params["_meta"] = meta();
        }
        let mut body = json!({"jsonrpc": "2.0", "id": null, "method": method, "params": params});
        body["id"] = id;
        body
    }
}
