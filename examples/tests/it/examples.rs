//! Every example program, run: the server examples on port 0 driven by `smcp-client` (or raw
//! HTTP where the point is HTTP), the client example against the elicitation example, and
//! the self-contained programs to completion. Each asserts what the program is there to show.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use smcp_client::CancellationToken;
use smcp_client::prelude::*;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStderr, ChildStdout, Command};

/// Long enough for a debug build on a loaded machine; a passing test takes far less.
const WAIT: Duration = Duration::from_secs(60);

/// A server example running on a free port.
struct Running {
    /// Killed when the test ends.
    _child: Child,
    url: String,
    stderr: Option<Lines<BufReader<ChildStderr>>>,
}

/// Starts a server example with `--listen 127.0.0.1:0` and reads the address it printed.
async fn start(program: &str) -> Running {
    let mut child = Command::new(program)
        .args(["--listen", "127.0.0.1:0"])
        .env("LISTEN", "127.0.0.1:0") // the README's quick start reads its address from LISTEN
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(WAIT, stdout.next_line())
        .await
        .expect("the example printed its address in time")
        .unwrap()
        .expect("the example printed a line");
    let url = line
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    let stderr = Some(BufReader::new(child.stderr.take().unwrap()).lines());
    Running {
        _child: child,
        url,
        stderr,
    }
}

impl Running {
    /// Waits for a line of the server's log containing `needle`.
    async fn log_line(&mut self, needle: &str) -> String {
        let lines = self.stderr.as_mut().unwrap();
        tokio::time::timeout(WAIT, async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if line.contains(needle) {
                    return line;
                }
            }
            panic!("the server's log ended without {needle:?}");
        })
        .await
        .unwrap_or_else(|_| panic!("no log line with {needle:?}"))
    }
}

/// Runs a program to completion with `args` and `stdin`; returns its stdout.
async fn run(program: &str, args: &[&str], stdin: &str) -> String {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).await.unwrap();
    drop(input);
    let mut stdout: ChildStdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (mut out, mut err) = (String::new(), String::new());
    let status = tokio::time::timeout(WAIT, async {
        let (a, b) = tokio::join!(
            stdout.read_to_string(&mut out),
            stderr.read_to_string(&mut err)
        );
        a.unwrap();
        b.unwrap();
        child.wait().await.unwrap()
    })
    .await
    .expect("the program finished in time");
    assert!(
        status.success(),
        "{program} failed: {status}\nstdout:\n{out}\nstderr:\n{err}"
    );
    out
}

#[tokio::test]
async fn hello_tool_over_http_and_stdio() {
    let server = start(env!("CARGO_BIN_EXE_hello_tool")).await;
    let client = Client::builder(&server.url).build().unwrap();
    let tools = client.list_tools().await.unwrap();
    let greet = tools.iter().find(|t| t.name == "greet").unwrap();
    assert_eq!(
        serde_json::to_value(&greet.input_schema).unwrap()["required"],
        json!(["name"])
    );
    let result = client
        .call_tool("greet", json!({"name": "Ada"}))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "Hello, Ada!");
    // The schema is enforced before the handler runs: a model-readable tool error.
    let missing = client.call_tool("greet", json!({})).await.unwrap();
    assert!(missing.is_error(), "{missing:?}");
    assert!(missing.text_content().contains("name"), "{missing:?}");

    let stdio = Client::stdio(StdioCommand::new(env!("CARGO_BIN_EXE_hello_tool")).arg("--stdio"))
        .build()
        .unwrap();
    let result = stdio
        .call_tool("greet", json!({"name": "Grace"}))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "Hello, Grace!");
    stdio.close().await;
}

#[tokio::test]
async fn the_readme_quick_start_serves_its_tool() {
    let server = start(env!("CARGO_BIN_EXE_quickstart")).await;
    let client = Client::builder(&server.url).build().unwrap();
    let result = client
        .call_tool("greet", json!({"name": "Ada"}))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "Hello, Ada!");
    let missing = client.call_tool("greet", json!({})).await.unwrap();
    assert!(missing.is_error(), "{missing:?}");
}

/// What a client of `weather` reads `structuredContent` into: its own type, no schemars.
#[derive(Debug, serde::Deserialize)]
struct Forecast {
    city: String,
    days: u8,
    celsius: f64,
    sky: String,
}

