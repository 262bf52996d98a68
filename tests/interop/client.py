"""The Python SDK client (mcp 2.3.x) against an smcp server: prints one JSON report.

Usage: client.py URL, or client.py --stdio COMMAND [ARGS...] to launch the server as a
subprocess and speak stdio. Exits non-zero (with the exception) when any step fails.
"""

import asyncio
import json
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError


async def main(server) -> dict:
    report = {}
    async with Client(server, mode="2026-07-28") as client:
        tools = await client.list_tools()
        report["tools"] = sorted(t.name for t in tools.tools)
        echo = await client.call_tool("echo", {"text": "hi from python"})
        report["echo"] = echo.content[0].text
        add = await client.call_tool("add", {"a": 2, "b": 3})
        report["add"] = add.structured_content
        progress = []

        async def on_progress(value, total, message):
            progress.append(value)

        await client.call_tool("progress_echo", {"text": "p"}, progress_callback=on_progress)
        report["progress"] = progress
        readme = await client.read_resource("smcp://readme")
        report["readme"] = readme.contents[0].text
        prompt = await client.get_prompt("greet", {"name": "Ada"})
        report["prompt"] = prompt.messages[0].content.text
        try:
            await client.call_tool("no_such_tool", {})
            report["missing_code"] = None
        except MCPError as e:
            report["missing_code"] = e.error.code
    return report


if __name__ == "__main__":
    if sys.argv[1] == "--stdio":
        target = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
    else:
        target = sys.argv[1]
    print(json.dumps(asyncio.run(main(target))))
