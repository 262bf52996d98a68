//! `smcp inspect`, the built binary: who may use the page (without a browser), then the page
//! itself in headless Chromium (the `browser_*` tests, run by `scripts/test`'s browser
//! stage with `--ignored`: they need Chromium, which `scripts/apt-tool` installs) against
//! smcpd, an MCP App, the Python SDK's server and a server of 1,000 tools.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};
use smcp_server::apps::{Apps, ToolUi, view};
use smcp_server::proto::ext::ui::{UiToolMeta, Visibility};
use smcp_server::proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, Server, tool};

use crate::webdriver::Browser;

/// Serves `server` on 127.0.0.1:0 on its own runtime thread; its `/mcp` URL.
fn serve(server: impl FnOnce() -> Server + Send + 'static) -> String {
    let addr = crate::support::serve_mcp(server, smcp_server::ServeOptions::default());
    format!("http://{addr}/mcp")
}

fn smcpd() -> String {
    crate::support::smcpd()
}

/// smcpd with SEP-2663 tasks (`long_job`), as the binary runs by default.
fn smcpd_with_tasks() -> String {
    serve(|| {
        let tasks = smcp_tasks::TasksExtension::builder()
            .immediate_window(std::time::Duration::from_millis(100))
            .build();
        let server = smcpd::demo_server_with(smcpd::DemoConfig {
            security: smcp_server::SecurityPolicy::loopback(),
            tasks: Some(tasks.clone()),
            ..smcpd::DemoConfig::default()
        })
        .unwrap();
        tasks.attach(&server);
        server
    })
}

/// The counter of `examples/src/bin/apps.rs`, with its view.
fn counter_app() -> String {
    serve(|| {
        let counter = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(0));
        let add = counter.clone();
        let value = |n: i64| {
            let mut r = CallToolResult::text(format!("the counter is {n}"));
            r.structured_content = Some(json!({ "value": n }));
            r
        };
        Server::builder("counter", "1.0.0")
            .extension(Apps)
            .resource(
                view("ui://counter/view", "Counter")
                    .html(include_str!("../../../../examples/data/counter.html"))
                    .prefers_border(true)
                    .build()
                    .unwrap(),
            )
            .tool(
                tool("count")
                    .input_schema(
                        json!({"type": "object", "properties": {"by": {"type": "integer"}}}),
                    )
                    .ui(UiToolMeta::new("ui://counter/view"))
                    .handler(move |call| {
                        let add = add.clone();
                        async move {
                            let by = call
                                .arguments
                                .get("by")
                                .and_then(Value::as_i64)
                                .unwrap_or(1);
                            let n = add.fetch_add(by, std::sync::atomic::Ordering::SeqCst) + by;
                            Ok::<_, HandlerError>(value(n))
                        }
                    }),
            )
            .tool(
                tool("reset")
                    .ui(UiToolMeta::new("ui://counter/view").visibility([Visibility::App]))
                    .handler(move |_| {
                        counter.store(0, std::sync::atomic::Ordering::SeqCst);
                        async move { Ok::<_, HandlerError>(value(0)) }
                    }),
            )
            .tool(
                tool("model_only")
                    .ui(UiToolMeta::new("ui://counter/view").visibility([Visibility::Model]))
                    .handler(|_| async { Ok::<_, HandlerError>(CallToolResult::text("no")) }),
            )
            .build()
            .unwrap()
    })
}