/// The answer to `book`'s form.
#[derive(Debug, serde::Serialize)]
struct Booking {
    seats: u8,
    window: Option<bool>,
    confirm: bool,
}

#[tokio::test]
async fn typed_tool_schemas_structured_content_and_a_typed_question() {
    let server = start(env!("CARGO_BIN_EXE_typed_tool")).await;
    let client = Client::builder(&server.url).build().unwrap();

    // The schemas in tools/list are derived from the Rust types, doc comments included.
    let tools = client.list_tools().await.unwrap();
    let weather = tools.iter().find(|t| t.name == "weather").unwrap();
    let input = serde_json::to_value(&weather.input_schema).unwrap();
    assert_eq!(input["type"], "object");
    assert_eq!(input["required"], json!(["city"]), "{input:#}");
    assert_eq!(input["properties"]["city"]["type"], "string");
    assert_eq!(
        input["properties"]["city"]["description"],
        "City name, e.g. \"Lisbon\"."
    );
    assert_eq!(input["properties"]["days"]["type"], "integer");
    assert_eq!(input["properties"]["days"]["maximum"], 7);
    assert_eq!(input["properties"]["days"]["default"], 0);
    let output = serde_json::to_value(weather.output_schema.as_ref().unwrap()).unwrap();
    assert_eq!(
        output["required"],
        json!(["city", "days", "celsius", "sky"]),
        "{output:#}"
    );
    assert_eq!(output["properties"]["celsius"]["type"], "number");
    assert_eq!(
        output["properties"]["sky"]["enum"],
        json!(["clear", "cloudy", "rain"])
    );
    let book = tools.iter().find(|t| t.name == "book").unwrap();
    assert!(book.output_schema.is_none(), "{book:?}");

    // structuredContent, read back into the client's own type; the text block carries the
    // same JSON for clients that read only `content`.
    let result = client
        .call_tool("weather", json!({"city": "Lisbon", "days": 2}))
        .await
        .unwrap();
    assert!(!result.is_error(), "{result:?}");
    let forecast: Forecast = result.structured_as().unwrap().unwrap();
    assert_eq!((forecast.city.as_str(), forecast.days), ("Lisbon", 2));
    assert!(["clear", "cloudy", "rain"].contains(&forecast.sky.as_str()));
    assert!(forecast.celsius.is_finite());
    let text: Value = serde_json::from_str(&result.text_content()).unwrap();
    assert_eq!(Some(text), result.structured_content);
    // `days` defaults to 0 when absent.
    let today = client
        .call_tool("weather", json!({"city": "Lisbon"}))
        .await
        .unwrap();
    assert_eq!(today.structured_as::<Forecast>().unwrap().unwrap().days, 0);

    // Arguments that do not fit the derived schema: a tool error the model can read, naming
    // the argument, and the handler never ran.
    for (arguments, field) in [
        (json!({"city": "Lisbon", "days": 9}), "/days"),
        (json!({"city": 3}), "/city"),
        (json!({"days": 1}), "city"),
    ] {
        let refused = client.call_tool("weather", arguments).await.unwrap();
        assert!(refused.is_error(), "{refused:?}");
        assert!(refused.structured_content.is_none(), "{refused:?}");
        let message = refused.text_content();
        assert!(message.contains(field), "{field}: {message}");
    }

    // A result that breaks the outputSchema never leaves the server: -32603 naming the
    // failing member (the client would refuse it too, see `Error::output_schema_path`).
    let mean = client
        .call_tool("mean", json!({"values": [1.0, 2.0, 6.0]}))
        .await
        .unwrap();
    assert_eq!(mean.structured_content, Some(json!({"mean": 3.0})));
    let err = client
        .call_tool("mean", json!({"values": []}))
        .await
        .unwrap_err();
    assert_eq!(err.jsonrpc_code(), Some(-32603), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("outputSchema") && message.contains("/mean"),
        "{message}"
    );

    // The typed prompt: arguments declared from the struct, rendered from it.
    let prompts = client.list_prompts().await.unwrap();
    let packing = prompts.iter().find(|p| p.name == "packing_list").unwrap();
    let declared: Vec<(String, Option<bool>)> = packing
        .arguments
        .iter()
        .flatten()
        .map(|a| (a.name.clone(), a.required))
        .collect();
    assert_eq!(
        declared,
        [
            ("city".to_owned(), Some(true)),
            ("length".to_owned(), Some(false))
        ]
    );
    let args = BTreeMap::from([
        ("city".to_owned(), "Oslo".to_owned()),
        ("length".to_owned(), "a weekend".to_owned()),
    ]);
    let text = client
        .get_prompt("packing_list", args)
        .await
        .unwrap()
        .text();
    assert!(
        text.starts_with("I am going to Oslo for a weekend; "),
        "{text}"
    );
    assert!(text.ends_with("What should I pack?"), "{text}");
    let args = BTreeMap::from([("city".to_owned(), "Oslo".to_owned())]);
    let text = client
        .get_prompt("packing_list", args)
        .await
        .unwrap()
        .text();
    assert!(
        text.starts_with("I am going to Oslo for a few days; "),
        "{text}"
    );
    let err = client
        .get_prompt("packing_list", BTreeMap::new())
        .await
        .unwrap_err();
    assert_eq!(err.jsonrpc_code(), Some(-32602), "{err}");

    // The typed question: the form is derived from `Booking`. The first answer (12 seats)
    // does not fit it and is asked again; the second is handed to the tool as a struct.
    let forms = Arc::new(std::sync::Mutex::new(Vec::new()));
    let asked = forms.clone();
    let answers = Arc::new(AtomicUsize::new(0));
    let handler = FnInputHandler::new().on_elicit(move |params| {
        let asked = asked.clone();
        let round = answers.fetch_add(1, Ordering::SeqCst);
        async move {
            let ElicitRequestParams::Form(form) = params else {
                panic!("a form, not {params:?}");
            };
            asked.lock().unwrap().push((
                form.message,
                serde_json::to_value(&form.requested_schema).unwrap(),
            ));
            let seats = if round == 0 { 12 } else { 2 };
            Ok(ElicitResult::accept_with(&Booking {
                seats,
                window: Some(true),
                confirm: true,
            })?)
        }
    });
    let booking = Client::builder(&server.url)
        .input_handler(handler)
        .build()
        .unwrap();
    let result = booking
        .call_tool("book", json!({"city": "Oslo"}))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "booked 2 seat(s) to Oslo, window");
    let forms = forms.lock().unwrap().clone();
    assert_eq!(forms.len(), 2, "{forms:?}");
    let (message, schema) = &forms[0];
    assert_eq!(message, "Book a trip to Oslo?");
    assert_eq!(
        schema["required"],
        json!(["seats", "confirm"]),
        "{schema:#}"
    );
    assert_eq!(schema["properties"]["seats"]["type"], "integer");
    assert_eq!(schema["properties"]["seats"]["minimum"], 1);
    assert_eq!(schema["properties"]["seats"]["maximum"], 9);
    assert_eq!(schema["properties"]["window"]["type"], "boolean");
    assert_eq!(
        schema["properties"]["confirm"]["description"],
        "Book it now?"
    );

    let no = Client::builder(&server.url)
        .input_handler(declining())
        .build()
        .unwrap();
    let result = no.call_tool("book", json!({"city": "Oslo"})).await.unwrap();
    assert_eq!(result.text_content(), "nothing booked");
}

