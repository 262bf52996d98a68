//! Reserved `_meta` keys (`basic/index.mdx` §_meta).

/// `params._meta` key carrying the request's protocol version (required on every request).
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `params._meta` key carrying the client's capabilities for this request (required).
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `params._meta` key carrying the client's `Implementation` (recommended).
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `result._meta` key carrying the server's `Implementation`.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `params._meta` key opting a request into `notifications/message` at or above a level.
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key tagging notifications and the close result of a `subscriptions/listen` stream.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// `params._meta` key opting a request into progress notifications.
pub const PROGRESS_TOKEN: &str = "progressToken";
/// W3C Trace Context parent, propagated unprefixed.
pub const TRACEPARENT: &str = "traceparent";
/// W3C Trace Context state.
pub const TRACESTATE: &str = "tracestate";
/// W3C Baggage.
pub const BAGGAGE: &str = "baggage";
