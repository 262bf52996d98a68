//! One catalog from every upstream: its tools and prompts under its prefix (the ones
//! `tools.allow`/`tools.deny` leave out dropped), its resources and templates under their own
//! URIs; a name or URI two upstreams offer is refused. Installed in the server at run time,
//! so that an upstream's lists can change (its `list_changed`, a restart) and the gateway's
//! listeners hear it.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use smcp_proto::capabilities::ServerCapabilities;
use smcp_proto::server::prompts::Prompt;
use smcp_proto::server::resources::{Resource, ResourceTemplate};
use smcp_proto::server::tools::Tool;
use smcp_server::Server;

use crate::error::GatewayError;
use crate::held::HeldCalls;
use crate::proxy;
use crate::upstream::Upstream;

/// Most items of one kind one upstream may list.
const MAX_ITEMS: usize = 10_000;

/// What one upstream serves, under the gateway's names.
#[derive(Debug, Clone, Default)]
pub(crate) struct Listing {
    /// Its capabilities, as `server/discover` or `initialize` gave them.
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) tools: Vec<(String, Tool)>,
    pub(crate) prompts: Vec<(String, Prompt)>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
}

/// Lists what `upstream` serves: every kind its capabilities name.
pub(crate) async fn list(upstream: &Upstream) -> Result<Listing, smcp_client::Error> {
    let client = upstream.client();
    let capabilities = match client.discover().await {
        Ok(discovered) => Some(discovered.capabilities),
        // An earlier revision: the capabilities come with the session, opened by the first
        // list below.
        Err(e) if e.kind() == smcp_client::ErrorKind::UnsupportedInEra => None,
        Err(e) => return Err(e),
    };
    let has = |kind: fn(&ServerCapabilities) -> bool| capabilities.as_ref().is_none_or(kind);
    let tools = if has(|c| c.tools.is_some()) {
        not_found_is_none(client.list_tools().await)?
    } else {
        Vec::new()
    };
    let capabilities = match capabilities {
        Some(c) => c,
        None => client
            .session_info()
            .await
            .and_then(|s| serde_json::from_value(s.capabilities).ok())
            .unwrap_or_default(),
    };
    let (prompts, resources, templates) = (
        capabilities.prompts.is_some(),
        capabilities.resources.is_some(),
        capabilities.resources.is_some(),
    );
    let mut listing = Listing {
        tools: within(upstream, "tool", tools)
            .into_iter()
            .filter(|t| upstream.config.tools.admits(&t.name))
            .map(|t| (format!("{}{}", upstream.qualifier, t.name), t))
            .collect(),
        ..Listing::default()
    };
    if prompts {
        let prompts = not_found_is_none(client.list_prompts().await)?;
        listing.prompts = within(upstream, "prompt", prompts)
            .into_iter()
            .filter(|p| upstream.config.prompts.admits(&p.name))
            .map(|p| (format!("{}{}", upstream.qualifier, p.name), p))
            .collect();
    }
    if resources {
        let resources = not_found_is_none(client.list_resources().await)?;
        listing.resources = within(upstream, "resource", resources)
            .into_iter()
            .filter(|r| upstream.config.resources.admits(&r.uri))
            .collect();
    }
    if templates {
        let templates = not_found_is_none(client.list_resource_templates().await)?;
        listing.templates = within(upstream, "resource template", templates)
            .into_iter()
            .filter(|t| upstream.config.resources.admits(&t.uri_template))
            .collect();
    }
    listing.capabilities = capabilities;
    Ok(listing)
}

/// A list an upstream does not serve (−32601) is an empty one.
fn not_found_is_none<T>(
    listed: Result<Vec<T>, smcp_client::Error>,
) -> Result<Vec<T>, smcp_client::Error> {
    match listed {
        Err(e) if e.jsonrpc_code() == Some(smcp_proto::error::METHOD_NOT_FOUND) => Ok(Vec::new()),
        other => other,
    }
}