#[tokio::test]
async fn progress_is_reported_and_cancellation_reaches_the_handler() {
    let mut server = start(env!("CARGO_BIN_EXE_progress_cancel")).await;
    let client = Client::builder(&server.url).build().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    let result = client
        .tool_call("countdown")
        .arguments(json!({"from": 3, "step_ms": 1}))
        .on_progress(move |p| record.lock().unwrap().push((p.progress, p.message)))
        .send()
        .await
        .unwrap();
    assert_eq!(result.text_content(), "liftoff");
    let seen = seen.lock().unwrap().clone();
    let values: Vec<f64> = seen.iter().map(|(v, _)| *v).collect();
    assert_eq!(values, [1.0, 2.0, 3.0]);
    assert_eq!(seen[0].1.as_deref(), Some("2 left"));

    // Cancel once the first step is reported: the handler sees it and stops.
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let outcome = client
        .tool_call("countdown")
        .arguments(json!({"from": 100, "step_ms": 50}))
        .on_progress(move |_| trigger.cancel())
        .cancellation(cancel)
        .send()
        .await;
    assert!(outcome.unwrap_err().is_cancelled());
    let line = server.log_line("countdown cancelled by the client").await;
    assert!(line.contains("done=1") || line.contains("done=2"), "{line}");
}

