//! `bench-baseline`: the physical-limit baseline server for the smcpd benchmarks.
//!
//! A minimal hyper 1 HTTP/1.1 server with one route, `POST /mcp`, that parses the JSON-RPC
//! body with serde_json and answers a `tools/call` with no MCP validation at all:
//! `progress_echo` gets an SSE stream of 10 `notifications/progress` then the result (each
//! event its own body frame), anything else a JSON echo result. See the crate docs.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a CLI binary reports on stdout/stderr"
)]

use anyhow::Context as _;
use bytes::Bytes;
use clap::Parser;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use smcp_bench::wire::{self, CallRequest, PROGRESS_EVENTS, PROGRESS_TOOL};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::io::Write as _;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::net::TcpListener;

/// Command line of `bench-baseline`.
#[derive(Debug, Parser)]
#[command(version, about = "Physical-limit baseline MCP server for benchmarks")]
struct Args {
    /// Address to listen on (port 0 picks a free port; the actual address is printed).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Tokio worker threads; 0 = one per CPU this process may run on (1 when pinned with
    /// taskset, which uses a current-thread runtime).
    #[arg(long, default_value_t = 0)]
    threads: usize,
}

/// Largest request body accepted.
const MAX_BODY: usize = 1 << 20;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let threads = match args.threads {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    };
    let rt = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()?
    };
    rt.block_on(serve(args.listen))
}

async fn serve(listen: SocketAddr) -> anyhow::Result<()> {
    let listener = TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding {listen}"))?;
    let local = listener.local_addr()?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{local}/mcp")?;
        out.flush()?;
    }
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(conn) => conn,
            Err(e) => {
                eprintln!("accept: {e}");
                continue;
            }
        };
        // Without TCP_NODELAY a response written in several pieces stalls on Nagle + delayed ACK.
        if let Err(e) = stream.set_nodelay(true) {
            eprintln!("set_nodelay: {e}");
        }
        tokio::spawn(async move {
            // Connection errors (a client resetting mid-request) are expected at shutdown.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service_fn(handle))
                .await;
        });
    }
}

async fn handle(req: Request<Incoming>) -> Result<Response<OutBody>, Infallible> {
    if req.uri().path() != "/mcp" {
        return Ok(plain(StatusCode::NOT_FOUND, "not found"));
    }
    if req.method() != Method::POST {
        return Ok(plain(StatusCode::METHOD_NOT_ALLOWED, "POST only"));
    }
    let body = match http_body_util::Limited::new(req.into_body(), MAX_BODY)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(_) => return Ok(plain(StatusCode::BAD_REQUEST, "unreadable body")),
    };
    let call: CallRequest<'_> = match serde_json::from_slice(&body) {
        Ok(c) => c,
        Err(_) => {
            return Ok(json(
                StatusCode::BAD_REQUEST,
                Bytes::from_static(
                    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
                ),
            ));
        }
    };
    let text = call
        .params
        .arguments
        .as_ref()
        .map_or("", |a| a.text.as_ref());
    if call.params.name == PROGRESS_TOOL {
        let mut events = VecDeque::with_capacity(PROGRESS_EVENTS as usize + 1);
        if let Some(token) = call.params.meta.as_ref().and_then(|m| m.progress_token) {
            for i in 1..=PROGRESS_EVENTS {
                events.push_back(Bytes::from(wire::progress_event(token, i, PROGRESS_EVENTS)));
            }
        }
        events.push_back(Bytes::from(wire::result_event(call.id, text)));
        let mut resp = Response::new(OutBody::Events(events));
        let h = resp.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        h.insert("x-accel-buffering", HeaderValue::from_static("no"));
        return Ok(resp);
    }
    let mut out = Vec::with_capacity(128);
    wire::write_echo_result(&mut out, call.id, text);
    Ok(json(StatusCode::OK, Bytes::from(out)))
}

fn json(status: StatusCode, body: Bytes) -> Response<OutBody> {
    let mut resp = Response::new(OutBody::Full(Some(body)));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

fn plain(status: StatusCode, msg: &'static str) -> Response<OutBody> {
    let mut resp = Response::new(OutBody::Full(Some(Bytes::from_static(msg.as_bytes()))));
    *resp.status_mut() = status;
    resp
}

/// A response body: either one buffer (sent with `Content-Length`) or a queue of SSE events,
/// each yielded as its own frame (sent chunked).
#[derive(Debug)]
enum OutBody {
    Full(Option<Bytes>),
    Events(VecDeque<Bytes>),
}

impl Body for OutBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let next = match self.get_mut() {
            OutBody::Full(b) => b.take(),
            OutBody::Events(q) => q.pop_front(),
        };
        Poll::Ready(next.map(|b| Ok(Frame::data(b))))
    }

    fn is_end_stream(&self) -> bool {
        match self {
            OutBody::Full(b) => b.is_none(),
            OutBody::Events(q) => q.is_empty(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            OutBody::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            OutBody::Full(None) => SizeHint::with_exact(0),
            OutBody::Events(_) => SizeHint::default(),
        }
    }
}
