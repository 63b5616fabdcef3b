// One FRED data call as deliver.ts carries it through, what it answers, and the text pieces
// (heading, source, vintage) every kind of answer shares.
import { cite } from "../../../output/provenance.ts";
import { VINTAGE_HINT, vintageOf } from "../vintage.ts";
import type { Vintage } from "../vintage.ts";
import type { Clock } from "../../../clock.ts";
import type { QueryValue } from "../../../http/fetch_client.ts";
import type { Logger } from "../../../log.ts";
import type { ToolCallContext } from "../../../mcp/provider.ts";
import type { JobManager } from "../../../output/jobs.ts";
import type { ProjectStorage } from "../../../output/storage.ts";
import { modelProfile, tokenBudget } from "../../../output/tokens.ts";
import type { OutputFacts, OutputMode } from "../../../output/tokens.ts";
import type { FileFormat } from "../../../output/row_writers.ts";
import type { FredClient } from "../client.ts";
import type { FredSettings } from "../settings.ts";
import { clipValue, ITEM_CLIP } from "../format.ts";
import type { ClipCount, Source } from "../format.ts";
import type { ItemKind, OperationSpec } from "../operations.ts";
import { itemFor, screenItem } from "../parse.ts";
import type { DataArgs } from "../params.ts";

/** What the data tools share. */
export interface FredDeps {
  settings: FredSettings;
  client: FredClient;
  storage: ProjectStorage;
  jobs: JobManager;
  clock: Clock;
  /** The provider's logger (jobs outlive the call's logger context). */
  logger: Logger;
}

/** The structured result of a data tool (one shape for inline, file and job answers). */
export interface DataResult extends Record<string, unknown> {
  status: "success" | "accepted";
  tool: string;
  operation: string;
  endpoint: string;
  output_mode: "screen" | "file";
  kind: string;
  message: string;
  source: Source;
}

/** What a file lacks of what was asked for, and why (an `incomplete` result). */
export interface Missing {
  rows: number;
  reason: string;
  /** The offset a call continues from to get the rest. */
  next_offset: number;
}

/** Rows of a written file shown in the answer. */
export const EXCERPT_ROWS = 10;

/** What a cut inline answer says to get everything. */
export const FILE_HINT =
  'For all of it at once, call again with output: "file" (writes a project file and returns its path and a resource link).';

/** What an answer says when long fields were shortened to fit. */
export const CLIP_NOTE =
  'Some long FRED fields were shortened to keep this answer within the response limit; output: "file" keeps them whole.';

/** Rows handed to the file writer at once: what the server holds of a page at any time. */
export const BATCH_ROWS = 2000;

/** The key of the item list in FRED's answer, where it is not the operation's kind. */
export const ITEMS_KEY: Record<string, string> = {
  series: "seriess",
  regional_data: "data",
  shapes: "features",
};

/** One data call as it goes through delivery: the operation, its arguments and what it may use. */
export interface Call {
  tool: string;
  spec: OperationSpec;
  args: DataArgs;
  ctx: ToolCallContext;
  deps: FredDeps;
  /** The caller's view of the storage (its owner's projects). */
  storage: ProjectStorage;
  query: Record<string, QueryValue>;
  offset: number;
  mode: OutputMode;
  format: FileFormat;
  project: string;
  /** The file name a resumed job keeps (the one its first replica had reserved). */
  fileName?: string;
}

/** The `limit` sent to FRED for a single-request call. */
export function requestLimit(call: Call): number | undefined {
  const { spec, args, deps } = call;
  if (!spec.paged) return undefined;
  const asked = typeof args["limit"] === "number" ? args["limit"] : undefined;
  if (spec.kind === "observations") {
    // Inline: no point fetching more rows than could ever be shown.
    return Math.min(asked ?? spec.paged.max, deps.settings.screen_row_threshold);
  }
  return asked ?? spec.paged.defaultLimit;
}

/** Rows a request for pages of this operation asks for. */
export function pageSize(call: Call): number {
  return call.spec.kind === "observations" ? call.deps.settings.page_size : call.spec.paged!.max;
}

/** The token budget of `auto`, from the model's profile and the FRED_* settings. */
function budgetOf(settings: FredSettings): number {
  const profile = modelProfile(settings.model_name);
  return tokenBudget({
    ...(settings.safe_token_limit > 0 ? { safeTokenLimit: settings.safe_token_limit } : {}),
    modelTokenLimit: settings.model_token_limit > 0 ? settings.model_token_limit : profile.contextTokens,
    assumeContextUsed: settings.assume_context_used,
    safetyMargin: settings.safety_margin,
  });
}

/** What output "auto" decides on, besides whether the rows fit on screen. */
export function autoFacts(
  call: Call,
  rows: number,
  estimatedTokens: number,
): Omit<OutputFacts, "fitsOnScreen"> {
  const { settings } = call.deps;
  return {
    rows,
    estimatedTokens,
    budget: budgetOf(settings),
    rowThreshold: settings.screen_row_threshold,
    characterLimit: call.ctx.limits.characterLimit,
  };
}

/** The markdown heading of an answer: tool, operation and what it is about. */
export function heading(call: Call): string {
  const subject = [
    "series_id",
    "category_id",
    "release_id",
    "source_id",
    "series_group",
    "search_text",
    "tag_names",
    "shape",
  ]
    .map((k) => call.args[k])
    .find((v) => v !== undefined);
  return `## FRED ${call.tool} ${call.spec.operation}${subject === undefined ? "" : `: ${String(subject)}`}`;
}

/** The fields every structured answer starts with. */
export function base(
  call: Call,
  source: Source,
): { tool: string; operation: string; endpoint: string; kind: string; source: Source } {
  return {
    tool: call.tool,
    operation: call.spec.operation,
    endpoint: call.spec.endpoint,
    kind: call.spec.kind,
    source,
  };
}

/** The share of the response limit FRED's answer fields may take in a result. */
export function metaBudget(call: Call): number {
  return Math.max(200, Math.floor(call.ctx.limits.characterLimit / 5));
}

/**
 * Items as a result shows them: bounded copies for structuredContent, and for markdown the same
 * items with values in FRED's own text ("1065.0"; "missing" for FRED's ".").
 */
export function shownItems(
  kind: ItemKind,
  items: readonly Record<string, unknown>[],
  meta: Record<string, unknown>,
  count: ClipCount,
): { structured: Record<string, unknown>; markdown: Record<string, unknown> }[] {
  return items.map((item) => {
    const structured = clipValue(screenItem(kind, item, meta), ITEM_CLIP, count) as Record<string, unknown>;
    const text = itemFor(kind, item, "markdown");
    const markdown: Record<string, unknown> = { ...structured };
    for (const key of Object.keys(structured)) {
      if (key in text && typeof structured[key] === "number") markdown[key] = text[key];
    }
    return { structured, markdown };
  });
}

/**
 * The vintage of an observations answer (undefined for other operations), also named as the
 * answer's as-of in its provenance.
 */
export function citedVintage(call: Call, meta: Record<string, unknown>): Vintage | undefined {
  if (call.spec.kind !== "observations") return undefined;
  const vintage = vintageOf(call.args, meta);
  cite({ as_of: `vintage: ${vintage.label}` });
  return vintage;
}

/** The line that says which vintage an answer shows, and how to reach another one. */
export function vintageLine(v: Vintage): string {
  return `Vintage: ${v.label}. ${VINTAGE_HINT}.`;
}
