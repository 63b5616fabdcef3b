// The conformance fixture `json_schema_2020_12_tool`: its name and texts are the suite's contract.
import { type AnyTool, FIXTURE } from "../_fixture.ts";
import { CONTACT_INPUT, JSON_SCHEMA_2020_12_INPUT } from "../protocol_schemas.ts";

/** `json_schema_2020_12_tool`. */
export function jsonSchema202012ToolTool(): AnyTool {
  return {
    name: "json_schema_2020_12_tool",
    title: "json_schema_2020_12_tool",
    description: "Echoes a contact whose input schema uses JSON Schema 2020-12 keywords ($defs, $anchor, " +
      "allOf/anyOf, if/then/else), served verbatim.",
    input: CONTACT_INPUT,
    inputJsonSchema: JSON_SCHEMA_2020_12_INPUT,
    output: undefined,
    annotations: FIXTURE,
    handler: (args) =>
      Promise.resolve({ text: `JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}` }),
  };
}
