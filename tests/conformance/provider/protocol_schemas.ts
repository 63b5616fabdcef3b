// The input schemas of the protocol-level conformance fixtures (tools/json_schema_2020_12_tool.ts,
// tools/test_custom_header.ts and the other `server-stateless` diagnostics): the suite's contract
// (@modelcontextprotocol/conformance 0.2.0-alpha.12).
import { z } from "zod";

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
export const CONTACT_INPUT = z.strictObject({
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
