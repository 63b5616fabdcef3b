/** The default most characters in one tool result. */
export const DEFAULT_CHARACTER_LIMIT = 25_000;

/** `response_format`: how the text block is written. */
export type ResponseFormat = "markdown" | "json";

/** The pagination envelope every paged result carries. */
export interface Page {
  total: number;
  count: number;
  offset: number;
  has_more: boolean;
  next_offset: number | null;
}

/** Builds the envelope for `count` items shown from `offset` out of `total`. */
export function page(total: number, offset: number, count: number): Page {
  const hasMore = offset + count < total;
  return { total, count, offset, has_more: hasMore, next_offset: hasMore ? offset + count : null };
}

/** What {@linkcode fitToLimit} passes to the builder and returns. */
export interface Fitted<T> {
  /** The items that fit. */
  items: T[];
  /** Whether items were left out to stay within the limit. */
  truncated: boolean;
}

/** A rendered result: the text and the structured content that go back together. */
export interface Rendered<S> {
  text: string;
  structured: S;
}

/**
 * Finds the most leading `items` whose rendering stays within `limit` characters, both as text
 * and as serialized structured content, so results are cut at an item boundary. `build` must
 * mention the cut itself when `truncated` is true (use {@linkcode truncationNotice}).
 */
export function fitToLimit<T, S>(
  items: readonly T[],
  limit: number,
  build: (fitted: Fitted<T>) => Rendered<S>,
): Rendered<S> & Fitted<T> {
  const render = (n: number) => {
    const fitted = { items: items.slice(0, n), truncated: n < items.length };
    return { ...build(fitted), ...fitted };
  };
  const fits = (r: Rendered<S>) => r.text.length <= limit && JSON.stringify(r.structured).length <= limit;
  const all = render(items.length);
  if (fits(all)) return all;
  let best = render(0);
  // Keep the rendering of the longest prefix that fits, so it is not built twice.
  largestWhere(0, items.length - 1, (n) => {
    const r = render(n);
    if (!fits(r)) return false;
    best = r;
    return true;
  });
  return best;
}

/**
 * The largest x in [lo, hi] for which `ok` holds, found by bisection (`ok` must hold for every x
 * up to some point and for none after it), or lo - 1 when none does.
 */
export function largestWhere(lo: number, hi: number, ok: (x: number) => boolean): number {
  let best = lo - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ok(mid)) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return best;
}

/** Options for {@linkcode truncationNotice}. */
export interface NoticeOptions {
  /** The offset to continue from, when the tool pages. */
  nextOffset?: number | null;
  /** Tool-specific advice, e.g. `use output: "file"`. */
  hint?: string;
  /** The limit in force (default 25,000). */
  limit?: number;
}

/** The sentence that says a result was cut and how to get the rest. */
export function truncationNotice(shown: number, total: number, options: NoticeOptions = {}): string {
  const parts = [
    `Showing ${shown} of ${total} items to stay within the ${
      (options.limit ?? DEFAULT_CHARACTER_LIMIT).toLocaleString("en-US")
    }-character response limit.`,
  ];
  if (options.nextOffset !== undefined && options.nextOffset !== null) {
    parts.push(`Call again with offset=${options.nextOffset} for the next items, or a smaller limit.`);
  }
  if (options.hint) parts.push(options.hint);
  return parts.join(" ");
}

/**
 * Cuts `text` to `limit` characters at a line boundary when one is near, adding a notice.
 * The last guard for any text; tools should cut at item boundaries first.
 */
export function clampText(text: string, limit: number, hint?: string): string {
  if (text.length <= limit) return text;
  const notice = `\n\n[Truncated: the response was longer than the ${limit}-character limit. ${
    hint ?? "Ask for less (a smaller limit, an offset, or a narrower filter)."
  }]`;
  const room = Math.max(0, limit - notice.length);
  let cut = text.lastIndexOf("\n", room);
  if (cut < room * 0.8) cut = room;
  return text.slice(0, cut) + notice;
}

/** Pretty JSON for the text block of `response_format: "json"`. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** Picks the text for the requested format. */
export function formatText(format: ResponseFormat, structured: unknown, markdown: () => string): string {
  return format === "json" ? jsonText(structured) : markdown();
}

/** A markdown table; cells are escaped so a `|` cannot break the layout. */
export function markdownTable(headers: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const cell = (v: unknown) => String(v ?? "").replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
  return [
    `| ${headers.map(cell).join(" | ")} |`,
    `| ${headers.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`),
  ].join("\n");
}

/** `i`, moved back one place if it would split a surrogate pair (and kept within `text`). */
export function safeIndex(text: string, i: number): number {
  if (i <= 0 || i >= text.length) return Math.max(0, Math.min(i, text.length));
  const code = text.charCodeAt(i);
  return code >= 0xdc00 && code <= 0xdfff ? i - 1 : i;
}

/**
 * The end of the part of `text` that starts at `start`, goes at most to `end` and holds at most
 * `max` characters: the last paragraph, line, sentence or word boundary past the part's middle,
 * else a hard cut that splits no surrogate pair. Long texts are read a part at a time with it.
 */
export function partEnd(text: string, start: number, end: number, max: number): number {
  if (end - start <= max) return end;
  const limit = start + Math.max(1, max);
  const floor = start + Math.floor(max / 2);
  for (const sep of ["\n\n", "\n", ". ", " "]) {
    const at = text.lastIndexOf(sep, limit - sep.length);
    if (at >= floor) return at + sep.length;
  }
  return safeIndex(text, limit);
}

