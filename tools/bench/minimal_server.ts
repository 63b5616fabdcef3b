// The smallest useful MCP server on the SDK (one tool over stdio): the bench's yardstick for
// what start-up and memory cost before any of this project's code runs.
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

serveStdio(() => {
  const server = new McpServer({ name: "minimal", version: "1.0.0" });
  server.registerTool("echo", {
    description: "Echoes the text back",
    inputSchema: z.object({ text: z.string().describe("What to echo") }),
  }, ({ text }) => ({ content: [{ type: "text", text }] }));
  return server;
});
