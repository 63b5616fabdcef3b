// The conformance fixture `test_custom_header`: its name and texts are the suite's contract.
import { z } from "zod";
import { type AnyTool, FIXTURE } from "../_fixture.ts";
import { CUSTOM_HEADER_INPUT } from "../protocol_schemas.ts";

/** `test_custom_header`. */
export function testCustomHeaderTool(): AnyTool {
  return {
    name: "test_custom_header",
    title: "test_custom_header",
    description:
      "Echoes its region argument, which 2026-07-28 HTTP clients also send in the Mcp-Param-Region " +
      "header (x-mcp-header); a header that disagrees with the body is refused with -32020.",
    input: z.strictObject({ region: z.string().describe("Region name, also sent as Mcp-Param-Region") }),
    inputJsonSchema: CUSTOM_HEADER_INPUT,
    output: undefined,
    annotations: FIXTURE,
    handler: (args) => Promise.resolve({ text: `Region: ${args.region}` }),
  };
}
