//! The demo tool set: small, honest tools that show each part of the protocol.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use smcp_proto::content::TextResourceContents;
use smcp_proto::server::prompts::{GetPromptResult, PromptMessage};
use smcp_proto::server::tools::{CallToolResult, ToolAnnotations};
use smcp_server::{
    BuildError, Completion, HandlerError, LoggingLevel, SecurityPolicy, Server, prompt, resource,
    tool,
};

fn text_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"text": {"type": "string", "description": "Text to echo"}},
        "required": ["text"],
        "additionalProperties": false
    })
}

#[derive(Debug, Deserialize)]
struct TextArgs {
    text: String,
}

#[derive(Debug, Deserialize)]
struct AddArgs {
    a: f64,
    b: f64,
}

#[derive(Debug, Deserialize)]
struct CountArgs {
    to: u32,
    #[serde(default = "default_delay")]
    delay_ms: u64,
}

fn default_delay() -> u64 {
    100
}

const README: &str = "smcpd is the smcp reference server. Call `tools/list` to see its tools.";

/// The URI of the clock resource, updated every second by [`run_clock`].
pub const CLOCK_URI: &str = "smcp://clock";

pub(crate) use crate::extra_tool::{EXTRA_TOOL, extra_tool};
use crate::plumbing::{Content, DemoConfig, Plumbing};

/// The demo server, with the given Host/Origin policy.
pub fn demo_server(security: SecurityPolicy) -> Result<Server, BuildError> {
    demo_server_with(DemoConfig {
        security,
        ..DemoConfig::default()
    })
}

