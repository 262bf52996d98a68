//! What the server offers, in registration order (the order `*/list` returns), and the
//! `capabilities` that follow from it.
//!
//! The catalog is an immutable snapshot behind an `Arc`: a request reads one consistent view,
//! and a runtime change (`runtime.rs`) builds a new snapshot and swaps it in.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use smcp_proto::capabilities::{
    PromptsCapability, ResourcesCapability, ServerCapabilities, ToolsCapability,
};

use super::error::BuildError;
use super::extension::Extension;
use super::prompts::PromptEntry;
use super::resources::ResourceEntry;
use super::tools::ToolEntry;

/// The optional capabilities the application chose; the rest of `capabilities` follows from
/// what the catalog holds.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Features {
    pub(crate) tools_list_changed: bool,
    pub(crate) prompts_list_changed: bool,
    pub(crate) resources_list_changed: bool,
    pub(crate) resources_subscribe: bool,
    pub(crate) completions: bool,
    pub(crate) logging: bool,
}

impl Features {
    /// Whether `subscriptions/listen` has anything to deliver.
    pub(crate) fn any_change_notifications(&self) -> bool {
        self.tools_list_changed
            || self.prompts_list_changed
            || self.resources_list_changed
            || self.resources_subscribe
    }
}

/// One snapshot of the catalog.
#[derive(Debug, Default, Clone)]
pub(crate) struct Catalog {
    /// `server/discover`'s `capabilities`, recomputed with every snapshot.
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) tools: Vec<Arc<ToolEntry>>,
    tool_index: HashMap<String, usize>,
    pub(crate) resources: Vec<Arc<ResourceEntry>>,
    resource_index: HashMap<String, usize>,
    pub(crate) templates: Vec<Arc<ResourceEntry>>,
    pub(crate) prompts: Vec<Arc<PromptEntry>>,
    prompt_index: HashMap<String, usize>,
}

impl Catalog {
    pub(crate) fn tool(&self, name: &str) -> Option<&Arc<ToolEntry>> {
        self.tool_index.get(name).map(|&i| &self.tools[i])
    }

    pub(crate) fn prompt(&self, name: &str) -> Option<&Arc<PromptEntry>> {
        self.prompt_index.get(name).map(|&i| &self.prompts[i])
    }

    /// The resource for `uri`: an exact resource first, then the first matching template.
    pub(crate) fn resource(
        &self,
        uri: &str,
    ) -> Option<(&Arc<ResourceEntry>, BTreeMap<String, String>)> {
        if let Some(&i) = self.resource_index.get(uri) {
            return Some((&self.resources[i], BTreeMap::new()));
        }
        self.templates
            .iter()
            .find_map(|t| t.matches(uri).map(|vars| (t, vars)))
    }

    /// Recomputes `capabilities`: a kind is advertised when the catalog has items of it or the
    /// application declared change notifications for it (a server that starts empty and adds
    /// tools at runtime is still a tools server); then every extension adds its own.
    pub(crate) fn seal(&mut self, f: &Features, extensions: &[Arc<dyn Extension>]) {
        let flag = |on: bool| on.then_some(true);
        let mut caps = ServerCapabilities::default();
        if !self.tools.is_empty() || f.tools_list_changed {
            caps.tools = Some(ToolsCapability {
                list_changed: flag(f.tools_list_changed),
                ..Default::default()
            });
        }
        if !self.resources.is_empty()
            || !self.templates.is_empty()
            || f.resources_list_changed
            || f.resources_subscribe
        {
            caps.resources = Some(ResourcesCapability {
                subscribe: flag(f.resources_subscribe),
                list_changed: flag(f.resources_list_changed),
                ..Default::default()
            });
        }
        if !self.prompts.is_empty() || f.prompts_list_changed {
            caps.prompts = Some(PromptsCapability {
                list_changed: flag(f.prompts_list_changed),
                ..Default::default()
            });
        }
        if f.completions {
            caps.completions = Some(Default::default());
        }
        if f.logging {
            caps.logging = Some(Default::default());
        }
        for extension in extensions {
            extension.capabilities(&mut caps);
        }
        self.capabilities = caps;
    }

    /// Rebuilds the name indexes after a removal or replacement.
    pub(crate) fn reindex(&mut self) {
        self.tool_index = index_of(&self.tools, |t| t.name().to_owned());
        self.prompt_index = index_of(&self.prompts, |p| p.name().to_owned());
        self.resource_index = index_of(&self.resources, |r| r.key.clone());
    }

    pub(crate) fn add_tool(&mut self, entry: ToolEntry) -> Result<(), BuildError> {
        let name = entry.name().to_owned();
        insert(&mut self.tools, &mut self.tool_index, name, entry, "tool")
    }

    pub(crate) fn add_prompt(&mut self, entry: PromptEntry) -> Result<(), BuildError> {
        let name = entry.name().to_owned();
        insert(
            &mut self.prompts,
            &mut self.prompt_index,
            name,
            entry,
            "prompt",
        )
    }

    pub(crate) fn add_resource(&mut self, entry: ResourceEntry) -> Result<(), BuildError> {
        if entry.is_template() {
            if self.templates.iter().any(|t| t.key == entry.key) {
                return Err(BuildError::Duplicate {
                    kind: "resource template",
                    name: entry.key,
                });
            }
            self.templates.push(Arc::new(entry));
            Ok(())
        } else {
            let key = entry.key.clone();
            insert(
                &mut self.resources,
                &mut self.resource_index,
                key,
                entry,
                "resource",
            )
        }
    }

    /// The index of the tool `name`, for replacing it in place.
    pub(crate) fn tool_position(&self, name: &str) -> Option<usize> {
        self.tool_index.get(name).copied()
    }

    /// The index of the prompt `name`, for replacing it in place.
    pub(crate) fn prompt_position(&self, name: &str) -> Option<usize> {
        self.prompt_index.get(name).copied()
    }

    /// The index of the resource `uri`, for replacing it in place.
    pub(crate) fn resource_position(&self, uri: &str) -> Option<usize> {
        self.resource_index.get(uri).copied()
    }
}

fn index_of<T>(list: &[Arc<T>], key: impl Fn(&T) -> String) -> HashMap<String, usize> {
    list.iter().enumerate().map(|(i, t)| (key(t), i)).collect()
}

fn insert<T>(
    list: &mut Vec<Arc<T>>,
    index: &mut HashMap<String, usize>,
    key: String,
    entry: T,
    kind: &'static str,
) -> Result<(), BuildError> {
    if index.contains_key(&key) {
        return Err(BuildError::Duplicate { kind, name: key });
    }
    index.insert(key, list.len());
    list.push(Arc::new(entry));
    Ok(())
}
