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
use smcp_proto::basic::{Icon, Meta};
use smcp_proto::server::tools::{CallToolResult, Tool, ToolAnnotations};
use smcp_proto::x_mcp_header::{self, HeaderParam};

use super::error::BuildError;
use super::handler::HandlerError;
use super::schema::SchemaValidator;
use super::typemap::{Extensions, ToolData};
use crate::core::context::RequestContext;

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
    pub input: crate::core::mrtr::Input,
    /// What extensions resolved for this call before the handler runs (e.g. SEP-2631 file
    /// handles), by type.
    pub extensions: Extensions,
    pub(crate) tool: Arc<ToolEntry>,
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

    /// The tool's definition, as `tools/list` shows it.
    pub fn tool(&self) -> &Tool {
        &self.tool.tool
    }

    /// What an extension attached to this tool when it was registered, or the application
    /// with [`ToolBuilder::data`].
    pub fn tool_data<T: std::any::Any + Send + Sync>(&self) -> Option<&T> {
        self.tool.data.get::<T>()
    }

    /// The same call with another request context, e.g. a [`RequestContext::detach`]ed one
    /// for work that outlives the request. `input` keeps the context it was prepared with
    /// (it only reads the client's declared capabilities from it, which a detached context
    /// keeps).
    #[must_use]
    pub fn with_context(mut self, ctx: RequestContext) -> Self {
        self.ctx = ctx;
        self
    }

    /// What a later round of this call is built from (see [`CallTemplate::round`]): its
    /// tool, name and arguments. Cheap: the arguments are copied, the tool is shared.
    pub fn template(&self) -> CallTemplate {
        CallTemplate {
            name: self.name.clone(),
            arguments: self.arguments.clone(),
            tool: self.tool.clone(),
        }
    }
}

/// A `tools/call` without its context and input, kept by an extension that runs the call
/// again for a later round ([`ToolCall::template`]), e.g. a task whose handler asked for
/// input: each round's [`ToolCall`] comes from [`CallTemplate::round`], and runs through
/// the rest of the chain ([`crate::Next`], which is `Clone`) again, so extensions after the
/// one that holds the template resolve their part of the call anew.
#[derive(Clone)]
pub struct CallTemplate {
    name: String,
    arguments: Map<String, Value>,
    tool: Arc<ToolEntry>,
}

impl std::fmt::Debug for CallTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallTemplate")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl CallTemplate {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The call of one round: this tool and arguments, with `ctx` and `input` (typically
    /// [`crate::mrtr::Input::resume`] with the answers collected so far), nothing resolved
    /// by extensions yet.
    pub fn round(&self, ctx: RequestContext, input: crate::core::mrtr::Input) -> ToolCall {
        ToolCall {
            name: self.name.clone(),
            arguments: self.arguments.clone(),
            ctx,
            input,
            extensions: Extensions::new(),
            tool: self.tool.clone(),
        }
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
        tool: Tool::new(name, Map::new()),
        input_schema: None,
        output_schema: None,
        required_capabilities: Vec::new(),
        single_use_state: None,
        data: ToolData::new(),
        handler: None,
    }
}

/// Builder for a tool definition.
pub struct ToolBuilder {
    tool: Tool,
    input_schema: Option<Value>,
    output_schema: Option<Value>,
    required_capabilities: Vec<String>,
    single_use_state: Option<bool>,
    data: ToolData,
    handler: Option<Arc<dyn ToolHandler>>,
}

impl std::fmt::Debug for ToolBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolBuilder")
            .field("name", &self.tool.name)
            .finish_non_exhaustive()
    }
}

