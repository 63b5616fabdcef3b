// The conformance fixture `test_tool_with_logging`: its name and texts are the suite's contract.
import type { Clock } from "../../../../lib/clock.ts";
import { type AnyTool, fixture } from "../_fixture.ts";
import { logMessage } from "../_asking.ts";

/** `test_tool_with_logging`. */
export function testToolWithLoggingTool(clock: Clock): AnyTool {
  return fixture(
    "test_tool_with_logging",
    "Sends three info log notifications about 50 ms apart, then returns.",
    async (_args, ctx) => {
      await logMessage(ctx, "Tool execution started");
      await clock.sleep(50, ctx.signal);
      await logMessage(ctx, "Tool processing data");
      await clock.sleep(50, ctx.signal);
      await logMessage(ctx, "Tool execution completed");
      return { text: "Tool with logging executed successfully" };
    },
  );
}
