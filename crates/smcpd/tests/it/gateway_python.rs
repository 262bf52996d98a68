//! `smcpd gateway` in front of servers no one here wrote: the Python SDK's `mcp` 1.30.0
//! server (`tests/interop/server_2025.py`, 2025-11-25) over stdio and over a stateful HTTP
//! session, and its `mcp` 2.3.0 server (`tests/interop/server.py`, 2026-07-28) over stdio;
//! driven by smcp-client at 2026-07-28.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult, ElicitValue};
use smcp_client::{BoxFuture, Client, InputHandler, InputHandlerError, InputKinds};
use smcp_test_support::root;

use crate::support::Smcpd;

/// Accepts every form with `proceed: true`, recording the messages.
#[derive(Clone, Default)]
struct Proceed(Arc<Mutex<Vec<String>>>);

impl InputHandler for Proceed {
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
            self.0.lock().unwrap().push(form.message);
            Ok(ElicitResult::accept(BTreeMap::from([(
                "proceed".to_owned(),
                ElicitValue::Bool(true),
            )])))
        })
    }
}

/// A Python server on a free loopback port, killed when dropped.
struct PyHttp {
    child: tokio::process::Child,
    url: String,
}

impl PyHttp {
    async fn start(py: &PathBuf) -> Self {
        let port = smcp_test_support::free_port();
        let child = tokio::process::Command::new(py)
            .arg(root().join("tests/interop/server_2025.py"))
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
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
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
    let http = PyHttp::start(&py_2025).await;
    let dir = std::env::temp_dir().join(format!("smcpd-gateway-py-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("gateway.toml");
    let interop = root().join("tests/interop");
    std::fs::write(
        &config,
        format!(
            r#"
[[upstream]]
name = "py25"
command = ["{py25}", "{interop}/server_2025.py", "--stdio"]

[[upstream]]
name = "py25http"
url = "{url}"
resources.deny = ["note://greeting"]

[[upstream]]
name = "py26"
command = ["{py26}", "{interop}/server.py", "--stdio"]
"#,
            py25 = py_2025.display(),
            py26 = py_2026.display(),
            interop = interop.display(),
            url = http.url,
        ),
    )
    .unwrap();
    let gateway = Smcpd::start_gateway(&config, &[], "smcpd=info,smcp_gateway=info");
    let asked = Proceed::default();
    let client = Client::builder(format!("http://{}/mcp", gateway.addr))
        .input_handler(asked.clone())
        .build()
        .unwrap();

    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    for expected in [
        "py25_slow_echo",
        "py25_confirm",
        "py25http_slow_echo",
        "py25http_confirm",
        "py26_slow_echo",
        "py26_confirm",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }

    // Progress from each, through the gateway.
    for tool in ["py25_slow_echo", "py25http_slow_echo", "py26_slow_echo"] {
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
    for tool in ["py25_confirm", "py25http_confirm"] {
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
        asked.0.lock().unwrap().len(),
        3,
        "one question each: {:?}",
        asked.0.lock().unwrap()
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
    let _ = std::fs::remove_dir_all(&dir);
}
