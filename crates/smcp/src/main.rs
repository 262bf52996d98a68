//! `smcp`: call MCP 2026-07-28 servers from the command line, over Streamable HTTP (`--url`)
//! or stdio (`--stdio … -- PROGRAM ARGS…`, the server launched as a child process). Older
//! servers (2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05 HTTP+SSE) are detected and spoken
//! to in their revision; `--protocol-version` pins one.
//!
//! Human-readable output by default, `--json` for scripts. Every failure is classified
//! (`errors`): a message with its cause chain and a hint, a distinct exit code, and under
//! `--json` one `{"error": …}` object on stdout.
//!
//! This file parses, dispatches and turns the outcome into an exit code; `cli` holds the
//! command line, `globals` the options every command takes, `commands` one module per command
//! (its flags and its `run`), and `connect` the connection they share. They depend one way:
//! `cli` → `commands` → the leaves (`globals`, `errors`, …). `inspect` (`smcp inspect`, the
//! browser inspector) is run from here too, before any other connection.
//!
//! # Features
//!
//! | feature | default | what |
//! |---|---|---|
//! | `inspect` | yes | `smcp inspect`: the inspector page on loopback (axum; the page's files embedded) |
// A command-line tool prints by design.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod auth_flags;
mod cache;
mod cli;
mod commands;
mod connect;
mod errors;
mod globals;
#[cfg(feature = "inspect")]
mod inspect;
mod interact;
mod login;
mod progress;
mod render;
mod stdio;
mod task;

use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::{CommandFactory as _, Parser as _};

use crate::cli::Cli;
use crate::commands::Command;

#[tokio::main]
async fn main() -> ExitCode {
    let (args, server_command) = stdio::split_args(std::env::args_os());
    let json = args.iter().any(|a| a == "--json");
    let mut cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) if json && e.use_stderr() => {
            // A usage error under --json is JSON too (exit code 2, as clap's).
            let text = e.render().to_string();
            let message = text
                .lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ")
                .to_owned();
            let failure = errors::Failure {
                kind: "usage",
                exit: errors::Exit::Usage,
                message,
                causes: Vec::new(),
                hints: vec!["smcp --help lists the commands and options".to_owned()],
                code: None,
                status: None,
                data: None,
                task: None,
            };
            return report(&failure, true);
        }
        Err(e) => e.exit(),
    };
    if let Some(command) = server_command {
        cli.globals.server_command = command;
    }
    match &cli.command {
        Command::Completions(args) => return commands::completions::run(args, Cli::command()),
        Command::Man => return commands::man::run(Cli::command()),
        _ => {}
    }
    init_logging(&cli.globals.log);
    if let Some(code) = login_or_logout(&cli).await {
        return code;
    }
    #[cfg(feature = "inspect")]
    if let Command::Inspect(args) = &cli.command {
        return match inspect::run(args, &cli.globals).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => report(
                &errors::classify(&e, &connect::error_context(&cli.globals)),
                cli.globals.json,
            ),
        };
    }
    match connect::run(&cli.globals, &cli.command).await {
        (Ok(()), _) => ExitCode::SUCCESS,
        (Err(e), ctx) => report(&errors::classify(&e, &ctx), cli.globals.json),
    }
}

/// Prints `failure` (stderr, or `{"error": …}` on stdout under `--json`, except for a tool
/// error whose result is printed already) and returns its exit code.
fn report(failure: &errors::Failure, json: bool) -> ExitCode {
    if json {
        // A tool error's result is already the output (it says `isError: true`).
        if failure.exit != errors::Exit::Tool {
            println!("{}", failure.json());
        }
    } else {
        eprint!("{}", failure.text());
    }
    if failure.exit == errors::Exit::Cancelled {
        // Interrupted (Ctrl-C): exit now, even if a prompt is still waiting on stdin.
        std::process::exit(130);
    }
    ExitCode::from(failure.exit as u8)
}

/// Logs for smcp itself: on stderr, coloured only on a terminal without NO_COLOR. The TLS
/// verifier's own error line is silenced: the error report says it, with a hint.
fn init_logging(filter: &str) {
    let ansi = std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let filter =
        tracing_subscriber::EnvFilter::try_new(format!("{filter},rustls_platform_verifier=off"))
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr)
        .init();
}

/// `smcp login` and `smcp logout`, which run before any connection; `None` for every other
/// command.
async fn login_or_logout(cli: &Cli) -> Option<ExitCode> {
    let globals = &cli.globals;
    let (url, result) = match &cli.command {
        Command::Logout(args) => (args.server(globals), commands::logout::run(args, globals)),
        Command::Login(args) => (
            args.server(globals),
            commands::login::run(args, globals).await,
        ),
        _ => return None,
    };
    let ctx = errors::Context {
        stdio: false,
        url,
        sampling_cmd: false,
        ..connect::error_context(globals)
    };
    Some(match result {
        Ok(message) => {
            if globals.json {
                println!("{}", serde_json::json!({ "message": message }));
            } else {
                println!("{message}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => report(&errors::classify(&e, &ctx), globals.json),
    })
}
