// The conformance fixture `test_elicitation`: its name and texts are the suite's contract.
import { z } from "zod";
import { inputRequired } from "../../../../lib/mcp/sdk.ts";
import { type AnyTool, fixture } from "../_fixture.ts";
import { ask } from "../_asking.ts";

/** `test_elicitation`. */
export function testElicitationTool(): AnyTool {
  return fixture(
    "test_elicitation",
    "Asks the user (elicitation/create) for a username and an email and returns the answer.",
    (args, ctx) => {
      const step = ask(
        ctx,
        "elicitation",
        inputRequired.elicit({
          message: args.message,
          requestedSchema: {
            type: "object",
            properties: {
              username: { type: "string", description: "User's response" },
              email: { type: "string", description: "User's email address" },
            },
            required: ["username", "email"],
          },
        }),
      );
      if ("ask" in step) return Promise.resolve(step.ask);
      const a = step.answer;
      const action = a.kind === "elicit" ? a.action : "cancel";
      const content = a.kind === "elicit" ? a.content ?? {} : {};
      return Promise.resolve({
        text: `User response: action=${action}, content=${JSON.stringify(content)}`,
      });
    },
    z.strictObject({ message: z.string().describe("The message to show the user") }),
  );
}