impl ToolBuilder {
    /// A human-readable title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.tool.title = Some(title.into());
        self
    }

    /// What the tool does (shown to the model).
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.tool.description = Some(description.into());
        self
    }

    /// The JSON Schema of the arguments: an object schema (`"type": "object"`). Defaults to
    /// `{"type": "object"}` (no arguments).
    #[must_use]
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// The JSON Schema of `structuredContent` (a JSON object).
    #[must_use]
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Behaviour hints (`readOnlyHint`, `destructiveHint`, …).
    #[must_use]
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = Some(annotations);
        self
    }

    /// Icons.
    #[must_use]
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.tool.icons = Some(icons);
        self
    }

    /// The tool's `_meta` object.
    #[must_use]
    pub fn meta(mut self, meta: Meta) -> Self {
        self.tool.meta = Some(meta);
        self
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
    /// the same state is refused (−32602) before the handler runs, checked by the server's
    /// [`crate::mrtr::ReplayGuard`]. The default for a tool annotated destructive
    /// (`destructiveHint: true`, not read-only); [`Self::reusable_state`] opts out.
    #[must_use]
    pub fn single_use_state(mut self) -> Self {
        self.single_use_state = Some(true);
        self
    }

    /// Lets a retry's `requestState` be presented more than once, also for a tool annotated
    /// destructive (its handler must then tolerate running its effect again).
    #[must_use]
    pub fn reusable_state(mut self) -> Self {
        self.single_use_state = Some(false);
        self
    }

    /// Attaches `value` to the tool, for an extension to read when the tool is registered
    /// ([`crate::Extension::register_tool`]'s `data`) and on every call
    /// ([`ToolCall::tool_data`]); e.g. `smcp-tasks`' `TaskSupport`. One value per type.
    #[must_use]
    pub fn data<T: std::any::Any + Send + Sync>(mut self, value: T) -> Self {
        self.data.insert(value);
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

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.tool.name
    }

    /// Validates the definition (extensions look at it next: `extension::register_tool`).
    pub(crate) fn build(self) -> Result<ToolEntry, BuildError> {
        let mut tool = self.tool;
        if !valid_tool_name(&tool.name) {
            return Err(BuildError::InvalidToolName(tool.name));
        }
        let handler = self.handler.ok_or_else(|| BuildError::MissingHandler {
            kind: "tool",
            name: tool.name.clone(),
        })?;
        let invalid = |name: &str, reason: String| BuildError::InvalidInputSchema {
            tool: name.to_owned(),
            reason,
        };
        let schema = self
            .input_schema
            .unwrap_or_else(|| serde_json::json!({"type": "object"}));
        let Value::Object(object) = &schema else {
            return Err(invalid(
                &tool.name,
                "inputSchema must be a JSON object".into(),
            ));
        };
        if object.get("type") != Some(&Value::String("object".into())) {
            return Err(invalid(
                &tool.name,
                "inputSchema must have \"type\": \"object\"".into(),
            ));
        }
        let validator = SchemaValidator::compile(&schema).map_err(|r| invalid(&tool.name, r))?;
        let Value::Object(schema) = schema else {
            return Err(invalid(
                &tool.name,
                "inputSchema must be a JSON object".into(),
            ));
        };
        let header_params = x_mcp_header::validate_annotations(&schema).map_err(|e| {
            BuildError::InvalidHeaderAnnotation {
                tool: tool.name.clone(),
                reason: e.to_string(),
            }
        })?;
        tool.input_schema = schema;
        tool.output_schema = match self.output_schema {
            None => None,
            Some(Value::Object(schema)) => Some(schema),
            Some(_) => {
                return Err(BuildError::InvalidOutputSchema {
                    tool: tool.name,
                    reason: "outputSchema must be a JSON object".into(),
                });
            }
        };
        let single_use_state = self.single_use_state.unwrap_or_else(|| {
            tool.annotations
                .as_ref()
                .is_some_and(|a| a.destructive_hint == Some(true) && a.read_only_hint != Some(true))
        });
        Ok(ToolEntry {
            tool,
            validator,
            header_params,
            required_capabilities: self.required_capabilities,
            single_use_state,
            handler,
            data: self.data,
        })
    }
}

/// A registered tool, ready to serve.
pub(crate) struct ToolEntry {
    /// The `Tool` object as listed by `tools/list`.
    pub(crate) tool: Tool,
    pub(crate) validator: SchemaValidator,
    pub(crate) header_params: Vec<HeaderParam>,
    pub(crate) required_capabilities: Vec<String>,
    pub(crate) single_use_state: bool,
    pub(crate) handler: Arc<dyn ToolHandler>,
    /// What extensions attached at registration.
    pub(crate) data: ToolData,
}

impl ToolEntry {
    pub(crate) fn name(&self) -> &str {
        &self.tool.name
    }
}

impl std::fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolEntry")
            .field("name", &self.tool.name)
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
