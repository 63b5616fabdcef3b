// What the worldbank_* tools share: annotations, toolset, dependencies and inputs.
import type { Clock } from "../../clock.ts";
import type { ToolCallContext } from "../../mcp/provider.ts";
import type { WdsClient } from "./client.ts";
import type { WorldbankSettings } from "./settings.ts";
import { createInputs } from "./inputs.ts";

// The annotations of every World Bank tool: each only reads a public, changing, external
// collection. (A file written by output: "file" is a new file of the caller's own, never a change
// to anything there.)
export const ANNOTATIONS = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: true,
} as const;

/** The toolset all four tools belong to. */
export const TOOLSET = "worldbank";

/** What the tools share: the upstream client, the settings and the clock (for "today"). */
export interface ToolDeps {
  client: WdsClient;
  settings: WorldbankSettings;
  clock: Clock;
}

/** Today's date (YYYY-MM-DD) on the injected clock: the end of open date ranges. */
export function today(clock: Clock): string {
  return new Date(clock.now()).toISOString().slice(0, 10);
}

/** What every upstream request of a tool call carries: its cancel signal and logger. */
export function callContext(
  ctx: ToolCallContext,
): { signal: AbortSignal; logger: ToolCallContext["logger"] } {
  return { signal: ctx.signal, logger: ctx.logger };
}

/** The zod inputs of the four tools, built once per provider. */
export type WorldbankInputs = ReturnType<typeof createInputs>;
