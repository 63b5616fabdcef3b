// The smallest useful MCP server on the SDK over Streamable HTTP (one tool, `createMcpHandler`
// under `Deno.serve`): the yardstick for the container's command, which serves HTTP. Listens on
// 127.0.0.1, port 0, and logs its port as the server's start-up log line does.
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "minimal", version: "1.0.0" });
  server.registerTool("echo", {
    description: "Echoes the text back",
    inputSchema: z.object({ text: z.string().describe("What to echo") }),
  }, ({ text }) => ({ content: [{ type: "text", text }] }));
  return server;
});

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.error(JSON.stringify({ msg: "serving MCP over HTTP", port })),
}, (request) => handler.fetch(request));
