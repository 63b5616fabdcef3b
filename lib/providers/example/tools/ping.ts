// example-ping: answers {"pong": true}, to check the server is alive.
import { z } from "zod";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { READ_ONLY } from "../schemas.ts";

const pingOutput = z.object({ pong: z.literal(true).describe("Always true") });

/** `example-ping`: answers `{ "pong": true }`, to check the server is alive. */
export const pingTool: ToolDefinition<z.ZodObject, typeof pingOutput> = {
  name: "example-ping",
  title: "Ping",
  description: 'Checks that the server answers. Takes no arguments and returns {"pong": true}.',
  input: z.strictObject({}),
  output: pingOutput,
  annotations: READ_ONLY,
  handler() {
    const structured = { pong: true as const };
    return Promise.resolve({ text: JSON.stringify(structured), structured });
  },
};
