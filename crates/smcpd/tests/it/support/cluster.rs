//! The cluster the multi-instance tests bring up (`scripts/cluster`: Redis, three smcpd, nginx
//! on free loopback ports; SeaweedFS when the file store is S3), down on drop, and the requests
//! they send through it. `SMCP_CLUSTER=skip` skips every test that needs one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

/// Returns from the test when the cluster's services may be skipped and are missing.
macro_rules! need_cluster {
    () => {
        if !smcp_test_support::require_service("cluster (Redis, nginx)", "SMCP_CLUSTER") {
            return;
        }
    };
}

/// One cluster at a time: each is seven processes on a machine that may have two cores, and
/// the tests time deliveries.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// One cluster, down on drop.
pub(crate) struct Cluster {
    _turn: std::sync::MutexGuard<'static, ()>,
    pub(crate) dir: PathBuf,
    /// `SMCP_CLUSTER_FILES`: `local` (a shared directory) or `s3` (SeaweedFS).
    pub(crate) files: &'static str,
    /// The load balancer's MCP URL.
    pub(crate) url: String,
    /// Extra environment for `scripts/cluster`.
    pub(crate) env: &'static [(&'static str, &'static str)],
}

impl Cluster {
    /// A cluster whose file store is a directory shared by the instances (starts faster).
    pub(crate) fn up() -> Self {
        Self::up_with("local")
    }

    pub(crate) fn up_with(files: &'static str) -> Self {
        Self::up_env(files, &[])
    }

    pub(crate) fn up_env(
        files: &'static str,
        env: &'static [(&'static str, &'static str)],
    ) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "smcp-cluster-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let turn = TURN
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut cluster = Self {
            _turn: turn,
            dir,
            files,
            url: String::new(),
            env,
        };
        let out = cluster.script(&["up", "3"]);
        cluster.url = out.trim().to_owned();
        assert!(cluster.url.starts_with("http://127.0.0.1:"), "{out}");
        cluster
    }

    pub(crate) fn script(&self, args: &[&str]) -> String {
        let out = Command::new(smcp_test_support::root().join("scripts/cluster"))
            .args(args)
            .env("SMCP_CLUSTER_DIR", &self.dir)
            .env("SMCP_CLUSTER_BIN", env!("CARGO_BIN_EXE_smcpd"))
            .env("SMCP_CLUSTER_NO_BUILD", "1")
            .env("SMCP_CLUSTER_FILES", self.files)
            .envs(self.env.iter().copied())
            .stderr(Stdio::inherit())
            .output()
            .expect("run scripts/cluster");
        assert!(out.status.success(), "scripts/cluster {args:?} failed");
        String::from_utf8(out.stdout).unwrap()
    }

    /// `scripts/cluster redis-restart SECS` on a thread of its own (Redis away for `secs`
    /// seconds while the test goes on), with this cluster's environment.
    pub(crate) fn restart_redis_in_background(
        &self,
        secs: &str,
    ) -> std::thread::JoinHandle<std::process::ExitStatus> {
        let mut command = Command::new(smcp_test_support::root().join("scripts/cluster"));
        command
            .args(["redis-restart", secs])
            .env("SMCP_CLUSTER_DIR", &self.dir)
            .env("SMCP_CLUSTER_FILES", self.files)
            .envs(self.env.iter().copied());
        std::thread::spawn(move || command.status().unwrap())
    }

    /// Instance `i`'s own MCP URL (1-based), bypassing nginx.
    pub(crate) fn instance(&self, i: usize) -> String {
        let port = std::fs::read_to_string(self.dir.join(format!("smcpd-{i}.port"))).unwrap();
        format!("http://127.0.0.1:{}/mcp", port.trim())
    }

    pub(crate) fn log(&self, i: usize) -> String {
        std::fs::read_to_string(self.dir.join(format!("smcpd-{i}.log"))).unwrap_or_default()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(smcp_test_support::root().join("scripts/cluster"))
            .arg("down")
            .env("SMCP_CLUSTER_DIR", &self.dir)
            .stderr(Stdio::null())
            .status();
    }
}

/// A 2026-07-28 request body with the `_meta` every request carries.
pub(crate) fn request(id: u64, method: &str, mut params: Value, caps: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "cluster-test", "version": "1"},
    });
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps;
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// POSTs `body` to `url` and returns the JSON-RPC response (from JSON or the last SSE event).
pub(crate) async fn post(url: &str, body: &Value) -> Value {
    let text = crate::support::post_rpc(&reqwest::Client::new(), url, body)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let json = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .next_back()
        .unwrap_or(&text);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {text}"))
}
