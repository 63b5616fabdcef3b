import { z } from "zod";
import type { ToolDefinition } from "../../mcp/provider.ts";

const READ_ONLY = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: false,
} as const;

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

const echoInput = z.looseObject({}).describe("Any JSON object; it is sent back unchanged");
const echoOutput = z.object({
  echo: z.record(z.string(), z.unknown()).describe("The arguments exactly as received"),
});

/** `example-echo`: returns its arguments unchanged (any object is accepted). */
export const echoTool: ToolDefinition<typeof echoInput, typeof echoOutput> = {
  name: "example-echo",
  title: "Echo",
  description:
    "Returns the arguments it was called with, unchanged. Accepts any JSON object; useful to see what a client sends.",
  input: echoInput,
  output: echoOutput,
  annotations: READ_ONLY,
  handler(args) {
    const structured = { echo: args as Record<string, unknown> };
    return Promise.resolve({ text: JSON.stringify(args), structured });
  },
};
