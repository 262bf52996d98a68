//! Server features (`server/index.mdx`): discovery, tools, resources, prompts and utilities.

pub mod discover;
pub mod prompts;
pub mod resources;
pub mod tools;
pub mod utilities;
