//! What the gateway's real-binary tests share: a configuration file in a throwaway directory,
//! an input handler that answers forms with one field, the tool names a gateway serves, the
//! processes it started.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult, ElicitValue};
use smcp_client::{BoxFuture, Client, InputHandler, InputHandlerError, InputKinds};

/// A throwaway directory, removed when dropped.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `body` written as `gateway.toml` in a fresh directory; `{smcpd}` becomes the smcpd binary
/// and `{root}` the workspace root.
pub(crate) fn config(body: &str) -> (TempDir, PathBuf) {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("smcpd-gateway-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("gateway.toml");
    let body = body
        .replace("{smcpd}", env!("CARGO_BIN_EXE_smcpd"))
        .replace("{root}", &smcp_test_support::root().display().to_string());
    std::fs::write(&path, body).unwrap();
    (TempDir(dir), path)
}

/// Accepts every form with `key: value`, recording the messages it was shown.
#[derive(Clone)]
pub(crate) struct FormAnswer {
    key: &'static str,
    value: ElicitValue,
    pub(crate) asked: Arc<Mutex<Vec<String>>>,
}

impl FormAnswer {
    pub(crate) fn new(key: &'static str, value: ElicitValue) -> Self {
        Self {
            key,
            value,
            asked: Arc::default(),
        }
    }

    /// The messages asked so far.
    pub(crate) fn messages(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl InputHandler for FormAnswer {
    fn kinds(&self) -> InputKinds {
        InputKinds {
            elicitation_form: true,
            ..InputKinds::default()
        }
    }

    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, InputHandlerError>> {
        Box::pin(async move {
            let ElicitRequestParams::Form(form) = params else {
                return Err(InputHandlerError::new("a form was expected"));
            };
            self.asked.lock().unwrap().push(form.message);
            Ok(ElicitResult::accept(BTreeMap::from([(
                self.key.to_owned(),
                self.value.clone(),
            )])))
        })
    }
}

/// The names of the tools `client` is served, each of `expected` among them.
pub(crate) async fn serves(client: &Client, expected: &[&str]) -> Vec<String> {
    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    for name in expected {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    names
}

/// The processes `pid` started (every thread's children).
pub(crate) fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return found;
    };
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            found.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    found
}

/// The status and JSON-RPC answer of a response: its JSON body, or the last event of its
/// SSE stream.
pub(crate) async fn rpc_answer(response: reqwest::Response) -> (u16, serde_json::Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or_else(|_| {
        let data = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .next_back()
            .unwrap_or_else(|| panic!("neither JSON nor SSE: {text}"));
        serde_json::from_str(data.trim()).unwrap()
    });
    (status, body)
}
