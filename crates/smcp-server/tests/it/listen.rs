//! `subscriptions/listen` in-process: acknowledgement first, the honoured filter, ids of both
//! JSON types, change delivery from the bus, keep-alives, bad filters, caps and shutdown.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value
)]

use crate::common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::*;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{
    Change, HandlerError, InProcessBus, ListenConfig, McpBody, SERVER_BUSY, Server, ServerBuilder,
    tool,
};

const SUB_ID: &str = "io.modelcontextprotocol/subscriptionId";

fn echo_tool(name: &str) -> smcp_server::ToolBuilder {
    tool(name)
        .description("test tool")
        .handler(|_call| async { Ok::<_, HandlerError>(CallToolResult::text("ok")) })
}

fn builder() -> ServerBuilder {
    Server::builder("listen-test", "1.0.0").tool(echo_tool("first"))
}

fn listen_body(id: Value, filter: Value) -> Value {
    body(id, "subscriptions/listen", json!({"notifications": filter}))
}

/// An open listen response: status, and the body to read frame by frame.
struct Stream {
    status: http::StatusCode,
    headers: http::HeaderMap,
    body: McpBody,
    decoder: smcp_proto::sse::SseDecoder,
    raw: Vec<Bytes>,
}

impl Stream {
    async fn open(server: &Server, b: &Value) -> Self {
        Self::open_req(server, request(b).body(full(b)).unwrap()).await
    }

    async fn open_req(server: &Server, req: http::Request<http_body_util::Full<Bytes>>) -> Self {
        let response = server.service().handle(req).await;
        let (parts, body) = response.into_parts();
        Self {
            status: parts.status,
            headers: parts.headers,
            body,
            decoder: smcp_proto::sse::SseDecoder::new(),
            raw: Vec::new(),
        }
    }

    /// The next raw body chunk; `None` at the end of the stream.
    async fn chunk(&mut self) -> Option<Bytes> {
        let frame = tokio::time::timeout(Duration::from_secs(30), self.body.frame())
            .await
            .expect("a frame within 30 s")?;
        let data = frame.unwrap().into_data().unwrap();
        self.raw.push(data.clone());
        Some(data)
    }

    /// The next JSON message, skipping comments; `None` at the end of the stream.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(event) = self.decoder.next_event().unwrap() {
                return Some(serde_json::from_str(&event.data).unwrap());
            }
            let chunk = self.chunk().await?;
            self.decoder.feed(&chunk);
        }
    }

    /// Asserts nothing arrives for a while (the body stays pending).
    async fn assert_quiet(&mut self) {
        let r = tokio::time::timeout(Duration::from_millis(100), self.body.frame()).await;
        assert!(r.is_err(), "expected no frame, got {r:?}");
    }

    fn reply(self) -> Reply {
        let bytes = self.raw.concat();
        Reply {
            status: self.status,
            headers: self.headers,
            bytes: Bytes::from(bytes),
        }
    }

    async fn into_error(mut self) -> Reply {
        while self.chunk().await.is_some() {}
        self.reply()
    }
}

#[tokio::test]
async fn ack_is_first_and_carries_the_honoured_filter() {
    let server = builder().tools_list_changed(true).build().unwrap();
    let b = listen_body(
        json!(1),
        json!({
            "toolsListChanged": true,
            "promptsListChanged": true,
            "resourcesListChanged": false,
            "resourceSubscriptions": ["file:///x"],
            "someFutureKey": {"ignored": true}
        }),
    );
    let mut s = Stream::open(&server, &b).await;
    assert_eq!(s.status, 200);
    assert_eq!(s.headers["content-type"], "text/event-stream");
    let ack = s.next().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUB_ID], 1);
    // prompts and resource subscriptions are not advertised, so they are omitted.
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    assert!(ack.get("id").is_none());
    s.assert_quiet().await;
    assert_eq!(server.open_listen_streams(), 1);
}

