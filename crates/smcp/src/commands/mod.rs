//! The commands, one module each: its flags (a clap `Args` struct) and its `run`.
//!
//! Every command but `completions`, `man`, `login` and `logout` runs against a connected
//! [`Client`](smcp_client::Client) ([`Command::run`]) with a [`Ctx`]; those four run before or
//! without one (`main.rs`). What the commands share is in leaves (`ctx`, `crate::globals`),
//! never here, so that this module names the commands and none of them names it back.

pub(crate) mod call;
pub(crate) mod complete;
pub(crate) mod completions;
pub(crate) mod ctx;
pub(crate) mod discover;
pub(crate) mod download;
#[cfg(feature = "inspect")]
pub(crate) mod inspect;
pub(crate) mod listen;
pub(crate) mod login;
pub(crate) mod logout;
pub(crate) mod man;
pub(crate) mod prompt;
pub(crate) mod prompts;
pub(crate) mod read;
pub(crate) mod resources;
pub(crate) mod task;
pub(crate) mod templates;
pub(crate) mod tool;
pub(crate) mod tools;
pub(crate) mod upload;

use clap::Subcommand;

use ctx::Ctx;

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Show the server's versions, capabilities and instructions.
    Discover,
    /// List the tools (ARGUMENTS: * = required).
    Tools,
    /// Show one tool: description, arguments (* = required) and its input/output schema.
    Tool(tool::Args),
    /// Call a tool.
    Call(call::Args),
    /// Upload a file (files/authorizeUpload + HTTPS upload) and print its file URI.
    Upload(upload::Args),
    /// Download a file URI (files/authorizeDownload), verifying size and digest.
    Download(download::Args),
    /// List the resources.
    Resources,
    /// List the resource templates.
    Templates,
    /// Read a resource.
    Read(read::Args),
    /// List the prompts.
    Prompts,
    /// Get a prompt.
    Prompt(prompt::Args),
    /// Ask the server to complete an argument of a prompt or a resource template
    /// (completion/complete).
    Complete(complete::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::Args),
    /// Print the manual page (roff), e.g. `smcp man | man -l -`.
    Man,
    /// Authorize with the server's OAuth authorization server in the browser and store the
    /// tokens (one file per server, mode 0600; see SMCP_TOKEN_DIR). Later commands use and
    /// refresh them.
    Login(login::Args),
    /// Forget the tokens stored for the server.
    Logout(logout::Args),
    /// Inspect or cancel a task (SEP-2663) by its id.
    Task(task::Args),
    /// Listen for change notifications until interrupted or the server ends the stream.
    /// Without flags: every list change the server offers (from server/discover).
    Listen(listen::Args),
    /// Open a page in the browser to look at the server: its tools with forms, calls with
    /// progress and questions, resources, prompts, tasks, change notifications, MCP Apps
    /// views, and every request and response on the wire. Served on loopback until Ctrl-C.
    #[cfg(feature = "inspect")]
    Inspect(inspect::Args),
}

impl Command {
    /// Runs a command that needs the server. `completions`, `man`, `login`, `logout` and
    /// `inspect` do nothing here: `main` ran them before connecting (or instead).
    pub(crate) async fn run(&self, ctx: Ctx<'_>) -> anyhow::Result<()> {
        match self {
            Self::Discover => discover::run(ctx).await,
            Self::Tools => tools::run(ctx).await,
            Self::Tool(args) => tool::run(args, ctx).await,
            Self::Call(args) => call::run(args, ctx).await,
            Self::Upload(args) => upload::run(args, ctx).await,
            Self::Download(args) => download::run(args, ctx).await,
            Self::Resources => resources::run(ctx).await,
            Self::Templates => templates::run(ctx).await,
            Self::Read(args) => read::run(args, ctx).await,
            Self::Prompts => prompts::run(ctx).await,
            Self::Prompt(args) => prompt::run(args, ctx).await,
            Self::Complete(args) => complete::run(args, ctx).await,
            Self::Task(args) => task::run(args, ctx).await,
            Self::Listen(args) => listen::run(args, ctx).await,
            Self::Completions(_) | Self::Man | Self::Login(_) | Self::Logout(_) => Ok(()),
            #[cfg(feature = "inspect")]
            Self::Inspect(_) => Ok(()),
        }
    }
}
