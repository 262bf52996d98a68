//! Extensions to the 2026-07-28 protocol.
//!
//! - [`files`]: SEP-2631 "File Objects and Transfer" wire types.
//! - [`data_uri`]: RFC 2397 `data:` URIs as SEP-2356 inline file values.
//! - [`tasks`]: SEP-2663 "Tasks Extension" wire types.
//! - [`ui`]: SEP-1865 "MCP Apps" (`io.modelcontextprotocol/ui`) wire types.

pub mod data_uri;
pub mod files;
pub mod tasks;
pub mod ui;
