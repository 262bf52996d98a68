//! Tools (`server/tools.mdx`): a tool is a name, a JSON Schema and an async function.
//!
//! ```no_run
//! # use smcp_server::{tool, HandlerError};
//! # use smcp_proto::server::tools::CallToolResult;
//! # use serde_json::json;
//! let echo = tool("echo")
//!     .description("Returns its input")
//!     .input_schema(json!({
//!         "type": "object",
//!         "properties": {"text": {"type": "string"}},
//!         "required": ["text"]
//!     }))
//!     .handler(|call| async move {
//!         let text = call.arguments["text"].as_str().unwrap_or_default().to_owned();
//!         Ok::<_, HandlerError>(CallToolResult::text(text))
//!     });
//! ```
//!
//! At registration the input schema is compiled once (JSON Schema 2020-12 unless `$schema`
//! says otherwise; remote `$ref` is never fetched) and its `x-mcp-header` annotations are
//! checked, so a tool that clients would reject never gets listed.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use smcp_proto::server::tools::CallToolResult;
use smcp_proto::x_mcp_header::{self, HeaderParam};

use super::handler::HandlerError;
use crate::context::RequestContext;
use crate::error::BuildError;
use crate::schema::SchemaValidator;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// One `tools/call` as the handler sees it.
#[derive(Debug)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// The arguments, already validated against the input schema.
    pub arguments: Map<String, Value>,
    /// The request context: progress, logging, cancellation, client capabilities.
    pub ctx: RequestContext,
    /// Multi round-trip input: ask the client for answers, carry state between rounds.
    pub input: crate::mrtr::Input,
    /// Resolved SEP-2631 file arguments (and the file service for generated outputs).
    pub files: crate::files::FileArgs,
}

impl ToolCall {
    /// Deserializes the arguments into `T`; a mismatch is an ordinary tool failure that
    /// names the problem.
    pub fn args<T: DeserializeOwned>(&self) -> Result<T, HandlerError> {
        use serde::de::IntoDeserializer;
        // Deserialize straight from the map: no clone of the arguments.
        let entries = self
            .arguments
            .iter()
            .map(|(k, v)| (k.as_str(), v.into_deserializer()));
        T::deserialize(serde::de::value::MapDeserializer::<_, serde_json::Error>::new(entries))
            .map_err(|e| HandlerError::failed(format!("invalid arguments: {e}")))
    }

    /// A string argument, if present.
    pub fn str_arg(&self, key: &str) -> Option<&str> {
        self.arguments.get(key).and_then(Value::as_str)
    }
}

/// The function behind a tool.
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs the tool.
    fn call(&self, call: ToolCall) -> BoxFuture<Result<CallToolResult, HandlerError>>;
}

impl<F, Fut> ToolHandler for F
where
    F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CallToolResult, HandlerError>> + Send + 'static,
{
    fn call(&self, call: ToolCall) -> BoxFuture<Result<CallToolResult, HandlerError>> {
        Box::pin(self(call))
    }
}

/// Starts the definition of a tool.
pub fn tool(name: impl Into<String>) -> ToolBuilder {
    ToolBuilder {
        name: name.into(),
        descriptor: Map::new(),
        input_schema: None,
        required_capabilities: Vec::new(),
        single_use_state: false,
        handler: None,
    }
}

/// Builder for a tool definition.
pub struct ToolBuilder {
    name: String,
    descriptor: Map<String, Value>,
    input_schema: Option<Value>,
    required_capabilities: Vec<String>,
    single_use_state: bool,
    handler: Option<Arc<dyn ToolHandler>>,
}

