//! `smcpd`, the smcp reference server: its demo tool set and its configuration.
//!
//! The binary (`src/main.rs`) parses flags and serves [`demo_server`] on loopback.

pub mod demo;

pub use demo::{demo_server, demo_server_with, run_clock};

/// Where `smcpd` listens when not told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8931";
