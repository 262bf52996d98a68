//! SEP-2663 tasks in the CLI: the live status of a task `smcp call` follows, and the output of
//! `smcp task get`.

use std::io::IsTerminal as _;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use smcp_client::proto::ext::tasks::{DetailedTask, TaskStatus};
use smcp_client::proto::server::tools::CallToolResult;

use crate::render;

/// How `smcp call` shows the status of a task while it follows it.
enum Mode {
    /// A status line redrawn in place (stderr is a terminal).
    Line,
    /// One plain line per change (stderr is piped).
    Lines,
    /// Nothing (`--json`: the final result only).
    Quiet,
}

/// The status display of one followed task. Shared with the client's status callback.
pub(crate) struct StatusView {
    mode: Mode,
    bar: Mutex<Option<indicatif::ProgressBar>>,
    last: Mutex<Option<(TaskStatus, Option<String>)>>,
}

/// `working`, or `working: step 2 of 3`.
fn describe(task: &DetailedTask) -> String {
    match &task.task.status_message {
        Some(m) if !m.is_empty() => format!("{}: {m}", task.task.status),
        _ => task.task.status.to_string(),
    }
}

impl StatusView {
    pub(crate) fn new(json: bool) -> Self {
        let mode = if json {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            Mode::Line
        } else {
            Mode::Lines
        };
        Self {
            mode,
            bar: Mutex::new(None),
            last: Mutex::new(None),
        }
    }

    /// Shows one observed state (the seed, then each poll).
    pub(crate) fn show(&self, task: &DetailedTask) {
        let id = &task.task.task_id;
        match self.mode {
            Mode::Quiet => {}
            Mode::Lines => {
                let key = (task.task.status, task.task.status_message.clone());
                let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
                if last.as_ref() != Some(&key) {
                    eprintln!("task {id}: {}", describe(task));
                    *last = Some(key);
                }
            }
            Mode::Line => {
                let mut bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
                // Input is asked on the terminal: the line makes room for the prompt.
                if task.task.status == TaskStatus::InputRequired || task.task.status.is_terminal() {
                    if let Some(b) = bar.take() {
                        b.finish_and_clear();
                    }
                    if task.task.status == TaskStatus::InputRequired {
                        eprintln!("task {id}: {}", describe(task));
                    }
                    return;
                }
                let b = bar.get_or_insert_with(|| {
                    let b = indicatif::ProgressBar::new_spinner();
                    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg}") {
                        b.set_style(style);
                    }
                    b.enable_steady_tick(Duration::from_millis(120));
                    b
                });
                b.set_message(format!("task {id}: {}", describe(task)));
            }
        }
    }

    /// Removes the status line.
    pub(crate) fn clear(&self) {
        if let Some(b) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
            b.finish_and_clear();
        }
    }
}

/// Prints a task as `smcp task get` shows it.
pub(crate) fn print(task: &DetailedTask, save: Option<&Path>) -> anyhow::Result<()> {
    let t = &task.task;
    println!("task:     {}", t.task_id);
    println!("status:   {}", t.status);
    if let Some(m) = &t.status_message {
        println!("message:  {m}");
    }
    println!("created:  {}", t.created_at);
    println!("updated:  {}", t.last_updated_at);
    match t.ttl_ms {
        Some(ms) => println!("ttl:      {ms} ms"),
        None => println!("ttl:      unlimited"),
    }
    if let Some(ms) = t.poll_interval_ms {
        println!("poll:     every {ms} ms");
    }
    if let Some(requests) = &task.input_requests {
        println!("input requests:");
        for (key, request) in requests {
            let v = serde_json::to_value(request)?;
            let message = v["params"]["message"].as_str().unwrap_or("");
            println!("  {key}: {} {message}", request.method());
        }
    }
    if let Some(e) = &task.error {
        println!("error:    JSON-RPC error {}: {}", e.code, e.message);
        if let Some(data) = &e.data {
            println!("  data: {data}");
        }
    }
    if let Some(result) = &task.result {
        println!("result:");
        match serde_json::from_value::<CallToolResult>(serde_json::Value::Object(result.clone())) {
            Ok(r) => {
                render::content(&r.content, save);
                if r.content.is_empty()
                    && let Some(s) = &r.structured_content
                {
                    println!("{}", serde_json::to_string_pretty(s)?);
                }
                if r.is_error() {
                    println!("(the tool reported a failure: isError true)");
                }
            }
            Err(_) => println!("{}", serde_json::to_string_pretty(result)?),
        }
    }
    Ok(())
}
