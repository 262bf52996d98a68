//! The client leg: for each scenario, start the [`mock`] server, run the client under test with
//! `SEP2631_SCENARIO=<name>` and the mock URL as its last argument, then check what it did.
//!
//! Client contract (also in the crate README):
//!
//! | env | meaning |
//! |---|---|
//! | `SEP2631_SCENARIO` | scenario name (below) |
//! | `SEP2631_INPUT_FILE` | path of the file to send (`inline-only-field`, `upload-*`, `insecure-descriptor`, `mrtr-file-elicitation`) |
//! | `SEP2631_INPUT_MIME` | its media type |
//! | `SEP2631_OUTPUT_DIR` | where to save verified downloads as `<FileValue.name>` |
//! | `SEP2631_ALLOW_LOOPBACK_HTTP` | `1`: the mock and its descriptors are plain `http://127.0.0.1` (development transport); every other `http://` URL must still be refused |
//!
//! The client exits 0 when the scenario's tool call completed and every file checked out, and
//! non-zero when it refused something (wrong digest, insecure descriptor).

mod checks;
mod input;
pub mod mock;
mod outcome;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;

use crate::report::LegResults;
use mock::MockState;
use outcome::Outcome;

pub use input::INPUT_BYTES;

/// Scenario names of the client leg.
pub const SCENARIOS: &[&str] = &[
    "inline-only-field",
    "upload-only-field",
    "upload-multipart-field",
    "output-file-correct-digest",
    "output-file-wrong-digest",
    "insecure-descriptor",
    "mrtr-file-elicitation",
];

/// What the client under test is given for one scenario.
#[derive(Debug, Clone)]
pub struct ClientInvocation {
    /// Scenario name.
    pub scenario: String,
    /// The mock's MCP endpoint (last argument).
    pub url: String,
    /// Environment (`SEP2631_*`).
    pub env: Vec<(String, String)>,
}

/// An in-process client (tests): returns the exit code.
pub type InProcessClient = Arc<dyn Fn(ClientInvocation) -> BoxFuture<'static, i32> + Send + Sync>;

/// How the client under test is run.
#[derive(Clone)]
pub enum ClientUnderTest {
    /// `sh -c "<command> <url>"` with the `SEP2631_*` environment.
    Command(String),
    /// A function (used by the suite's own tests).
    InProcess(InProcessClient),
}

impl std::fmt::Debug for ClientUnderTest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Command(c) => write!(f, "Command({c:?})"),
            Self::InProcess(_) => f.write_str("InProcess"),
        }
    }
}

/// Options of `smcp-conformance-files client`.
#[derive(Debug, Clone)]
pub struct ClientLegOptions {
    /// The client under test.
    pub client: ClientUnderTest,
    /// Only these scenarios (all when `None`).
    pub scenarios: Option<Vec<String>>,
    /// Per-scenario time limit.
    pub timeout: Duration,
    /// Scratch directory (input files, outputs, client logs).
    pub work_dir: PathBuf,
}

/// Errors that stop the leg.
#[derive(Debug, thiserror::Error)]
pub enum ClientLegError {
    /// I/O (binding, work dir).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Unknown scenario name.
    #[error("unknown scenario {0:?}; known: {SCENARIOS:?}")]
    UnknownScenario(String),
}

/// Runs the scenarios.
pub async fn run(opts: &ClientLegOptions) -> Result<LegResults, ClientLegError> {
    let names: Vec<String> = match &opts.scenarios {
        Some(v) => v.clone(),
        None => SCENARIOS.iter().map(|s| (*s).to_owned()).collect(),
    };
    let mut out = LegResults::new();
    for name in names {
        if !SCENARIOS.contains(&name.as_str()) {
            return Err(ClientLegError::UnknownScenario(name));
        }
        let checks = run_scenario(opts, &name).await?;
        out.insert(name, checks);
    }
    Ok(out)
}

async fn run_scenario(
    opts: &ClientLegOptions,
    scenario: &str,
) -> Result<Vec<crate::report::Check>, ClientLegError> {
    let dir = opts.work_dir.join(scenario);
    let _ = std::fs::remove_dir_all(&dir);
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&out_dir)?;
    let input = dir.join("input.txt");
    std::fs::write(&input, INPUT_BYTES)?;

    let state = Arc::new(Mutex::new(MockState {
        scenario: scenario.to_owned(),
        ..MockState::default()
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    lock(&state).addr = Some(addr);
    let app = mock::router(state.clone());
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let url = format!("http://{addr}/mcp");
    let env = vec![
        ("SEP2631_SCENARIO".to_owned(), scenario.to_owned()),
        ("SEP2631_INPUT_FILE".to_owned(), input.display().to_string()),
        ("SEP2631_INPUT_MIME".to_owned(), "text/plain".to_owned()),
        (
            "SEP2631_OUTPUT_DIR".to_owned(),
            out_dir.display().to_string(),
        ),
        ("SEP2631_ALLOW_LOOPBACK_HTTP".to_owned(), "1".to_owned()),
    ];
    let inv = ClientInvocation {
        scenario: scenario.to_owned(),
        url,
        env,
    };
    let outcome = match &opts.client {
        ClientUnderTest::InProcess(f) => match tokio::time::timeout(opts.timeout, f(inv)).await {
            Ok(code) => Outcome {
                exit: Some(code),
                note: String::new(),
            },
            Err(_) => Outcome {
                exit: None,
                note: "timed out".into(),
            },
        },
        ClientUnderTest::Command(cmd) => run_command(cmd, &inv, &dir, opts.timeout).await?,
    };
    server.abort();
    let st = lock(&state);
    Ok(checks::check(scenario, &st, &outcome, &out_dir))
}

fn lock(s: &Arc<Mutex<MockState>>) -> std::sync::MutexGuard<'_, MockState> {
    s.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

async fn run_command(
    cmd: &str,
    inv: &ClientInvocation,
    dir: &std::path::Path,
    timeout: Duration,
) -> Result<Outcome, ClientLegError> {
    let mut c = tokio::process::Command::new("sh");
    c.arg("-c")
        .arg(format!("{cmd} {}", inv.url))
        .envs(inv.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(dir.join("stdout.txt"))?)
        .stderr(std::fs::File::create(dir.join("stderr.txt"))?)
        .kill_on_drop(true);
    let mut child = c.spawn()?;
    Ok(match tokio::time::timeout(timeout, child.wait()).await {
        Ok(Ok(status)) => Outcome {
            exit: Some(status.code().unwrap_or(-1)),
            note: String::new(),
        },
        Ok(Err(e)) => Outcome {
            exit: None,
            note: format!("wait failed: {e}"),
        },
        Err(_) => {
            let _ = child.kill().await;
            Outcome {
                exit: None,
                note: format!("timed out after {timeout:?}"),
            }
        }
    })
}
