//! One catalog from every upstream's tools: each name with its upstream's prefix, the ones
//! `tools.allow`/`tools.deny` leave out dropped, two upstreams offering one name refused.
//! Registered in the server at run time, so that an upstream's list can change (its
//! `tools/list_changed`, a restart) and the gateway's listeners hear it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::Value;
use smcp_proto::server::tools::{CallToolResult, Tool};
use smcp_server::tools::BoxFuture;
use smcp_server::{HandlerError, Server, ToolBuilder, ToolCall, ToolHandler};

use crate::error::GatewayError;
use crate::held::HeldCalls;
use crate::upstream::Upstream;

/// Which upstream serves each name.
pub(crate) type Owners = BTreeMap<String, String>;

/// The tools `upstream` listed that the gateway serves, by the name it serves them under.
pub(crate) fn served(upstream: &Upstream, tools: Vec<Tool>) -> Vec<(String, Tool)> {
    tools
        .into_iter()
        .filter(|t| upstream.config.tools.admits(&t.name))
        .map(|t| (format!("{}{}", upstream.qualifier, t.name), t))
        .collect()
}

/// Claims every name of `tools` for `upstream`; a name another upstream holds is refused.
pub(crate) fn claim(
    owners: &mut Owners,
    upstream: &str,
    tools: &[(String, Tool)],
) -> Result<(), GatewayError> {
    for (name, _) in tools {
        if let Some(first) = owners.get(name)
            && first != upstream
        {
            return Err(GatewayError::Collision {
                kind: "tool",
                name: name.clone(),
                first: first.clone(),
                second: upstream.to_owned(),
            });
        }
    }
    owners.retain(|_, owner| owner != upstream);
    for (name, _) in tools {
        owners.insert(name.clone(), upstream.to_owned());
    }
    Ok(())
}

/// The served tool: the upstream's definition under the gateway's name, calling through.
fn proxy(name: &str, tool: Tool, upstream: &Arc<Upstream>, held: &Arc<HeldCalls>) -> ToolBuilder {
    let mut builder = smcp_server::tool(name).input_schema(Value::Object(tool.input_schema));
    if let Some(title) = tool.title {
        builder = builder.title(title);
    }
    if let Some(description) = tool.description {
        builder = builder.description(description);
    }
    if let Some(schema) = tool.output_schema {
        builder = builder.output_schema(Value::Object(schema));
    }
    if let Some(annotations) = tool.annotations {
        builder = builder.annotations(annotations);
    }
    if let Some(icons) = tool.icons {
        builder = builder.icons(icons);
    }
    if let Some(meta) = tool.meta {
        builder = builder.meta(meta);
    }
    builder.handler_impl(Proxy {
        upstream: Arc::clone(upstream),
        tool: tool.name,
        held: Arc::clone(held),
    })
}

/// Puts `tools` of `upstream` in the server in place of what it had there (`had`); a tool
/// the server refuses (a schema it cannot compile, a bad header annotation) is left out and
/// logged. Returns the names now served.
pub(crate) fn install(
    server: &Server,
    upstream: &Arc<Upstream>,
    held: &Arc<HeldCalls>,
    had: &[String],
    tools: Vec<(String, Tool)>,
) -> Vec<String> {
    let now: HashMap<&str, ()> = tools.iter().map(|(n, _)| (n.as_str(), ())).collect();
    for name in had {
        if !now.contains_key(name.as_str()) {
            server.remove_tool(name);
        }
    }
    let mut served = Vec::with_capacity(tools.len());
    for (name, tool) in tools {
        let upstream_name = tool.name.clone();
        match server.replace_tool(proxy(&name, tool, upstream, held)) {
            Ok(_) => served.push(name),
            Err(e) => {
                tracing::warn!(
                    upstream = %upstream.name(),
                    tool = %upstream_name,
                    error = %e,
                    "upstream tool left out"
                );
                server.remove_tool(&name);
            }
        }
    }
    served
}

/// A served tool's handler.
struct Proxy {
    upstream: Arc<Upstream>,
    /// The tool's name upstream.
    tool: String,
    held: Arc<HeldCalls>,
}

impl ToolHandler for Proxy {
    fn call(&self, call: ToolCall) -> BoxFuture<Result<CallToolResult, HandlerError>> {
        let upstream = Arc::clone(&self.upstream);
        let held = Arc::clone(&self.held);
        let tool = self.tool.clone();
        Box::pin(async move {
            if call.input.round() > 0 {
                held.resume(&call.ctx, &call.input).await
            } else {
                upstream
                    .call_tool(&held, &call.ctx, &tool, call.arguments)
                    .await
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> (String, Tool) {
        (name.to_owned(), Tool::new(name, serde_json::Map::new()))
    }

    #[test]
    fn a_name_two_upstreams_offer_is_refused_naming_both() {
        let mut owners = Owners::new();
        claim(&mut owners, "a", &[tool("x_1"), tool("x_2")]).unwrap();
        let e = claim(&mut owners, "b", &[tool("x_3"), tool("x_2")]).unwrap_err();
        assert!(
            matches!(&e, GatewayError::Collision { name, first, second, .. }
                if name == "x_2" && first == "a" && second == "b"),
            "{e}"
        );
        // Nothing of the refused list was claimed.
        assert_eq!(owners.len(), 2);
        // An upstream's own new list replaces its old one.
        claim(&mut owners, "a", &[tool("x_9")]).unwrap();
        assert_eq!(owners.keys().collect::<Vec<_>>(), ["x_9"]);
    }
}
