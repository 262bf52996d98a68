//! The command line: the options every command takes (`globals`), and the command.

use clap::Parser;

use crate::commands::Command;
use crate::errors;
use crate::globals::Globals;

/// The examples and the exit code table at the end of `--help`.
const AFTER_HELP: &str = "\
Examples:
  smcp tools                                   # the tools of smcpd on http://127.0.0.1:8931/mcp
  smcp --url https://host/mcp --ca-cert ca.pem tools
  smcp tool add                                # one tool's schema (* = required argument)
  smcp call add --arg a=1 --arg b=2
  smcp call add --json-args '{\"a\": 1, \"b\": 2}' --json | jq .structuredContent
  smcp call count --arg to=5 --log-level debug # the server's log lines on stderr
  smcp call ask_llm --arg text=… --sampling-cmd 'llm -s terse'
  smcp complete --prompt greet name A          # completion/complete
  smcp listen                                  # every list change the server offers
  smcp --stdio tools -- smcpd --stdio          # a server launched as a child process
  smcp --url http://127.0.0.1:8000/mcp --protocol-version 2025-11-25 tools   # an older server
  smcp completions bash > ~/.local/share/bash-completion/completions/smcp
  smcp man | man -l -
";

// The command line: the options every command takes, and the command. No doc comment, which
// would replace the long help.
#[derive(Debug, Parser)]
#[command(
    version,
    about = "Call MCP servers (2026-07-28, and the stateful 2025 revisions) over Streamable HTTP or stdio",
    override_usage = "smcp [OPTIONS] <COMMAND>\n       smcp --stdio [OPTIONS] <COMMAND> -- <PROGRAM> [ARGS]...",
    after_help = "Run `smcp --help` for examples and the exit codes.",
    after_long_help = format!("{AFTER_HELP}\n{}\n", errors::EXIT_CODES)
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) globals: Globals,
    #[command(subcommand)]
    pub(crate) command: Command,
}
