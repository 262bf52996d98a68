//! What building a server (or changing it at runtime) can fail with, and the code of a
//! request refused because the server is at a limit.

/// JSON-RPC code of a request refused because a limit is reached: listen streams (over HTTP
/// with 503 or 429), requests or subscriptions in flight on a stdio connection.
/// Application-defined, so outside −32768…−32000, which JSON-RPC and MCP reserve (REQUIREMENTS
/// A3 item 41); `error.data.limit` names the limit.
pub const SERVER_BUSY: i64 = -31_000;

/// A server could not be built from its configuration (bad tool definition, bad schema, …).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two items of the same kind share a name or URI.
    #[error("duplicate {kind} {name:?}")]
    Duplicate {
        /// "tool", "prompt", "resource" or "resource template".
        kind: &'static str,
        /// The clashing name or URI.
        name: String,
    },
    /// A tool's name does not follow the naming rule (1–128 chars of `[A-Za-z0-9_.-]`).
    #[error("invalid tool name {0:?}: use 1-128 characters of A-Z a-z 0-9 _ . -")]
    InvalidToolName(String),
    /// A tool's `inputSchema` is not a JSON object with `"type": "object"`.
    #[error("tool {tool:?}: {reason}")]
    InvalidInputSchema {
        /// The tool.
        tool: String,
        /// What is wrong.
        reason: String,
    },
    /// A tool's `x-mcp-header` annotations break the rules of the transport spec.
    #[error("tool {tool:?}: invalid x-mcp-header annotation: {reason}")]
    InvalidHeaderAnnotation {
        /// The tool.
        tool: String,
        /// The rule broken, naming the property.
        reason: String,
    },
    /// An item was declared without a handler.
    #[error("{kind} {name:?} has no handler")]
    MissingHandler {
        /// The kind of item.
        kind: &'static str,
        /// Its name.
        name: String,
    },
    /// A tool's `outputSchema` is not a JSON object.
    #[error("tool {tool:?}: {reason}")]
    InvalidOutputSchema {
        /// The tool.
        tool: String,
        /// What is wrong.
        reason: String,
    },
    /// A typed prompt's argument type cannot be prompt arguments (they are strings).
    #[error("prompt {prompt:?}: {reason}")]
    InvalidPromptArguments {
        /// The prompt.
        prompt: String,
        /// What is wrong, naming the field.
        reason: String,
    },
    /// An extension refused an item (e.g. SEP-2631 refuses a misplaced `x-mcp-file`).
    #[error("{extension}: {item:?}: {reason}")]
    Extension {
        /// The extension's name.
        extension: &'static str,
        /// The tool (or other item) refused.
        item: String,
        /// Why.
        reason: String,
    },
    /// Two extensions serve the same method, or an extension claims a core method.
    #[error("method {method:?} is served twice (extension {extension})")]
    DuplicateMethod {
        /// The method.
        method: &'static str,
        /// The extension that claimed it second.
        extension: &'static str,
    },
    /// The `requestState` key ring could not be set up.
    #[error("requestState keys: {0}")]
    Key(#[from] crate::core::keys::KeyError),
    /// A URI template could not be parsed.
    #[error("invalid URI template {template:?}: {reason}")]
    InvalidUriTemplate {
        /// The template.
        template: String,
        /// What is wrong.
        reason: String,
    },
}
