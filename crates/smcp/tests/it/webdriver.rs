//! A small W3C WebDriver client for the browser tests: Debian's Chromium driven through
//! its chromedriver (installed by `scripts/apt-tool`), headless, with a fresh profile.
//! Only what the tests use: navigate, find, click, type, run a script, switch frames, take
//! a screenshot.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

/// The key of an element reference in WebDriver answers.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";
/// How long a wait for the page lasts before the test fails.
pub(crate) const WAIT: Duration = Duration::from_secs(20);

/// Whether the browser tests run (`SMCP_BROWSER=skip` skips them).
pub(crate) fn wanted() -> bool {
    smcp_test_support::require_service("Browser (Chromium)", "SMCP_BROWSER")
}

fn tool(name: &str) -> PathBuf {
    let mut cmd = Command::new(smcp_test_support::root().join("scripts/apt-tool"));
    cmd.arg(name);
    PathBuf::from(smcp_test_support::provide(
        "Browser (Chromium)",
        "SMCP_BROWSER",
        &mut cmd,
    ))
}

/// A running chromedriver and one headless Chromium session. Both end on drop.
pub(crate) struct Browser {
    driver: Child,
    base: String,
    http: reqwest::Client,
    profile: PathBuf,
}

/// An element of the page.
#[derive(Debug, Clone)]
pub(crate) struct Element(String);

impl Browser {
    /// Starts chromedriver on a free loopback port and a Chromium session in a window of
    /// 1400x900.
    pub(crate) async fn start() -> Self {
        let chromium = tool("chromium");
        let chromedriver = tool("chromedriver");
        let port = smcp_test_support::free_port();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let deadline = Instant::now() + WAIT;
        while http.get(format!("{base}/status")).send().await.is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not come up");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let profile = std::env::temp_dir().join(format!("smcp-browser-{port}"));
        let _ = std::fs::remove_dir_all(&profile);
        std::fs::create_dir_all(&profile).unwrap();
        let mut browser = Self {
            driver,
            base,
            http,
            profile,
        };
        let args = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=1400,900",
            &format!("--user-data-dir={}", browser.profile.display()),
        ];
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args},
        }}});
        let session = browser.post_raw("/session", &caps).await;
        let id = session["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {session}"))
            .to_owned();
        browser.base = format!("{}/session/{id}", browser.base);
        // Scripts that generate load run for a while on a busy machine.
        browser
            .post("/timeouts", json!({ "script": 180_000 }))
            .await
            .unwrap();
        browser
    }

    async fn post_raw(&self, path: &str, body: &Value) -> Value {
        let r = self
            .http
            .post(format!("{}{path}", self.base))
            .json(body)
            .send()
            .await
            .unwrap();
        let v: Value = r.json().await.unwrap();
        v["value"].clone()
    }

    async fn post(&self, path: &str, body: Value) -> Result<Value, String> {
        let v = self.post_raw(path, &body).await;
        match v.get("error") {
            Some(e) => Err(format!("{e}: {}", v["message"])),
            None => Ok(v),
        }
    }

    async fn get(&self, path: &str) -> Value {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        let v: Value = r.json().await.unwrap();
        v["value"].clone()
    }

    /// Opens `url`.
    pub(crate) async fn goto(&self, url: &str) {
        self.post("/url", json!({ "url": url })).await.unwrap();
    }

    /// The first element matching `css`, if any.
    pub(crate) async fn find(&self, css: &str) -> Option<Element> {
        let v = self
            .post("/element", json!({"using": "css selector", "value": css}))
            .await
            .ok()?;
        v[ELEMENT].as_str().map(|id| Element(id.to_owned()))
    }

    /// Waits for an element matching `css`.
    pub(crate) async fn wait(&self, css: &str) -> Element {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(e) = self.find(css).await {
                return e;
            }
            assert!(Instant::now() < deadline, "no {css} appeared");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until `script` (the body of a function) returns something truthy, and
    /// returns it.
    pub(crate) async fn until(&self, what: &str, script: &str) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let v = self.run(script, json!([])).await;
            if !(v.is_null() || v == json!(false) || v == json!("") || v == json!(0)) {
                return v;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Runs `script` (a function body; `arguments` are `args`) and returns its result.
    pub(crate) async fn run(&self, script: &str, args: Value) -> Value {
        self.post("/execute/sync", json!({"script": script, "args": args}))
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// Runs an async `script`: it ends by calling `arguments[arguments.length - 1](value)`.
    pub(crate) async fn run_async(&self, script: &str) -> Value {
        self.post("/execute/async", json!({"script": script, "args": []}))
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// Clicks `e`.
    pub(crate) async fn click(&self, e: &Element) {
        self.post(&format!("/element/{}/click", e.0), json!({}))
            .await
            .unwrap();
    }

    /// Clicks the element matching `css` once it is there and can be clicked (found again
    /// when the page re-rendered it meanwhile).
    pub(crate) async fn click_on(&self, css: &str) {
        let deadline = Instant::now() + WAIT;
        loop {
            let e = self.wait(css).await;
            match self
                .post(&format!("/element/{}/click", e.0), json!({}))
                .await
            {
                Ok(_) => return,
                Err(err) => assert!(Instant::now() < deadline, "cannot click {css}: {err}"),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Types `text` into `e` (after clearing it).
    pub(crate) async fn type_into(&self, e: &Element, text: &str) {
        let _ = self
            .post(&format!("/element/{}/clear", e.0), json!({}))
            .await;
        self.post(&format!("/element/{}/value", e.0), json!({ "text": text }))
            .await
            .unwrap();
    }

    /// The visible text of `e`.
    pub(crate) async fn text(&self, e: &Element) -> String {
        self.get(&format!("/element/{}/text", e.0))
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Switches into the frame `e`, or back to the page with `None`.
    pub(crate) async fn frame(&self, e: Option<&Element>) {
        let id = e.map_or(Value::Null, |e| json!({ ELEMENT: e.0 }));
        self.post("/frame", json!({ "id": id })).await.unwrap();
    }

    /// Saves a screenshot of the window as PNG at `path`.
    pub(crate) async fn screenshot(&self, path: &Path) {
        let png = self.get("/screenshot").await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap())
            .unwrap();
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(path, bytes).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Ends the session (and Chromium) before the driver goes.
        let base = self.base.clone();
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                let _ = reqwest::Client::new().delete(base).send().await;
            });
        })
        .join();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
