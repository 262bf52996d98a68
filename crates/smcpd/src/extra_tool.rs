//! The tool `toggle_extra` adds and removes: a leaf, read by the demo catalog and by the cluster
//! code that applies a shared catalog state on every instance.

use smcp_server::prelude::*;

/// The tool `toggle_extra` adds and removes.
pub(crate) const EXTRA_TOOL: &str = "extra";

pub(crate) fn extra_tool() -> smcp_server::ToolBuilder {
    tool(EXTRA_TOOL)
        .title("Extra")
        .description("Present only while toggled on by toggle_extra.")
        .handler(|_call| async { Ok(CallToolResult::text("the extra tool is here")) })
}
