// Fixtures for protocol-level scenarios of @modelcontextprotocol/conformance 0.2.0-alpha.12:
// `json-schema-2020-12` (an input schema served verbatim) and the diagnostic tools the
// `server-stateless` scenario calls by name. Names and schemas are the suite's contract.
import { z } from "zod";
import { type AnyTool, FIXTURE, fixture } from "./_fixture.ts";

/**
 * The input schema of `json_schema_2020_12_tool`, exactly as the suite expects to find it in
 * `tools/list`: 2020-12 keywords zod cannot emit (`$anchor`, `if`/`then`/`else`).
 */
export const JSON_SCHEMA_2020_12_INPUT: Record<string, unknown> = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: {
    address: {
      $anchor: "addressDef",
      type: "object",
      properties: { street: { type: "string" }, city: { type: "string" } },
    },
  },
  properties: {
    name: { type: "string" },
    address: { $ref: "#/$defs/address" },
    contactMethod: { type: "string", enum: ["phone", "email"] },
    phone: { type: "string" },
    email: { type: "string" },
  },
  allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
  if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
  then: { required: ["phone"] },
  else: { required: ["email"] },
  additionalProperties: false,
};

/**
 * What the served schema accepts, for argument validation: a phone number when the contact
 * method is "phone", an email address otherwise (which also covers "at least one of the two").
 */
const CONTACT_INPUT = z.strictObject({
  name: z.string().optional().describe("Contact name"),
  address: z.object({
    street: z.string().optional().describe("Street and number"),
    city: z.string().optional().describe("City"),
  }).optional().describe("Postal address"),
  contactMethod: z.enum(["phone", "email"]).optional().describe("How to reach the contact"),
  phone: z.string().optional().describe("Phone number: required when contactMethod is phone"),
  email: z.string().optional().describe("Email address: required unless contactMethod is phone"),
}).superRefine((args, ctx) => {
  const field = args.contactMethod === "phone" ? "phone" : "email";
  if (args[field] === undefined) {
    ctx.addIssue({
      code: "custom",
      path: [field],
      message: args.contactMethod === "phone"
        ? 'required when "contactMethod" is "phone"'
        : 'required unless "contactMethod" is "phone"',
    });
  }
});

/**
 * The input schema of `test_custom_header`: one string argument the client must mirror in an
 * `Mcp-Param-Region` header (SEP-2243 `x-mcp-header`), so the `http-custom-header-server-validation`
 * scenario has a tool to test.
 */
export const CUSTOM_HEADER_INPUT: Record<string, unknown> = {
  type: "object",
  properties: {
    region: {
      type: "string",
      description: "Region name, also sent as Mcp-Param-Region",
      "x-mcp-header": "Region",
    },
  },
  required: ["region"],
  additionalProperties: false,
};

/** `json_schema_2020_12_tool`, `test_custom_header` and the `server-stateless` diagnostic tools. */
export function protocolTools(): AnyTool[] {
  return [
    {
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
    },
    {
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
    },
    fixture(
      "test_streaming_elicitation",
      "Answers with one result and nothing else on the response stream (no request to the client on it).",
      () => Promise.resolve({ text: "Stream observed: one result, no requests to the client" }),
    ),
    fixture(
      "test_logging_tool",
      "Logs one info message, which reaches the client only when it asked for logs (2026-07-28: _meta logLevel).",
      async (_args, ctx) => {
        await ctx.mcp.mcpReq.log("info", "test_logging_tool ran", "conformance");
        return { text: "Logged one info message" };
      },
    ),
  ];
}
