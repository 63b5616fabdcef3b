// Shapes a metadata answer (getMetadata's series list, optionally filtered by a query) into
// structured content and markdown within the character limit.
import { fitToLimit, largestWhere, markdownTable, page, truncationNotice } from "../../mcp/shaping.ts";
import type { Rendered, ResponseFormat } from "../../mcp/shaping.ts";
import type { MetadataEntry, MetadataResponse } from "./decode.ts";
import type { EntryOut, MetadataOutput } from "./schemas.ts";
import {
  bounded,
  boundEntry,
  boundMeta,
  clippedNotice,
  excerpt,
  fieldMax,
  nameOf,
  pick,
  RAW_SHARE,
  SHORT_MAX,
  sourceInfo,
  sourceLines,
} from "./format.ts";

/** The `layer` argument a metadata row corresponds to ("1,2"; trailing zero levels dropped). */
export function layerPath(
  e: Pick<MetadataEntry, "layer1" | "layer2" | "layer3" | "layer4" | "layer5">,
): string {
  const levels = [e.layer1, e.layer2, e.layer3, e.layer4, e.layer5];
  while (levels.length > 1 && levels[levels.length - 1] === 0) levels.pop();
  return levels.join(",");
}

function fold(s: string): string {
  return s.normalize("NFKC").toLowerCase();
}

/** Whether every word of `query` occurs in the row's code, names, unit, category or notes. */
export function matchesQuery(e: MetadataEntry, query: string): boolean {
  const terms = fold(query).split(/\s+/).filter(Boolean);
  if (terms.length === 0) return true;
  const hay = fold(
    [
      e.series_code,
      e.name_of_time_series,
      e.name_of_time_series_j,
      e.unit,
      e.unit_j,
      e.category,
      e.category_j,
      e.frequency,
      e.notes,
      e.notes_j,
    ].filter(Boolean).join("\n"),
  );
  return terms.every((t) => hay.includes(t));
}

/** Options for {@linkcode renderMetadata}. */
export interface MetadataRenderOptions {
  response: MetadataResponse;
  url: string;
  raw?: string;
  query?: string;
  offset: number;
  limit: number;
  responseFormat: ResponseFormat;
  characterLimit: number;
  lang?: "JP" | "EN";
}

/** Builds boj_get_metadata's result: filter, page, then fit within the character limit. */
export function renderMetadata(o: MetadataRenderOptions): Rendered<MetadataOutput> {
  const matching = o.query ? o.response.entries.filter((e) => matchesQuery(e, o.query!)) : o.response.entries;
  const clipped = new Set<string>();
  const cap = fieldMax(o.characterLimit);
  const meta = boundMeta(o.response.meta, clipped);
  const db = bounded(o.response.db, SHORT_MAX, "DB", clipped);
  const slice = matching.slice(o.offset, o.offset + o.limit).map((e): EntryOut => ({
    ...boundEntry(e, cap, clipped),
    layer: layerPath(e),
  }));
  const source = sourceInfo(o.url);

  const build = (entries: EntryOut[], cut: boolean, raw?: { text: string; cut: boolean }) => {
    const env = page(matching.length, o.offset, entries.length);
    const notices: string[] = [];
    if (cut) {
      notices.push(
        truncationNotice(entries.length, slice.length, {
          limit: o.characterLimit,
          nextOffset: env.next_offset,
        })
          .replace("items", "rows"),
      );
    } else if (env.has_more) {
      notices.push(
        `${
          matching.length - o.offset - entries.length
        } more rows match: call again with offset=${env.next_offset}.`,
      );
    }
    if (matching.length === 0) {
      notices.push(
        o.query
          ? `No row of ${
            db || "this database"
          } matches "${o.query}": try fewer or other words (English or Japanese), or no query to browse.`
          : "BOJ returned no rows for this database.",
      );
    } else if (o.offset >= matching.length) {
      notices.push(`offset ${o.offset} is past the last of ${matching.length} rows: use a smaller offset.`);
    }
    if (raw?.cut && o.raw !== undefined) {
      notices.push(
        `raw holds the first ${raw.text.length.toLocaleString("en-US")} of the ${
          o.raw.length.toLocaleString("en-US")
        } characters of the body, to stay within the size limit; the rows above are decoded from all of it.`,
      );
    }
    const fieldsNotice = clippedNotice(clipped);
    if (fieldsNotice) notices.push(fieldsNotice);
    const structured: MetadataOutput = {
      meta,
      db,
      entries_in_db: o.response.entries.length,
      query: o.query ?? null,
      ...env,
      entries_count: entries.length,
      entries,
      truncated: cut || (raw?.cut ?? false) || clipped.size > 0,
      notices,
      ...(raw ? { raw: raw.text, raw_truncated: raw.cut } : {}),
      source,
    };
    const text = o.responseFormat === "json"
      ? JSON.stringify(structured)
      : metadataMarkdown(structured, o.lang);
    return { text, structured };
  };

  const reserve = o.raw === undefined ? undefined : excerpt(o.raw, Math.floor(o.characterLimit * RAW_SHARE));
  const fitted = fitToLimit(slice, o.characterLimit, (f) => build(f.items, f.truncated, reserve));
  if (o.raw === undefined) return { text: fitted.text, structured: fitted.structured };
  const fits = (r: Rendered<MetadataOutput>) =>
    r.text.length <= o.characterLimit && JSON.stringify(r.structured).length <= o.characterLimit;
  const raw = o.raw;
  const ok = (x: number) => fits(build(fitted.items, fitted.truncated, excerpt(raw, x)));
  const len = ok(raw.length) ? raw.length : Math.max(0, largestWhere(0, raw.length, ok));
  return build(fitted.items, fitted.truncated, excerpt(raw, len));
}

function metadataMarkdown(m: MetadataOutput, lang?: string): string {
  const lines = [
    `# BOJ metadata ${m.db}: rows ${
      m.count ? `${m.offset + 1}–${m.offset + m.count}` : "none"
    } of ${m.total}` +
    (m.query ? ` matching "${m.query}"` : "") + ` (${m.entries_in_db} in the database)`,
    "",
    `Status ${m.meta.status} ${m.meta.message_id} "${m.meta.message}"${
      m.meta.date ? ` · as of ${m.meta.date}` : ""
    }`,
    "Rows without a code are headings. Fetch series with boj_get_data_code (db + codes of one frequency) " +
    "or boj_get_data_layer (db + frequency + the Layer column split at commas).",
  ];
  const entries = m.entries ?? [];
  if (entries.length) {
    lines.push(
      "",
      markdownTable(
        ["Code", "Name", "Unit", "Frequency", "Layer", "From", "To", "Updated"],
        entries.map((e) => [
          e.series_code || "(heading)",
          nameOf(e, lang),
          pick(e.unit, e.unit_j, lang) ?? "",
          e.frequency ?? "",
          e.layer,
          e.start_of_the_time_series ?? "",
          e.end_of_the_time_series ?? "",
          e.last_update ?? "",
        ]),
      ),
    );
  }
  if (m.notices.length) lines.push("", ...m.notices.map((n) => `> ${n}`));
  if (m.raw !== undefined) {
    lines.push("", `## Raw body${m.raw_truncated ? " (excerpt)" : ""}`, "", "```", m.raw, "```");
  }
  lines.push("", ...sourceLines(m.source));
  return lines.join("\n");
}
