//! `--stdio`: the server's command line after `--`, its environment and its stderr.
//!
//! `smcp --stdio [OPTIONS] <COMMAND> -- PROGRAM [ARGS]…`: everything after the first `--` that
//! follows `--stdio` is the server's command line, passed on untouched (so it may hold its own
//! flags, even `--stdio`). Without `--stdio` a `--` keeps its usual meaning for clap.

use std::ffi::OsString;

use anyhow::{Context as _, bail};
use smcp_client::{ServerStderr, StdioCommand};

/// Splits the process arguments into smcp's own and, when `--stdio` comes before a `--`, the
/// server's command line.
pub(crate) fn split_args(
    args: impl IntoIterator<Item = OsString>,
) -> (Vec<OsString>, Option<Vec<OsString>>) {
    let mut own = Vec::new();
    let mut stdio = false;
    let mut args = args.into_iter();
    for arg in args.by_ref() {
        if arg == "--" && stdio {
            return (own, Some(args.collect()));
        }
        if arg == "--stdio" {
            stdio = true;
        }
        own.push(arg);
    }
    (own, None)
}

/// The child to launch: `command[0]` with the rest as arguments, `NAME=VALUE` environment
/// additions, and stderr forwarded unless `quiet`.
pub(crate) fn command(
    command: &[OsString],
    envs: &[String],
    quiet: bool,
) -> anyhow::Result<StdioCommand> {
    let Some((program, args)) = command.split_first() else {
        bail!(
            "--stdio needs the server's command line after `--`, e.g. `smcp --stdio tools -- smcpd --stdio`"
        );
    };
    // Ctrl-C is smcp's to handle: it closes the server's stdin (the server then exits).
    let mut out = StdioCommand::new(program)
        .args(args)
        .own_process_group(true);
    for env in envs {
        let (k, v) = env
            .split_once('=')
            .filter(|(k, _)| !k.is_empty())
            .with_context(|| format!("--env expects NAME=VALUE, got {env:?}"))?;
        out = out.env(k, v);
    }
    Ok(out.stderr(if quiet {
        ServerStderr::Null
    } else {
        ServerStderr::Inherit
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_server_command_is_what_follows_the_double_dash() {
        let (own, server) = split_args(os(&[
            "smcp", "--stdio", "call", "echo", "--", "srv", "--stdio", "--", "x",
        ]));
        assert_eq!(own, os(&["smcp", "--stdio", "call", "echo"]));
        assert_eq!(server, Some(os(&["srv", "--stdio", "--", "x"])));

        // Global flags may follow the subcommand.
        let (own, server) = split_args(os(&["smcp", "tools", "--stdio", "--", "srv"]));
        assert_eq!(own, os(&["smcp", "tools", "--stdio"]));
        assert_eq!(server, Some(os(&["srv"])));

        // Without --stdio, `--` is left to clap.
        let (own, server) = split_args(os(&["smcp", "call", "--", "-odd-name"]));
        assert_eq!(own, os(&["smcp", "call", "--", "-odd-name"]));
        assert_eq!(server, None);
    }

    #[test]
    fn env_and_missing_command_errors() {
        assert!(command(&[], &[], false).is_err());
        assert!(command(&os(&["srv"]), &["NOVALUE".to_owned()], false).is_err());
        assert!(command(&os(&["srv"]), &["=x".to_owned()], false).is_err());
        assert!(command(&os(&["srv", "a"]), &["K=V=W".to_owned()], true).is_ok());
    }
}
