// A small MCP server on the TypeScript SDK (@modelcontextprotocol/sdk 1.x, 2025-11-25) over
// stdio, for the gateway's tests (crates/smcpd/tests/it/gateway_npm.rs).
// Run by `scripts/npm-servers ts-server`, which installs the SDK and sets NODE_PATH.
//
// Tools:
//   * shout(text): the text in capitals, after two progress notifications;
//   * ask_name(): asks the client for a name with elicitation/create (elicitInput) and greets it.
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { z } = require("zod");

const server = new McpServer({ name: "ts-interop", version: "1.0.0" });

server.registerTool(
  "shout",
  { description: "The text in capitals", inputSchema: { text: z.string() } },
  async ({ text }, extra) => {
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      for (const progress of [1, 2]) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress, total: 2 },
        });
      }
    }
    return { content: [{ type: "text", text: text.toUpperCase() }] };
  },
);

server.registerTool(
  "ask_name",
  { description: "Asks for a name, then greets it", inputSchema: {} },
  async () => {
    const answer = await server.server.elicitInput({
      message: "Your name?",
      requestedSchema: {
        type: "object",
        properties: { name: { type: "string" } },
        required: ["name"],
      },
    });
    const name = answer.action === "accept" ? answer.content.name : "nobody";
    return { content: [{ type: "text", text: `hello ${name}` }] };
  },
);

server.connect(new StdioServerTransport());