/// The first [`MAX_ITEMS`] of a list, the rest logged and dropped.
fn within<T>(upstream: &Upstream, kind: &str, mut items: Vec<T>) -> Vec<T> {
    if items.len() > MAX_ITEMS {
        tracing::warn!(
            upstream = %upstream.name(),
            kind,
            listed = items.len(),
            "upstream lists more than {MAX_ITEMS}; the rest are left out"
        );
        items.truncate(MAX_ITEMS);
    }
    items
}

/// Which upstream serves a name, and the name it serves it under.
pub(crate) type Owners = BTreeMap<String, (String, String)>;

/// The owners of every kind.
#[derive(Debug, Default)]
pub(crate) struct Claims {
    pub(crate) tools: Owners,
    pub(crate) prompts: Owners,
    pub(crate) resources: Owners,
    pub(crate) templates: Owners,
}

impl Claims {
    /// Claims every name of `listing` for `upstream`, in place of what it held; a name
    /// another upstream holds is refused and nothing is claimed.
    pub(crate) fn claim(&mut self, upstream: &str, listing: &Listing) -> Result<(), GatewayError> {
        let tools: Vec<(&str, &str)> = listing
            .tools
            .iter()
            .map(|(n, t)| (n.as_str(), t.name.as_str()))
            .collect();
        let prompts: Vec<(&str, &str)> = listing
            .prompts
            .iter()
            .map(|(n, p)| (n.as_str(), p.name.as_str()))
            .collect();
        let resources: Vec<(&str, &str)> = listing
            .resources
            .iter()
            .map(|r| (r.uri.as_str(), r.uri.as_str()))
            .collect();
        let templates: Vec<(&str, &str)> = listing
            .templates
            .iter()
            .map(|t| (t.uri_template.as_str(), t.uri_template.as_str()))
            .collect();
        let kinds = [
            ("tool", &self.tools, &tools),
            ("prompt", &self.prompts, &prompts),
            ("resource", &self.resources, &resources),
            ("resource template", &self.templates, &templates),
        ];
        for (kind, owners, names) in kinds {
            for (name, _) in names {
                if let Some((first, _)) = owners.get(*name)
                    && first != upstream
                {
                    return Err(GatewayError::Collision {
                        kind,
                        name: (*name).to_owned(),
                        first: first.clone(),
                        second: upstream.to_owned(),
                    });
                }
            }
        }
        for (owners, names) in [
            (&mut self.tools, &tools),
            (&mut self.prompts, &prompts),
            (&mut self.resources, &resources),
            (&mut self.templates, &templates),
        ] {
            owners.retain(|_, (owner, _)| owner != upstream);
            for (name, original) in names {
                owners.insert(
                    (*name).to_owned(),
                    (upstream.to_owned(), (*original).to_owned()),
                );
            }
        }
        Ok(())
    }
}

/// What one upstream has in the server now, by the gateway's names.
#[derive(Debug, Default)]
pub(crate) struct Installed {
    tools: Vec<String>,
    prompts: Vec<String>,
    resources: Vec<String>,
}

