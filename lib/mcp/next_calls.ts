// The next calls an answer names (docs/CLIENTS.md): routed through opendata_call when the tool is
// not listed on the caller's surface, written once into the text (compact) and once,
// machine-readable, into structuredContent.next_calls. Providers say what is useful next; the core
// says how to reach it.
import type { NextCall } from "./provider.ts";

/** The name of the tool that calls any other tool (core_tools.ts re-exports it). */
export const CALL_TOOL_NAME = "opendata_call";

/** The federated search (tools/search.ts); named by empty answers as the call that widens them. */
export const SEARCH_TOOL_NAME = "opendata_search";

/** The tool that reads a result file page by page (lib/mcp/tools/read.ts), reached through opendata_call. */
export const READ_TOOL = "opendata_read";

/** A next call as it goes back to the client: callable exactly as given. */
export interface RoutedCall {
  tool: string;
  arguments: Record<string, unknown>;
  for?: string;
}

/** `call` as the caller reaches it: directly when `served` lists its tool, else through opendata_call. */
export function routeCall(call: NextCall, served: ReadonlySet<string>): RoutedCall {
  const label = call.for ? { for: call.for } : {};
  if (served.has(call.tool) || call.tool === CALL_TOOL_NAME) {
    return { tool: call.tool, arguments: call.arguments, ...label };
  }
  return {
    tool: CALL_TOOL_NAME,
    arguments: { tool: call.tool, arguments: JSON.stringify(call.arguments) },
    ...label,
  };
}

/**
 * One compact text line for a routed call: `for: tool {args}`; a call through opendata_call is
 * shown as `opendata_call <tool> {args}`, so the arguments are not escaped twice.
 */
export function callLine(call: RoutedCall): string {
  const label = call.for ? `${call.for}: ` : "";
  if (call.tool === CALL_TOOL_NAME && typeof call.arguments["tool"] === "string") {
    const inner = typeof call.arguments["arguments"] === "string"
      ? call.arguments["arguments"]
      : JSON.stringify(call.arguments["arguments"] ?? {});
    return `${label}${CALL_TOOL_NAME} ${call.arguments["tool"]} ${inner}`;
  }
  return `${label}${call.tool} ${JSON.stringify(call.arguments)}`;
}

/** The text block's closing lines for an answer's next calls ("" when there are none). */
export function nextCallsText(calls: readonly RoutedCall[]): string {
  if (calls.length === 0) return "";
  if (calls.length === 1) return `Next: ${callLine(calls[0]!)}`;
  return ["Next:", ...calls.map((c) => `- ${callLine(c)}`)].join("\n");
}

/** Argument names that hold the words of a search by words. */
const WORDS_ARGS = ["query", "search_text"] as const;

/**
 * Arguments that shape, order or page an answer, or say where it is searched (the language, the
 * collection), rather than narrow what is found there: a search without filters keeps them.
 */
const NOT_FILTERS = new Set([
  "limit",
  "offset",
  "sort_by",
  "sort_order",
  "order_by",
  "response_format",
  "output",
  "fresh",
  "format",
  "lang",
  "language",
  "include_raw",
  "include_geometry",
  "dataset",
  "collection",
]);

/**
 * The calls that widen an empty answer of a search by words (nothing found from the first page:
 * `total` 0, or `count` 0 with nothing more), for answers whose provider named no next call: the
 * same call with its first word only, when it had several; the same words without the filters the
 * call set (every argument but the words and those of NOT_FILTERS), when it set any and the tool
 * requires no argument but the words (`required`); and `search` (opendata_search, when the caller
 * can reach it) over every source with the words as given. Not for other tools.
 */
