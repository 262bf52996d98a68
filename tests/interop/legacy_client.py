"""The Python MCP SDK 1.30.0 client (stateful, 2025-11-25) against a server URL.

Run by crates/smcpd/tests/legacy_python.rs against a real smcpd: a tool call, progress, an
elicitation answered by the client's elicitation_callback, a resource read, a prompt get and a
tools list_changed notification on the standalone GET stream. Prints one JSON object with what
it saw; the Rust test asserts on it.
"""

import asyncio
import json
import sys

import mcp.types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


async def main(url: str) -> None:
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

    async with streamablehttp_client(url) as (read, write, get_session_id):
        async with ClientSession(
            read, write, elicitation_callback=on_elicit, message_handler=on_message
        ) as session:
            init = await session.initialize()
            seen["protocolVersion"] = init.protocolVersion
            seen["serverName"] = init.serverInfo.name
            seen["sessionId"] = bool(get_session_id())
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
            # Give the client's GET stream a moment to open, then change the tool list.
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
    asyncio.run(main(sys.argv[1]))
