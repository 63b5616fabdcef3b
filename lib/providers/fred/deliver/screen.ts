// A FRED result shown inline, cut to the response limit with a note on what was left out.
import { fitToLimit, jsonText, page, truncationNotice } from "../../../mcp/shaping.ts";
import type { NextCall, ToolOutput } from "../../../mcp/provider.ts";
import type { OutputDecision } from "../../../output/tokens.ts";
import { boundedMeta, itemsTable, metaLine, sourceLines } from "../format.ts";
import type { ClipCount, Source } from "../format.ts";
import type { Parsed } from "../parse.ts";
import {
  base,
  type Call,
  citedVintage,
  CLIP_NOTE,
  type DataResult,
  FILE_HINT,
  heading,
  metaBudget,
  shownItems,
  vintageLine,
} from "./call.ts";

/** The inline answer, cut at an item boundary to the character limit. */
export function screenResult(
  call: Call,
  parsed: Parsed,
  source: Source,
  decision?: OutputDecision,
): ToolOutput<DataResult> {
  const { spec, offset } = call;
  const limit = call.ctx.limits.characterLimit;
  const count: ClipCount = { clipped: 0 };
  const meta = boundedMeta(parsed.meta, metaBudget(call), count);
  const shown = shownItems(spec.kind, parsed.items, parsed.meta, count);
  const clippedFields = count.clipped;
  const total = spec.paged ? Math.max(parsed.total ?? 0, offset + shown.length) : shown.length;
  const start = spec.paged ? offset : 0;
  const line = metaLine(meta);
  const vintage = citedVintage(call, parsed.meta);
  const fitted = fitToLimit(shown, limit, ({ items: pairs, truncated }) => {
    const items = pairs.map((p) => p.structured);
    const env = page(total, start, items.length);
    if (!spec.paged) env.next_offset = null;
    const notes: string[] = [];
    if (truncated) {
      notes.push(
        truncationNotice(items.length, total, {
          limit,
          ...(spec.paged ? { nextOffset: env.next_offset } : {}),
          hint: FILE_HINT,
        }),
      );
    } else if (env.has_more) {
      notes.push(
        `${
          total - start - items.length
        } more item(s): call again with offset=${env.next_offset}, or with output: "file" to save them.`,
      );
    }
    if (clippedFields > 0) notes.push(CLIP_NOTE);
    if (spec.kind === "vintage_dates" && items.length) {
      notes.push(
        'For the data as known on one of these dates: operation "get_observations" with realtime_start and ' +
          "realtime_end set to it, or vintage_dates (several) with output_type 2.",
      );
    }
    const message = items.length === 0
      ? "No items matched"
      : `Showing ${start + 1}-${start + items.length} of ${total}`;
    const structured: DataResult = {
      ...base(call, source),
      status: "success",
      output_mode: "screen",
      message,
      ...(vintage ? { vintage } : {}),
      items,
      meta,
      ...env,
      truncated,
      ...(clippedFields > 0 ? { clipped_fields: clippedFields } : {}),
      ...(decision ? { decision } : {}),
    };
    const text = call.args.response_format === "json" ? jsonText(structured) : [
      heading(call),
      ...(line ? [line] : []),
      ...(vintage ? [vintageLine(vintage)] : []),
      `${message}.`,
      itemsTable(spec.kind, pairs.map((p) => p.markdown)),
      ...notes,
      sourceLines(source),
    ].join("\n\n");
    return { text, structured };
  });
  const next = recordCalls(spec.kind, fitted.items.map((p) => p.structured));
  return { text: fitted.text, structured: fitted.structured, ...(next.length ? { next } : {}) };
}

/**
 * From a list of series to their data: the latest values of the first rows, as ready calls (the
 * whole history is one call further, named by that answer).
 */
function recordCalls(kind: string, items: readonly Record<string, unknown>[]): NextCall[] {
  if (kind !== "series") return [];
  return items.slice(0, 3).flatMap((item) => {
    const id = item["id"];
    if (typeof id !== "string" || id === "") return [];
    return [{
      tool: "fred_series",
      arguments: { operation: "get_observations", series_id: id, sort_order: "desc", limit: 5 },
      for: `latest values of ${id}`,
    }];
  });
}