export function widening(
  tool: string,
  args: Record<string, unknown>,
  structured: unknown,
  search: string | undefined,
  required: ReadonlySet<string> = new Set(),
): NextCall[] {
  if (typeof structured !== "object" || structured === null) return [];
  const s = structured as Record<string, unknown>;
  // The first page: no offset, or offset 0 said outright; no cursor (which continues a listing).
  const first = (s["offset"] ?? 0) === 0 && (args["offset"] ?? 0) === 0 && args["cursor"] === undefined;
  const empty = s["total"] === 0 || (s["count"] === 0 && s["has_more"] === false);
  if (!first || !empty) return [];
  const key = WORDS_ARGS.find((k) => typeof args[k] === "string" && (args[k] as string).trim() !== "");
  if (!key) return [];
  // A quoted phrase counts as one word, and is given without its quotes (one quote alone is a
  // phrase left open, which some upstreams refuse).
  const words = (args[key] as string).trim().match(/"[^"]*"|\S+/g) ?? [];
  const head = (words[0] ?? "").replaceAll('"', "").trim();
  const calls: NextCall[] = [];
  if (words.length > 1 && head) calls.push({ tool, arguments: { ...args, [key]: head }, for: "fewer words" });
  // Only where the words are all a call needs: a tool that requires more (FRED's `operation`) may
  // require other arguments with it that no schema says (tag_names for get_related_tags).
  const kept = Object.entries(args).filter(([k]) => k === key || NOT_FILTERS.has(k));
  if ([...required].every((k) => k === key) && kept.length < Object.keys(args).length) {
    calls.push({ tool, arguments: Object.fromEntries(kept), for: "without filters" });
  }
  if (search && search !== tool) {
    calls.push({ tool: search, arguments: { query: (args[key] as string).trim() }, for: "every source" });
  }
  return calls;
}

/** Whether an output schema takes a `next_calls` property (open objects do; closed ones must declare it). */
export function takesNextCalls(outputSchema: Record<string, unknown> | undefined): boolean {
  if (!outputSchema) return false;
  const props = outputSchema["properties"] as Record<string, unknown> | undefined;
  if (props && "next_calls" in props) return true;
  return outputSchema["additionalProperties"] !== false;
}

/**
 * Up to `n` of `candidates` closest to `name`, closest first: names sharing a word with it (split
 * at "-", "_" and spaces) or within a third of its length in edits; none when nothing is close, so
 * an unrelated list never stands in for a suggestion.
 */
export function closestNames(name: string, candidates: readonly string[], n = 3): string[] {
  const words = (s: string) => new Set(s.toLowerCase().split(/[-_ ]+/).filter((w) => w.length > 1));
  const mine = words(name);
  const flat = name.toLowerCase().replace(/[-_ ]/g, "");
  const scored: { c: string; score: number }[] = [];
  for (const c of candidates) {
    const k = c.toLowerCase().replace(/[-_ ]/g, "");
    const d = k === flat ? 0 : k.includes(flat) || flat.includes(k) ? 0.5 : distance(flat, k);
    const shared = [...words(c)].filter((w) => mine.has(w)).length;
    if (shared === 0 && d > Math.max(1, Math.floor(flat.length / 3))) continue;
    scored.push({ c, score: d - 4 * shared });
  }
  return scored.sort((a, b) => a.score - b.score || a.c.localeCompare(b.c)).slice(0, n).map((s) => s.c);
}

/** Edit distance of two short names (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length]!;
}

/**
 * The candidate `name` was most likely meant to be: one that contains it or is contained in it,
 * or within a third of its length in edits; undefined when none is close.
 */
export function didYouMean(name: string, candidates: readonly string[]): string | undefined {
  const n = name.toLowerCase().replace(/[-_ ]/g, "");
  let best: { c: string; d: number } | undefined;
  for (const c of candidates) {
    const k = c.toLowerCase().replace(/[-_ ]/g, "");
    if (k === n) return c;
    const d = k.includes(n) || n.includes(k) ? Math.abs(k.length - n.length) / 10 : distance(n, k);
    if (d <= Math.max(1, Math.floor(n.length / 3)) && (!best || d < best.d)) best = { c, d };
  }
  return best?.c;
}

/** A few words that tell a query's language apart, where its letters do not. */
const WORDS: Readonly<Record<string, ReadonlySet<string>>> = {
  no: new Set([
    "og",
    "i",
    "på",
    "av",
    "med",
    "til",
    "er",
    "som",
    "fra",
    "ved",
    "kirke",
    "gård",
    "hus",
    "bygning",
  ]),
  en: new Set([
    "the",
    "of",
    "and",
    "in",
    "on",
    "rate",
    "price",
    "index",
    "gdp",
    "bank",
    "interest",
    "report",
  ]),
};

/** The language a query is written in, as far as its letters or a few words tell: ja, no, en or unknown. */
export function queryLanguage(query: string): string | undefined {
  if (/[\u3040-\u30ff\u4e00-\u9fff]/.test(query)) return "ja";
  if (/[æøå]/i.test(query)) return "no";
  const words = query.toLowerCase().split(/[^\p{L}\p{N}]+/u);
  for (const [language, known] of Object.entries(WORDS)) if (words.some((w) => known.has(w))) return language;
  return undefined;
}
