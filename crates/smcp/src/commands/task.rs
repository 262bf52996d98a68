//! `smcp task get|cancel ID`: a task (SEP-2663) by its id.

use clap::Subcommand;

use super::ctx::{Ctx, print_json};
use crate::task;

/// `smcp task`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Show a task: status, message, and its result, error or input requests (tasks/get).
    Get {
        /// The task id.
        id: String,
    },
    /// Ask the server to cancel a task (tasks/cancel; cancellation is cooperative).
    Cancel {
        /// The task id.
        id: String,
    },
}

/// Runs `smcp task get` or `smcp task cancel`.
pub(crate) async fn run(args: &Args, ctx: Ctx<'_>) -> anyhow::Result<()> {
    match &args.action {
        Action::Get { id } => {
            let t = ctx.client.get_task(id).await?;
            if ctx.json {
                print_json(&t)?;
            } else {
                task::print(&t, ctx.save)?;
            }
        }
        Action::Cancel { id } => {
            ctx.client.cancel_task(id).await?;
            if ctx.json {
                print_json(&serde_json::json!({"taskId": id, "cancelRequested": true}))?;
            } else {
                println!(
                    "cancellation of task {id} requested (the server decides when it stops; \
                     `smcp task get {id}` shows how it ended)"
                );
            }
        }
    }
    Ok(())
}
