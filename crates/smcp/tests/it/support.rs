//! What several test modules start: a server on 127.0.0.1:0 on its own runtime thread (the
//! `smcp` binary under test is another process, which calls it).
#![allow(clippy::unwrap_used)]

use std::future::Future;
use std::net::SocketAddr;

/// Runs `serve` with a listener bound to 127.0.0.1:0 on a runtime thread of its own, for the
/// life of the test process; the listener's address.
pub(crate) fn on_thread<F, Fut>(serve: F) -> SocketAddr
where
    F: FnOnce(tokio::net::TcpListener) -> Fut + Send + 'static,
    Fut: Future<Output = ()>,
{
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            serve(listener).await;
        });
    });
    rx.recv().unwrap()
}

/// The server `make` builds (on the server's thread), over plain HTTP with `options`: its
/// `/mcp` URL's address.
pub(crate) fn serve_mcp(
    make: impl FnOnce() -> smcp_server::Server + Send + 'static,
    options: smcp_server::ServeOptions,
) -> SocketAddr {
    on_thread(move |listener| async move {
        smcp_server::serve(
            listener,
            make().endpoint("/mcp"),
            options,
            std::future::pending(),
        )
        .await
        .unwrap();
    })
}

/// smcpd's demo server (loopback security policy) over plain HTTP: its `/mcp` URL.
pub(crate) fn smcpd() -> String {
    let addr = serve_mcp(
        || smcpd::demo_server(smcp_server::SecurityPolicy::loopback()).unwrap(),
        smcp_server::ServeOptions::default(),
    );
    format!("http://{addr}/mcp")
}
