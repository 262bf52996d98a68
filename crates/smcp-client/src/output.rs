//! `structuredContent` checked against the tool's `outputSchema` (`server/tools.mdx` §Output
//! Schema: clients SHOULD validate structured results; REQUIREMENTS A13.81).
//!
//! The schema comes from the last `tools/list` that listed the tool; a tool never listed is
//! not checked. Schemas are compiled once, offline (a remote `$ref` is never fetched: such a
//! schema is left unchecked, with a warning). Without the `output-schema` feature nothing is
//! checked.

use serde_json::{Map, Value};
use smcp_proto::server::tools::CallToolResult;

use crate::error::{Error, Kind, Result};

/// A compiled `outputSchema`.
pub(crate) struct OutputCheck {
    #[cfg(feature = "output-schema")]
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for OutputCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputCheck").finish_non_exhaustive()
    }
}

impl OutputCheck {
    /// Compiles the `outputSchema` of `tool`; `None` (with a warning) when it does not compile.
    #[cfg(feature = "output-schema")]
    pub(crate) fn compile(tool: &str, schema: &Map<String, Value>) -> Option<Self> {
        let mut options = jsonschema::options().offline();
        if !schema.contains_key("$schema") {
            options = options.with_draft(jsonschema::Draft::Draft202012);
        }
        match options.build(&Value::Object(schema.clone())) {
            Ok(validator) => Some(Self { validator }),
            Err(e) => {
                tracing::warn!(tool, error = %e, "outputSchema does not compile; results are not checked");
                None
            }
        }
    }

    /// Without the `output-schema` feature nothing is checked.
    #[cfg(not(feature = "output-schema"))]
    pub(crate) fn compile(_tool: &str, _schema: &Map<String, Value>) -> Option<Self> {
        None
    }

    /// Checks a result of `tool`: a successful result must carry a conforming
    /// `structuredContent`; an `isError` result is not checked.
    pub(crate) fn check(&self, tool: &str, result: &CallToolResult) -> Result<()> {
        if result.is_error() {
            return Ok(());
        }
        let Some(structured) = &result.structured_content else {
            return Err(mismatch(tool, "", "structuredContent is missing"));
        };
        self.validate(tool, structured)
    }

    #[cfg(feature = "output-schema")]
    fn validate(&self, tool: &str, structured: &Value) -> Result<()> {
        match self.validator.iter_errors(structured).next() {
            None => Ok(()),
            Some(e) => {
                let path = e.instance_path().to_string();
                Err(mismatch(
                    tool,
                    &path,
                    &e.masked_with("the value").to_string(),
                ))
            }
        }
    }

    #[cfg(not(feature = "output-schema"))]
    #[allow(clippy::unused_self)]
    fn validate(&self, _tool: &str, _structured: &Value) -> Result<()> {
        Ok(())
    }
}

fn mismatch(tool: &str, path: &str, problem: &str) -> Error {
    let path = if path.is_empty() { "/" } else { path };
    Error::new(Kind::OutputSchema {
        tool: tool.to_owned(),
        path: path.to_owned(),
        problem: problem.to_owned(),
    })
}
