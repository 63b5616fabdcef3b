// opendata_chart: series from several tools on one chart (a FRED series next to BOJ series), in
// one call, so a host that renders only the last call's view still shows them together. Listed
// only to clients that render views; it runs each call exactly as tools/call would and merges
// the series models the tools' own views make. The core names no provider: any tool whose view
// is the series view qualifies.
import { z } from "zod";
import { ToolError } from "../../errors.ts";
import { clampText } from "../shaping.ts";
import type { CallToolResult, Tool } from "../sdk.ts";
import type { SeriesModel, ViewCall } from "../views/model.ts";
import { VIEW_META_KEY } from "../views/model.ts";

/** The tool's name. */
export const CHART_TOOL = "opendata_chart";

/** At most this many calls on one chart. */
const MAX_CALLS = 6;

/** Its input: each call as a tool name and its arguments as JSON text (strict-client-safe). */
function buildChartInput() {
  return z.strictObject({
    calls: z.array(z.strictObject({
      tool: z.string().min(1).max(64).describe(
        "A tool that draws series, e.g. fred_series or boj_get_data_code",
      ),
      arguments: z.string().max(20_000).describe(
        'Its arguments as a JSON object in a string, e.g. "{\\"series_id\\": \\"GDP\\"}"',
      ),
    })).min(1).max(MAX_CALLS).describe(`1 to ${MAX_CALLS} calls whose series share the chart`),
  });
}

// Built on first use (a client that renders views), not when the server starts: the schema and
// its JSON Schema cost start-up time every other start would pay for nothing.
let builtInput: ReturnType<typeof buildChartInput> | undefined;
let inputJson: Tool["inputSchema"] | undefined;

/** The tool's input schema. */
export function chartInput(): ReturnType<typeof buildChartInput> {
  return builtInput ??= buildChartInput();
}

function chartInputJson(): Tool["inputSchema"] {
  if (!inputJson) {
    const { $schema: _dialect, ...json } = z.toJSONSchema(chartInput(), {
      io: "input",
    }) as Tool["inputSchema"];
    inputJson = json;
  }
  return inputJson;
}

/** What structuredContent holds: per call, its tool, whether it failed, and its series. */
const OUTPUT_JSON: Tool["outputSchema"] = {
  type: "object",
  properties: {
    calls: {
      type: "array",
      items: {
        type: "object",
        properties: {
          tool: { type: "string" },
          is_error: { type: "boolean" },
          series: { type: "array", items: { type: "string" } },
        },
        required: ["tool", "is_error", "series"],
      },
    },
  },
  required: ["calls"],
};

/** The tools/list entry, naming the tools that qualify. */
export function chartTool(seriesTools: readonly string[], resourceUri: string): Tool {
  return {
    name: CHART_TOOL,
    title: "Chart series from several sources",
    description:
      `Shows series from several calls on one chart (e.g. a FRED series and BOJ series together) and ` +
      `returns each call's text. Tools: ${seriesTools.join(", ")}. Each call is {tool, arguments} with the ` +
      "arguments as JSON text, checked as that tool checks them.",
    inputSchema: chartInputJson(),
    outputSchema: OUTPUT_JSON,
    annotations: {
      title: "Chart series from several sources",
      readOnlyHint: true,
      idempotentHint: true,
      destructiveHint: false,
      openWorldHint: true,
    },
    _meta: { ui: { resourceUri, visibility: ["model", "app"] }, "ui/resourceUri": resourceUri },
  };
}

/** One call's outcome, as the chart merges it. */
export interface ChartPart {
  tool: string;
  arguments: Record<string, unknown>;
  result: CallToolResult;
}

/**
 * The answer of a chart: every call's text under its tool's name (the model reads them all), a
 * small structured summary, and the merged series model for the view. An error only when every
 * call failed.
 */
export function chartResult(parts: readonly ChartPart[], characterLimit: number): CallToolResult {
  const text = parts.map((p) => {
    const body = p.result.content.filter((c) => c.type === "text").map((c) => (c as { text: string }).text)
      .join("\n");
    return `## ${p.tool}${p.result.isError ? " (failed)" : ""}\n\n${body}`;
  }).join("\n\n");
  const models = parts.flatMap((p) => {
    const m = (p.result._meta?.[VIEW_META_KEY] ?? null) as (SeriesModel & { tool?: string }) | null;
    return m?.view === "series" ? [{ tool: p.tool, model: m }] : [];
  });
  const unique = (xs: string[]) => [...new Set(xs)];
  const details: { tool: string; arguments: string }[] = models.flatMap(({ tool, model }) =>
    model.details ? [{ tool, arguments: JSON.stringify(model.details) }] : []
  );
  const merged: SeriesModel & { tool: string } = {
    view: "series",
    series: models.flatMap(({ model }) => model.series),
    source: { name: unique(models.map(({ model }) => model.source.name)).join("; ") },
    licence: unique(models.map(({ model }) => model.licence)).join(" "),
    ...(details.length ? { details: { calls: details } satisfies ViewCall } : {}),
    tool: CHART_TOOL,
  };
  const structured = {
    calls: parts.map((p) => ({
      tool: p.tool,
      is_error: p.result.isError === true,
      series: ((p.result._meta?.[VIEW_META_KEY] as SeriesModel | undefined)?.series ?? []).map((s) => s.id),
    })),
  };
  const limited = clampText(
    text,
    characterLimit,
    "Chart fewer calls, or call each tool alone for its whole text.",
  );
  return {
    content: [{ type: "text", text: limited }],
    structuredContent: structured,
    ...(parts.every((p) => p.result.isError) ? { isError: true } : {}),
    ...(models.length ? { _meta: { [VIEW_META_KEY]: merged } } : {}),
  };
}

/** The calls of a chart, each checked to draw series (`seriesTools`). */
export function chartCalls(
  args: z.output<ReturnType<typeof buildChartInput>>,
  seriesTools: ReadonlySet<string>,
): { tool: string; arguments: string }[] {
  for (const [i, c] of args.calls.entries()) {
    if (!seriesTools.has(c.tool)) {
      throw new ToolError("VALIDATION_ERROR", `"calls.${i}.tool": "${c.tool}" draws no series`, {
        field: `calls.${i}.tool`,
        hint: `Use one of: ${[...seriesTools].join(", ")}`,
      });
    }
  }
  return args.calls;
}
