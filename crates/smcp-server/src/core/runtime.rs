//! Changing a running server: add, replace and remove tools, prompts and resources, and mark
//! resources updated.
//!
//! Each change builds the new item first (schema compilation and validation happen outside
//! any lock), then swaps in a new catalog snapshot under the write lock. Requests in flight
//! keep the snapshot they started with. After the swap the change is *published on the change
//! bus*; listen streams learn of it from the bus only, so with a shared bus every instance's
//! listeners hear of a change made on any instance.
//!
//! A change is published whether or not the matching `listChanged` / `subscribe` capability
//! is advertised; a listener only receives kinds the server advertises (the acknowledgement
//! tells it which), so advertise them with [`crate::ServerBuilder::list_changed`] /
//! [`crate::ServerBuilder::resources_subscribe`] when the application changes things.

use std::sync::{Arc, PoisonError};

use smcp_bus::{Change, ChangeBus};

use super::catalog::Catalog;
use super::error::BuildError;
use super::prompts::PromptBuilder;
use super::resources::ResourceBuilder;
use super::server::Server;
use super::tools::ToolBuilder;

impl Server {
    /// Applies `edit` to a copy of the catalog and installs it; `Ok(true)` when something
    /// changed.
    fn edit_catalog(
        &self,
        edit: impl FnOnce(&mut Catalog) -> Result<bool, BuildError>,
    ) -> Result<bool, BuildError> {
        let mut slot = self
            .shared
            .catalog
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let mut next = Catalog::clone(&slot);
        if !edit(&mut next)? {
            return Ok(false);
        }
        next.seal(&self.shared.features, &self.shared.extensions);
        *slot = Arc::new(next);
        Ok(true)
    }

    fn changed(
        &self,
        result: Result<bool, BuildError>,
        change: Change,
    ) -> Result<bool, BuildError> {
        if matches!(result, Ok(true)) {
            self.publish(change);
        }
        result
    }

    /// Adds a tool; fails on a bad definition or when a tool of that name exists. Publishes
    /// `tools/list_changed`.
    pub fn add_tool(&self, tool: ToolBuilder) -> Result<(), BuildError> {
        let mut entry = tool.build()?;
        super::extension::register_tool(&self.shared.extensions, &mut entry)?;
        let r = self.edit_catalog(|c| c.add_tool(entry).map(|()| true));
        self.changed(r, Change::ToolsListChanged).map(|_| ())
    }

    /// Adds a tool or replaces the one of the same name (keeping its place in the list).
    /// Returns whether one was replaced. Publishes `tools/list_changed`.
    pub fn replace_tool(&self, tool: ToolBuilder) -> Result<bool, BuildError> {
        let mut entry = tool.build()?;
        super::extension::register_tool(&self.shared.extensions, &mut entry)?;
        let mut replaced = false;
        let r = self.edit_catalog(|c| {
            if let Some(i) = c.tool_position(entry.name()) {
                c.tools[i] = Arc::new(entry);
                replaced = true;
                Ok(true)
            } else {
                c.add_tool(entry).map(|()| true)
            }
        });
        self.changed(r, Change::ToolsListChanged).map(|_| replaced)
    }

    /// Removes the tool `name`; returns whether it existed. Publishes `tools/list_changed`
    /// when it did.
    pub fn remove_tool(&self, name: &str) -> bool {
        let r = self.edit_catalog(|c| {
            let before = c.tools.len();
            c.tools.retain(|t| t.name() != name);
            c.reindex();
            Ok(c.tools.len() != before)
        });
        matches!(self.changed(r, Change::ToolsListChanged), Ok(true))
    }

    /// Adds a prompt; fails on a bad definition or a duplicate name. Publishes
    /// `prompts/list_changed`.
    pub fn add_prompt(&self, prompt: PromptBuilder) -> Result<(), BuildError> {
        let entry = prompt.build()?;
        let r = self.edit_catalog(|c| c.add_prompt(entry).map(|()| true));
        self.changed(r, Change::PromptsListChanged).map(|_| ())
    }