/** Shortens `text` to about `max` characters at a word boundary, with an ellipsis. */
export function shorten(text: string, max: number): string {
  // Only the start can be shown: far longer text is cut before its spaces are collapsed, so a
  // field of megabytes costs no more than one of a few pages.
  const room = 8 * max + 64;
  if (text.length > room) return `${shorten(text.slice(0, room), max).replace(/…$/, "")}…`;
  const clean = text.replace(/\s+/g, " ").trim();
  if (clean.length <= max) return clean;
  const cut = clean.lastIndexOf(" ", max - 1);
  return `${clean.slice(0, cut > max * 0.6 ? cut : max - 1)}…`;
}

/** The first sentence of `text` (abbreviations such as "e.g." do not end it), on one line. */
export function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const m = /^(.+?(?<!\b(?:e\.g|i\.e|etc|cf|vs))[.!?])(?=\s+["'(A-Z0-9]|$)/.exec(flat);
  return m?.[1] ?? flat;
}

/** What {@linkcode boundStructured} did to fit a value within its limit. */
export interface Bounded<T> {
  value: T;
  /** Whether strings were shortened, array items dropped or object entries dropped. */
  cut: boolean;
}

/**
 * The core's last guard for `structuredContent`: when its JSON is longer than `limit`
 * characters, the longest strings are shortened (with "…"), the longest arrays lose items from
 * their end, and objects whose own entries are the bulk (maps such as an echo of the arguments
 * or values keyed by date) lose entries from their end until it fits. Entries named in `keep`
 * (the names the output schema requires) are never dropped and the root's entries stay, so the
 * value still matches the tool's output schema. Tools size their own results first; this only
 * catches what they missed.
 */
export function boundStructured<T>(
  value: T,
  limit: number,
  keep: ReadonlySet<string> = new Set(),
): Bounded<T> {
  if (JSON.stringify(value).length <= limit) return { value, cut: false };
  const copy = structuredClone(value) as T;
  // Each pass halves the largest string, array or map (by serialized size); a few dozen passes
  // reach any limit from any size, since every pass removes a large share of the excess.
  for (let pass = 0; pass < 200; pass++) {
    const size = JSON.stringify(copy).length;
    if (size <= limit) return { value: copy, cut: true };
    const biggest = largestPart(copy, keep);
    if (!biggest) break;
    const { holder, key, part } = biggest;
    const excess = size - limit;
    if (typeof part === "string") {
      const keep = Math.max(0, Math.min(Math.floor(part.length / 2), part.length - excess - 1));
      holder[key] = `${part.slice(0, keep)}…`;
    } else if (Array.isArray(part)) {
      part.length = Math.max(0, Math.min(Math.floor(part.length / 2), part.length - 1));
    } else {
      const map = part as Holder;
      const droppable = droppableKeys(map, keep);
      for (const k of droppable.slice(Math.floor(droppable.length / 2))) delete map[k];
    }
  }
  return { value: copy, cut: true };
}

type Holder = Record<string | number, unknown>;

/** The entries of `node` that may be dropped: those the output schema does not require. */
function droppableKeys(node: Holder, keep: ReadonlySet<string>): string[] {
  return Object.keys(node).filter((k) => !keep.has(k));
}

/**
 * The part (not the root) with the longest JSON, with what holds it: a string, an array, or an
 * object weighed by its own entries only (keys and scalar values, not nested objects or arrays,
 * which are parts of their own), so a container is never emptied in place of what it holds.
 */
function largestPart(
  root: unknown,
  keep: ReadonlySet<string>,
): { holder: Holder; key: string | number; part: unknown } | undefined {
  let best: { holder: Holder; key: string | number; part: unknown; size: number } | undefined;
  const stack: unknown[] = [root];
  while (stack.length) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    const entries: [string | number, unknown][] = Array.isArray(node)
      ? node.map((v, i) => [i, v])
      : Object.entries(node);
    for (const [key, child] of entries) {
      let size = 0;
      if (typeof child === "string") size = child.length;
      else if (Array.isArray(child)) size = child.length > 0 ? JSON.stringify(child).length : 0;
      else if (typeof child === "object" && child !== null) size = ownSize(child as Holder, keep);
      if (size > 64 && (!best || size > best.size)) {
        best = { holder: node as Holder, key, part: child, size };
      }
      if (typeof child === "object" && child !== null) stack.push(child);
    }
  }
  return best;
}

/** The JSON size of an object's droppable entries, leaving out nested objects and arrays. */
function ownSize(node: Holder, keep: ReadonlySet<string>): number {
  const keys = droppableKeys(node, keep);
  if (keys.length < 2) return 0;
  let size = 0;
  for (const k of keys) {
    const v = node[k];
    size += k.length + 4 + (typeof v === "object" && v !== null ? 2 : (JSON.stringify(v) ?? "").length);
  }
  return size;
}

/** The property names an output JSON Schema requires anywhere in it (never dropped to fit). */
export function requiredNames(schema: unknown): Set<string> {
  const names = new Set<string>();
  const stack: unknown[] = [schema];
  while (stack.length) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    const required = (node as Record<string, unknown>)["required"];
    if (Array.isArray(required)) { for (const n of required) if (typeof n === "string") names.add(n); }
    stack.push(...Object.values(node));
  }
  return names;
}

/** How deeply `value` nests objects and arrays (a scalar is 0), without recursion. */
export function nestingDepth(value: unknown, stopAt = Infinity): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    const d = depth + 1;
    if (d > max) {
      max = d;
      if (max > stopAt) return max;
    }
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === "object" && child !== null) stack.push([child, d]);
    }
  }
  return max;
}