/// An input handler that answers every form with `answer`, serialized.
fn answering<T: serde::Serialize + Send + Sync + 'static>(answer: T) -> FnInputHandler {
    let answer = Arc::new(answer);
    FnInputHandler::new().on_elicit(move |params| {
        let answer = answer.clone();
        async move {
            assert!(matches!(params, ElicitRequestParams::Form(_)), "{params:?}");
            Ok(ElicitResult::accept_with(&*answer)?)
        }
    })
}

/// An input handler that declines every form.
fn declining() -> FnInputHandler {
    FnInputHandler::new().on_elicit(|_| async { Ok(ElicitResult::decline()) })
}

async fn read_text(client: &Client, uri: &str) -> String {
    let read = client.read_resource(uri).await.unwrap();
    assert!(
        matches!(read.contents[..], [ResourceContents::Text(_)]),
        "{read:?}"
    );
    read.text()
}

#[tokio::test]
async fn elicitation_asks_then_acts_and_notifies_subscribers() {
    let server = start(env!("CARGO_BIN_EXE_elicitation")).await;
    let declining = Client::builder(&server.url)
        .input_handler(declining())
        .build()
        .unwrap();
    let result = declining.call_tool("retitle", json!({})).await.unwrap();
    assert_eq!(result.text_content(), "title unchanged");
    assert_eq!(read_text(&declining, "notes://title").await, "Untitled");

    let client = Client::builder(&server.url)
        .input_handler(answering(json!({"title": "Plans", "confirm": true})))
        .build()
        .unwrap();
    let mut changes = client.listen(SubscriptionFilter {
        resource_subscriptions: Some(vec!["notes://title".to_owned()]),
        ..SubscriptionFilter::default()
    });
    let ack = tokio::time::timeout(WAIT, changes.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(matches!(ack, SubscriptionEvent::Acknowledged(_)), "{ack:?}");
    let result = client.call_tool("retitle", json!({})).await.unwrap();
    assert_eq!(result.text_content(), "title is now \"Plans\"");
    let event = tokio::time::timeout(WAIT, changes.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        event,
        SubscriptionEvent::ResourceUpdated {
            uri: "notes://title".to_owned()
        }
    );
    assert_eq!(read_text(&client, "notes://title").await, "Plans");

    // Without an input handler the client declares no elicitation capability, and the
    // server cannot ask: a precise error instead of a question nobody can answer.
    let mute = Client::builder(&server.url).build().unwrap();
    let err = mute.call_tool("retitle", json!({})).await.unwrap_err();
    assert_eq!(err.jsonrpc_code(), Some(-32021), "{err}");
}

#[tokio::test]
async fn client_example_answers_on_the_terminal_and_hears_the_change() {
    let server = start(env!("CARGO_BIN_EXE_elicitation")).await;
    // The form's fields in order: confirm, then title.
    let out = run(
        env!("CARGO_BIN_EXE_client"),
        &["--url", &server.url],
        "y\nRoadmap\n",
    )
    .await;
    assert!(out.contains("subscribed to [\"notes://title\"]"), "{out}");
    assert!(
        out.contains("The server asks: What should the new title be?"),
        "{out}"
    );
    assert!(out.contains("retitle: title is now \"Roadmap\""), "{out}");
    assert!(out.contains("notes://title changed: Roadmap"), "{out}");
    assert!(out.contains("tool: retitle"), "{out}");
    // Declining (an empty required field) changes nothing.
    let out = run(env!("CARGO_BIN_EXE_client"), &["--url", &server.url], "\n").await;
    assert!(out.contains("retitle: title unchanged"), "{out}");
}

#[tokio::test]
async fn resources_templates_and_subscriptions() {
    let server = start(env!("CARGO_BIN_EXE_resources")).await;
    let client = Client::builder(&server.url).build().unwrap();
    let uris: Vec<String> = client
        .list_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri)
        .collect();
    assert_eq!(uris, ["notes://readme", "clock://now"]);
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "weather://{city}");
    assert_eq!(
        read_text(&client, "weather://paris").await,
        "paris: 15 °C, clear"
    );
    assert_eq!(
        read_text(&client, "notes://readme").await,
        "Hello from a resource."
    );

    let mut clock = client.listen(SubscriptionFilter {
        resource_subscriptions: Some(vec!["clock://now".to_owned()]),
        ..SubscriptionFilter::default()
    });
    let mut lists = client.listen(SubscriptionFilter {
        resources_list_changed: Some(true),
        ..SubscriptionFilter::default()
    });
    for stream in [&mut clock, &mut lists] {
        let ack = tokio::time::timeout(WAIT, stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(matches!(ack, SubscriptionEvent::Acknowledged(_)), "{ack:?}");
    }
    let tick = tokio::time::timeout(WAIT, clock.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        tick,
        SubscriptionEvent::ResourceUpdated {
            uri: "clock://now".to_owned()
        }
    );

    let result = client
        .call_tool("pin_city", json!({"city": "oslo"}))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "pinned://oslo added");
    let changed = tokio::time::timeout(WAIT, lists.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(changed, SubscriptionEvent::ResourcesListChanged);
    assert_eq!(read_text(&client, "pinned://oslo").await, "oslo is pinned");
}