    /// Adds a prompt or replaces the one of the same name; returns whether one was replaced.
    /// Publishes `prompts/list_changed`.
    pub fn replace_prompt(&self, prompt: PromptBuilder) -> Result<bool, BuildError> {
        let entry = prompt.build()?;
        let mut replaced = false;
        let r = self.edit_catalog(|c| {
            if let Some(i) = c.prompt_position(entry.name()) {
                c.prompts[i] = Arc::new(entry);
                replaced = true;
                Ok(true)
            } else {
                c.add_prompt(entry).map(|()| true)
            }
        });
        self.changed(r, Change::PromptsListChanged)
            .map(|_| replaced)
    }

    /// Removes the prompt `name`; returns whether it existed. Publishes
    /// `prompts/list_changed` when it did.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let r = self.edit_catalog(|c| {
            let before = c.prompts.len();
            c.prompts.retain(|p| p.name() != name);
            c.reindex();
            Ok(c.prompts.len() != before)
        });
        matches!(self.changed(r, Change::PromptsListChanged), Ok(true))
    }

    /// Adds a resource or a resource template; fails on a bad definition or a duplicate URI
    /// (template). Publishes `resources/list_changed`.
    pub fn add_resource(&self, resource: ResourceBuilder) -> Result<(), BuildError> {
        let entry = resource.build()?;
        let r = self.edit_catalog(|c| c.add_resource(entry).map(|()| true));
        self.changed(r, Change::ResourcesListChanged).map(|_| ())
    }

    /// Adds a resource (template) or replaces the one with the same URI (template string);
    /// returns whether one was replaced. Publishes `resources/list_changed`.
    pub fn replace_resource(&self, resource: ResourceBuilder) -> Result<bool, BuildError> {
        let entry = resource.build()?;
        let mut replaced = false;
        let r = self.edit_catalog(|c| {
            let existing = if entry.is_template() {
                c.templates.iter_mut().find(|t| t.key == entry.key)
            } else {
                c.resource_position(&entry.key)
                    .and_then(|i| c.resources.get_mut(i))
            };
            if let Some(slot) = existing {
                *slot = Arc::new(entry);
                replaced = true;
                Ok(true)
            } else {
                c.add_resource(entry).map(|()| true)
            }
        });
        self.changed(r, Change::ResourcesListChanged)
            .map(|_| replaced)
    }

    /// Removes the resource with this URI, or the template with this template string;
    /// returns whether one existed. Publishes `resources/list_changed` when it did.
    pub fn remove_resource(&self, uri_or_template: &str) -> bool {
        let r = self.edit_catalog(|c| {
            let before = c.resources.len() + c.templates.len();
            c.resources.retain(|r| r.key != uri_or_template);
            c.templates.retain(|t| t.key != uri_or_template);
            c.reindex();
            Ok(c.resources.len() + c.templates.len() != before)
        });
        matches!(self.changed(r, Change::ResourcesListChanged), Ok(true))
    }

    /// Tells listeners subscribed to `uri` (or to a resource it is a sub-resource of, see
    /// [`smcp_bus::uri_covers`]) that its contents changed: `notifications/resources/updated`.
    pub fn notify_resource_updated(&self, uri: &str) {
        self.publish(Change::resource_updated(uri));
    }

    /// Publishes a change on the bus as is, e.g. `tools/list_changed` when what a tool lists
    /// depends on state outside the catalog. A bus failure is logged, not returned: the
    /// change itself already happened.
    pub fn publish(&self, change: Change) {
        tracing::debug!(method = change.method(), "publishing change");
        if let Err(e) = self.shared.bus.publish(change) {
            tracing::warn!(error = %e, "could not publish a change notification");
        }
    }

    /// The change bus of this server.
    pub fn change_bus(&self) -> &Arc<dyn ChangeBus> {
        &self.shared.bus
    }

    /// Ends every open `subscriptions/listen` stream of this instance gracefully (each gets
    /// the listen result, then closes) and refuses new ones with 503. [`crate::serve`] does
    /// this on its own shutdown; call it when serving some other way.
    pub fn shutdown(&self) {
        self.shared.listeners.shutdown();
    }

    /// Listen streams open on this instance.
    pub fn open_listen_streams(&self) -> usize {
        self.shared.listeners.open()
    }
}
