//! `smcp-conformance-files`: the SEP-2631 conformance suite CLI.
//!
//! ```text
//! smcp-conformance-files server --url URL [--ca-cert PEM] [--insecure-loopback-http] [-o DIR] [--expected-failures FILE]
//! smcp-conformance-files client --command CMD [--scenario NAME] [--timeout-secs N] [-o DIR] [--expected-failures FILE]
//! ```
//! Exit codes: 0 = every check passed or was expected to fail; 1 = unexpected FAILURE/WARNING or
//! a stale expected-failures entry; 2 = the suite itself could not run.

use std::path::PathBuf;
use std::process::ExitCode;

use std::io::Write as _;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use smcp_conformance_files::{client_leg, report, server_leg};

#[derive(Debug, Parser)]
#[command(
    name = "smcp-conformance-files",
    about = "SEP-2631 (File Objects and Transfer) conformance suite"
)]
struct Cli {
    #[command(subcommand)]
    leg: Leg,
}

#[derive(Debug, Subcommand)]
enum Leg {
    /// Drive a server under test.
    Server {
        /// MCP endpoint of the server under test.
        #[arg(long)]
        url: String,
        /// PEM CA certificate to trust (self-signed reference servers and their descriptors).
        #[arg(long)]
        ca_cert: Option<PathBuf>,
        /// Accept `http://127.0.0.1` descriptors (development only).
        #[arg(long)]
        insecure_loopback_http: bool,
        /// Wait up to this many seconds for an upload descriptor to expire (0: skip that check).
        #[arg(long, default_value_t = 0)]
        max_expiry_wait_secs: u64,
        /// Output directory.
        #[arg(short = 'o', long, default_value = "target/conformance/files/server")]
        output: PathBuf,
        /// Expected-failures YAML (`server:` / `client:` lists).
        #[arg(long)]
        expected_failures: Option<PathBuf>,
    },
    /// Run a client under test against the mock server.
    Client {
        /// Shell command of the client under test; the mock URL is appended as last argument.
        #[arg(long)]
        command: String,
        /// Run only this scenario.
        #[arg(long)]
        scenario: Option<String>,
        /// Seconds a client process may run per scenario.
        #[arg(long, default_value_t = 30)]
        timeout_secs: u64,
        /// Output directory.
        #[arg(short = 'o', long, default_value = "target/conformance/files/client")]
        output: PathBuf,
        /// Expected-failures YAML.
        #[arg(long)]
        expected_failures: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("smcp-conformance-files: {e:#}");
            }
            ExitCode::from(2)
        }
    }
}

fn run() -> anyhow::Result<bool> {
    let cli = Cli::parse();
    let rt = tokio::runtime::Runtime::new()?;
    let (leg, results, output, baseline_path) = match cli.leg {
        Leg::Server {
            url,
            ca_cert,
            insecure_loopback_http,
            max_expiry_wait_secs,
            output,
            expected_failures,
        } => {
            let ca_pem = ca_cert
                .map(|p| std::fs::read(&p).with_context(|| format!("reading {}", p.display())))
                .transpose()?;
            let opts = server_leg::ServerLegOptions {
                url,
                ca_pem,
                insecure_loopback_http,
                max_expiry_wait: std::time::Duration::from_secs(max_expiry_wait_secs),
            };
            (
                "server",
                rt.block_on(server_leg::run(&opts))?,
                output,
                expected_failures,
            )
        }
        Leg::Client {
            command,
            scenario,
            timeout_secs,
            output,
            expected_failures,
        } => {
            let opts = client_leg::ClientLegOptions {
                client: client_leg::ClientUnderTest::Command(command),
                scenarios: scenario.map(|s| vec![s]),
                timeout: std::time::Duration::from_secs(timeout_secs),
                work_dir: output.join("work"),
            };
            (
                "client",
                rt.block_on(client_leg::run(&opts))?,
                output,
                expected_failures,
            )
        }
    };
    let baseline = match baseline_path {
        Some(p) => report::Baseline::parse(
            &std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?,
        )?,
        None => report::Baseline::default(),
    };
    let summary = report::summarize(leg, &results, &baseline);
    report::write_results(&output, &results, &summary)?;
    // A closed stdout (e.g. `| head`) must not turn a verdict into a panic.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{}results: {}",
        report::render(&summary),
        output.display()
    );
    Ok(summary.ok)
}
