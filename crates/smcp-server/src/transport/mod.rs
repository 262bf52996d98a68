//! Streamable HTTP (`basic/transports/streamable-http.mdx`): the endpoint as a tower
//! `Service`, its validation pipeline, the response body, `subscriptions/listen` streams, and
//! an accept loop.

mod body;
mod endpoint;
pub(crate) mod listen;
mod pipeline;
mod serve;
mod service;
pub mod tls;

pub use body::McpBody;
pub use endpoint::{Endpoint, EndpointBody};
pub use listen::SERVER_BUSY;
pub use serve::{ConnectionInfo, ServeOptions, serve};
pub use service::McpService;