#[tokio::test]
async fn prompts_and_completion() {
    let server = start(env!("CARGO_BIN_EXE_prompts")).await;
    let client = Client::builder(&server.url).build().unwrap();
    let prompts = client.list_prompts().await.unwrap();
    assert_eq!(prompts[0].name, "review");
    let args = BTreeMap::from([("language".to_owned(), "rust".to_owned())]);
    let prompt = client.get_prompt("review", args).await.unwrap();
    assert_eq!(prompt.messages.len(), 1, "{prompt:?}");
    assert_eq!(
        prompt.text(),
        "Review the following rust code. Look at correctness first."
    );
    // A required argument missing: refused before the handler runs.
    let err = client
        .get_prompt("review", BTreeMap::new())
        .await
        .unwrap_err();
    assert_eq!(err.jsonrpc_code(), Some(-32602), "{err}");

    let review = serde_json::from_value(json!({"type": "ref/prompt", "name": "review"})).unwrap();
    let done = client
        .complete(review, "language", "r", BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(done.completion.values, ["ruby", "rust"]);
}

#[tokio::test]
async fn axum_app_with_layers_and_a_principal() {
    let server = start(env!("CARGO_BIN_EXE_axum_mount")).await;
    let base = server.url.trim_end_matches("/mcp");
    let health = reqwest::get(format!("{base}/health")).await.unwrap();
    assert_eq!(health.headers()["x-served-by"], "smcp-examples");
    assert_eq!(health.text().await.unwrap(), "ok");

    let anonymous = Client::builder(&server.url).build().unwrap();
    let err = anonymous.call_tool("whoami", json!({})).await.unwrap_err();
    assert_eq!(err.status(), Some(401), "{err}");

    let alice = Client::builder(&server.url)
        .header("authorization", "Bearer alice-token")
        .build()
        .unwrap();
    let result = alice.call_tool("whoami", json!({})).await.unwrap();
    assert_eq!(result.text_content(), "alice");
}

/// A `tools/call` body for `ping`, as any client sends it.
fn ping_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}},
        "name": "ping", "arguments": {}}})
    .to_string()
}

fn mcp_post(http: &reqwest::Client, url: &str) -> reqwest::RequestBuilder {
    http.post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "ping")
        .body(ping_body())
}

