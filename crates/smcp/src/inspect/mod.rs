//! `smcp inspect`: a page in the browser for the server the global options name, served on
//! loopback by this process, which is the server's client.
//!
//! | file | what |
//! |---|---|
//! | `guard` | who may use it: the one-time token, the session cookie, `Host` and `Origin` |
//! | `assets` | the embedded page and the event feed (SSE) |
//! | `feed` | the events for the page, and the wire entries kept for a late page |
//! | `wire` | the client's wire events as entries (mirrored headers, redaction, curl, smcp) |
//! | `questions` | elicitation and sampling answered on the page |
//! | `api` | lists, calls, cancel, answers, reads, prompts, uploads, listen |
//! | `apps` | the MCP Apps host: views served to a sandboxed frame, their tool calls |
//! | `state` | what the handlers share, the server's summary, the API's error |
//! | `scope` | the call the running code belongs to |

mod api;
mod apps;
mod assets;
mod feed;
mod guard;
mod questions;
mod scope;
mod state;
mod wire;

use std::io::Write as _;
use std::sync::Arc;

use anyhow::Context as _;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::{get, post};

use crate::commands::inspect::Args;
use crate::connect;
use crate::globals::Globals;

/// Largest JSON body the page sends.
const JSON_MAX: usize = 1024 * 1024;
/// Largest file the page uploads as a tool's file argument.
const UPLOAD_MAX: usize = 256 * 1024 * 1024;

/// The inspector's routes, behind its guard.
fn router(app: Arc<state::Inspector>, guard: Arc<guard::Guard>) -> Router {
    Router::new()
        .route("/", get(assets::index))
        .route("/inspect.js", get(assets::script))
        .route("/inspect.css", get(assets::style))
        .route("/api/events", get(assets::events))
        .route("/api/server", get(api::server))
        .route("/api/tools", get(api::tools))
        .route("/api/resources", get(api::resources))
        .route("/api/templates", get(api::templates))
        .route("/api/prompts", get(api::prompts))
        .route("/api/read", post(api::read))
        .route("/api/prompt", post(api::prompt))
        .route("/api/call", post(api::call))
        .route("/api/cancel", post(api::cancel))
        .route("/api/answer", post(api::answer))
        .route("/api/listen", post(api::listen))
        .route(
            "/api/upload",
            post(api::upload).layer(DefaultBodyLimit::max(UPLOAD_MAX)),
        )
        .route("/api/app", post(apps::open))
        .route("/api/app-call", post(apps::call))
        .route("/api/app-read", post(apps::read))
        .route("/app/{id}", get(apps::frame))
        .with_state(app)
        .layer(DefaultBodyLimit::max(JSON_MAX))
        .layer(middleware::from_fn_with_state(guard, guard::layer))
}

/// How the global options reach the server, for the page and its command lines.
fn target(globals: &Globals) -> wire::Target {
    if globals.stdio {
        let words: Vec<String> = globals
            .server_command
            .iter()
            .map(|w| wire::quote(&w.to_string_lossy()))
            .collect();
        wire::Target::Stdio(words.join(" "))
    } else {
        wire::Target::Http(globals.url.clone())
    }
}

/// A private directory for uploads on their way to the server.
fn upload_dir() -> anyhow::Result<std::path::PathBuf> {
    let name = guard::secret()?;
    let dir = std::env::temp_dir().join(format!("smcp-inspect-{}", &name[..16]));
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(&dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// Opens `url` in the desktop's browser, when there is a desktop.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        Some("open")
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        Some("xdg-open")
    } else {
        None
    };
    if let Some(opener) = opener {
        let started = std::process::Command::new(opener)
            .arg(url)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if let Err(e) = started {
            tracing::debug!(error = %e, opener, "could not open a browser");
        }
    }
}

/// Runs `smcp inspect` until Ctrl-C.
pub(crate) async fn run(args: &Args, globals: &Globals) -> anyhow::Result<()> {
    if !args.listen.ip().is_loopback() {
        return Err(anyhow::Error::new(crate::errors::Usage(format!(
            "--listen {}: the inspector serves loopback addresses only (127.0.0.1, ::1)",
            args.listen
        ))));
    }
    let feed = feed::Feed::new();
    let target = target(globals);
    let questions = questions::Questions::new(feed.clone());
    // A call waits for the person at the page (questions, a task followed for minutes): no
    // overall timeout; the page cancels.
    let client = connect::client_builder(globals, None)?
        .timeout(None)
        .wire_tap(wire::tap(feed.clone(), target.clone()))
        .ui_apps()
        .input_handler(questions::PageHandler(questions.clone()))
        .build()?;
    let server = state::summary(&client, &target).await?;
    let uploads = upload_dir()?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let port = listener.local_addr()?.port();
    let guard = Arc::new(guard::Guard::new(port)?);
    let url = guard.url();
    let app = state::Inspector::new(client.clone(), feed, questions, server, uploads.clone());
    // Written, not printed: whoever reads the URL may close the pipe afterwards.
    let mut out = std::io::stdout();
    let _ = writeln!(out, "smcp inspect: {url}");
    let _ = writeln!(
        out,
        "(open it once: the token in it works one time; Ctrl-C stops the inspector)"
    );
    let _ = out.flush();
    if !args.no_open {
        open_browser(&url);
    }
    let served = axum::serve(listener, router(app, guard))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
    client.close().await;
    let _ = std::fs::remove_dir_all(&uploads);
    served.context("serving the inspector")
}
