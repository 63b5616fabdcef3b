// The conformance fixture `test_logging_tool`: its name and texts are the suite's contract.
import { type AnyTool, fixture } from "../_fixture.ts";

/** `test_logging_tool`. */
export function testLoggingToolTool(): AnyTool {
  return fixture(
    "test_logging_tool",
    "Logs one info message, which reaches the client only when it asked for logs (2026-07-28: _meta logLevel).",
    async (_args, ctx) => {
      await ctx.mcp.mcpReq.log("info", "test_logging_tool ran", "conformance");
      return { text: "Logged one info message" };
    },
  );
}
