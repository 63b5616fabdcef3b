// The conformance fixture `test_missing_capability`: its name and texts are the suite's contract.
import { inputRequired } from "../../../../lib/mcp/sdk.ts";
import { type AnyTool, fixture, sampledText } from "../_fixture.ts";
import { done } from "../input_required.ts";

/** `test_missing_capability`. */
export function testMissingCapabilityTool(): AnyTool {
  return fixture(
    "test_missing_capability",
    "Needs sampling: a 2026-07-28 request that does not declare the sampling capability is refused (-32021).",
    (_args, ctx) => {
      const text = sampledText(ctx.mcp.mcpReq.inputResponses, "llm_answer");
      if (text !== undefined) return done(`Sampling round trip complete: ${text}`);
      return Promise.resolve(inputRequired({
        inputRequests: {
          llm_answer: inputRequired.createMessage({
            messages: [{
              role: "user",
              content: { type: "text", text: "Reply with the single word: pong" },
            }],
            maxTokens: 16,
          }),
        },
      }));
    },
  );
}
