//! The `Mcp-Param-*` headers of a `tools/call`: each header a tool's input schema declares
//! (`x-mcp-header`) must mirror the argument it names (`basic/transports/streamable-http.mdx`
//! §Server Behavior for Custom Headers). Checked by dispatch once the tool is known, through
//! the core's `ParamMirror` seam.

use http::HeaderMap;
use serde_json::{Map, Value};
use smcp_proto::error::ErrorObject;
use smcp_proto::header;
use smcp_proto::x_mcp_header::HeaderParam;

use crate::core::dispatch::ParamMirror;

/// The headers of one request, as the core's view of mirrored params.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeaderMirror<'a>(pub(crate) &'a HeaderMap);

impl ParamMirror for HeaderMirror<'_> {
    fn check_tool_arguments(
        &self,
        params: &[HeaderParam],
        arguments: &Map<String, Value>,
    ) -> Result<(), ErrorObject> {
        if params.is_empty() {
            return Ok(());
        }
        check_param_headers(self.0, params, arguments).map_err(ErrorObject::header_mismatch)
    }
}

/// Every `Mcp-Param-*` header the tool declares must match the argument it mirrors
/// (`basic/transports/streamable-http.mdx` §Server Behavior for Custom Headers): present
/// exactly when the argument has a header form (`header::param_header_value`, the rule the
/// client follows: any value but `null`, an array or an object), equal after decoding,
/// numbers compared numerically (integers exactly). A value with no header form expects no
/// header: no annotated type admits it, so schema validation refuses the call by name.
pub(crate) fn check_param_headers(
    headers: &HeaderMap,
    params: &[HeaderParam],
    arguments: &Map<String, Value>,
) -> Result<(), String> {
    for param in params {
        let header_name = format!("mcp-param-{}", param.header_name.to_ascii_lowercase());
        let mut values = headers.get_all(header_name.as_str()).iter();
        let raw = values.next();
        if values.next().is_some() {
            return Err(format!(
                "Mcp-Param-{} appears more than once",
                param.header_name
            ));
        }
        let body = lookup(arguments, &param.path)
            .filter(|v| !matches!(v, Value::Null | Value::Array(_) | Value::Object(_)));
        match (raw, body) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(format!(
                    "Mcp-Param-{} header is required: argument {} has a value",
                    param.header_name,
                    param.path.join(".")
                ));
            }
            (Some(raw), body) => {
                let text = raw.to_str().map_err(|_| {
                    format!(
                        "Mcp-Param-{} contains invalid characters",
                        param.header_name
                    )
                })?;
                let Some(body) = body else {
                    return Err(format!(
                        "Mcp-Param-{} header is present but argument {} has no value a header can carry",
                        param.header_name,
                        param.path.join(".")
                    ));
                };
                match header::param_matches(text, body) {
                    Ok(true) => {}
                    Ok(false) => {
                        return Err(format!(
                            "Header mismatch: Mcp-Param-{} header value {text:?} does not match body value {body}",
                            param.header_name
                        ));
                    }
                    Err(e) => {
                        return Err(format!("Mcp-Param-{}: {e}", param.header_name));
                    }
                }
            }
        }
    }
    Ok(())
}

fn lookup<'a>(arguments: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let mut current = arguments.get(first)?;
    for key in rest {
        current = current.as_object()?.get(key)?;
    }
    Some(current)
}
