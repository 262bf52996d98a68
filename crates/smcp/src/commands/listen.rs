//! `smcp listen`: change notifications (`subscriptions/listen`) until interrupted or the
//! server ends the stream.

use futures_util::StreamExt as _;
use smcp_client::SubscriptionEvent;
use smcp_client::proto::patterns::subscriptions::SubscriptionFilter;

use super::ctx::Ctx;

/// `smcp listen`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Tool list changes.
    #[arg(long)]
    tools: bool,
    /// Prompt list changes.
    #[arg(long)]
    prompts: bool,
    /// Resource list changes.
    #[arg(long)]
    resources: bool,
    /// Updates of this resource URI (repeatable).
    #[arg(long = "resource", value_name = "URI")]
    resource: Vec<String>,
    /// Status changes of this task (SEP-2663; repeatable).
    #[arg(long = "task", value_name = "ID")]
    task: Vec<String>,
}

/// Runs `smcp listen`.
pub(crate) async fn run(args: &Args, ctx: Ctx<'_>) -> anyhow::Result<()> {
    let Args {
        tools,
        prompts,
        resources,
        resource,
        task,
    } = args;
    let client = ctx.client;
    let mut filter = SubscriptionFilter {
        tools_list_changed: tools.then_some(true),
        prompts_list_changed: prompts.then_some(true),
        resources_list_changed: resources.then_some(true),
        resource_subscriptions: (!resource.is_empty()).then(|| resource.clone()),
        task_ids: (!task.is_empty()).then(|| task.clone()),
    };
    if !tools && !prompts && !resources && resource.is_empty() && task.is_empty() {
        // Bare `smcp listen`: every list change the server offers.
        let caps = match client.discover().await {
            Err(e) if e.kind() == smcp_client::ErrorKind::UnsupportedInEra => {
                match client.session_info().await {
                    Some(info) => serde_json::from_value(info.capabilities)?,
                    None => return Err(e.into()),
                }
            }
            other => other?.capabilities,
        };
        let offered = |x: Option<bool>| (x == Some(true)).then_some(true);
        filter.tools_list_changed = offered(caps.tools.and_then(|t| t.list_changed));
        filter.prompts_list_changed = offered(caps.prompts.and_then(|p| p.list_changed));
        filter.resources_list_changed = offered(caps.resources.and_then(|r| r.list_changed));
        let following: Vec<&str> = [
            ("tools", filter.tools_list_changed),
            ("prompts", filter.prompts_list_changed),
            ("resources", filter.resources_list_changed),
        ]
        .into_iter()
        .filter_map(|(n, on)| on.map(|_| n))
        .collect();
        if following.is_empty() {
            anyhow::bail!(
                "the server announces no list changes (no listChanged capability); \
                 follow a resource with --resource URI or a task with --task ID"
            );
        }
        if !ctx.json {
            eprintln!(
                "following changes of: {} (Ctrl-C to stop)",
                following.join(", ")
            );
        }
    }
    let mut sub = client.listen(filter);
    loop {
        let event = tokio::select! {
            e = sub.next() => e,
            _ = tokio::signal::ctrl_c() => None,
        };
        let Some(event) = event else { break };
        let event = event?;
        if ctx.json {
            println!("{}", json_line(&event));
        } else {
            print_event(event)?;
        }
    }
    Ok(())
}

/// One event as the JSON line `--json` prints.
fn json_line(event: &SubscriptionEvent) -> serde_json::Value {
    match event {
        SubscriptionEvent::Acknowledged(f) => {
            serde_json::json!({"event": "acknowledged", "notifications": f})
        }
        SubscriptionEvent::ResourceUpdated { uri } => {
            serde_json::json!({"event": "resource_updated", "uri": uri})
        }
        SubscriptionEvent::Task(t) => serde_json::json!({"event": "task", "task": t}),
        other => serde_json::json!({"event": format!("{other:?}")}),
    }
}

/// One event as a line of text.
fn print_event(event: SubscriptionEvent) -> anyhow::Result<()> {
    match event {
        SubscriptionEvent::Acknowledged(f) => {
            println!("subscribed: {}", serde_json::to_string(&f)?);
        }
        SubscriptionEvent::ToolsListChanged => println!("tools list changed"),
        SubscriptionEvent::PromptsListChanged => println!("prompts list changed"),
        SubscriptionEvent::ResourcesListChanged => println!("resources list changed"),
        SubscriptionEvent::ResourceUpdated { uri } => println!("resource updated: {uri}"),
        SubscriptionEvent::Task(t) => {
            let m = t.task.status_message.as_deref().unwrap_or("");
            println!("task {}: {} {m}", t.task.task_id, t.task.status);
        }
        other => println!("{other:?}"),
    }
    Ok(())
}
