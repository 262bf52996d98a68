//! `smcp man`: the manual page (roff), from the same definitions as `--help`.

use std::process::ExitCode;

use crate::errors;

/// Runs `smcp man`: the page of `command` (the whole command line's definition, which `main`
/// passes so that this command does not name the `Cli` that holds it) on stdout.
pub(crate) fn run(command: clap::Command) -> ExitCode {
    let mut out = std::io::stdout();
    match clap_mangen::Man::new(command).render(&mut out) {
        Ok(()) => ExitCode::SUCCESS,
        // `smcp man | head` closes the pipe early: not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write the manual page: {e}");
            ExitCode::from(errors::Exit::Other as u8)
        }
    }
}
