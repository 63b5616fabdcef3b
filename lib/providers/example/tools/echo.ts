// example-echo: returns its arguments unchanged (the one tool that accepts any object).
import { z } from "zod";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { READ_ONLY } from "../schemas.ts";

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