/// The demo server with these listen-stream limits.
///
/// Things change at runtime so `subscriptions/listen` has something to show: the tool
/// `toggle_extra` adds or removes the tool `extra` (`notifications/tools/list_changed`), and
/// the resource `smcp://clock` changes every second while [`run_clock`] runs
/// (`notifications/resources/updated`).
pub fn demo_server_with(config: DemoConfig) -> Result<Server, BuildError> {
    let (plumbing, content) = Plumbing::split(config);
    let Content {
        #[cfg(feature = "files")]
        files,
        #[cfg(feature = "files")]
        sep2631_fixtures,
        #[cfg(feature = "files")]
        files_inline,
        #[cfg(feature = "tasks")]
        tasks,
    } = content;
    #[cfg(feature = "tasks")]
    let long_job = if tasks.is_some() {
        ", long_job (a SEP-2663 task: progress, a question, cancellation)"
    } else {
        ""
    };
    #[cfg(not(feature = "tasks"))]
    let long_job = "";
    #[cfg(feature = "redis")]
    let shared_catalog = plumbing
        .cluster
        .as_ref()
        .map(crate::cluster::Cluster::catalog_slot)
        .unwrap_or_default();
    let builder = Server::builder("smcpd", env!("CARGO_PKG_VERSION"))
        .title("smcp reference server")
        .instructions(format!(
            "Demo tools: echo, progress_echo, add, count (progress + cancellation), \
             toggle_extra (changes the tool list), confirm_action, confirm_once and ask_llm (multi round-trip \
             input: elicitation and sampling){long_job}. Resources smcp://readme and \
             smcp://clock (updated every second; subscribe with subscriptions/listen). Prompt \
             greet."
        ))
        .logging(true)
        .tools_list_changed(true)
        .resources_subscribe(true)
        .tool(
            tool("toggle_extra")
                .title("Toggle the extra tool")
                .description(
                    "Adds the tool `extra`, or removes it if present; listeners that asked for \
                     toolsListChanged are notified.",
                )
                .handler(move |call| {
                    #[cfg(feature = "redis")]
                    let shared = shared_catalog.clone();
                    async move {
                    #[cfg(feature = "redis")]
                    if let Some(catalog) = shared.get() {
                        let present = crate::cluster::toggle_shared(catalog)
                            .await
                            .map_err(|e| HandlerError::failed(format!("shared catalog: {e}")))?;
                        return Ok(CallToolResult::text(if present {
                            "added the extra tool (on every instance)"
                        } else {
                            "removed the extra tool (on every instance)"
                        }));
                    }
                    let server = call
                        .ctx
                        .server()
                        .ok_or_else(|| HandlerError::failed("no server behind this request"))?;
                    if server.remove_tool(EXTRA_TOOL) {
                        return Ok(CallToolResult::text("removed the extra tool"));
                    }
                    server
                        .add_tool(extra_tool())
                        .map_err(|e| HandlerError::failed(e.to_string()))?;
                    Ok(CallToolResult::text("added the extra tool"))
                }
                }),
        )
        .resource(
            resource(CLOCK_URI, "clock")
                .title("Clock")
                .description("Seconds since the Unix epoch; updated every second.")
                .mime_type("text/plain")
                .handler(|read| async move {
                    let now = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_secs())
                        .unwrap_or_default();
                    let mut contents = TextResourceContents::new(read.uri, now.to_string());
                    contents.mime_type = Some("text/plain".to_owned());
                    Ok(vec![contents.into()])
                }),
        )
        .tool(
            tool("echo")
                .title("Echo")
                .description("Returns the text it is given.")
                .input_schema(text_schema())
                .annotations(ToolAnnotations::new().read_only(true).idempotent(true))
                .handler(|call| async move {
                    let args: TextArgs = call.args()?;
                    Ok(CallToolResult::text(args.text))
                }),
        )
        .tool(
            tool("progress_echo")
                .title("Echo with progress")
                .description(
                    "Sends 10 progress notifications (when the request has a progressToken), \
                     then returns the text.",
                )
                .input_schema(text_schema())
                .handler(|call| async move {
                    let args: TextArgs = call.args()?;
                    for i in 1..=10 {
                        call.ctx
                            .progress(f64::from(i), Some(10.0), None)
                            .await
                            .map_err(|e| HandlerError::failed(e.to_string()))?;
                    }
                    Ok(CallToolResult::text(args.text))
                }),
        )
        .tool(
            tool("add")
                .title("Add")
                .description("Adds two numbers.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"]
                }))
                .annotations(ToolAnnotations::new().read_only(true))
                .handler(|call| async move {
                    let args: AddArgs = call.args()?;
                    let sum = args.a + args.b;
                    let mut result = CallToolResult::text(sum.to_string());
                    result.structured_content = Some(json!({"sum": sum}));
                    Ok(result)
                }),
        )
        .tool(
            tool("count")
                .title("Count slowly")
                .description(
                    "Counts to `to`, one step every `delay_ms` milliseconds, reporting progress \
                     and logging each step; stops as soon as the client goes away.",
                )
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "to": {"type": "integer", "minimum": 1, "maximum": 1000},
                        "delay_ms": {"type": "integer", "minimum": 0, "maximum": 10000}
                    },
                    "required": ["to"]
                }))
                .handler(|call| async move {
                    let args: CountArgs = call.args()?;
                    let mut run = CountRun {
                        done: 0,
                        to: args.to,
                        accounted: false,
                    };
                    for i in 1..=args.to {
                        tokio::select! {
                            () = call.ctx.cancelled() => {
                                tracing::info!(step = i, "count cancelled by the client");
                                run.accounted = true;
                                return Err(HandlerError::failed("cancelled"));
                            }
                            () = tokio::time::sleep(Duration::from_millis(args.delay_ms)) => {}
                        }
                        run.done = i;
                        let _ = call
                            .ctx
                            .log(LoggingLevel::Debug, Some("count"), json!({"step": i}))
                            .await;
                        if let Err(e) = call
                            .ctx
                            .progress(f64::from(i), Some(f64::from(args.to)), None)
                            .await
                        {
                            if call.ctx.is_cancelled() {
                                tracing::info!(step = i, "count cancelled by the client");
                            }
                            run.accounted = true;
                            return Err(HandlerError::failed(e.to_string()));
                        }
                    }
                    run.accounted = true;
                    Ok(CallToolResult::text(format!("counted to {}", args.to)))
                }),
        )
        .resource(
            resource("smcp://readme", "readme")
                .title("About smcpd")
                .mime_type("text/plain")
                .handler(|read| async move {
                    let mut contents = TextResourceContents::new(read.uri, README);
                    contents.mime_type = Some("text/plain".to_owned());
                    Ok(vec![contents.into()])
                }),
        )
        .prompt(
            prompt("greet")
                .title("Greeting")
                .description("A greeting for someone.")
                .argument("name", "Who to greet", true)
                .handler(|get| async move {
                    let name = get.arg("name").unwrap_or_default();
                    Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                        format!("Write a warm, one-line greeting for {name}."),
                    )]))
                }),
        )
        .completion(|request: smcp_server::CompletionRequest| async move {
            let names = ["Ada", "Alan", "Barbara", "Grace", "Linus"];
            let prefix = request.value.to_lowercase();
            Ok(Completion::values(
                names
                    .iter()
                    .filter(|n| n.to_lowercase().starts_with(&prefix))
                    .map(|n| (*n).to_owned())
                    .collect(),
            ))
        });
    #[allow(unused_mut, reason = "changed only with the files or tasks feature")]
    let mut builder = crate::mrtr_demo::with_tools(builder);
    #[cfg(feature = "tasks")]
    if let Some(tasks) = tasks {
        builder = crate::tasks_demo::with_tasks(builder, tasks);
    }
    #[cfg(feature = "files")]
    if let Some(files) = files {
        let extension = smcp_files::FilesExtension::new(files.clone());
        builder = crate::files_demo::with_tools(builder.extension(extension), &files);
        if sep2631_fixtures {
            builder = crate::sep2631_fixtures::with_files(builder);
        }
    } else if files_inline {
        let extension = smcp_files::FilesExtension::inline_only();
        builder = crate::files_demo::with_inline_tools(builder.extension(extension));
    }
    plumbing.finish(builder)
}

/// One `count` call. If the call ends neither finished nor having seen its cancellation, the
/// server dropped it (a JSON response still pending when the client closed the connection:
/// the handler future is dropped, not told), and dropping this logs
/// `count dropped after I of N steps`, so that a stopped call is visible from outside.
struct CountRun {
    done: u32,
    to: u32,
    accounted: bool,
}

impl Drop for CountRun {
    fn drop(&mut self) {
        if !self.accounted {
            tracing::info!("count dropped after {} of {} steps", self.done, self.to);
        }
    }
}

/// Marks [`CLOCK_URI`] updated every `every`, forever; spawn it next to the server.
///
/// Every instance runs its own clock, so a tick goes to this instance's listeners only: on a
/// shared bus each listener would otherwise hear one tick per instance per period.
pub async fn run_clock(server: Server, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        #[cfg(feature = "redis")]
        smcp_redis::local_only(|| server.notify_resource_updated(CLOCK_URI));
        #[cfg(not(feature = "redis"))]
        server.notify_resource_updated(CLOCK_URI);
    }
}