/// A server of the rarer shapes: a URL-mode question, an output schema, a file argument
/// (inline only: the page's file goes as a `data:` URI).
fn rare_shapes() -> String {
    serve(|| {
        Server::builder("shapes", "1.0.0")
            .tool(tool("sign_in").handler(|call| async move {
                let consent = call.input.ask(smcp_server::mrtr::elicit_url(
                    "oauth",
                    "Sign in to the calendar",
                    "https://calendar.example/authorize?state=abc",
                ))?;
                Ok::<_, HandlerError>(CallToolResult::text(format!("{:?}", consent.action)))
            }))
            .tool(
                tool("measure")
                    .output_schema(json!({
                        "type": "object",
                        "properties": {"value": {"type": "integer"}, "unit": {"type": "string"}},
                        "required": ["value", "unit"]
                    }))
                    .handler(|_| async {
                        let mut r = CallToolResult::text("42 mm");
                        r.structured_content = Some(json!({"value": 42, "unit": "mm"}));
                        Ok::<_, HandlerError>(r)
                    }),
            )
            .tool(
                tool("describe")
                    .input_schema(json!({
                        "type": "object",
                        "properties": {"doc": {"type": "string", "format": "uri",
                            "x-mcp-file": {"transferModes": ["inline"], "maxSize": 65536}}},
                        "required": ["doc"]
                    }))
                    .handler(|call| async move {
                        let doc = call.str_arg("doc").unwrap_or_default();
                        let head: String = doc.chars().take(16).collect();
                        Ok::<_, HandlerError>(CallToolResult::text(format!(
                            "got {head}… ({} chars)",
                            doc.len()
                        )))
                    }),
            )
            .build()
            .unwrap()
    })
}

/// A server of `n` tools, `t0`…, each sending 8 progress notifications (when asked) and
/// echoing its `text`: 11 wire entries a call (request, response head, 9 SSE events).
fn many_tools(n: usize) -> String {
    serve(move || {
        let mut builder = Server::builder("many", "1.0.0");
        for i in 0..n {
            builder = builder.tool(
                tool(format!("t{i}"))
                    .description(format!("Tool number {i} of {n}: echoes its text"))
                    .input_schema(
                        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
                    )
                    .handler(|call| async move {
                        for i in 1..=8 {
                            call.ctx
                                .progress(f64::from(i), Some(8.0), None)
                                .await
                                .map_err(|e| HandlerError::failed(e.to_string()))?;
                        }
                        let text = call.str_arg("text").unwrap_or_default();
                        Ok::<_, HandlerError>(CallToolResult::text(text))
                    }),
            );
        }
        builder.build().unwrap()
    })
}

/// A running `smcp inspect` and the URL it printed.
struct Inspect {
    child: Child,
    url: String,
    port: u16,
    /// Its stdout, kept open.
    _stdout: BufReader<std::process::ChildStdout>,
}

