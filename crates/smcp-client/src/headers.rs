//! The request-metadata headers of every POST (A2): `MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name` and the `Mcp-Param-*` mirrors of `x-mcp-header` annotated arguments.
//!
//! The annotations come from the most recent `tools/list` ([`ToolCatalog`]); a tool whose
//! annotations break the rules is remembered with the reason so a call to it is refused
//! locally instead of being sent (A2 items 27, 34).

use std::collections::HashMap;

use http::header::{HeaderName, HeaderValue};
use serde_json::{Map, Value};
use smcp_proto::ext::tasks;
use smcp_proto::header::{encode_header_value, param_header_value};
use smcp_proto::messages::method;
use smcp_proto::server::tools::Tool;
use smcp_proto::x_mcp_header::{HeaderParam, extract_values, validate_annotations};

use crate::error::{Error, Kind, Result};

/// What the client learned from the last `tools/list`: the header parameters of each valid
/// tool and the reason each invalid tool was rejected.
#[derive(Debug, Default)]
pub(crate) struct ToolCatalog {
    params: HashMap<String, Vec<HeaderParam>>,
    rejected: HashMap<String, String>,
    /// The compiled `outputSchema` of each listed tool that declares one.
    outputs: HashMap<String, std::sync::Arc<crate::output::OutputCheck>>,
    /// Tools annotated `readOnlyHint` or `idempotentHint`: a call may be resent.
    repeatable: std::collections::HashSet<String>,
}

impl ToolCatalog {
    /// Whether the last listing annotated `name` as read-only or idempotent.
    pub(crate) fn repeatable(&self, name: &str) -> bool {
        self.repeatable.contains(name)
    }

    /// Validates every tool, replacing the catalog, and returns the usable tools.
    ///
    /// Invalid tools are dropped with a warning naming the tool and the rule it breaks.
    pub(crate) fn replace(&mut self, tools: Vec<Tool>) -> Vec<Tool> {
        self.params.clear();
        self.rejected.clear();
        self.outputs.clear();
        self.repeatable.clear();
        self.extend(tools)
    }

    /// Validates every tool, adding them to the catalog (one page of a listing), and returns
    /// the usable tools.
    pub(crate) fn extend(&mut self, tools: Vec<Tool>) -> Vec<Tool> {
        let mut usable = Vec::with_capacity(tools.len());
        for tool in tools {
            match validate_annotations(&tool.input_schema) {
                Ok(params) => {
                    self.rejected.remove(&tool.name);
                    let hints = tool.annotations.as_ref();
                    if hints.is_some_and(|a| {
                        a.read_only_hint == Some(true) || a.idempotent_hint == Some(true)
                    }) {
                        self.repeatable.insert(tool.name.clone());
                    } else {
                        self.repeatable.remove(&tool.name);
                    }
                    self.params.insert(tool.name.clone(), params);
                    match tool
                        .output_schema
                        .as_ref()
                        .and_then(|schema| crate::output::OutputCheck::compile(&tool.name, schema))
                    {
                        Some(check) => {
                            self.outputs
                                .insert(tool.name.clone(), std::sync::Arc::new(check));
                        }
                        None => {
                            self.outputs.remove(&tool.name);
                        }
                    }
                    usable.push(tool);
                }
                Err(invalid) => {
                    tracing::warn!(
                        tool = %tool.name,
                        reason = %invalid,
                        "dropping tool with an invalid x-mcp-header annotation"
                    );
                    self.params.remove(&tool.name);
                    self.outputs.remove(&tool.name);
                    self.rejected.insert(tool.name, invalid.to_string());
                }
            }
        }
        usable
    }

    /// The header parameters for a call to `name`: empty for a tool never listed (a client
    /// that never fetched the schema sends none), an error for a rejected tool.
    pub(crate) fn params_for(&self, name: &str) -> Result<Vec<HeaderParam>> {
        if let Some(reason) = self.rejected.get(name) {
            return Err(Error::new(Kind::InvalidTool {
                name: name.to_owned(),
                reason: reason.clone(),
            }));
        }
        Ok(self.params.get(name).cloned().unwrap_or_default())
    }

    /// The output check of `name`, when its listing declared an `outputSchema`.
    pub(crate) fn output_check(
        &self,
        name: &str,
    ) -> Option<std::sync::Arc<crate::output::OutputCheck>> {
        self.outputs.get(name).cloned()
    }

    /// True once a `tools/list` has been seen that mentions `name` (valid or not).
    pub(crate) fn knows(&self, name: &str) -> bool {
        self.params.contains_key(name) || self.rejected.contains_key(name)
    }
}

/// The `Mcp-Name` source of a method: `params.name`, `params.uri`, `params.taskId` (the
/// SEP-2663 task methods, so a load balancer can route a task's requests to its instance), or
/// none.
fn name_member(method_name: &str) -> Option<&'static str> {
    match method_name {
        method::TOOLS_CALL | method::PROMPTS_GET => Some("name"),
        method::RESOURCES_READ => Some("uri"),
        tasks::METHOD_GET | tasks::METHOD_UPDATE | tasks::METHOD_CANCEL => Some(tasks::NAME_MEMBER),
        _ => None,
    }
}

fn header_value(name: &str, value: &str) -> Result<HeaderValue> {
    HeaderValue::from_str(value)
        .map_err(|_| Error::protocol(format!("cannot send {name} header value {value:?}")))
}

