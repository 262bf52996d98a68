//! [`ScopePolicy`]: which scopes the whole server, a method, or a tool requires.

use std::collections::HashMap;
use std::sync::Arc;

use crate::core::access::{AccessPolicy, InsufficientScope, declare};

/// The scopes required for the whole server, per method and per tool, checked before any
/// handler runs; optionally `tools/list` hides the tools a token may not call.
///
/// # Examples
///
/// ```
/// use smcp_server::auth::ScopePolicy;
///
/// let policy = ScopePolicy::builder()
///     .require("mcp")                          // every request
///     .method("resources/read", "files:read")  // this method
///     .tool("delete_everything", "admin")      // this tool's calls
///     .hide_tools(true)
///     .build();
/// assert_eq!(policy.required(), ["mcp"]);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ScopePolicy {
    server: Vec<String>,
    methods: HashMap<String, Vec<String>>,
    tools: HashMap<String, Vec<String>>,
    hide_tools: bool,
}

/// Builds a [`ScopePolicy`].
#[derive(Debug, Clone, Default)]
pub struct ScopePolicyBuilder {
    policy: ScopePolicy,
}

impl ScopePolicy {
    /// An empty policy: any valid token may do anything.
    pub fn builder() -> ScopePolicyBuilder {
        ScopePolicyBuilder::default()
    }

    /// The scopes every request needs.
    pub fn required(&self) -> &[String] {
        &self.server
    }

    /// Every scope `method` (and, for `tools/call`, `tool`) needs, server-wide ones first,
    /// without repeats.
    pub fn needed(&self, method: &str, tool: Option<&str>) -> Vec<&str> {
        self.needed_with(method, tool, &[])
    }

    /// [`Self::needed`], and then the scopes the addressed item declares.
    fn needed_with<'a>(
        &'a self,
        method: &str,
        tool: Option<&str>,
        declared: &'a [String],
    ) -> Vec<&'a str> {
        let mut needed: Vec<&str> = Vec::new();
        let extra = self.methods.get(method).into_iter().flatten();
        let tool = tool.and_then(|t| self.tools.get(t)).into_iter().flatten();
        for scope in self.server.iter().chain(extra).chain(tool).chain(declared) {
            if !needed.contains(&scope.as_str()) {
                needed.push(scope);
            }
        }
        needed
    }

    /// `Ok` when `granted` holds every scope `method` / `tool` needs; otherwise the refusal
    /// naming all of them (one challenge for the whole operation).
    ///
    /// # Errors
    ///
    /// [`InsufficientScope`] with every needed scope.
    pub fn check(
        &self,
        granted: &[String],
        method: &str,
        tool: Option<&str>,
    ) -> Result<(), InsufficientScope> {
        self.check_declared(granted, method, tool, &[])
    }

    /// [`Self::check`] for a request addressing an item that declares scopes of its own
    /// (`declared`, e.g. [`crate::ToolBuilder::scope`]): the refusal names the policy's
    /// scopes and the item's.
    ///
    /// # Errors
    ///
    /// [`InsufficientScope`] with every needed scope.
    pub fn check_declared(
        &self,
        granted: &[String],
        method: &str,
        tool: Option<&str>,
        declared: &[String],
    ) -> Result<(), InsufficientScope> {
        // The common case allocates nothing: every list checked in place.
        let has = |scopes: &[String]| scopes.iter().all(|n| granted.contains(n));
        let method_ok = self.methods.get(method).is_none_or(|m| has(m));
        let tool_ok = tool.and_then(|t| self.tools.get(t)).is_none_or(|t| has(t));
        if has(&self.server) && method_ok && tool_ok && has(declared) {
            return Ok(());
        }
        Err(InsufficientScope {
            scope: self.needed_with(method, tool, declared).join(" "),
        })
    }

    /// Whether the policy hides from `tools/list` the tools a token may not call.
    pub fn hides_tools(&self) -> bool {
        self.hide_tools
    }
}

impl ScopePolicyBuilder {
    /// Every request needs `scope`. Repeatable.
    #[must_use]
    pub fn require(mut self, scope: impl Into<String>) -> Self {
        declare(&mut self.policy.server, scope.into());
        self
    }

    /// Requests for `method` (e.g. `"tools/call"`, `"resources/read"`) need `scope`.
    /// Repeatable.
    #[must_use]
    pub fn method(mut self, method: impl Into<String>, scope: impl Into<String>) -> Self {
        declare(
            self.policy.methods.entry(method.into()).or_default(),
            scope.into(),
        );
        self
    }