impl Inspect {
    /// `smcp ARGS inspect --no-open` (with `stdio`: `-- PROGRAM…` after it).
    fn start(global: &[&str], stdio: &[&str]) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_smcp"));
        cmd.args(global).args(["inspect", "--no-open"]);
        if !stdio.is_empty() {
            cmd.arg("--").args(stdio);
        }
        let mut child = cmd
            .env_remove("SMCP_URL")
            .env(
                "SMCP_CACHE_DIR",
                std::env::temp_dir().join("smcp-inspect-tests-cache"),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("smcp inspect: ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        let port = url
            .trim_start_matches("http://127.0.0.1:")
            .split('/')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        Self {
            child,
            url,
            port,
            _stdout: stdout,
        }
    }

    fn http(global: &[&str]) -> Self {
        Self::start(global, &[])
    }

    fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Inspect {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where the browser tests put their screenshots (the ones under `docs/inspect/` were
/// taken here).
fn screenshot_path(name: &str) -> std::path::PathBuf {
    smcp_test_support::root().join(format!("target/inspect-screenshots/{name}.png"))
}

/// An HTTP client that does not follow redirects (the token's answer is one).
fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// GET `url` with the `session` cookie.
async fn get(http: &reqwest::Client, url: String, session: &str) -> reqwest::Response {
    http.get(url)
        .header("cookie", session)
        .send()
        .await
        .unwrap()
}

/// The `Content-Security-Policy` of a response.
fn csp(r: &reqwest::Response) -> String {
    r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn the_page_and_its_api_are_only_for_the_url_it_printed() {
    let url = smcpd();
    let inspect = Inspect::http(&["--url", &url]);
    let http = no_redirects();
    let base = inspect.origin();
    // Nothing without the session: the page, its script, the API, the feed.
    for path in [
        "/",
        "/inspect.js",
        "/api/tools",
        "/api/events",
        "/api/server",
    ] {
        let r = http.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(r.status(), 403, "{path}");
    }
    // A wrong token is refused and does not use up the right one.
    let r = http
        .get(format!("{base}/?token=0000"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let r = http.get(&inspect.url).send().await.unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/");
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let session = cookie.split(';').next().unwrap().to_owned();
    // The token works once.
    let r = http.get(&inspect.url).send().await.unwrap();
    assert_eq!(r.status(), 403);
    // With the session: the page, with its policy.
    let r = get(&http, format!("{base}/"), &session).await;
    assert_eq!(r.status(), 200);
    let policy = csp(&r);
    assert!(
        policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"),
        "{policy}"
    );
    let tools: Value = get(&http, format!("{base}/api/tools"), &session)
        .await
        .json()
        .await
        .unwrap();
    assert!(
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "echo")
    );
    // Another site's page in the same browser (the cookie is sent along, the Origin tells),
    // a state-changing request without an Origin, and bad input, which names its field.
    let call = json!({"name": "echo", "arguments": {"text": "x"}});
    let bad = json!({"name": "echo", "arguments": [1]});
    for (origin, body, status) in [
        (Some("http://evil.example"), &call, 403),
        (Some("null"), &call, 403),
        (None, &call, 403),
        (Some(base.as_str()), &call, 200),
        (Some(base.as_str()), &bad, 400),
    ] {
        let mut r = http
            .post(format!("{base}/api/call"))
            .header("cookie", &session)
            .json(body);
        if let Some(origin) = origin {
            r = r.header("origin", origin);
        }
        let r = r.send().await.unwrap();
        assert_eq!(r.status(), status, "Origin: {origin:?}");
        if status == 400 {
            let e: Value = r.json().await.unwrap();
            assert!(
                e["error"].as_str().unwrap().starts_with("arguments:"),
                "{e}"
            );
        }
    }
    // A DNS-rebinding Host.
    let r = http
        .get(format!("{base}/api/tools"))
        .header("cookie", &session)
        .header("host", format!("attacker.example:{}", inspect.port))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 421);
}

#[tokio::test]
async fn an_app_view_is_served_sandboxed_and_only_app_visible_tools_are_callable() {
    let url = counter_app();
    let inspect = Inspect::http(&["--url", &url]);
    let http = no_redirects();
    let base = inspect.origin();
    let r = http.get(&inspect.url).send().await.unwrap();
    let cookie = r.headers()["set-cookie"].to_str().unwrap();
    let session = cookie.split(';').next().unwrap().to_owned();
    let post = |path: &str, body: Value| {
        http.post(format!("{base}{path}"))
            .header("cookie", &session)
            .header("origin", &base)
            .json(&body)
            .send()
    };
    let opened: Value = post("/api/app", json!({"uri": "ui://counter/view"}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let src = opened["src"].as_str().unwrap();
    let r = get(&http, format!("{base}{src}"), &session).await;
    assert_eq!(r.status(), 200);
    let policy = csp(&r);
    assert!(
        policy.contains("sandbox allow-scripts") && policy.contains("connect-src 'none'"),
        "{policy}"
    );
    assert!(r.text().await.unwrap().contains("ui/initialize"));
    let view = opened["view"].as_str().unwrap();
    for (name, view, status) in [
        ("reset", view, 200),      // an app-only tool is callable from its view
        ("model_only", view, 403), // a model-only tool is not
        ("count", "nope", 404),    // nor anything from a view that does not exist
    ] {
        let r = post(
            "/api/app-call",
            json!({"view": view, "name": name, "arguments": {}}),
        )
        .await
        .unwrap();
        assert_eq!(r.status(), status, "{name} from {view}");
    }
    let r = post("/api/app", json!({"uri": "https://example.com/"}))
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
}

/// Opens the inspector's URL in `browser` and waits for the page to be connected.
async fn open(browser: &Browser, inspect: &Inspect) {
    browser.goto(&inspect.url).await;
    browser
        .until("the feed to connect", "return document.querySelector('#status')?.textContent.includes('connected') && !document.querySelector('#status').textContent.includes('disconnected');")
        .await;
}

/// `smcp inspect --url URL` against the server `serve` starts (it returns the URL) and a
/// browser on its page, connected, with that URL; `None`, with nothing started, when the
/// browser tests are not wanted here (the test returns).
async fn inspect_in_browser(serve: impl FnOnce() -> String) -> Option<(Inspect, Browser, String)> {
    if !crate::webdriver::wanted() {
        return None;
    }
    let url = serve();
    let inspect = Inspect::http(&["--url", &url]);
    let browser = Browser::start().await;
    open(&browser, &inspect).await;
    Some((inspect, browser, url))
}

/// Types `text` into the tool form's field `name`.
async fn fill(browser: &Browser, name: &str, text: &str) {
    let field = browser.wait(&format!("#tool-form [name=\"{name}\"]")).await;
    browser.type_into(&field, text).await;
}

/// Selects `tool` in the tools list (through the search box, the list being virtual).
async fn select_tool(browser: &Browser, tool: &str) {
    let search = browser.wait("#tool-search").await;
    browser.type_into(&search, tool).await;
    browser
        .click_on(&format!(".tool-row[data-name=\"{tool}\"]"))
        .await;
    browser
        .until(
            "the tool's form",
            &format!(
                "return document.querySelector('#tool-name')?.textContent.includes('{tool}');"
            ),
        )
        .await;
}

/// Clicks "Call tool" (the previous call's end marker removed first, so that the next
/// [`call_result`] waits for this call).
async fn click_call(browser: &Browser) {
    browser
        .run(
            "document.querySelector('#call-result')?.removeAttribute('data-state');",
            json!([]),
        )
        .await;
    browser.click_on("#call-button").await;
}

/// Waits for the call's end and returns `data-state` and the result's text.
async fn call_result(browser: &Browser) -> (String, String) {
    let state = browser
        .until("the call to end", "const r = document.querySelector('#call-result'); return r && !document.querySelector('#call-output').hidden && r.dataset.state;")
        .await;
    let text = browser
        .run(
            "return document.querySelector('#call-result').textContent;",
            json!([]),
        )
        .await;
    (
        state.as_str().unwrap().to_owned(),
        text.as_str().unwrap_or_default().to_owned(),
    )
}

#[tokio::test]
#[ignore = "browser: scripts/test's browser stage (needs Chromium)"]
async fn browser_a_tool_form_a_call_and_the_wire() {
    let Some((_inspect, browser, url)) = inspect_in_browser(smcpd).await else {
        return;
    };
    browser.click_on("button.tab[data-tab=\"server\"]").await;
    browser
        .until("the discover result", "return document.querySelector('#server-json').textContent.includes('supportedVersions');")
        .await;
    browser.screenshot(&screenshot_path("server")).await;
    browser.click_on("button.tab[data-tab=\"tools\"]").await;
    select_tool(&browser, "echo").await;
    fill(&browser, "text", "hello from the page").await;
    click_call(&browser).await;
    let (state, text) = call_result(&browser).await;
    assert_eq!(state, "ok", "{text}");
    assert!(text.contains("hello from the page"), "{text}");
    browser.screenshot(&screenshot_path("tools")).await;
    // A required field left empty is not sent.
    select_tool(&browser, "add").await;
    click_call(&browser).await;
    let refused = browser
        .run("return document.querySelector('#call-output').hidden && !document.querySelector('#form-error').hidden && document.querySelector('#form-error').textContent;", json!([]))
        .await;
    assert!(
        refused.as_str().is_some_and(|t| !t.is_empty()),
        "the form must refuse a missing required number: {refused}"
    );
    let a = browser.wait("#tool-form [name=\"a\"]").await;
    browser.type_into(&a, "2").await;
    let b = browser.wait("#tool-form [name=\"b\"]").await;
    browser.type_into(&b, "40").await;
    click_call(&browser).await;
    let (state, text) = call_result(&browser).await;
    assert_eq!(state, "ok");
    assert!(text.contains("42"), "{text}");
    // The wire: the call's request with its mirrored headers, decoded, and as command lines.
    browser.click_on("button.tab[data-tab=\"wire\"]").await;
    let count = browser
        .until("wire entries", "return Number(document.querySelector('#wire-count').textContent) >= 6 && document.querySelector('#wire-count').textContent;")
        .await;
    eprintln!("wire entries: {count}");
    let filter = browser.wait("#wire-filter").await;
    browser.type_into(&filter, "tools/call").await;
    browser
        .until("the filter", "const r = document.querySelector('.wire-row'); return r && r.textContent.includes('tools/call');")
        .await;
    browser.click_on(".wire-row").await;
    browser.wait("#wire-detail .mirrored").await;
    let detail = browser
        .run(
            "return document.querySelector('#wire-detail').textContent;",
            json!([]),
        )
        .await;
    let detail = detail.as_str().unwrap();
    assert!(
        detail.contains("mcp-method") || detail.contains("Mcp-Method"),
        "{detail}"
    );
    browser.click_on("#copy-curl").await;
    let curl = browser
        .until(
            "the curl command",
            "return document.querySelector('#copy-text').value;",
        )
        .await;
    let curl = curl.as_str().unwrap();
    assert!(
        curl.starts_with("curl ") && curl.contains(&url) && curl.contains("tools/call"),
        "{curl}"
    );
    browser.click_on("#copy-smcp").await;
    let line = browser
        .until("the smcp command", "const v = document.querySelector('#copy-text').value; return v.startsWith('smcp') && v;")
        .await;
    let line = line.as_str().unwrap();
    assert!(line.contains(&format!("--url {url} call ")), "{line}");
    browser.screenshot(&screenshot_path("wire")).await;
    // A resource read, a prompt got.
    browser.click_on("button.tab[data-tab=\"resources\"]").await;
    browser
        .click_on(".resource-row[data-uri=\"smcp://readme\"]")
        .await;
    browser
        .until(
            "the resource's text",
            "return document.querySelector('#resource-contents').textContent.length > 20;",
        )
        .await;
    browser.screenshot(&screenshot_path("resources")).await;
    browser.click_on("button.tab[data-tab=\"prompts\"]").await;
    let search = browser.wait("#prompt-search").await;
    browser.type_into(&search, "greet").await;
    browser.click_on(".prompt-row[data-name=\"greet\"]").await;
    let name = browser.wait("#prompt-fields [name=\"name\"]").await;
    browser.type_into(&name, "Ada").await;
    browser.click_on("#prompt-button").await;
    browser
        .until("the prompt's messages", "return document.querySelector('#prompt-result').textContent.includes('greeting for Ada');")
        .await;
    browser.screenshot(&screenshot_path("prompts")).await;
    // Run the command line the page gave: the same answer.
    let words: Vec<String> = shell_words(line);
    let out = Command::new(env!("CARGO_BIN_EXE_smcp"))
        .args(&words[1..])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Splits a command line the page made (single quotes only) into words.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            '\\' if !quoted => {}
            c => word.push(c),
        }
    }
    if any || !word.is_empty() {
        words.push(word);
    }
    words
}

#[tokio::test]
#[ignore = "browser: scripts/test's browser stage (needs Chromium)"]
async fn browser_an_elicitation_a_cancelled_progress_call_and_a_listen_event() {
    let Some((_inspect, browser, _)) = inspect_in_browser(smcpd).await else {
        return;
    };
    // An elicitation, answered in the page.
    select_tool(&browser, "confirm_action").await;
    fill(&browser, "action", "deploy").await;
    click_call(&browser).await;
    browser.wait(".question[data-kind=\"elicitation\"]").await;
    browser.screenshot(&screenshot_path("elicitation")).await;
    browser
        .click_on(".question[data-kind=\"elicitation\"] button.accept")
        .await;
    let (state, text) = call_result(&browser).await;
    assert_eq!(state, "ok", "{text}");
    browser.wait("#call-rounds li").await;
    // A sampling request, answered as the model.
    select_tool(&browser, "ask_llm").await;
    fill(&browser, "text", "what is 6 x 7?").await;
    click_call(&browser).await;
    let answer = browser
        .wait(".question[data-kind=\"sampling\"] textarea[name=\"text\"]")
        .await;
    browser.type_into(&answer, "forty-two, said the page").await;
    browser
        .click_on(".question[data-kind=\"sampling\"] button.accept")
        .await;
    let (state, text) = call_result(&browser).await;
    assert_eq!(state, "ok", "{text}");
    assert!(text.contains("forty-two, said the page"), "{text}");
    // A long call with progress, cancelled.
    select_tool(&browser, "count").await;
    let to = browser.wait("#tool-form [name=\"to\"]").await;
    browser.type_into(&to, "1000").await;
    if let Some(delay) = browser.find("#tool-form [name=\"delay_ms\"]").await {
        browser.type_into(&delay, "50").await;
    }
    click_call(&browser).await;
    browser
        .until(
            "progress",
            "const p = document.querySelector('#call-progress'); return p && p.value > 0;",
        )
        .await;
    browser.screenshot(&screenshot_path("progress")).await;
    browser.click_on("#cancel-button").await;
    let (state, _) = call_result(&browser).await;
    assert_eq!(state, "cancelled");
    // Listen, then change the tool list.
    browser.click_on("button.tab[data-tab=\"listen\"]").await;
    browser.click_on("#listen-start").await;
    browser
        .until(
            "the listen stream",
            "return document.querySelector('#listen-state').textContent.includes('open');",
        )
        .await;
    browser.click_on("button.tab[data-tab=\"tools\"]").await;
    select_tool(&browser, "toggle_extra").await;
    click_call(&browser).await;
    assert_eq!(call_result(&browser).await.0, "ok");
    browser.click_on("button.tab[data-tab=\"listen\"]").await;
    browser
        .until("the list change", "return [...document.querySelectorAll('#listen-feed .event')].some(e => e.textContent.includes('notifications/tools/list_changed'));")
        .await;
    browser.screenshot(&screenshot_path("listen")).await;
}

#[tokio::test]
#[ignore = "browser: scripts/test's browser stage (needs Chromium)"]
async fn browser_a_task_followed_answered_and_cancelled() {
    let Some((_inspect, browser, _)) = inspect_in_browser(smcpd_with_tasks).await else {
        return;
    };
    select_tool(&browser, "long_job").await;
    let seconds = browser.wait("#tool-form [name=\"seconds\"]").await;
    browser.type_into(&seconds, "60").await;
    let at = browser.wait("#tool-form [name=\"confirm_at\"]").await;
    browser.type_into(&at, "1").await;
    click_call(&browser).await;
    // The task's question (input_required), answered in the page.
    browser
        .click_on(".question[data-kind=\"elicitation\"] [name=\"continue\"]")
        .await;
    browser
        .click_on(".question[data-kind=\"elicitation\"] button.accept")
        .await;
    browser.click_on("button.tab[data-tab=\"tasks\"]").await;
    browser
        .until("the task working again", "const r = document.querySelector('.task-row'); return r && r.textContent.includes('working') && r.dataset.taskId;")
        .await;
    browser.screenshot(&screenshot_path("tasks")).await;
    browser.click_on(".task-row button.task-cancel").await;
    browser
        .until("the task cancelled", "const r = document.querySelector('.task-row'); return r && r.textContent.includes('cancelled');")
        .await;
    browser.click_on("button.tab[data-tab=\"tools\"]").await;
    let (state, text) = call_result(&browser).await;
    assert!(state == "cancelled" || state == "error", "{state}: {text}");
}

#[tokio::test]
#[ignore = "browser: scripts/test's browser stage (needs Chromium)"]
async fn browser_an_mcp_app_rendered_and_calling_back() {
    let Some((_inspect, browser, _)) = inspect_in_browser(counter_app).await else {
        return;
    };
    select_tool(&browser, "count").await;
    click_call(&browser).await;
    assert_eq!(call_result(&browser).await.0, "ok");
    let frame = browser.wait("#app-frame").await;
    let sandbox = browser
        .run(
            "return document.querySelector('#app-frame').getAttribute('sandbox');",
            json!([]),
        )
        .await;
    assert_eq!(sandbox, "allow-scripts");
    browser.frame(Some(&frame)).await;
    browser
        .until(
            "the view to show the result",
            "return document.querySelector('#value')?.textContent === '1';",
        )
        .await;
    browser.click_on("#add").await;
    browser
        .until(
            "the view's own call",
            "return document.querySelector('#value').textContent === '2';",
        )
        .await;
    browser.click_on("#reset").await;
    browser
        .until(
            "the app-only tool",
            "return document.querySelector('#value').textContent === '0';",
        )
        .await;
    // The view cannot reach the inspector: no API, no parent document, no cookie.
    let fetched = browser
        .run_async(
            "const done = arguments[arguments.length - 1];
             fetch('/api/tools').then(r => done('status ' + r.status), e => done('blocked: ' + e));",
        )
        .await;
    assert!(
        fetched.as_str().unwrap().starts_with("blocked"),
        "{fetched}"
    );
    let parent = browser
        .run("try { return String(window.parent.document.cookie); } catch (e) { return 'denied: ' + e.name; }", json!([]))
        .await;
    assert!(parent.as_str().unwrap().starts_with("denied"), "{parent}");
    let cookie = browser
        .run(
            "try { return document.cookie; } catch (e) { return 'denied: ' + e.name; }",
            json!([]),
        )
        .await;
    assert!(
        !cookie.as_str().unwrap().contains("smcp_inspect"),
        "{cookie}"
    );
    browser.frame(None).await;
    browser.wait("#app-bridge-log .bridge-line").await;
}

#[tokio::test]
#[ignore = "browser: scripts/test's browser stage (needs Chromium)"]
async fn browser_the_python_sdk_server_over_stdio() {
    if !crate::webdriver::wanted() {
        return;
    }
    let Some(py) = smcp_test_support::python(None) else {
        return;
    };
    let script = smcp_test_support::root().join("tests/interop/server.py");
    let inspect = Inspect::start(
        &["--stdio"],
        &[py.to_str().unwrap(), script.to_str().unwrap(), "--stdio"],
    );
    let browser = Browser::start().await;
    open(&browser, &inspect).await;
    select_tool(&browser, "slow_echo").await;
    fill(&browser, "text", "from python").await;
    click_call(&browser).await;
    let (state, text) = call_result(&browser).await;
    assert_eq!(state, "ok", "{text}");
    assert!(text.contains("from python"), "{text}");
    select_tool(&browser, "confirm").await;
    click_call(&browser).await;
    browser.wait(".question[data-kind=\"elicitation\"]").await;
    browser
        .click_on(".question[data-kind=\"elicitation\"] button.decline")
        .await;
    let (state, text) = call_result(&browser).await;
    assert!(state == "ok" || state == "error", "{state}: {text}");
    browser.click_on("button.tab[data-tab=\"wire\"]").await;
    browser
        .until(
            "stdio lines",
            "return [...document.querySelectorAll('.wire-row')].length > 0;",
        )
        .await;
}

#[tokio::test]
#[ignore = "browser: scripts/test's browser stage (needs Chromium)"]
async fn browser_a_thousand_tools_and_ten_thousand_wire_entries_stay_responsive() {
    if !crate::webdriver::wanted() {
        return;
    }
    let url = many_tools(1_000);
    let inspect = Inspect::http(&["--url", &url]);
    let browser = Browser::start().await;
    open(&browser, &inspect).await;
    browser
        .until(
            "1,000 tools",
            "return window.__inspect && window.__inspect.toolCount() === 1000;",
        )
        .await;
    // 10,000 wire entries: calls from the page (11 entries each), 16 at a time.
    let started = Instant::now();
    browser
        .run_async(
            "const done = arguments[arguments.length - 1];
             let next = 0;
             async function worker() {
               while (next < 1000) {
                 const i = next++;
                 await fetch('/api/call', {method: 'POST', headers: {'Content-Type': 'application/json'},
                   body: JSON.stringify({name: 't' + (i % 1000), arguments: {text: 'n' + i}})});
               }
             }
             Promise.all(Array.from({length: 16}, worker)).then(() => done(true), e => done(String(e)));",
        )
        .await;
    browser
        .until(
            "10,000 wire entries",
            "return window.__inspect.wireCount() >= 10000;",
        )
        .await;
    eprintln!("10,000 wire entries recorded in {:?}", started.elapsed());
    let figures = browser
        .run_async(
            "const done = arguments[arguments.length - 1];
             const frame = () => new Promise(r => requestAnimationFrame(() => r()));
             (async () => {
               const out = {};
               document.querySelector('button.tab[data-tab=\"tools\"]').click();
               await frame();
               const search = document.querySelector('#tool-search');
               let t = performance.now();
               search.value = 't99';
               search.dispatchEvent(new Event('input', {bubbles: true}));
               await frame();
               out.toolFilterMs = performance.now() - t;
               search.value = '';
               search.dispatchEvent(new Event('input', {bubbles: true}));
               await frame();
               out.toolRowsInDom = window.__inspect.renderedToolRows();
               document.querySelector('button.tab[data-tab=\"wire\"]').click();
               await frame();
               const list = document.querySelector('#wire-list');
               const frames = [];
               for (let i = 0; i <= 20; i++) {
                 t = performance.now();
                 list.scrollTop = (list.scrollHeight - list.clientHeight) * i / 20;
                 list.dispatchEvent(new Event('scroll'));
                 await frame();
                 frames.push(performance.now() - t);
               }
               frames.sort((a, b) => a - b);
               out.wireScrollFrameP50Ms = frames[10];
               out.wireScrollFrameMaxMs = frames[20];
               out.wireRowsInDom = window.__inspect.renderedWireRows();
               const filter = document.querySelector('#wire-filter');
               t = performance.now();
               filter.value = 'n999';
               filter.dispatchEvent(new Event('input', {bubbles: true}));
               await frame();
               out.wireFilterMs = performance.now() - t;
               out.wireCount = window.__inspect.wireCount();
               done(out);
             })();",
        )
        .await;
    eprintln!("responsiveness: {figures}");
    browser.screenshot(&screenshot_path("wire-10000")).await;
    assert!(
        figures["wireCount"].as_u64().unwrap() >= 10_000,
        "{figures}"
    );
    assert!(
        figures["toolRowsInDom"].as_u64().unwrap() < 200,
        "the tool list must be virtual: {figures}"
    );
    assert!(
        figures["wireRowsInDom"].as_u64().unwrap() < 200,
        "the wire list must be virtual: {figures}"
    );
    for key in ["toolFilterMs", "wireScrollFrameMaxMs", "wireFilterMs"] {
        let ms = figures[key].as_f64().unwrap();
        assert!(
            ms < 500.0,
            "{key} = {ms} ms: the page is not responsive ({figures})"
        );
    }
}

#[tokio::test]
#[ignore = "browser: scripts/test's browser stage (needs Chromium)"]
async fn browser_a_url_question_an_output_schema_and_a_file_argument() {
    let Some((inspect, browser, _)) = inspect_in_browser(rare_shapes).await else {
        return;
    };
    // URL mode: the URL is shown as text, never opened; consent is the user's.
    select_tool(&browser, "sign_in").await;
    click_call(&browser).await;
    let question = browser.wait(".question[data-kind=\"elicitation\"]").await;
    let shown = browser.text(&question).await;
    assert!(
        shown.contains("https://calendar.example/authorize?state=abc"),
        "{shown}"
    );
    browser
        .click_on(".question[data-kind=\"elicitation\"] button.accept")
        .await;
    let (state, text) = call_result(&browser).await;
    assert_eq!(state, "ok");
    assert!(text.contains("Accept"), "{text}");
    // structuredContent checked against the output schema.
    select_tool(&browser, "measure").await;
    click_call(&browser).await;
    assert_eq!(call_result(&browser).await.0, "ok");
    let valid = browser
        .until(
            "the schema check",
            "const c = document.querySelector('#schema-check'); return c && c.dataset.valid;",
        )
        .await;
    assert_eq!(valid, "true");
    // A file picked in the page, sent inline as the field allows.
    let file = std::env::temp_dir().join(format!("smcp-inspect-{}.txt", inspect.port));
    std::fs::write(&file, "a small text file\n").unwrap();
    select_tool(&browser, "describe").await;
    let picker = browser
        .wait("#tool-form input[type=\"file\"][name=\"doc\"]")
        .await;
    browser.type_into(&picker, file.to_str().unwrap()).await;
    click_call(&browser).await;
    let (state, text) = call_result(&browser).await;
    let _ = std::fs::remove_file(&file);
    assert_eq!(state, "ok", "{text}");
    assert!(text.contains("got data:text/plain"), "{text}");
}
