// The conformance fixture `test_tool_with_progress`: its name and texts are the suite's contract.
import type { Clock } from "../../../../lib/clock.ts";
import { type AnyTool, fixture } from "../_fixture.ts";

/** `test_tool_with_progress`. */
export function testToolWithProgressTool(clock: Clock): AnyTool {
  return fixture(
    "test_tool_with_progress",
    "Reports progress 0, 50 and 100 of 100 about 50 ms apart when the call carries a progress token.",
    async (_args, ctx) => {
      await ctx.progress(0, 100);
      await clock.sleep(50, ctx.signal);
      await ctx.progress(50, 100);
      await clock.sleep(50, ctx.signal);
      await ctx.progress(100, 100);
      return { text: "Tool with progress executed successfully" };
    },
  );
}
