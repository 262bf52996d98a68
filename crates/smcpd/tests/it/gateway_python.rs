//! `smcpd gateway` in front of servers no one here wrote: the Python SDK's `mcp` 1.30.0
//! server (`tests/interop/server_2025.py`, 2025-11-25) over stdio, over a stateful HTTP
//! session and over 2024-11-05 HTTP+SSE, and its `mcp` 2.3.0 server (`tests/interop/server.py`,
//! 2026-07-28) over stdio; driven by smcp-client at 2026-07-28. And the Python SDK's 2.3.0
//! client (`tests/interop/client.py`) driving the gateway in front of smcpd.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use smcp_client::Client;
use smcp_client::proto::client::elicitation::ElicitValue;
use smcp_test_support::root;

use crate::gateway_support::{FormAnswer, config, serves};
use crate::support::Smcpd;

/// A Python server on a free loopback port, killed when dropped.
struct PyHttp {
    child: tokio::process::Child,
    url: String,
}

impl PyHttp {
    /// `server_2025.py PORT` (a stateful session at `/mcp`), or with `sse` the 2024-11-05
    /// HTTP+SSE transport (at `/sse`).
    async fn start(py: &PathBuf, sse: bool) -> Self {
        let port = smcp_test_support::free_port();
        let mut command = tokio::process::Command::new(py);
        command.arg(root().join("tests/interop/server_2025.py"));
        if sse {
            command.arg("--sse");
        }
        let child = command
            .arg(port.to_string())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the Python server did not start"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let path = if sse { "sse" } else { "mcp" };
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/{path}"),
        }
    }
}

#[tokio::test]
async fn the_python_sdk_servers_of_both_eras_behind_one_gateway() {
    let (Some(py_2025), Some(py_2026)) = (
        smcp_test_support::python(Some("1.30.0")),
        smcp_test_support::python(None),
    ) else {
        return;
    };
    let http = PyHttp::start(&py_2025, false).await;
    let sse = PyHttp::start(&py_2025, true).await;
    let (_dir, config) = config(&format!(
        r#"
[[upstream]]
name = "py25"
command = ["{py25}", "{{root}}/tests/interop/server_2025.py", "--stdio"]

[[upstream]]
name = "py25http"
url = "{url}"
resources.deny = ["note://greeting"]

[[upstream]]
name = "pysse"
url = "{sse}"
era = "2024-11-05"
resources.deny = ["note://greeting"]

[[upstream]]
name = "py26"
command = ["{py26}", "{{root}}/tests/interop/server.py", "--stdio"]
"#,
        py25 = py_2025.display(),
        py26 = py_2026.display(),
        url = http.url,
        sse = sse.url,
    ));
    let gateway = Smcpd::start_gateway(&config, &[], "smcpd=info,smcp_gateway=info");
    let asked = FormAnswer::new("proceed", ElicitValue::Bool(true));
    let client = Client::builder(format!("http://{}/mcp", gateway.addr))
        .input_handler(asked.clone())
        .build()
        .unwrap();

    serves(
        &client,
        &[
            "py25_slow_echo",
            "py25_confirm",
            "py25http_slow_echo",
            "py25http_confirm",
            "pysse_slow_echo",
            "pysse_confirm",
            "py26_slow_echo",
            "py26_confirm",
        ],
    )
    .await;

    // Progress from each, through the gateway.
    for tool in [
        "py25_slow_echo",
        "py25http_slow_echo",
        "pysse_slow_echo",
        "py26_slow_echo",
    ] {
        let seen = Arc::new(Mutex::new(0u32));
        let count = Arc::clone(&seen);
        let result = client
            .tool_call(tool)
            .arguments(json!({"text": "hi"}))
            .on_progress(move |_| *count.lock().unwrap() += 1)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        assert_eq!(result.text_content(), "hi", "{tool}");
        assert_eq!(
            *seen.lock().unwrap(),
            3,
            "{tool}: three progress notifications"
        );
    }

    // The 1.30 server asks with elicitation/create in the middle of the call (over stdio
    // and over its session's stream); the 2.3 server answers InputRequiredResult. The
    // client answers each as an InputRequiredResult of the gateway's.
    for tool in ["py25_confirm", "py25http_confirm", "pysse_confirm"] {
        let result = client.call_tool(tool, json!({})).await.unwrap();
        assert_eq!(
            result.text_content(),
            "action=accept content={'proceed': True}",
            "{tool}"
        );
    }
    let result = client.call_tool("py26_confirm", json!({})).await.unwrap();
    assert!(result.text_content().contains("proceed"), "{result:?}");
    assert_eq!(
        asked.messages().len(),
        4,
        "one question each: {:?}",
        asked.messages()
    );

    // Its prompt, resource and completion, through the gateway.
    let prompt = client
        .get_prompt(
            "py25_greet",
            BTreeMap::from([("name".to_owned(), "Ada".to_owned())]),
        )
        .await
        .unwrap();
    assert!(
        format!("{prompt:?}").contains("Say hello to Ada."),
        "{prompt:?}"
    );
    let note = client.read_resource("note://greeting").await.unwrap();
    assert!(
        format!("{note:?}").contains("hello from python"),
        "{note:?}"
    );
    let completed = client
        .complete(
            smcp_client::proto::server::utilities::completion::CompletionReference::Prompt(
                smcp_client::proto::server::utilities::completion::PromptReference {
                    name: "py25http_greet".to_owned(),
                    title: None,
                },
            ),
            "name",
            "A",
            BTreeMap::new(),
        )
        .await
        .unwrap();
    assert_eq!(completed.completion.values, ["Ada", "Alan"]);

    let status = gateway.terminate();
    assert!(status.success(), "{status}");
    drop(http.child);
    drop(sse.child);
}

#[tokio::test]
async fn the_python_sdk_2_3_client_drives_the_gateway() {
    let Some(py) = smcp_test_support::python(None) else {
        return;
    };
    let (_dir, config) = config(
        "[[upstream]]\nname = \"smcpd\"\nprefix = \"\"\ncommand = [\"{smcpd}\", \"--stdio\"]\n",
    );
    let gateway = Smcpd::start_gateway(&config, &[], "smcpd=info,smcp_gateway=info");
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(&py)
            .arg(root().join("tests/interop/client.py"))
            .arg(format!("http://{}/mcp", gateway.addr))
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the Python client finished")
    .unwrap();
    crate::support::check_python_client_report(&out);
    drop(gateway);
}
