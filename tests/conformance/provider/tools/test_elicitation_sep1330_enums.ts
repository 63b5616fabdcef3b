// The conformance fixture `test_elicitation_sep1330_enums`: its name and texts are the suite's contract.
import { inputRequired } from "../../../../lib/mcp/sdk.ts";
import { type AnyTool, fixture } from "../_fixture.ts";
import { ask, elicitationText } from "../_asking.ts";

/** `test_elicitation_sep1330_enums`. */
export function testElicitationSep1330EnumsTool(): AnyTool {
  return fixture(
    "test_elicitation_sep1330_enums",
    "Asks the user to pick from the five enum schema variants (SEP-1330).",
    (_args, ctx) => {
      const step = ask(
        ctx,
        "elicitation",
        inputRequired.elicit({
          message: "Please select options from the enum fields",
          requestedSchema: {
            type: "object",
            properties: {
              untitledSingle: {
                type: "string",
                description: "Untitled single-select",
                enum: ["option1", "option2", "option3"],
              },
              titledSingle: {
                type: "string",
                description: "Titled single-select",
                oneOf: [
                  { const: "value1", title: "First Option" },
                  { const: "value2", title: "Second Option" },
                  { const: "value3", title: "Third Option" },
                ],
              },
              legacyEnum: {
                type: "string",
                description: "Legacy titled enum",
                enum: ["opt1", "opt2", "opt3"],
                enumNames: ["Option One", "Option Two", "Option Three"],
              },
              untitledMulti: {
                type: "array",
                description: "Untitled multi-select",
                items: { type: "string", enum: ["option1", "option2", "option3"] },
              },
              titledMulti: {
                type: "array",
                description: "Titled multi-select",
                items: {
                  anyOf: [
                    { const: "value1", title: "First Choice" },
                    { const: "value2", title: "Second Choice" },
                    { const: "value3", title: "Third Choice" },
                  ],
                },
              },
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