impl std::fmt::Debug for ToolBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolBuilder")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ToolBuilder {
    /// A human-readable title.
    #[must_use]
    pub fn title(self, title: impl Into<String>) -> Self {
        self.member("title", Value::String(title.into()))
    }

    /// What the tool does (shown to the model).
    #[must_use]
    pub fn description(self, description: impl Into<String>) -> Self {
        self.member("description", Value::String(description.into()))
    }

    /// The JSON Schema of the arguments: an object schema (`"type": "object"`). Defaults to
    /// `{"type": "object"}` (no arguments).
    #[must_use]
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// The JSON Schema of `structuredContent`.
    #[must_use]
    pub fn output_schema(self, schema: Value) -> Self {
        self.member("outputSchema", schema)
    }

    /// `ToolAnnotations` (hints such as `readOnlyHint`), as JSON.
    #[must_use]
    pub fn annotations(self, annotations: Value) -> Self {
        self.member("annotations", annotations)
    }

    /// Icons, as a JSON array of `Icon` objects.
    #[must_use]
    pub fn icons(self, icons: Value) -> Self {
        self.member("icons", icons)
    }

    /// The tool's `_meta` object.
    #[must_use]
    pub fn meta(self, meta: Map<String, Value>) -> Self {
        self.member("_meta", Value::Object(meta))
    }

    /// The tool cannot run unless the client declared this top-level capability on the
    /// request (e.g. `"sampling"`); otherwise the call fails with −32021 before the handler
    /// runs.
    #[must_use]
    pub fn requires_client_capability(mut self, capability: impl Into<String>) -> Self {
        self.required_capabilities.push(capability.into());
        self
    }

    /// Every `requestState` this tool receives may be used once only: a second retry with
    /// the same state is refused (−32602) before the handler runs. Needs a
    /// [`crate::mrtr::ReplayGuard`] on the server.
    #[must_use]
    pub fn single_use_state(mut self) -> Self {
        self.single_use_state = true;
        self
    }

    /// The async function that runs the tool.
    #[must_use]
    pub fn handler<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, HandlerError>> + Send + 'static,
    {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// Like [`ToolBuilder::handler`], for a type implementing [`ToolHandler`] itself.
    #[must_use]
    pub fn handler_impl(mut self, handler: impl ToolHandler) -> Self {
        self.handler = Some(Arc::new(handler));
        self
    }

    fn member(mut self, key: &str, value: Value) -> Self {
        self.descriptor.insert(key.to_owned(), value);
        self
    }

    pub(crate) fn build(self) -> Result<ToolEntry, BuildError> {
        if !valid_tool_name(&self.name) {
            return Err(BuildError::InvalidToolName(self.name));
        }
        let handler = self.handler.ok_or_else(|| BuildError::MissingHandler {
            kind: "tool",
            name: self.name.clone(),
        })?;
        let schema = self
            .input_schema
            .unwrap_or_else(|| serde_json::json!({"type": "object"}));
        let Value::Object(schema_obj) = &schema else {
            return Err(BuildError::InvalidInputSchema {
                tool: self.name,
                reason: "inputSchema must be a JSON object".into(),
            });
        };
        if schema_obj.get("type") != Some(&Value::String("object".into())) {
            return Err(BuildError::InvalidInputSchema {
                tool: self.name,
                reason: "inputSchema must have \"type\": \"object\"".into(),
            });
        }
        let header_params = x_mcp_header::validate_annotations(schema_obj).map_err(|e| {
            BuildError::InvalidHeaderAnnotation {
                tool: self.name.clone(),
                reason: e.to_string(),
            }
        })?;
        let validator =
            SchemaValidator::compile(&schema).map_err(|reason| BuildError::InvalidInputSchema {
                tool: self.name.clone(),
                reason,
            })?;
        let file_fields = smcp_files::file_fields(schema_obj, true).map_err(|reason| {
            BuildError::InvalidInputSchema {
                tool: self.name.clone(),
                reason,
            }
        })?;
        let mut descriptor = Map::with_capacity(self.descriptor.len() + 2);
        descriptor.insert("name".into(), Value::String(self.name.clone()));
        descriptor.extend(self.descriptor);
        descriptor.insert("inputSchema".into(), schema);
        Ok(ToolEntry {
            name: self.name,
            descriptor: Value::Object(descriptor),
            validator,
            header_params,
            file_fields,
            required_capabilities: self.required_capabilities,
            single_use_state: self.single_use_state,
            handler,
        })
    }
}

/// A registered tool, ready to serve.
pub(crate) struct ToolEntry {
    pub(crate) name: String,
    /// The `Tool` object as listed by `tools/list`.
    pub(crate) descriptor: Value,
    pub(crate) validator: SchemaValidator,
    pub(crate) header_params: Vec<HeaderParam>,
    pub(crate) file_fields: Vec<smcp_files::FileField>,
    pub(crate) required_capabilities: Vec<String>,
    pub(crate) single_use_state: bool,
    pub(crate) handler: Arc<dyn ToolHandler>,
}

impl std::fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolEntry")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Tool names: 1–128 characters of `[A-Za-z0-9_.-]` (`server/tools.mdx` §Tool Names).
pub(crate) fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        assert!(valid_tool_name("test_simple_text"));
        assert!(valid_tool_name("a.b-c_9"));
        assert!(!valid_tool_name(""));
        assert!(!valid_tool_name("with space"));
        assert!(!valid_tool_name("slash/name"));
        assert!(!valid_tool_name(&"x".repeat(129)));
    }
}
