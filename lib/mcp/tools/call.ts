// opendata_call: calls any tool of the server by name, listed or not. The core dispatches it
// (createServer in server.ts) with callTarget(), so the target's result, validation and log line
// are exactly those of a direct call.
import { z } from "zod";
import { ToolError } from "../../errors.ts";
import { jsonTooDeepAt } from "../../http/json_depth.ts";
import type { ToolDefinition, UnavailableTools } from "../provider.ts";
import { DEFAULT_MAX_DEPTH } from "../stdio_transport.ts";
import { CORE_TOOLSET } from "../toolsets.ts";
import { CALL_TOOL, DESCRIBE_TOOL, once, SEARCH_TOOL, unknownTool } from "./_core.ts";

/**
 * opendata_call's input: `arguments` is served as a JSON string (strict clients cannot pass an
 * open object), and an object is accepted too, for clients that send one.
 */
export const callInput = once(() =>
  z.strictObject({
    tool: z.string().min(1).max(64).describe("The tool's name"),
    arguments: z.union([z.string().max(200_000), z.record(z.string(), z.unknown())]).default("{}").describe(
      'The tool\'s arguments as a JSON object in a string, e.g. "{\\"query\\": \\"Oslo\\"}"',
    ),
  })
);

/** opendata_call's input schema (built on the first call). */
export type CallInput = ReturnType<typeof callInput>;

/** The input schema opendata_call is served with (one plain type per property). */
const CALL_INPUT_JSON = {
  type: "object",
  properties: {
    tool: { type: "string", description: "The tool's name (opendata_describe lists them)" },
    arguments: {
      type: "string",
      description: 'The tool\'s arguments as a JSON object in a string, e.g. "{\\"query\\": \\"Oslo\\"}"',
    },
  },
  required: ["tool", "arguments"],
  additionalProperties: false,
};

/** opendata_call's definition (listed; its handler is never run, the core dispatches it). */
export function callTool(): ToolDefinition<CallInput, undefined> {
  const call: ToolDefinition<CallInput, undefined> = {
    name: CALL_TOOL,
    title: "Call any tool",
    toolset: CORE_TOOLSET,
    description:
      "Calls any tool of this server by name, listed here or not, and returns its result unchanged. " +
      `The arguments are checked against that tool's own schema (${DESCRIBE_TOOL} shows it); use the next ` +
      `calls that ${SEARCH_TOOL} suggests as they are.`,
    get input() {
      return callInput();
    },
    inputJsonSchema: CALL_INPUT_JSON,
    output: undefined,
    annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: true },
    handler() {
      // The core dispatches opendata_call itself (createServer), so the target's result, its
      // validation and its log line are exactly those of a direct call.
      return Promise.reject(new Error(`${CALL_TOOL} is dispatched by the core`));
    },
  };
  return call;
}

/**
 * The deepest `arguments` of opendata_call sent as a string may nest: as deep as they could as
 * an object inside the message (`params.arguments.arguments` sits three levels down).
 */
const INNER_MAX_DEPTH = DEFAULT_MAX_DEPTH - 3;

/**
 * The target and its arguments of an opendata_call, or the validation error to answer.
 * `unavailable`: the tools not served as configured, whose error says how to enable them.
 */
export function callTarget(
  args: z.output<CallInput>,
  // deno-lint-ignore no-explicit-any
  tools: ReadonlyMap<string, ToolDefinition<any, any>>,
  unavailable: readonly UnavailableTools[] = [],
  // deno-lint-ignore no-explicit-any
): { tool: ToolDefinition<any, any>; arguments: unknown } {
  const tool = tools.get(args.tool);
  if (!tool || tool.name === CALL_TOOL) {
    throw unknownTool(
      args.tool,
      [...tools.keys()].filter((n) => n !== CALL_TOOL),
      unavailable,
      args.arguments,
    );
  }
  let parsed: unknown = args.arguments;
  if (typeof parsed === "string") {
    // The message's own depth check never saw inside the string: the same limit, before parsing.
    if (jsonTooDeepAt(parsed, INNER_MAX_DEPTH) >= 0) {
      throw new ToolError(
        "VALIDATION_ERROR",
        `"arguments" nests objects and arrays more than ${INNER_MAX_DEPTH} levels deep`,
        {
          field: "arguments",
          hint: `${DESCRIBE_TOOL} with tool "${tool.name}" shows the arguments it takes`,
        },
      );
    }
    try {
      parsed = parsed.trim() === "" ? {} : JSON.parse(parsed);
    } catch (e) {
      throw new ToolError(
        "VALIDATION_ERROR",
        `"arguments" is not JSON: ${e instanceof Error ? e.message : String(e)}`,
        {
          field: "arguments",
          hint: 'Send the arguments as a JSON object in a string, e.g. "{\\"query\\": \\"Oslo\\"}"',
        },
      );
    }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ToolError("VALIDATION_ERROR", '"arguments" must be a JSON object', {
      field: "arguments",
      hint: `${DESCRIBE_TOOL} with tool "${tool.name}" shows the arguments it takes`,
    });
  }
  return { tool, arguments: parsed };
}
