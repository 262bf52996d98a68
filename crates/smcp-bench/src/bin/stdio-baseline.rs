//! `stdio-baseline`: the physical-limit baseline for the stdio benchmark.
//!
//! Newline-delimited JSON-RPC on stdin/stdout written the way `smcpd --stdio` reads and writes
//! (a current-thread tokio runtime, standard input and output opened as smcpd opens them —
//! through the reactor when they are pipes or Unix sockets, `smcp_server::StdioInput` and
//! `StdioOutput` — a buffered reader, a buffered writer flushed when no more input is
//! waiting), with no MCP at all: each line is parsed
//! with serde_json and answered with the echo result, byte for byte as smcpd writes it
//! (`smcp_bench::wire::write_echo_result`).
#![allow(clippy::print_stderr, reason = "a CLI binary reports on stderr")]

use smcp_bench::wire::{self, CallRequest};
use smcp_server::{StdioInput, StdioOutput};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, BufWriter};

fn main() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(serve())
}

async fn serve() -> anyhow::Result<()> {
    // `--blocking-io`: tokio's blocking pool, as `smcpd --stdio-blocking-io`.
    let blocking = std::env::args().skip(1).any(|a| a == "--blocking-io");
    let (input, output) = if blocking {
        (StdioInput::blocking(), StdioOutput::blocking())
    } else {
        (StdioInput::open(), StdioOutput::open())
    };
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut output = BufWriter::with_capacity(64 * 1024, output);
    let mut line = Vec::with_capacity(1024);
    let mut response = Vec::with_capacity(1024);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        response.clear();
        match serde_json::from_slice::<CallRequest<'_>>(&line) {
            Ok(request) => {
                let text = request.params.arguments.map(|a| a.text).unwrap_or_default();
                wire::write_echo_result(&mut response, request.id, &text);
            }
            Err(e) => {
                eprintln!("stdio-baseline: unreadable request: {e}");
                continue;
            }
        }
        response.push(b'\n');
        output.write_all(&response).await?;
        if input.buffer().is_empty() {
            output.flush().await?;
        }
    }
    output.flush().await?;
    Ok(())
}
