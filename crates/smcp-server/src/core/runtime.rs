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
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_server::prelude::*;
    ///
    /// let server = Server::builder("plugins", "1.0.0").tools_list_changed(true).build()?;
    /// server.add_tool(tool("hello").handler(|_call| async { Ok(CallToolResult::text("hi")) }))?;
    /// // A second tool of the same name is refused; `replace_tool` swaps it instead.
    /// assert!(server.add_tool(tool("hello").handler(|_call| async { Ok(CallToolResult::text("")) })).is_err());
    /// assert!(server.remove_tool("hello"));
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    pub fn add_tool(&self, tool: ToolBuilder) -> Result<(), BuildError> {
        let mut entry = tool.build()?;
        super::extension::register_tool(&self.shared.extensions, &mut entry)?;
        let r = self.edit_catalog(|c| c.add_tool(entry).map(|()| true));
        self.changed(r, Change::ToolsListChanged).map(|_| ())
    }

    /// Adds a tool or replaces the one of the same name (keeping its place in the list).
    /// Returns whether one was replaced. Publishes `tools/list_changed`.
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// # let server = Server::builder("demo", "1.0.0").build()?;
    /// let v1 = tool("version").handler(|_call| async { Ok(CallToolResult::text("1")) });
    /// let v2 = tool("version").handler(|_call| async { Ok(CallToolResult::text("2")) });
    /// assert!(!server.replace_tool(v1)?); // added
    /// assert!(server.replace_tool(v2)?); // replaced
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// # let server = Server::builder("demo", "1.0.0").prompts_list_changed(true).build()?;
    /// server.add_prompt(prompt("hello").handler(|_get| async {
    ///     Ok(GetPromptResult::new(vec![PromptMessage::user_text("Say hello.")]))
    /// }))?;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// # let server = Server::builder("demo", "1.0.0").resources_list_changed(true).build()?;
    /// server.add_resource(resource("notes://today", "Today").handler(|read| async move {
    ///     Ok(vec![TextResourceContents::new(read.uri, "nothing yet").into()])
    /// }))?;
    /// assert!(server.remove_resource("notes://today"));
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
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
    ///
    /// # Examples
    ///
    /// A background task that tells listeners when a file they subscribed to changes:
    ///
    /// ```
    /// use std::time::Duration;
    /// use smcp_server::Server;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), smcp_server::BuildError> {
    /// let server = Server::builder("logs", "1.0.0").resources_subscribe(true).build()?;
    /// let watcher = server.clone();
    /// tokio::spawn(async move {
    ///     let mut tick = tokio::time::interval(Duration::from_secs(5));
    ///     loop {
    ///         tick.tick().await;
    ///         watcher.notify_resource_updated("file:///var/log/app.log");
    ///     }
    /// });
    /// # Ok(()) }
    /// ```
    pub fn notify_resource_updated(&self, uri: &str) {
        self.publish(Change::resource_updated(uri));
    }

    /// Publishes a change on the bus as is, e.g. `tools/list_changed` when what a tool lists
    /// depends on state outside the catalog. A bus failure is logged, not returned: the
    /// change itself already happened.
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_server::{Change, Server};
    ///
    /// # let server = Server::builder("demo", "1.0.0").tools_list_changed(true).build()?;
    /// // What `tools/list` shows depends on a feature flag that just flipped.
    /// server.publish(Change::ToolsListChanged);
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
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
    ///
    /// # Examples
    ///
    /// Serving with `axum::serve` rather than [`crate::serve`]:
    ///
    /// ```no_run
    /// # async fn run(server: smcp_server::Server) -> anyhow::Result<()> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8931").await?;
    /// let stopping = server.clone();
    /// axum::serve(listener, server.router("/mcp"))
    ///     .with_graceful_shutdown(async move {
    ///         let _ = tokio::signal::ctrl_c().await;
    ///         stopping.shutdown(); // listen streams end now, not at the drain timeout
    ///     })
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn shutdown(&self) {
        self.shared.listeners.shutdown();
    }

    /// Listen streams open on this instance.
    pub fn open_listen_streams(&self) -> usize {
        self.shared.listeners.open()
    }
}
