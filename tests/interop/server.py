"""A small Python SDK (mcp 2.3.x) server for interop tests of the Rust client.

Usage: server.py PORT serves 2026-07-28 Streamable HTTP on http://127.0.0.1:PORT/mcp;
server.py --stdio serves the same over stdio (newline-delimited JSON-RPC on stdin/stdout). Tools:
  * slow_echo(text): three progress notifications, then the text;
  * confirm(): an MRTR elicitation (InputRequiredResult with requestState); answers with
    what the client accepted;
  * touch(): publishes tools/list_changed to subscriptions/listen subscribers.
"""

import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, InputRequiredResult, TextContent

mcp = MCPServer("py-interop")


@mcp.tool()
async def slow_echo(text: str, ctx: Context) -> str:
    """Echo with progress."""
    for i in range(1, 4):
        await ctx.report_progress(i, 3)
    return text


@mcp.tool()
async def confirm(ctx: Context) -> CallToolResult | InputRequiredResult:
    """Asks the client to confirm through MRTR elicitation."""
    responses = ctx.input_responses or {}
    answer = responses.get("ok")
    if answer is None:
        return InputRequiredResult.model_validate(
            {
                "resultType": "input_required",
                "inputRequests": {
                    "ok": {
                        "method": "elicitation/create",
                        "params": {
                            "message": "Proceed?",
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"proceed": {"type": "boolean"}},
                                "required": ["proceed"],
                            },
                        },
                    }
                },
                "requestState": "round-1",
            }
        )
    data = answer.model_dump(mode="json", exclude_none=True) if hasattr(answer, "model_dump") else answer
    text = f"state={ctx.request_state} action={data.get('action')} content={data.get('content')}"
    return CallToolResult(content=[TextContent(type="text", text=text)])


@mcp.tool()
async def touch(ctx: Context) -> str:
    """Tells listeners that the tool list changed."""
    await ctx.notify_tools_changed()
    return "touched"


if __name__ == "__main__":
    if sys.argv[1:] == ["--stdio"]:
        mcp.run("stdio")
    else:
        mcp.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
