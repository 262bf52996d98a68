"""The Python MCP SDK 1.30.0 client (stateful, 2025-11-25) against a server URL, or with
`--stdio COMMAND [ARG...]` against a server it launches on stdio.

Run by crates/smcpd/tests/it/legacy_python.rs against a real smcpd: a tool call, progress, an
elicitation answered by the client's elicitation_callback, a resource read, a prompt get and a
tools list_changed notification (on the standalone GET stream, or on stdout). Prints one JSON object with what
it saw; the Rust test asserts on it.
"""

import asyncio
import contextlib
import json
import sys

import mcp.types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamablehttp_client


@contextlib.asynccontextmanager
async def transport(argv):
    """(read, write, has_session_id) over Streamable HTTP, or over stdio with --stdio."""
    if argv[0] == "--stdio":
        params = StdioServerParameters(command=argv[1], args=argv[2:])
        async with stdio_client(params) as (read, write):
            yield read, write, lambda: None
    else:
        async with streamablehttp_client(argv[0]) as (read, write, get_session_id):
            yield read, write, lambda: bool(get_session_id())


async def main(argv) -> None:
    seen = {"progress": [], "elicitations": [], "notifications": []}
    list_changed = asyncio.Event()

    async def on_elicit(context, params):
        seen["elicitations"].append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    async def on_message(message):
        if isinstance(message, types.ServerNotification):
            method = message.root.method
            seen["notifications"].append(method)
            if method == "notifications/tools/list_changed":
                list_changed.set()

    async def on_progress(progress, total, message):
        seen["progress"].append(progress)

    async with transport(argv) as (read, write, get_session_id):
        async with ClientSession(
            read, write, elicitation_callback=on_elicit, message_handler=on_message
        ) as session:
            init = await session.initialize()
            seen["protocolVersion"] = init.protocolVersion
            seen["serverName"] = init.serverInfo.name
            seen["sessionId"] = get_session_id()
            echo = await session.call_tool(
                "progress_echo", {"text": "hello"}, progress_callback=on_progress
            )
            seen["echo"] = echo.content[0].text
            confirmed = await session.call_tool("confirm_action", {"action": "deploy"})
            seen["confirm"] = confirmed.content[0].text
            seen["confirmIsError"] = bool(confirmed.isError)
            readme = await session.read_resource("smcp://readme")
            seen["readme"] = readme.contents[0].text[:40]
            prompt = await session.get_prompt("greet", {"name": "Ada"})
            seen["prompt"] = prompt.messages[0].content.text
            # Give the client's GET stream (if any) a moment to open, then change the tool list.
            for _ in range(50):
                await session.call_tool("toggle_extra", {})
                try:
                    await asyncio.wait_for(list_changed.wait(), 0.2)
                    break
                except asyncio.TimeoutError:
                    continue
            tools = await session.list_tools()
            seen["tools"] = sorted(t.name for t in tools.tools)
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
