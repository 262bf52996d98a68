//! `smcp completions SHELL`: a shell completion script.

use std::process::ExitCode;

/// `smcp completions`' arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The shell.
    shell: clap_complete::Shell,
}

/// Runs `smcp completions`: the script of `command` (the whole command line's definition,
/// which `main` passes so that this command does not name the `Cli` that holds it) on stdout.
pub(crate) fn run(args: &Args, mut command: clap::Command) -> ExitCode {
    clap_complete::generate(args.shell, &mut command, "smcp", &mut std::io::stdout());
    ExitCode::SUCCESS
}
