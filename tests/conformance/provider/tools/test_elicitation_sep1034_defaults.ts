// The conformance fixture `test_elicitation_sep1034_defaults`: its name and texts are the suite's contract.
import { inputRequired } from "../../../../lib/mcp/sdk.ts";
import { type AnyTool, fixture } from "../_fixture.ts";
import { ask, elicitationText } from "../_asking.ts";

/** `test_elicitation_sep1034_defaults`. */
export function testElicitationSep1034DefaultsTool(): AnyTool {
  return fixture(
    "test_elicitation_sep1034_defaults",
    "Asks the user for five values whose schemas carry defaults (SEP-1034).",
    (_args, ctx) => {
      const step = ask(
        ctx,
        "elicitation",
        inputRequired.elicit({
          message: "Please review and update the form fields with defaults",
          requestedSchema: {
            type: "object",
            properties: {
              name: { type: "string", description: "User name", default: "John Doe" },
              age: { type: "integer", description: "User age", default: 30 },
              score: { type: "number", description: "User score", default: 95.5 },
              status: {
                type: "string",
                description: "User status",
                enum: ["active", "inactive", "pending"],
                default: "active",
              },
              verified: { type: "boolean", description: "Verification status", default: true },
            },
            required: [],
          },
        }),
      );
      if ("ask" in step) return Promise.resolve(step.ask);
      return Promise.resolve({ text: elicitationText(step.answer) });
    },
  );
}
