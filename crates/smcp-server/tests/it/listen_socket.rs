//! `subscriptions/listen` over real sockets through [`smcp_server::serve`]: shutdown with
//! streams open, a client that disconnects mid-event, a client that never reads, and the
//! per-address cap (which needs the peer address `serve` provides).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{Change, HandlerError, InProcessBus, ListenConfig, ServeOptions, Server, tool};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

struct Running {
    addr: SocketAddr,
    server: Server,
    bus: Arc<InProcessBus>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<smcp_server::Drained>>,
}

async fn start(config: ListenConfig) -> Running {
    let bus = Arc::new(InProcessBus::new());
    let server = Server::builder("socket-test", "1")
        .tool(tool("t").handler(|_c| async { Ok::<_, HandlerError>(CallToolResult::text("ok")) }))
        .tools_list_changed(true)
        .resources_subscribe(true)
        .change_bus(bus.clone())
        .listen(config)
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let options = ServeOptions {
        shutdown_timeout: Duration::from_secs(5),
        ..ServeOptions::default()
    };
    let task = tokio::spawn(smcp_server::serve(
        listener,
        server.service(),
        options,
        async move {
            let _ = stopped.await;
        },
    ));
    Running {
        addr,
        server,
        bus,
        stop: Some(stop),
        task,
    }
}

/// Sends a listen request on a new connection.
async fn listen(addr: SocketAddr, id: Value, filter: Value) -> TcpStream {
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            },
            "notifications": filter
        }
    })
    .to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    stream
}

/// Reads the raw response until `want` JSON messages arrived (or EOF); returns them, the
/// status line, and whether the connection reached EOF.
struct Reader {
    stream: TcpStream,
    pending: Vec<u8>,
    status: Option<String>,
}

impl Reader {
    fn new(stream: TcpStream) -> Self {
        Self {
            stream,
            pending: Vec::new(),
            status: None,
        }
    }

    async fn messages(&mut self, want: usize) -> (Vec<Value>, bool) {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            while let Some(nl) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=nl).collect();
                let line = String::from_utf8_lossy(&line);
                let line = line.trim_end();
                if self.status.is_none() && line.starts_with("HTTP/1.1") {
                    self.status = Some(line.to_owned());
                }
                if let Some(json) = line.strip_prefix("data: ") {
                    out.push(serde_json::from_str(json).unwrap());
                }
            }
            if out.len() >= want {
                return (out, false);
            }
            let n = tokio::time::timeout(Duration::from_secs(10), self.stream.read(&mut buf))
                .await
                .expect("response within 10 s")
                .unwrap_or(0);
            if n == 0 {
                return (out, true);
            }
            self.pending.extend_from_slice(&buf[..n]);
        }
    }
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn serve_shutdown_sends_each_listen_result_and_closes() {
    let mut running = start(ListenConfig::default()).await;
    let mut readers = Vec::new();
    for id in [json!(1), json!("two"), json!(3)] {
        let mut r =
            Reader::new(listen(running.addr, id.clone(), json!({"toolsListChanged": true})).await);
        let (ack, _) = r.messages(1).await;
        assert_eq!(ack[0]["method"], "notifications/subscriptions/acknowledged");
        readers.push((id, r));
    }
    assert_eq!(running.server.open_listen_streams(), 3);
    running.stop.take().unwrap().send(()).unwrap();
    for (id, mut r) in readers {
        let (msgs, eof) = r.messages(usize::MAX).await;
        assert!(eof, "connection closed after the result");
        assert_eq!(msgs.len(), 1, "{msgs:?}");
        assert_eq!(msgs[0]["id"], id);
        assert_eq!(msgs[0]["result"]["resultType"], "complete");
        assert_eq!(
            msgs[0]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            id
        );
    }
    let drained = tokio::time::timeout(Duration::from_secs(5), running.task)
        .await
        .expect("serve returns once the streams ended")
        .unwrap()
        .unwrap();
    // Listen streams end with their result: nothing was cut.
    assert_eq!(drained, smcp_server::Drained::Complete);
    assert_eq!(running.server.open_listen_streams(), 0);
    assert_eq!(running.bus.subscribers(), 0);
}

#[tokio::test]
async fn a_client_that_disconnects_mid_event_frees_its_slot() {
    let running = start(ListenConfig {
        max_streams_per_address: 2,
        ..ListenConfig::default()
    })
    .await;
    let mut a = Reader::new(
        listen(
            running.addr,
            json!("a"),
            json!({"resourceSubscriptions": ["big://"]}),
        )
        .await,
    );
    let mut b =
        Reader::new(listen(running.addr, json!("b"), json!({"toolsListChanged": true})).await);
    a.messages(1).await;
    b.messages(1).await;
    // The per-address cap counts connections from 127.0.0.1, which `serve` knows.
    let mut c =
        Reader::new(listen(running.addr, json!("c"), json!({"toolsListChanged": true})).await);
    let (refusal, _) = c.messages(0).await;
    assert!(refusal.is_empty());
    let mut raw = vec![0u8; 4096];
    let n = c.stream.read(&mut raw).await.unwrap();
    assert!(
        String::from_utf8_lossy(&raw[..n]).starts_with("HTTP/1.1 429"),
        "{}",
        String::from_utf8_lossy(&raw[..n])
    );

    // A 1 MiB event; the client reads a little of it and goes away.
    running
        .server
        .notify_resource_updated(&format!("big://{}", "x".repeat(1 << 20)));
    let mut partial = vec![0u8; 512];
    let n = a.stream.read(&mut partial).await.unwrap();
    assert!(n > 0);
    drop(a);
    eventually("a's slot and subscription are freed", || {
        running.server.open_listen_streams() == 1 && running.bus.subscribers() == 1
    })
    .await;
    running.server.publish(Change::ToolsListChanged);
    let (msgs, _) = b.messages(1).await;
    assert_eq!(msgs[0]["method"], "notifications/tools/list_changed");
}

#[tokio::test]
async fn a_client_that_never_reads_is_disconnected() {
    let running = start(ListenConfig {
        buffer: 8,
        ..ListenConfig::default()
    })
    .await;
    let mut idle = listen(
        running.addr,
        json!(1),
        json!({"resourceSubscriptions": ["big://"]}),
    )
    .await;
    eventually("the stream is open", || {
        running.server.open_listen_streams() == 1
    })
    .await;
    // 64 KiB events, paced, until the kernel's and hyper's buffers are full and the bus
    // buffer of 8 overflows: then the connection is dropped.
    let filler = "y".repeat(64 * 1024);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut i = 0u64;
    while running.server.open_listen_streams() > 0 {
        assert!(Instant::now() < deadline, "still open after {i} events");
        running
            .server
            .notify_resource_updated(&format!("big://{i}/{filler}"));
        i += 1;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert_eq!(running.bus.subscribers(), 0);
    // The socket was closed by the server: reading drains what was in flight, then ends.
    let mut sink = vec![0u8; 1 << 20];
    let mut total = 0usize;
    loop {
        match tokio::time::timeout(Duration::from_secs(10), idle.read(&mut sink)).await {
            Ok(Ok(0) | Err(_)) => break,
            Ok(Ok(n)) => total += n,
            Err(_) => panic!("connection still open after {total} bytes"),
        }
    }
    assert!(
        total < i as usize * (64 * 1024 + 200),
        "not every event was buffered"
    );
}
