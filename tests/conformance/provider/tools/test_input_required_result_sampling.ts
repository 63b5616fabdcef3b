// The conformance fixture `test_input_required_result_sampling`: its name and texts are the suite's contract.
import { inputRequired } from "../../../../lib/mcp/sdk.ts";
import { type AnyTool, fixture, sampledText } from "../_fixture.ts";
import { done } from "../input_required.ts";

/** `test_input_required_result_sampling`. */
export function testInputRequiredResultSamplingTool(): AnyTool {
  return fixture(
    "test_input_required_result_sampling",
    "Asks the client's model (sampling, key capital_question) for the capital of France and returns the answer.",
    (_args, ctx) => {
      const text = sampledText(ctx.mcp.mcpReq.inputResponses, "capital_question");
      if (text !== undefined) return done(`Sampling response: ${text}`);
      return Promise.resolve(inputRequired({
        inputRequests: {
          capital_question: inputRequired.createMessage({
            messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }],
            maxTokens: 100,
          }),
        },
      }));
    },
  );
}
