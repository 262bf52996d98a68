//! A real `redis-server` on a free loopback port, started and stopped by the test.
//!
//! The binary comes from `scripts/apt-tool redis-server` (installs it once if missing).
//! `SMCP_REDIS=skip` skips the tests that need it.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether the Redis tests are disabled (`SMCP_REDIS=skip`; see [`smcp_test_support::require_service`]).
pub(crate) fn skipped() -> bool {
    !smcp_test_support::require_service("Redis", "SMCP_REDIS")
}

/// The `redis-server` binary (installed if missing; the test fails if it cannot be had).
pub(crate) fn redis_server() -> PathBuf {
    let mut cmd = Command::new(smcp_test_support::root().join("scripts/apt-tool"));
    cmd.arg("redis-server");
    PathBuf::from(smcp_test_support::provide("Redis", "SMCP_REDIS", &mut cmd))
}

pub(crate) use smcp_test_support::free_port;

/// A running `redis-server`; killed on drop.
pub(crate) struct RedisServer {
    pub(crate) port: u16,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts one on a free port and waits until it answers.
    pub(crate) fn start() -> Self {
        Self::start_on(free_port())
    }

    /// Starts one on `port` (a restart keeps the port) and waits until it answers.
    pub(crate) fn start_on(port: u16) -> Self {
        let child = Command::new(redis_server())
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        let mut server = Self {
            port,
            child: Some(child),
        };
        server.wait_ready();
        server
    }

    /// `redis://127.0.0.1:<port>/`.
    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                use std::io::{Read, Write};
                s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
                if s.write_all(b"PING\r\n").is_ok() {
                    let mut buf = [0u8; 7];
                    if s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n" {
                        return;
                    }
                }
            }
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().unwrap()) {
                panic!("redis-server exited: {status}");
            }
            assert!(Instant::now() < deadline, "redis-server did not answer");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills it (SIGKILL) and waits for it.
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}
