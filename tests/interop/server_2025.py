"""A stateful MCP 2025-11-25 server (Python SDK mcp 1.30.0) for interop tests of the Rust client.

Usage:
  server_2025.py PORT          stateful Streamable HTTP on http://127.0.0.1:PORT/mcp
  server_2025.py --sse PORT    the 2024-11-05 HTTP+SSE transport on http://127.0.0.1:PORT/sse
  server_2025.py --stdio       newline-delimited JSON-RPC on stdin/stdout

Tools:
  * slow_echo(text): a log message, three progress notifications, then the text;
  * confirm(): asks the client through elicitation/create (ctx.elicit) and answers with what
    the client accepted;
  * touch(): sends notifications/tools/list_changed and notifications/resources/updated for
    note://greeting (both go to the session's standalone GET stream).
Resource note://greeting; prompt greet(name), whose argument completes from Ada and Alan.
"""

import sys

import uvicorn
from pydantic import BaseModel

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import Completion, PromptReference

mcp = FastMCP("py-legacy-interop")


class Proceed(BaseModel):
    proceed: bool


@mcp.tool()
async def slow_echo(text: str, ctx: Context) -> str:
    """Echo with progress and one log message."""
    await ctx.info(f"echoing {text}")
    for i in range(1, 4):
        await ctx.report_progress(i, 3)
    return text


@mcp.tool()
async def confirm(ctx: Context) -> str:
    """Asks the client to confirm through elicitation."""
    result = await ctx.elicit(message="Proceed?", schema=Proceed)
    data = result.data.model_dump() if result.action == "accept" and result.data else None
    return f"action={result.action} content={data}"


@mcp.tool()
async def touch(ctx: Context) -> str:
    """Tells the client that the tool list and note://greeting changed."""
    await ctx.session.send_tool_list_changed()
    await ctx.session.send_resource_updated("note://greeting")
    return "touched"


@mcp.resource("note://greeting")
def greeting() -> str:
    """A fixed note."""
    return "hello from python"


@mcp.prompt()
def greet(name: str) -> str:
    """Greets someone."""
    return f"Say hello to {name}."


@mcp.completion()
async def complete(ref, argument, context):
    if isinstance(ref, PromptReference) and ref.name == "greet" and argument.name == "name":
        return Completion(values=[n for n in ("Ada", "Alan") if n.startswith(argument.value)])
    return None


def main() -> None:
    if sys.argv[1:] == ["--stdio"]:
        mcp.run("stdio")
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--sse":
        app = mcp.sse_app()
        port = int(sys.argv[2])
    elif len(sys.argv) == 2:
        app = mcp.streamable_http_app()
        port = int(sys.argv[1])
    else:
        sys.exit("usage: server_2025.py PORT | --sse PORT | --stdio")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
