// opendata_describe: the toolsets and their tools, or one tool's description and input schema, so
// an agent that sees only the core tools learns the others' arguments.
import { z } from "zod";
import { ToolError } from "../../errors.ts";
import { markdownTable, shorten } from "../shaping.ts";
import type { ToolDefinition } from "../provider.ts";
import { CORE_TOOLSET } from "../toolsets.ts";
import {
  CALL_TOOL,
  CORE_ANNOTATIONS,
  DESCRIBE_TOOL,
  generatedSchemas,
  once,
  SEARCH_TOOL,
  sourceId,
  unknownTool,
} from "./_core.ts";
import type { CoreScope } from "./_core.ts";

export const describeInput = once(() =>
  z.strictObject({
    toolset: z.string().max(64).default("").describe("A toolset id: list its tools"),
    tool: z.string().max(64).default("").describe("A tool name: its arguments (input schema) and use"),
  })
);

export const describeOutput = once(() =>
  z.object({
    sources: z.array(z.object({ id: z.string(), name: z.string(), enabled: z.boolean() })).optional(),
    toolsets: z.array(z.object({
      id: z.string(),
      description: z.string(),
      tools: z.array(z.string()),
      listed: z.boolean(),
    })).optional(),
    unavailable: z.array(z.object({ toolset: z.string(), tools: z.array(z.string()), reason: z.string() }))
      .optional(),
    tools: z.array(z.object({ name: z.string(), description: z.string(), listed: z.boolean() })).optional(),
    tool: z.object({
      name: z.string(),
      toolset: z.string(),
      description: z.string(),
      listed: z.boolean(),
      input_schema: z.record(z.string(), z.unknown()),
    }).optional(),
  })
);

type DescribeInput = ReturnType<typeof describeInput>;
type DescribeOutput = ReturnType<typeof describeOutput>;

/** opendata_describe for one server instance. */
export function describeTool(scope: CoreScope): ToolDefinition<DescribeInput, DescribeOutput> {
  const { options, catalog, allTools, searchable, sourceIds } = scope;
  const describe: ToolDefinition<DescribeInput, DescribeOutput> = {
    name: DESCRIBE_TOOL,
    title: "Describe toolsets and tools",
    toolset: CORE_TOOLSET,
    description: "Lists the toolsets and their tools; with toolset, that toolset's tools; with tool, the " +
      `tool's full description and input schema, to call it with ${CALL_TOOL} when it is not listed.`,
    // Built on the first call: tools/list serves the generated JSON Schemas.
    get input() {
      return describeInput();
    },
    get output() {
      return describeOutput();
    },
    ...generatedSchemas(DESCRIBE_TOOL),
    annotations: { ...CORE_ANNOTATIONS, openWorldHint: false },
    handler(args) {
      if (args.tool) {
        const found = allTools.get(args.tool);
        if (!found) throw unknownTool(args.tool, [...allTools.keys()], catalog.unavailable);
        const listed = options.served.has(args.tool);
        const schema = options.inputSchemaOf(found.tool);
        const structured = {
          tool: {
            name: found.tool.name,
            toolset: found.toolset,
            description: found.tool.description,
            listed,
            input_schema: schema,
          },
        };
        const how = listed
          ? "It is listed: call it directly."
          : `It is not listed here: call it with ${CALL_TOOL}, e.g. {"tool": "${found.tool.name}", "arguments": "{...}"}.`;
        const text = [
          `## ${found.tool.name} (toolset ${found.toolset})`,
          "",
          found.tool.description,
          "",
          how,
          "",
          "Input schema:",
          "```json",
          JSON.stringify(schema),
          "```",
        ].join("\n");
        return Promise.resolve({ text, structured });
      }
      if (args.toolset) {
        const set = catalog.get(args.toolset.toLowerCase());
        if (!set) {
          const left = catalog.unavailable.find((u) => u.toolset === args.toolset.toLowerCase());
          if (left) {
            throw new ToolError(
              "CONFIGURATION_ERROR",
              `The toolset "${left.toolset}" is not served: ${left.reason}`,
              {
                hint: left.reason,
              },
            );
          }
          throw new ToolError("VALIDATION_ERROR", `Unknown toolset "${args.toolset}"`, {
            field: "toolset",
            hint: `Known toolsets: ${catalog.ids.join(", ")}`,
          });
        }
        const tools = set.tools.map((t) => ({
          name: t.name,
          description: shorten(t.description, 240),
          listed: options.served.has(t.name),
        }));
        const text = [
          `## Toolset ${set.id}: ${set.description}`,
          "",
          markdownTable(
            ["tool", "listed", "what it does"],
            tools.map((t) => [t.name, t.listed ? "yes" : "no", t.description]),
          ),
          "",
          `Ask ${DESCRIBE_TOOL} with tool for a tool's arguments; tools not listed are called with ${CALL_TOOL}.`,
        ].join("\n");
        return Promise.resolve({ text, structured: { tools } });
      }
      const toolsets = catalog.toolsets.map((s) => ({
        id: s.id,
        description: s.description,
        tools: s.tools.map((t) => t.name),
        listed: s.tools.every((t) => options.served.has(t.name)),
      }));
      const sources = [
        ...searchable.map((p) => ({ id: sourceId(p), name: p.search!.name, enabled: true })),
        ...[...new Set(catalog.unavailable.map((u) => u.provider))]
          .filter((id) => !sourceIds.includes(id))
          .map((id) => ({ id, name: id, enabled: false })),
      ];
      const unavailable = catalog.unavailable.map((u) => ({
        toolset: u.toolset,
        tools: [...u.tools],
        reason: u.reason,
      }));
      const lines = [
        "## Toolsets",
        "",
        markdownTable(
          ["toolset", "listed", "tools", "what for"],
          toolsets.map((s) => [s.id, s.listed ? "yes" : "no", s.tools.join(", "), s.description]),
        ),
        "",
        `Tools of toolsets not listed are still reachable: ${DESCRIBE_TOOL} with tool gives the arguments, ` +
        `${CALL_TOOL} calls it. To list a toolset's tools directly, start the server with --toolsets ` +
        "(or OPENDATA_MCP_TOOLSETS), or over HTTP use /mcp/<toolsets> or the X-MCP-Toolsets header.",
        "",
        `Source ids for ${SEARCH_TOOL} sources: ${
          sources.map((x) => x.enabled ? x.id : `${x.id} (not enabled)`).join(", ")
        }.`,
      ];
      if (unavailable.length) {
        lines.push(
          "",
          "Not served as configured:",
          ...unavailable.map((u) => `- ${u.toolset} (${u.tools.join(", ")}): ${u.reason}`),
        );
      }
      return Promise.resolve({
        text: lines.join("\n"),
        structured: { sources, toolsets, ...(unavailable.length ? { unavailable } : {}) },
      });
    },
  };

  return describe;
}
