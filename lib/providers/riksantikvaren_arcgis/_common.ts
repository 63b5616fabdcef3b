// What the arcgis-* tools share: their dependencies, toolset and annotations, the service field,
// and the per-call options and page budget.
import { z } from "zod";
import type { Clock } from "../../clock.ts";
import { ToolError } from "../../errors.ts";
import type { ToolCallContext } from "../../mcp/provider.ts";
import { orDefault } from "../../output/result_files.ts";
import { nextPageBudget } from "../../http/deadline.ts";
import type { PageBudget } from "../../http/deadline.ts";
import type { ArcgisClient, CallOptions } from "./client.ts";
import type { RiksantikvarenArcgisSettings } from "./settings.ts";

/** Every arcgis-* tool only reads, from the open web. */
export const READ_ONLY = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: true,
} as const;

const SERVICE_RE = /^[A-Za-z0-9_]{1,100}$/;
/** An ArcGIS field name as a caller may give it (order_by, out_fields). */
export const FIELD_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** What the tools share. */
export interface ArcgisToolDeps {
  client: ArcgisClient;
  settings: RiksantikvarenArcgisSettings;
  /** The clock the call deadline is measured on (the HTTP runtime's). */
  clock: Clock;
}

/** The toolset of every arcgis-* tool. */
export const TOOLSET = "arcgis";

/** The `service` input field, defaulting to the configured service. */
export function serviceField(settings: RiksantikvarenArcgisSettings) {
  return orDefault(
    z.string().refine((v) => v.length >= 1 && v.length <= 140, "give 1 to 140 characters"),
    settings.default_service,
  ).describe(`Map service (default "${settings.default_service}")`);
}

/** "Kulturminner20180301" from "Kulturminner20180301" or "Distribusjon/Kulturminner20180301". */
export function serviceName(input: string, baseUrl: string): string {
  const folder = new URL(baseUrl).pathname.replace(/\/+$/, "").split("/").pop() ?? "";
  const name = folder && input.toLowerCase().startsWith(`${folder.toLowerCase()}/`)
    ? input.slice(folder.length + 1)
    : input;
  if (!SERVICE_RE.test(name)) {
    throw new ToolError(
      "VALIDATION_ERROR",
      `Invalid "service": "${input}" is not a service name of the ${
        folder || "configured"
      } folder (letters, digits and _ only)`,
      { field: "service", hint: "Call arcgis-services to list the services" },
    );
  }
  return name;
}

/** The services folder the base URL names (the last path segment). */
export function folderOf(baseUrl: string): string {
  return new URL(baseUrl).pathname.replace(/\/+$/, "").split("/").pop() ?? "";
}

/** What every upstream request of a tool call carries: its cancel signal and logger. */
export function callOptions(ctx: ToolCallContext): CallOptions {
  return { signal: ctx.signal, logger: ctx.logger };
}

/** Whether another page fits in the call's deadline, and with what timeout. */
export function budgetFor(deps: ArcgisToolDeps): PageBudget {
  return nextPageBudget(deps.clock.now(), deps.settings);
}

/** The call's options with the budget's timeout, when it has one. */
export function withTimeout(call: CallOptions, budget: PageBudget): CallOptions {
  return budget.go && budget.timeoutMs !== undefined ? { ...call, timeoutMs: budget.timeoutMs } : call;
}