#[tokio::test]
async fn cors_for_the_app_and_host_origin_allow_lists() {
    let server = start(env!("CARGO_BIN_EXE_cors")).await;
    let http = reqwest::Client::new();
    let app = "https://app.example.com";

    let preflight = http
        .request(reqwest::Method::OPTIONS, &server.url)
        .header("origin", app)
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type,mcp-method,mcp-param-city",
        )
        .send()
        .await
        .unwrap();
    assert!(preflight.status().is_success(), "{preflight:?}");
    assert_eq!(preflight.headers()["access-control-allow-origin"], app);
    assert_eq!(
        preflight.headers()["access-control-allow-headers"],
        "content-type,mcp-method,mcp-param-city"
    );

    let allowed = mcp_post(&http, &server.url)
        .header("origin", app)
        .send()
        .await
        .unwrap();
    assert_eq!(allowed.status(), 200);
    assert_eq!(allowed.headers()["access-control-allow-origin"], app);
    assert!(allowed.text().await.unwrap().contains("pong"));

    let foreign = mcp_post(&http, &server.url)
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    // The CORS layer names only the app's origin, so a browser keeps the response from a
    // foreign page even where the server would have answered.
    assert_eq!(foreign.headers()["access-control-allow-origin"], app);

    // A rebound DNS name reaches the server with its own Host: refused.
    let rebound = mcp_post(&http, &server.url)
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);
    let proxied = mcp_post(&http, &server.url)
        .header("host", "mcp.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(proxied.status(), 200);
}

#[tokio::test]
async fn files_upload_call_and_verified_download() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/data/notes.txt");
    let out = run(env!("CARGO_BIN_EXE_files"), &["--file", data], "").await;
    let first = std::fs::read_to_string(data)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_uppercase();
    let size = std::fs::metadata(data).unwrap().len();
    assert!(
        out.contains(&format!("uploaded {data} as mcp-file://")),
        "{out}"
    );
    assert!(
        out.contains(&format!("loud-notes.txt ({size} bytes)")),
        "{out}"
    );
    // The downloaded file's first line follows the download; then the in-memory round trip.
    let lines: Vec<&str> = out.lines().collect();
    let downloaded = lines
        .iter()
        .position(|l| l.starts_with("downloaded ") && l.ends_with(" bytes)"))
        .unwrap();
    assert_eq!(
        lines[downloaded + 1..],
        [
            first.as_str(),
            "downloaded loud-memo.txt into memory: MADE IN MEMORY"
        ],
        "{out}"
    );
}

#[tokio::test]
async fn a_long_call_becomes_a_task_and_another_is_cancelled() {
    let out = run(env!("CARGO_BIN_EXE_tasks"), &["--seconds", "1"], "").await;
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("task ") && lines[0].ends_with(" created"),
        "{out}"
    );
    assert_eq!(
        lines[1..],
        [
            "status: working",
            "status: completed",
            "result: crunched for 1 s",
            "second task cancelled"
        ],
        "{out}"
    );
}

#[tokio::test]
async fn apps_counter_links_its_view_and_serves_it() {
    use smcp_client::proto::ext::ui::{MIME_TYPE, UiResourceMeta, UiToolMeta};
    let server = start(env!("CARGO_BIN_EXE_apps")).await;
    let client = Client::builder(&server.url).ui_apps().build().unwrap();
    let tools = client.list_tools().await.unwrap();
    let link = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        UiToolMeta::from_meta(tool.meta.as_ref()).unwrap().unwrap()
    };
    assert_eq!(
        link("count").resource_uri.as_deref(),
        Some("ui://counter/view")
    );
    assert!(link("count").model_visible());
    assert!(!link("reset").model_visible() && link("reset").app_callable());

    let read = client.read_resource("ui://counter/view").await.unwrap();
    let contents = serde_json::to_value(&read.contents[0]).unwrap();
    assert_eq!(contents["mimeType"], MIME_TYPE);
    let html = contents["text"].as_str().unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("ui/initialize"));
    let meta = UiResourceMeta::from_meta(contents["_meta"].as_object())
        .unwrap()
        .unwrap();
    assert_eq!(meta.prefers_border, Some(true));
    // No origins declared: the host's policy allows no connection at all.
    assert!(
        meta.content_security_policy()
            .contains("connect-src 'none'")
    );

    let counted = client.call_tool("count", json!({"by": 2})).await.unwrap();
    assert_eq!(counted.text_content(), "the counter is 2");
    assert_eq!(counted.structured_content, Some(json!({"value": 2})));
    let reset = client.call_tool("reset", json!({})).await.unwrap();
    assert_eq!(reset.structured_content, Some(json!({"value": 0})));
}
