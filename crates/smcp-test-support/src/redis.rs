//! A real `redis-server` on a free loopback port, started and stopped by the test: the tests
//! of `smcp-redis` and the multi-instance tests of `smcpd` share it.
//!
//! The binary comes from `scripts/apt-tool redis-server` (installs it once if missing).
//! `SMCP_REDIS=skip` skips the tests that need it ([`skipped`]); otherwise a test whose
//! `redis-server` cannot be had fails (see [`crate::provide`]).

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether the Redis tests are disabled (`SMCP_REDIS=skip`; see [`crate::require_service`]).
pub fn skipped() -> bool {
    !crate::require_service("Redis", "SMCP_REDIS")
}

/// The `redis-server` binary (installed if missing; the test fails if it cannot be had).
pub fn redis_server() -> PathBuf {
    let mut cmd = Command::new(crate::root().join("scripts/apt-tool"));
    cmd.arg("redis-server");
    PathBuf::from(crate::provide("Redis", "SMCP_REDIS", &mut cmd))
}

/// A running `redis-server` (no persistence); killed on drop.
#[derive(Debug)]
pub struct RedisServer {
    /// The loopback port it listens on.
    pub port: u16,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts one on a free port and waits until it answers.
    pub fn start() -> Self {
        Self::start_on(crate::free_port())
    }

    /// Starts one on `port` (a restart keeps the port) and waits until it answers.
    pub fn start_on(port: u16) -> Self {
        let child = Command::new(redis_server())
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start redis-server: {e}"));
        let mut server = Self {
            port,
            child: Some(child),
        };
        server.wait_ready();
        server
    }

    /// `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Polls with `PING` until `+PONG` (at most 10 s); panics if the server exits first.
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
                if s.write_all(b"PING\r\n").is_ok() {
                    let mut buf = [0u8; 7];
                    if s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n" {
                        return;
                    }
                }
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().unwrap_or_else(|e| panic!("redis-server: {e}")))
            {
                panic!("redis-server exited: {status}");
            }
            assert!(Instant::now() < deadline, "redis-server did not answer");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills it (SIGKILL) and waits for it.
    pub fn kill(&mut self) {
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
