//! `smcp completions SHELL`: a shell completion script.

use std::process::ExitCode;

use clap::CommandFactory as _;

use crate::cli::Cli;

/// `smcp completions`' arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The shell.
    shell: clap_complete::Shell,
}

/// Runs `smcp completions`: the script on stdout.
pub(crate) fn run(args: &Args) -> ExitCode {
    clap_complete::generate(
        args.shell,
        &mut Cli::command(),
        "smcp",
        &mut std::io::stdout(),
    );
    ExitCode::SUCCESS
}