/// Puts `listing` in the server in place of what `upstream` had there; an item the server
/// refuses (a schema it cannot compile, a bad header annotation, a malformed template) is
/// left out and logged.
pub(crate) fn install(
    server: &Server,
    upstream: &Arc<Upstream>,
    held: &Arc<HeldCalls>,
    had: &Installed,
    listing: Listing,
) -> Installed {
    let Listing {
        capabilities,
        tools,
        prompts,
        resources,
        templates,
    } = listing;
    #[cfg(feature = "files")]
    upstream.files.upstream.store(
        capabilities.extra.contains_key("files"),
        std::sync::atomic::Ordering::Relaxed,
    );
    let _ = capabilities;
    let gone = |had: &[String], now: &HashSet<String>| -> Vec<String> {
        had.iter().filter(|n| !now.contains(*n)).cloned().collect()
    };
    let tool_names: HashSet<String> = tools.iter().map(|(n, _)| n.clone()).collect();
    let prompt_names: HashSet<String> = prompts.iter().map(|(n, _)| n.clone()).collect();
    let resource_names: HashSet<String> = resources
        .iter()
        .map(|r| r.uri.clone())
        .chain(templates.iter().map(|t| t.uri_template.clone()))
        .collect();
    for name in gone(&had.tools, &tool_names) {
        server.remove_tool(&name);
    }
    for name in gone(&had.prompts, &prompt_names) {
        server.remove_prompt(&name);
    }
    for name in gone(&had.resources, &resource_names) {
        server.remove_resource(&name);
    }
    let mut installed = Installed::default();
    for (name, tool) in tools {
        let original = tool.name.clone();
        match server.replace_tool(proxy::tool(&name, tool, upstream, held)) {
            Ok(_) => installed.tools.push(name),
            Err(e) => left_out(server.remove_tool(&name), upstream, "tool", &original, &e),
        }
    }
    for (name, prompt) in prompts {
        let original = prompt.name.clone();
        match server.replace_prompt(proxy::prompt(&name, prompt, upstream)) {
            Ok(_) => installed.prompts.push(name),
            Err(e) => left_out(
                server.remove_prompt(&name),
                upstream,
                "prompt",
                &original,
                &e,
            ),
        }
    }
    for resource in resources {
        let uri = resource.uri.clone();
        match server.replace_resource(proxy::resource(resource, upstream)) {
            Ok(_) => installed.resources.push(uri),
            Err(e) => left_out(server.remove_resource(&uri), upstream, "resource", &uri, &e),
        }
    }
    for template in templates {
        let uri = template.uri_template.clone();
        match server.replace_resource(proxy::template(template, upstream)) {
            Ok(_) => installed.resources.push(uri),
            Err(e) => left_out(
                server.remove_resource(&uri),
                upstream,
                "resource template",
                &uri,
                &e,
            ),
        }
    }
    installed
}

fn left_out(
    _removed: bool,
    upstream: &Upstream,
    kind: &str,
    name: &str,
    error: &dyn std::fmt::Display,
) {
    tracing::warn!(upstream = %upstream.name(), kind, name, error = %error, "upstream item left out");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(tools: &[&str], resources: &[&str]) -> Listing {
        Listing {
            tools: tools
                .iter()
                .map(|n| ((*n).to_owned(), Tool::new(*n, serde_json::Map::new())))
                .collect(),
            resources: resources.iter().map(|u| Resource::new(*u, "r")).collect(),
            ..Listing::default()
        }
    }

    #[test]
    fn a_name_or_uri_two_upstreams_offer_is_refused_naming_both() {
        let mut claims = Claims::default();
        claims
            .claim("a", &listing(&["x_1", "x_2"], &["file:///a"]))
            .unwrap();
        let e = claims
            .claim("b", &listing(&["x_3", "x_2"], &[]))
            .unwrap_err();
        assert!(
            matches!(&e, GatewayError::Collision { kind: "tool", name, first, second }
                if name == "x_2" && first == "a" && second == "b"),
            "{e}"
        );
        let e = claims
            .claim("b", &listing(&[], &["file:///a"]))
            .unwrap_err();
        assert!(
            matches!(
                &e,
                GatewayError::Collision {
                    kind: "resource",
                    ..
                }
            ),
            "{e}"
        );
        // Nothing of the refused lists was claimed.
        assert_eq!(claims.tools.len(), 2);
        // An upstream's own new list replaces its old one.
        claims.claim("a", &listing(&["x_9"], &[])).unwrap();
        assert_eq!(claims.tools.keys().collect::<Vec<_>>(), ["x_9"]);
        assert!(claims.resources.is_empty());
    }
}
