// How a tool is listed: its served input schema (the shared `fresh` argument added), its MCP
// `Tool` description with JSON Schemas derived once per definition, and the tool list of the
// enabled providers.
import { z } from "zod";
import type { Provider, ToolDefinition } from "./provider.ts";
import { listedTool } from "./lazy.ts";
import type { Tool } from "./sdk.ts";

/** The tools of `providers`, in registration order, checked for duplicate names. */
// deno-lint-ignore no-explicit-any
export function collectTools(providers: readonly Provider[]): ToolDefinition<any, any>[] {
  // deno-lint-ignore no-explicit-any
  const tools = new Map<string, ToolDefinition<any, any>>();
  for (const provider of providers) {
    for (const tool of provider.tools) {
      if (tools.has(tool.name)) {
        throw new Error(`Tool "${tool.name}" is registered twice (second time by "${provider.id}")`);
      }
      tools.set(tool.name, tool);
    }
  }
  return [...tools.values()];
}

const schemaCache = new WeakMap<object, Tool>();
const inputCache = new WeakMap<object, { schema: z.ZodType; addsFresh: boolean }>();

let fresh: z.ZodDefault<z.ZodBoolean> | undefined;

/** The shared `fresh` argument every upstream-backed tool accepts (built on first use). */
export function freshField(): z.ZodDefault<z.ZodBoolean> {
  return fresh ??= z.boolean().default(false).describe("True: skip the server's cache, ask the source again");
}

/**
 * The input schema a tool is served with: its own, plus the shared `fresh` argument when it
 * reads an upstream (`openWorldHint`) and does not define `fresh` itself.
 */
// deno-lint-ignore no-explicit-any
export function servedInput(tool: ToolDefinition<any, any>): { schema: z.ZodType; addsFresh: boolean } {
  const cached = inputCache.get(tool);
  if (cached) return cached;
  const input = tool.input;
  const addsFresh = tool.annotations.openWorldHint === true && input instanceof z.ZodObject &&
    !("fresh" in input.shape);
  const served = {
    schema: addsFresh ? (input as z.ZodObject).safeExtend({ fresh: freshField() }) : input,
    addsFresh,
  };
  inputCache.set(tool, served);
  return served;
}

/** The MCP `Tool` description of a definition (JSON Schemas derived from its zod schemas). */
// deno-lint-ignore no-explicit-any
export function describeTool(tool: ToolDefinition<any, any>): Tool {
  const cached = schemaCache.get(tool) ?? listedTool(tool);
  if (cached) return cached;
  const described: Tool = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema:
      (tool.inputJsonSchema ?? toJsonSchema(servedInput(tool).schema, "input")) as Tool["inputSchema"],
    annotations: { title: tool.title, ...tool.annotations },
  };
  // The generated schema first: reading `output` may build it (the core tools build theirs on a call).
  const output = tool.outputJsonSchema ?? (tool.output ? toJsonSchema(tool.output, "output") : undefined);
  if (output) described.outputSchema = withProvenanceProperty(output as Tool["outputSchema"]);
  if (tool.execution) described.execution = tool.execution;
  schemaCache.set(tool, described);
  return described;
}

/**
 * The output schema with the optional `provenance` object every data answer may carry (the
 * core adds it, see lib/output/provenance.ts); a closed schema (`additionalProperties: false`)
 * is left alone and its answers carry none.
 */
function withProvenanceProperty(schema: Tool["outputSchema"]): Tool["outputSchema"] {
  if (!schema || (schema as Record<string, unknown>)["additionalProperties"] === false) return schema;
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  if ("provenance" in properties) return schema;
  return { ...schema, properties: { ...properties, provenance: { type: "object" } } } as Tool["outputSchema"];
}

/** Whether answers of a tool with this served output schema may carry `provenance`. */
export function takesProvenance(schema: Tool["outputSchema"]): boolean {
  return schema === undefined || "provenance" in ((schema.properties ?? {}) as Record<string, unknown>);
}

export function toJsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>;
  // 2020-12 is MCP's default dialect: naming it on every tool would only cost the model tokens.
  delete json["$schema"];
  if (json["type"] !== "object") return { type: "object", ...json };
  return json;
}
