//! `smcp man`: the manual page (roff), from the same definitions as `--help`.

use std::process::ExitCode;

use clap::CommandFactory as _;

use crate::cli::Cli;
use crate::errors;

/// Runs `smcp man`: the page on stdout.
pub(crate) fn run() -> ExitCode {
    let mut out = std::io::stdout();
    match clap_mangen::Man::new(Cli::command()).render(&mut out) {
        Ok(()) => ExitCode::SUCCESS,
        // `smcp man | head` closes the pipe early: not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write the manual page: {e}");
            ExitCode::from(errors::Exit::Other as u8)
        }
    }
}
