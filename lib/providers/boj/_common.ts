// What the boj_* tools share: annotations, toolsets, their dependencies and inputs, and the
// normalising of the format, lang and date arguments.
import type { Clock } from "../../clock.ts";
import type { ToolCallContext, ToolDefinition } from "../../mcp/provider.ts";
import type { Frequency } from "./catalog.ts";
import type { BojClient } from "./client.ts";
import type { BojSettings } from "./settings.ts";
import { createInputs } from "./inputs.ts";
import { validateDate, validateRange } from "./validate.ts";

/** The data tools only read, from BOJ's API. */
export const DATA_ANNOTATIONS = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: true,
} as const;

/** The catalog tools read the bundled catalog: no upstream. */
export const CATALOG_ANNOTATIONS = { ...DATA_ANNOTATIONS, openWorldHint: false } as const;

/** BOJ tools forbid MCP tasks (docs/apis/boj.md): a call is one request a page, paged by the caller. */
export const EXECUTION = { taskSupport: "forbidden" } as const;

/** The toolset of the three data tools. */
export const DATA_TOOLSET = "boj-data";

/** The toolset of the three catalog tools. */
export const DISCOVERY_TOOLSET = "boj-discovery";

/** Normalises the `format` alias to BOJ notation. */
export function normalizeFormat(format: string | undefined): "JSON" | "CSV" {
  return format?.toUpperCase() === "CSV" ? "CSV" : "JSON";
}

/** Normalises the `lang` alias to BOJ notation (undefined leaves the API default, JP). */
export function normalizeLang(lang: string | undefined): "JP" | "EN" | undefined {
  return lang === undefined ? undefined : lang.toUpperCase() === "EN" ? "EN" : "JP";
}

/** The validated start and end dates of a data call, checked against each other. */
export function dates(
  start: string | undefined,
  end: string | undefined,
  frequency?: Frequency,
): { startDate?: string; endDate?: string } {
  const startDate = start === undefined ? undefined : validateDate(start, "start_date", frequency);
  const endDate = end === undefined ? undefined : validateDate(end, "end_date", frequency);
  validateRange(startDate, endDate);
  return {
    ...(startDate === undefined ? {} : { startDate }),
    ...(endDate === undefined ? {} : { endDate }),
  };
}

// deno-lint-ignore no-explicit-any
export type AnyTool = ToolDefinition<any, any>;

/** What the tools share. */
export interface ToolDeps {
  client: BojClient;
  settings: BojSettings;
  clock: Clock;
}

/** What every upstream request of a tool call carries: its cancel signal and logger. */
export function call(ctx: ToolCallContext): { signal: AbortSignal; logger: ToolCallContext["logger"] } {
  return { signal: ctx.signal, logger: ctx.logger };
}

/** The zod inputs of the six tools, built once per provider. */
export type BojInputs = ReturnType<typeof createInputs>;
