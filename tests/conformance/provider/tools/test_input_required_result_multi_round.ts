// The conformance fixture `test_input_required_result_multi_round`: its name and texts are the suite's contract.
import { inputRequired } from "../../../../lib/mcp/sdk.ts";
import { acceptedText, type AnyTool, fixture, oneField, stateFor } from "../_fixture.ts";

/** `test_input_required_result_multi_round`. */
export function testInputRequiredResultMultiRoundTool(): AnyTool {
  return fixture(
    "test_input_required_result_multi_round",
    "Asks for a name, then a favourite colour, carrying the round and the name in a sealed state that changes per round.",
    async (_args, ctx) => {
      const state = stateFor(ctx, "multi_round");
      const responses = ctx.mcp.mcpReq.inputResponses;
      const name = typeof state?.["name"] === "string"
        ? state["name"]
        : acceptedText(responses, "step1", "name");
      if (state?.["round"] === 2 && name !== undefined) {
        const color = acceptedText(responses, "step2", "color");
        if (color !== undefined) return { text: `Multi-round complete: ${name} likes ${color}` };
      }
      if (state && name !== undefined) {
        return inputRequired({
          inputRequests: {
            step2: inputRequired.elicit({
              message: "Step 2: What is your favorite color?",
              requestedSchema: oneField("color", "string"),
            }),
          },
          requestState: await ctx.sealState({ tool: "multi_round", round: 2, name }),
        });
      }
      return inputRequired({
        inputRequests: {
          step1: inputRequired.elicit({
            message: "Step 1: What is your name?",
            requestedSchema: oneField("name", "string"),
          }),
        },
        requestState: await ctx.sealState({ tool: "multi_round", round: 1 }),
      });
    },
  );
}
