// The conformance fixture `test_input_required_result_multiple_inputs`: its name and texts are the suite's contract.
import { inputRequired } from "../../../../lib/mcp/sdk.ts";
import { acceptedText, type AnyTool, fixture, rootUris, sampledText, stateFor } from "../_fixture.ts";
import { askGreeting, askName } from "../input_required.ts";

/** `test_input_required_result_multiple_inputs`. */
export function testInputRequiredResultMultipleInputsTool(): AnyTool {
  return fixture(
    "test_input_required_result_multiple_inputs",
    "Asks for a name (elicitation), a greeting (sampling) and the roots in one round, with a sealed state.",
    async (_args, ctx) => {
      const responses = ctx.mcp.mcpReq.inputResponses;
      const name = acceptedText(responses, "user_name", "name");
      const greeting = sampledText(responses, "greeting");
      const roots = rootUris(responses, "client_roots");
      if (stateFor(ctx, "multiple_inputs") && name !== undefined && greeting !== undefined && roots) {
        return { text: `${greeting} ${name} (${roots.length} root(s) visible)` };
      }
      return inputRequired({
        inputRequests: {
          user_name: askName(),
          greeting: askGreeting(),
          client_roots: inputRequired.listRoots(),
        },
        requestState: await ctx.sealState({ tool: "multiple_inputs", round: 1 }),
      });
    },
  );
}
