// The rules a served tool schema keeps so that strict clients take it as it is (docs/CLIENTS.md):
// the OpenAI Agents SDK's strict conversion (`toOpenAIStrictToolSchema` /
// `assertOpenAIStrictToolSchemaPreservesOpenObjects` in @openai/agents-core) and the LangChain MCP
// adapters, which drop the type of `anyOf` properties. The rules are stricter than either client:
// one plain type per property, no unions, tuples, type arrays or null, closed objects, and no
// ±2^53 bounds (zod's default integer bounds, which only cost tokens).

/** Keywords the OpenAI strict conversion refuses, and the unions LangChain cannot type. */
const FORBIDDEN = [
  "anyOf",
  "oneOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "prefixItems",
  "additionalItems",
  "patternProperties",
  "propertyNames",
  "contains",
  "minContains",
  "maxContains",
  "dependentRequired",
  "dependentSchemas",
  "dependencies",
  "unevaluatedItems",
  "unevaluatedProperties",
  "$dynamicRef",
  "$recursiveRef",
  "$ref",
  "contentSchema",
];

const PLAIN_TYPES = new Set(["string", "number", "integer", "boolean", "array", "object"]);
const SAFE_INTEGER = 9_007_199_254_740_991;

/** One broken rule, at a JSON pointer inside the schema. */
export interface SchemaProblem {
  path: string;
  problem: string;
}

/**
 * The problems of one input schema (empty when it keeps every rule). `openObjects` lists the
 * JSON pointers where an open object is the tool's contract (example-echo echoes any object).
 */
export function schemaProblems(
  schema: Record<string, unknown>,
  options: { openObjects?: readonly string[] } = {},
): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const visit = (node: unknown, path: string): void => {
    if (typeof node !== "object" || node === null || Array.isArray(node)) {
      problems.push({ path, problem: "a schema node that is not an object" });
      return;
    }
    const s = node as Record<string, unknown>;
    for (const keyword of FORBIDDEN) {
      if (keyword in s) problems.push({ path, problem: `uses "${keyword}"` });
    }
    const type = s["type"];
    if (Array.isArray(type)) problems.push({ path, problem: `a type array ${JSON.stringify(type)}` });
    else if (type === "null") problems.push({ path, problem: 'type "null"' });
    else if (typeof type !== "string" || !PLAIN_TYPES.has(type)) {
      problems.push({ path, problem: `no plain type (${JSON.stringify(type)})` });
    }
    if ("default" in s && s["default"] === null) problems.push({ path, problem: "a null default" });
    if (Array.isArray(s["enum"]) && (s["enum"] as unknown[]).includes(null)) {
      problems.push({ path, problem: "null among the enum values" });
    }
    for (const bound of ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]) {
      const v = s[bound];
      if (typeof v === "number" && Math.abs(v) >= SAFE_INTEGER) {
        problems.push({ path, problem: `${bound} ${v} (the ±2^53 default of an integer: drop it)` });
      }
    }
    if (type === "object") {
      const open = options.openObjects?.includes(path) ?? false;
      if (s["additionalProperties"] !== false && !open) {
        problems.push({ path, problem: "an open object (additionalProperties is not false)" });
      }
      const properties = (s["properties"] ?? {}) as Record<string, unknown>;
      for (const [key, child] of Object.entries(properties)) visit(child, `${path}/properties/${key}`);
    }
    if (type === "array") {
      if (typeof s["items"] !== "object" || s["items"] === null || Array.isArray(s["items"])) {
        problems.push({ path, problem: "an array without one items schema" });
      } else {
        visit(s["items"], `${path}/items`);
      }
    }
  };
  visit(schema, "");
  return problems;
}