#[tokio::test]
async fn subscription_id_keeps_its_json_type() {
    for id in [json!("7"), json!(7), json!("listen-a"), json!(-3)] {
        let server = builder().tools_list_changed(true).build().unwrap();
        let mut s = Stream::open(
            &server,
            &listen_body(id.clone(), json!({"toolsListChanged": true})),
        )
        .await;
        let ack = s.next().await.unwrap();
        assert_eq!(ack["params"]["_meta"][SUB_ID], id, "ack");
        server.publish(Change::ToolsListChanged);
        let note = s.next().await.unwrap();
        assert_eq!(note["method"], "notifications/tools/list_changed");
        assert_eq!(note["params"]["_meta"][SUB_ID], id, "notification");
        server.shutdown();
        let close = s.next().await.unwrap();
        assert_eq!(close["id"], id, "close result id");
        assert_eq!(close["result"]["resultType"], "complete");
        assert_eq!(close["result"]["_meta"][SUB_ID], id, "close result _meta");
        assert!(s.next().await.is_none(), "the stream ends after the result");
    }
}

#[tokio::test]
async fn prompts_only_listener_never_sees_tool_changes() {
    let server = builder().list_changed(true).build().unwrap();
    let mut prompts = Stream::open(
        &server,
        &listen_body(json!("p"), json!({"promptsListChanged": true})),
    )
    .await;
    let mut tools = Stream::open(
        &server,
        &listen_body(json!("t"), json!({"toolsListChanged": true})),
    )
    .await;
    prompts.next().await.unwrap();
    tools.next().await.unwrap();
    server.publish(Change::ToolsListChanged);
    server.publish(Change::ResourcesListChanged);
    server.publish(Change::PromptsListChanged);
    let first = prompts.next().await.unwrap();
    assert_eq!(first["method"], "notifications/prompts/list_changed");
    prompts.assert_quiet().await;
    assert_eq!(
        tools.next().await.unwrap()["method"],
        "notifications/tools/list_changed"
    );
    tools.assert_quiet().await;
}

#[tokio::test]
async fn resource_updates_reach_subscribed_uris_and_sub_resources() {
    let server = builder().resources_subscribe(true).build().unwrap();
    let mut s = Stream::open(
        &server,
        &listen_body(
            json!(5),
            json!({"resourceSubscriptions": ["file:///dir/", "test://one"], "toolsListChanged": true}),
        ),
    )
    .await;
    let ack = s.next().await.unwrap();
    // tools.listChanged is not advertised; the URIs are honoured as sent.
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions": ["file:///dir/", "test://one"]})
    );
    for uri in [
        "file:///dir/a.txt",
        "file:///directory",
        "test://one",
        "test://onex",
        "file:///dir/b/c \"q\"",
    ] {
        server.notify_resource_updated(uri);
    }
    server.publish(Change::ToolsListChanged);
    let mut got = Vec::new();
    for _ in 0..3 {
        let n = s.next().await.unwrap();
        assert_eq!(n["method"], "notifications/resources/updated");
        assert_eq!(n["params"]["_meta"][SUB_ID], 5);
        got.push(n["params"]["uri"].as_str().unwrap().to_owned());
    }
    assert_eq!(
        got,
        ["file:///dir/a.txt", "test://one", "file:///dir/b/c \"q\""]
    );
    s.assert_quiet().await;
}