/// Builds the MCP headers of one POST.
pub(crate) fn request_headers(
    version: &str,
    method_name: &str,
    params: &Map<String, Value>,
    header_params: &[HeaderParam],
) -> Result<Vec<(HeaderName, HeaderValue)>> {
    // The current version and the methods of the specification are constants: their values
    // are not copied for every request.
    let version = if version == smcp_proto::PROTOCOL_VERSION {
        HeaderValue::from_static(smcp_proto::PROTOCOL_VERSION)
    } else {
        header_value("MCP-Protocol-Version", version)?
    };
    let method_value = match method::client_request(method_name) {
        Some(known) => HeaderValue::from_static(known),
        None => header_value("Mcp-Method", method_name)?,
    };
    let mut out = Vec::with_capacity(3 + header_params.len());
    out.push((HeaderName::from_static("mcp-protocol-version"), version));
    out.push((HeaderName::from_static("mcp-method"), method_value));
    if let Some(member) = name_member(method_name)
        && let Some(Value::String(name)) = params.get(member)
    {
        out.push((
            HeaderName::from_static("mcp-name"),
            header_value("Mcp-Name", &encode_header_value(name))?,
        ));
    }
    if !header_params.is_empty() {
        let empty = Map::new();
        let arguments = params
            .get("arguments")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        for (header, value) in extract_values(header_params, arguments) {
            // Every value with a header form, also one the schema will refuse (the server
            // then says what is wrong with it, instead of a missing header).
            let Some(value) = value.and_then(param_header_value) else {
                continue;
            };
            let name = HeaderName::from_bytes(header.as_bytes())
                .map_err(|_| Error::protocol(format!("invalid header name {header:?}")))?;
            out.push((name, header_value(&header, &value)?));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn tool(name: &str, schema: Value) -> Tool {
        Tool::new(name, obj(schema))
    }

    fn headers(params: Value, hp: &[HeaderParam]) -> Vec<(String, String)> {
        request_headers("2026-07-28", "tools/call", &obj(params), hp)
            .unwrap_or_default()
            .into_iter()
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("?").to_owned()))
            .collect()
    }

    #[test]
    fn mirrors_annotated_values_and_omits_null() {
        let mut catalog = ToolCatalog::default();
        let usable = catalog.replace(vec![tool(
            "t",
            json!({"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": "integer", "x-mcp-header": "N"},
                "v": {"type": "boolean", "x-mcp-header": "Verbose"},
                "q": {"type": "string"}
            }}),
        )]);
        assert_eq!(usable.len(), 1);
        let hp = catalog.params_for("t").unwrap_or_default();
        let h = headers(
            json!({"name": "t", "arguments": {"region": " Hello, 世界", "n": 42, "v": null, "q": "x"}}),
            &hp,
        );
        assert!(h.contains(&("mcp-name".into(), "t".into())));
        assert!(h.contains(&("mcp-param-n".into(), "42".into())));
        assert!(h.contains(&(
            "mcp-param-region".into(),
            "=?base64?IEhlbGxvLCDkuJbnlYw=?=".into()
        )));
        assert!(
            !h.iter()
                .any(|(n, _)| n == "mcp-param-verbose" || n == "mcp-param-q")
        );
        // Integers of any size, in decimal; values the schema refuses, as written.
        let h = headers(
            json!({"name": "t", "arguments": {"n": 9_007_199_254_740_993_i64, "region": 2.5}}),
            &hp,
        );
        assert!(h.contains(&("mcp-param-n".into(), "9007199254740993".into())));
        assert!(h.contains(&("mcp-param-region".into(), "2.5".into())));
        let h = headers(
            json!({"name": "t", "arguments": {"n": [1], "region": {}}}),
            &hp,
        );
        assert!(!h.iter().any(|(n, _)| n.starts_with("mcp-param-")), "{h:?}");
    }

    #[test]
    fn invalid_tools_are_dropped_and_refused() {
        let mut catalog = ToolCatalog::default();
        let usable = catalog.replace(vec![
            tool("ok", json!({"type": "object"})),
            tool(
                "bad",
                json!({"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}}),
            ),
        ]);
        assert_eq!(usable.len(), 1);
        let err = catalog.params_for("bad").err();
        assert!(err.is_some_and(|e| e.kind() == crate::ErrorKind::InvalidTool));
        assert!(catalog.knows("bad") && catalog.knows("ok") && !catalog.knows("new"));
        assert!(catalog.params_for("new").is_ok_and(|p| p.is_empty()));
    }

    #[test]
    fn mcp_name_is_sentinel_encoded_and_uri_used_for_resources() {
        let h = request_headers(
            "2026-07-28",
            "resources/read",
            &obj(json!({"uri": "file:///a b.txt"})),
            &[],
        )
        .unwrap_or_default();
        assert!(
            h.iter()
                .any(|(n, v)| n == "mcp-name" && v == "file:///a b.txt")
        );
        let h = request_headers(
            "2026-07-28",
            "prompts/get",
            &obj(json!({"name": " x"})),
            &[],
        )
        .unwrap_or_default();
        assert!(
            h.iter()
                .any(|(n, v)| n == "mcp-name" && v == "=?base64?IHg=?=")
        );
        let h =
            request_headers("2026-07-28", "tools/list", &obj(json!({})), &[]).unwrap_or_default();
        assert!(!h.iter().any(|(n, _)| n == "mcp-name"));
        for m in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let h = request_headers("2026-07-28", m, &obj(json!({"taskId": "t-1"})), &[])
                .unwrap_or_default();
            assert!(h.iter().any(|(n, v)| n == "mcp-name" && v == "t-1"), "{m}");
            assert!(h.iter().any(|(n, v)| n == "mcp-method" && v == m), "{m}");
        }
    }
}
