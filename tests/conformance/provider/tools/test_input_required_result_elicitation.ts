// The conformance fixture `test_input_required_result_elicitation`: its name and texts are the suite's contract.
import { inputRequired } from "../../../../lib/mcp/sdk.ts";
import { acceptedText, answerAction, type AnyTool, fixture } from "../_fixture.ts";
import { askName, done } from "../input_required.ts";

/** `test_input_required_result_elicitation`. */
export function testInputRequiredResultElicitationTool(): AnyTool {
  return fixture(
    "test_input_required_result_elicitation",
    "Asks the user's name (elicitation, key user_name) and greets them; asks again until an answer comes.",
    (_args, ctx) => {
      const responses = ctx.mcp.mcpReq.inputResponses;
      const name = acceptedText(responses, "user_name", "name");
      if (name !== undefined) return done(`Hello, ${name}!`);
      const action = answerAction(responses, "user_name");
      if (action === "decline" || action === "cancel") return done(`No name was given (action=${action})`);
      return Promise.resolve(inputRequired({ inputRequests: { user_name: askName() } }));
    },
  );
}