#[tokio::test]
async fn runtime_changes_swap_the_catalog_and_publish() {
    let server = builder()
        .list_changed(true)
        .resources_subscribe(true)
        .build()
        .unwrap();
    let svc = server.service();
    let discover = call(&svc, &body(json!(1), "server/discover", json!({})))
        .await
        .json();
    let caps = &discover["result"]["capabilities"];
    assert_eq!(caps["tools"], json!({"listChanged": true}));
    assert_eq!(caps["prompts"], json!({"listChanged": true}));
    assert_eq!(
        caps["resources"],
        json!({"subscribe": true, "listChanged": true})
    );

    let mut s = Stream::open(
        &server,
        &listen_body(json!(9), json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true})),
    )
    .await;
    s.next().await.unwrap();

    server.add_tool(echo_tool("second")).unwrap();
    assert!(server.add_tool(echo_tool("second")).is_err(), "duplicate");
    assert_eq!(
        s.next().await.unwrap()["method"],
        "notifications/tools/list_changed"
    );
    let names = |v: Value| -> Vec<String> {
        v["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let list = call(&svc, &body(json!(2), "tools/list", json!({})))
        .await
        .json();
    assert_eq!(names(list), ["first", "second"]);
    assert!(
        server
            .replace_tool(echo_tool("first").description("new"))
            .unwrap()
    );
    assert_eq!(
        s.next().await.unwrap()["method"],
        "notifications/tools/list_changed"
    );
    assert!(server.remove_tool("second"));
    assert!(
        !server.remove_tool("second"),
        "already gone: nothing published"
    );
    assert_eq!(
        s.next().await.unwrap()["method"],
        "notifications/tools/list_changed"
    );
    let list = call(&svc, &body(json!(3), "tools/list", json!({})))
        .await
        .json();
    assert_eq!(names(list.clone()), ["first"]);
    assert_eq!(list["result"]["tools"][0]["description"], "new");

    server
        .add_prompt(
            smcp_server::prompt("p").handler(|_g| async {
                Ok(smcp_proto::server::prompts::GetPromptResult::new(vec![]))
            }),
        )
        .unwrap();
    assert_eq!(
        s.next().await.unwrap()["method"],
        "notifications/prompts/list_changed"
    );
    server
        .add_resource(smcp_server::resource("test://r", "r").handler(|_r| async { Ok(vec![]) }))
        .unwrap();
    assert_eq!(
        s.next().await.unwrap()["method"],
        "notifications/resources/list_changed"
    );
    assert!(server.remove_resource("test://r"));
    assert_eq!(
        s.next().await.unwrap()["method"],
        "notifications/resources/list_changed"
    );
    s.assert_quiet().await;
}

#[tokio::test]
async fn a_call_in_flight_keeps_its_catalog_snapshot() {
    let gate = Arc::new(tokio::sync::Notify::new());
    let g = gate.clone();
    let server = Server::builder("snap", "1")
        .tools_list_changed(true)
        .tool(tool("slow").handler(move |_call| {
            let g = g.clone();
            async move {
                g.notified().await;
                Ok::<_, HandlerError>(CallToolResult::text("finished"))
            }
        }))
        .build()
        .unwrap();
    let svc = server.service();
    let b = body(json!(1), "tools/call", json!({"name": "slow"}));
    let pending = tokio::spawn(async move { call(&svc, &b).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(server.remove_tool("slow"));
    gate.notify_one();
    let reply = pending.await.unwrap().json();
    assert_eq!(reply["result"]["content"][0]["text"], "finished");
}

#[tokio::test]
async fn wrong_shape_filters_are_invalid_params_before_any_stream() {
    let server = builder()
        .list_changed(true)
        .resources_subscribe(true)
        .listen(ListenConfig {
            max_resource_subscriptions: 2,
            ..ListenConfig::default()
        })
        .build()
        .unwrap();
    let svc = server.service();
    let bad = [
        json!({}),
        json!({"notifications": null}),
        json!({"notifications": []}),
        json!({"notifications": "tools"}),
        json!({"notifications": {"toolsListChanged": "yes"}}),
        json!({"notifications": {"promptsListChanged": 1}}),
        json!({"notifications": {"resourceSubscriptions": "file:///x"}}),
        json!({"notifications": {"resourceSubscriptions": ["ok", 3]}}),
        json!({"notifications": {"resourceSubscriptions": ["a", "b", "c"]}}),
    ];
    for (i, params) in bad.into_iter().enumerate() {
        let id = json!(100 + i);
        let reply = call(
            &svc,
            &body(id.clone(), "subscriptions/listen", params.clone()),
        )
        .await;
        assert_eq!(reply.content_type(), "application/json", "{params}");
        reply.assert_error(400, -32602, Some(id));
    }
    assert_eq!(server.open_listen_streams(), 0);
}

#[tokio::test]
async fn unknown_filter_keys_and_nulls_are_ignored() {
    let server = builder().tools_list_changed(true).build().unwrap();
    let mut s = Stream::open(
        &server,
        &listen_body(
            json!(1),
            json!({"toolsListChanged": true, "promptsListChanged": null, "x-future": [1, 2]}),
        ),
    )
    .await;
    assert_eq!(s.status, 200);
    assert_eq!(
        s.next().await.unwrap()["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
}

#[tokio::test]
async fn listen_without_event_stream_in_accept_is_406() {
    let server = builder().tools_list_changed(true).build().unwrap();
    let b = listen_body(json!("a1"), json!({"toolsListChanged": true}));
    for accept in ["application/json", "application/*"] {
        let mut req = request(&b).body(full(&b)).unwrap();
        req.headers_mut().insert("accept", accept.parse().unwrap());
        let reply = send(&server.service(), req).await;
        reply.assert_error(406, -32600, Some(json!("a1")));
    }
    assert_eq!(server.open_listen_streams(), 0);
}

#[tokio::test]
async fn listen_without_change_capabilities_is_method_not_found() {
    let server = builder().build().unwrap();
    let reply = call(
        &server.service(),
        &listen_body(json!(4), json!({"toolsListChanged": true})),
    )
    .await;
    reply.assert_error(404, -32601, Some(json!(4)));
}

#[tokio::test(start_paused = true)]
async fn quiet_streams_get_comment_keep_alives() {
    let server = builder()
        .tools_list_changed(true)
        .listen(ListenConfig {
            keep_alive: Duration::from_secs(10),
            ..ListenConfig::default()
        })
        .build()
        .unwrap();
    let mut s = Stream::open(
        &server,
        &listen_body(json!(1), json!({"toolsListChanged": true})),
    )
    .await;
    s.next().await.unwrap();
    let start = tokio::time::Instant::now();
    assert_eq!(s.chunk().await.unwrap(), Bytes::from_static(b":\n\n"));
    assert_eq!(start.elapsed(), Duration::from_secs(10));
    // An event resets the timer; the comment comes 10 s after it.
    tokio::time::sleep(Duration::from_secs(4)).await;
    server.publish(Change::ToolsListChanged);
    assert!(s.chunk().await.unwrap().starts_with(b"data: "));
    let after_event = tokio::time::Instant::now();
    assert_eq!(s.chunk().await.unwrap(), Bytes::from_static(b":\n\n"));
    assert_eq!(after_event.elapsed(), Duration::from_secs(10));
}

#[tokio::test]
async fn caps_refuse_with_503_in_total_and_429_per_address() {
    let server = builder()
        .tools_list_changed(true)
        .listen(ListenConfig {
            max_streams: 3,
            max_streams_per_address: 2,
            ..ListenConfig::default()
        })
        .build()
        .unwrap();
    let with_peer = |id: i64, peer: &str| {
        let b = listen_body(json!(id), json!({"toolsListChanged": true}));
        let mut req = request(&b).body(full(&b)).unwrap();
        let addr: SocketAddr = peer.parse().unwrap();
        req.extensions_mut()
            .insert(axum::extract::ConnectInfo(addr));
        req
    };
    let a1 = Stream::open_req(&server, with_peer(1, "10.0.0.1:1000")).await;
    let a2 = Stream::open_req(&server, with_peer(2, "10.0.0.1:1001")).await;
    assert_eq!((a1.status.as_u16(), a2.status.as_u16()), (200, 200));
    let refused = Stream::open_req(&server, with_peer(3, "10.0.0.1:1002")).await;
    assert_eq!(refused.status, 429);
    let reply = refused.into_error().await;
    reply.assert_error(429, SERVER_BUSY, Some(json!(3)));
    // An application-defined code: outside the range JSON-RPC and MCP reserve (A3 item 41).
    let code = reply.json()["error"]["code"].as_i64().unwrap();
    assert!(!(-32768..=-32000).contains(&code), "{code}");
    assert_eq!(reply.json()["error"]["data"]["scope"], "address");
    assert!(reply.headers.contains_key("retry-after"));

    let b1 = Stream::open_req(&server, with_peer(4, "10.0.0.2:1000")).await;
    assert_eq!(b1.status, 200);
    assert_eq!(server.open_listen_streams(), 3);
    // The total cap also applies without a peer address (in-process).
    let full_up = Stream::open(
        &server,
        &listen_body(json!("x"), json!({"toolsListChanged": true})),
    )
    .await;
    let reply = full_up.into_error().await;
    reply.assert_error(503, SERVER_BUSY, Some(json!("x")));
    assert_eq!(reply.json()["error"]["data"]["scope"], "server");

    drop(a1);
    assert_eq!(server.open_listen_streams(), 2);
    let again = Stream::open_req(&server, with_peer(5, "10.0.0.1:1003")).await;
    assert_eq!(again.status, 200, "a closed stream gives its place back");
}

#[tokio::test]
async fn a_dropped_stream_frees_its_slot_and_subscription() {
    let bus = Arc::new(InProcessBus::new());
    let server = builder()
        .tools_list_changed(true)
        .change_bus(bus.clone())
        .build()
        .unwrap();
    let mut s = Stream::open(
        &server,
        &listen_body(json!(1), json!({"toolsListChanged": true})),
    )
    .await;
    s.next().await.unwrap();
    assert_eq!((server.open_listen_streams(), bus.subscribers()), (1, 1));
    drop(s);
    assert_eq!((server.open_listen_streams(), bus.subscribers()), (0, 0));
}

#[tokio::test]
async fn a_stream_that_overflows_ends_without_the_result() {
    let bus = Arc::new(InProcessBus::new());
    let server = builder()
        .resources_subscribe(true)
        .change_bus(bus.clone())
        .listen(ListenConfig {
            buffer: 4,
            ..ListenConfig::default()
        })
        .build()
        .unwrap();
    let mut s = Stream::open(
        &server,
        &listen_body(json!(1), json!({"resourceSubscriptions": ["test://"]})),
    )
    .await;
    s.next().await.unwrap();
    // The client reads nothing while changes pile up past the buffer.
    for i in 0..10 {
        server.notify_resource_updated(&format!("test://r/{i}"));
    }
    assert_eq!(bus.subscribers(), 1);
    assert!(s.next().await.is_none(), "ended, with no listen result");
    drop(s);
    assert_eq!((server.open_listen_streams(), bus.subscribers()), (0, 0));
}

#[tokio::test]
async fn shutdown_ends_every_stream_gracefully_and_refuses_new_ones() {
    let server = builder().tools_list_changed(true).build().unwrap();
    let mut streams = Vec::new();
    for i in 0..3 {
        let mut s = Stream::open(
            &server,
            &listen_body(json!(i), json!({"toolsListChanged": true})),
        )
        .await;
        s.next().await.unwrap();
        streams.push(s);
    }
    server.shutdown();
    for (i, mut s) in streams.into_iter().enumerate() {
        let close = s.next().await.unwrap();
        assert_eq!(close["id"], i);
        assert_eq!(close["result"]["resultType"], "complete");
        assert!(close["result"]["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
        assert!(s.next().await.is_none());
    }
    assert_eq!(server.open_listen_streams(), 0);
    let late = Stream::open(
        &server,
        &listen_body(json!(9), json!({"toolsListChanged": true})),
    )
    .await;
    late.into_error()
        .await
        .assert_error(503, SERVER_BUSY, Some(json!(9)));
}

#[tokio::test]
async fn two_servers_sharing_a_bus_hear_each_others_changes() {
    let bus: Arc<dyn smcp_server::ChangeBus> = Arc::new(InProcessBus::new());
    let a = builder()
        .tools_list_changed(true)
        .change_bus(bus.clone())
        .build()
        .unwrap();
    let b = builder()
        .tools_list_changed(true)
        .change_bus(bus)
        .build()
        .unwrap();
    let mut on_b = Stream::open(
        &b,
        &listen_body(json!(1), json!({"toolsListChanged": true})),
    )
    .await;
    on_b.next().await.unwrap();
    a.add_tool(echo_tool("added-on-a")).unwrap();
    assert_eq!(
        on_b.next().await.unwrap()["method"],
        "notifications/tools/list_changed"
    );
}