    /// Calls of the tool `tool` need `scope`. Repeatable.
    #[must_use]
    pub fn tool(mut self, tool: impl Into<String>, scope: impl Into<String>) -> Self {
        declare(
            self.policy.tools.entry(tool.into()).or_default(),
            scope.into(),
        );
        self
    }

    /// Whether `tools/list` hides the tools the token may not call (default: no).
    #[must_use]
    pub fn hide_tools(mut self, hide: bool) -> Self {
        self.policy.hide_tools = hide;
        self
    }

    /// The policy.
    pub fn build(self) -> ScopePolicy {
        self.policy
    }
}

/// A token's scopes under a policy: the [`AccessPolicy`] the core asks.
#[derive(Debug)]
pub(crate) struct Granted {
    pub(crate) scopes: Vec<String>,
    pub(crate) policy: Arc<ScopePolicy>,
    /// The token itself, when the layer keeps it (`AuthLayerBuilder::keep_token`).
    pub(crate) token: Option<Box<str>>,
}

impl AccessPolicy for Granted {
    fn check(&self, method: &str, tool: Option<&str>) -> Result<(), InsufficientScope> {
        self.policy.check(&self.scopes, method, tool)
    }

    fn check_declared(
        &self,
        method: &str,
        tool: Option<&str>,
        declared: &[String],
    ) -> Result<(), InsufficientScope> {
        self.policy
            .check_declared(&self.scopes, method, tool, declared)
    }

    fn subject_token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    fn shows_tool(&self, tool: &str, declared: &[String]) -> bool {
        !self.policy.hide_tools
            || self
                .policy
                .check_declared(
                    &self.scopes,
                    crate::proto::messages::method::TOOLS_CALL,
                    Some(tool),
                    declared,
                )
                .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn granted(scopes: &[&str]) -> Vec<String> {
        scopes.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn every_needed_scope_is_named_in_one_refusal() {
        let policy = ScopePolicy::builder()
            .require("mcp")
            .method("tools/call", "tools")
            .tool("wipe", "admin")
            .build();
        assert_eq!(policy.check(&granted(&["mcp"]), "tools/list", None), Ok(()));
        assert_eq!(
            policy.check(&granted(&["mcp"]), "tools/call", Some("echo")),
            Err(InsufficientScope {
                scope: "mcp tools".to_owned()
            })
        );
        assert_eq!(
            policy.check(&granted(&["mcp", "tools"]), "tools/call", Some("wipe")),
            Err(InsufficientScope {
                scope: "mcp tools admin".to_owned()
            })
        );
        assert_eq!(
            policy.check(
                &granted(&["admin", "tools", "mcp"]),
                "tools/call",
                Some("wipe")
            ),
            Ok(())
        );
        assert_eq!(
            policy.check(&granted(&[]), "server/discover", None),
            Err(InsufficientScope {
                scope: "mcp".to_owned()
            })
        );
    }

    #[test]
    fn an_items_declared_scopes_come_after_the_policys_in_one_refusal() {
        let policy = ScopePolicy::builder()
            .require("mcp")
            .tool("wipe", "admin")
            .build();
        let declared = granted(&["fs", "mcp"]);
        assert_eq!(
            policy.check_declared(&granted(&["mcp"]), "tools/call", Some("wipe"), &declared),
            Err(InsufficientScope {
                scope: "mcp admin fs".to_owned()
            })
        );
        assert_eq!(
            policy.check_declared(&granted(&["mcp", "fs"]), "prompts/get", None, &declared),
            Ok(())
        );
        assert_eq!(
            policy.check_declared(&granted(&["mcp"]), "prompts/get", None, &[]),
            Ok(())
        );
    }

    #[test]
    fn hiding_follows_the_tool_call_check() {
        let policy = Arc::new(
            ScopePolicy::builder()
                .tool("wipe", "admin")
                .hide_tools(true)
                .build(),
        );
        let user = Granted {
            scopes: granted(&["mcp"]),
            policy: policy.clone(),
            token: None,
        };
        assert!(user.shows_tool("echo", &[]));
        assert!(!user.shows_tool("wipe", &[]));
        assert!(!user.shows_tool("echo", &granted(&["fs"])));
        assert!(user.shows_tool("echo", &granted(&["mcp"])));
        let admin = Granted {
            scopes: granted(&["admin"]),
            policy,
            token: None,
        };
        assert!(admin.shows_tool("wipe", &[]));
        let open = Granted {
            scopes: Vec::new(),
            policy: Arc::new(ScopePolicy::builder().tool("wipe", "admin").build()),
            token: None,
        };
        assert!(open.shows_tool("wipe", &[]));
        assert!(open.shows_tool("wipe", &granted(&["fs"])));
    }
}
