//! Streamable HTTP (`basic/transports/streamable-http.mdx`): the endpoint as a tower
//! `Service`, its validation pipeline, the response body, and an accept loop.

mod body;
mod pipeline;
mod serve;
mod service;

pub use body::McpBody;
pub use serve::{ServeOptions, serve};
pub use service::McpService;
