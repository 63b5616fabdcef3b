// How opendata_search answers (search.ts defines the tool): each chosen source searched at once
// under the search's deadline, the hits rendered with their next calls. Loaded on the first search.
import { ToolError } from "../../errors.ts";
import { requestScope } from "../../http/request_scope.ts";
import { creditLine } from "../../output/credit.ts";
import { callLine, didYouMean, nextCallsText, queryLanguage } from "../next_calls.ts";
import type { RoutedCall } from "../next_calls.ts";
import { shorten } from "../shaping.ts";
import type { NextCall, Provider, SearchHit, SearchHits, ToolCallContext } from "../provider.ts";
import { DESCRIBE_TOOL, SEARCH_TOOL, sourceId } from "./_core.ts";
import type { CoreScope, CoreToolsOptions } from "./_core.ts";

/** A search's arguments, as opendata_search's input schema (search.ts) gives them. */
export interface SearchArgs {
  query: string;
  sources: string[];
  limit: number;
}

/** opendata_search's answer to `args`. */
export async function answerSearch(
  scope: CoreScope,
  args: SearchArgs,
  ctx: ToolCallContext,
): Promise<ReturnType<typeof renderSearch>> {
  const { options, searchable } = scope;
  const picked = pickSources(scope, args.sources);
  const chosen = picked.ids.length ? searchable.filter((p) => picked.ids.includes(sourceId(p))) : searchable;
  const sources: SourceResult[] = await Promise.all(
    chosen.map((p) => runSource(p, args.query, args.limit, ctx, options)),
  );
  for (const u of picked.unavailable) {
    sources.push({ id: u.id, name: u.id, licence: "", status: "unavailable", error: u.reason, hits: [] });
  }
  const answer: SearchAnswer = {
    args,
    sources,
    picked,
    widen: new Map(chosen.map((p) => [sourceId(p), p.search!.widen?.(args.query) ?? []])),
    languages: new Map(
      chosen.flatMap((p) => p.search!.languages ? [[sourceId(p), p.search!.languages]] : []),
    ),
    // A source without hits names its widening call when the answer would otherwise be empty, or
    // when the caller asked for it by name; beside other sources' hits it would only cost tokens.
    anyHits: sources.some((s) => s.hits.length > 0),
    route: scope.route,
    characterLimit: ctx.limits.characterLimit,
  };
  // Fewer hits from every source rather than losing whole sources to the last-guard cut.
  const fits = (r: { text: string; structured: unknown }) =>
    r.text.length <= ctx.limits.characterLimit &&
    JSON.stringify(r.structured).length <= ctx.limits.characterLimit;
  let per = args.limit;
  let rendered = renderSearch(per, answer);
  while (!fits(rendered) && per > 1) rendered = renderSearch(--per, answer);
  return rendered;
}

/**
 * The sources a search names, by the ids opendata_describe lists (toolset ids of a source's
 * provider are taken too, with a notice); a source left out as configured says what enables it.
 */
function pickSources(scope: CoreScope, requested: readonly string[]): {
  ids: string[];
  unavailable: { id: string; reason: string }[];
  notices: string[];
} {
  const { catalog, sourceIds } = scope;
  const ids: string[] = [];
  const unavailable: { id: string; reason: string }[] = [];
  const notices: string[] = [];
  const unknown: string[] = [];
  for (const raw of requested) {
    const id = raw.trim().toLowerCase();
    if (sourceIds.includes(id)) {
      if (!ids.includes(id)) ids.push(id);
      continue;
    }
    const owner = catalog.toolsets.find((t) => t.id === id)?.provider;
    if (owner && sourceIds.includes(owner)) {
      if (!ids.includes(owner)) ids.push(owner);
      notices.push(`"${raw}" is a toolset; searched its source "${owner}"`);
      continue;
    }
    const left = catalog.unavailable.find((u) => u.provider === id || u.toolset === id);
    if (left) {
      if (!unavailable.some((u) => u.id === left.provider)) {
        unavailable.push({ id: left.provider, reason: left.reason });
      }
      continue;
    }
    unknown.push(raw);
  }
  if (unknown.length) {
    const guess = didYouMean(unknown[0]!, [...sourceIds, ...catalog.unavailable.map((u) => u.provider)]);
    throw new ToolError("VALIDATION_ERROR", `Unknown source ${unknown.map((s) => `"${s}"`).join(", ")}`, {
      field: "sources",
      hint: `${guess ? `Did you mean "${guess}"? ` : ""}Sources: ${
        sourceIds.join(", ")
      }; or leave sources out`,
    });
  }
  if (requested.length && ids.length === 0 && unavailable.length) {
    throw new ToolError("CONFIGURATION_ERROR", `Not enabled: ${unavailable.map((u) => u.id).join(", ")}`, {
      field: "sources",
      hint: unavailable[0]!.reason,
    });
  }
  return { ids, unavailable, notices };
}

/** What to call when nothing matched: fewer words, then every source, then the tool list. */
function emptyCalls(
  route: CoreScope["route"],
  query: string,
  shown: readonly ShownSource[],
  narrowed: boolean,
): RoutedCall[] {
  const calls: RoutedCall[] = [];
  const words = query.trim().split(/\s+/);
  if (words.length > 1) {
    calls.push(route({
      tool: SEARCH_TOOL,
      arguments: { query: words.slice(0, Math.max(1, words.length - 1)).join(" ") },
      for: "fewer words",
    }));
  }
  if (narrowed) calls.push(route({ tool: SEARCH_TOOL, arguments: { query }, for: "every source" }));
  if (shown.some((s) => s.status === "failed" || s.status === "timeout")) {
    const failed = shown.filter((s) => s.status === "failed" || s.status === "timeout").map((s) => s.id);
    calls.push(
      route({ tool: SEARCH_TOOL, arguments: { query, sources: failed }, for: "retry failed sources" }),
    );
  }
  if (calls.length === 0) {
    calls.push(route({ tool: DESCRIBE_TOOL, arguments: {}, for: "browse the tools" }));
  }
  return calls;
}

/** What every rendering of one search answer is made of. */
interface SearchAnswer {
  args: SearchArgs;
  sources: SourceResult[];
  picked: ReturnType<typeof pickSources>;
  /** Per source, the calls that widen a search without hits. */
  widen: Map<string, NextCall[]>;
  anyHits: boolean;
  route: CoreScope["route"];
  characterLimit: number;
  /** Per source, the languages its records are written in (none: any). */
  languages: Map<string, readonly string[]>;
}

/**
 * The sources where an empty search's words plausibly belong: those whose records are written in
 * the query's language (every source when it cannot be told, or when none is).
 */
function plausibleSources(
  query: string,
  sources: readonly SourceResult[],
  languages: ReadonlyMap<string, readonly string[]>,
): Set<string> {
  const language = queryLanguage(query);
  const all = new Set(sources.map((s) => s.id));
  if (!language) return all;
  const fit = sources.filter((s) => {
    const written = languages.get(s.id);
    return !written || written.includes(language);
  });
  return fit.length ? new Set(fit.map((s) => s.id)) : all;
}

/** The answer with at most `per` hits from each source. */
function renderSearch(per: number, answer: SearchAnswer) {
  const { args, sources, picked, widen, anyHits, route } = answer;

  const cutSources = sources.filter((s) => s.hits.length > per).map((s) => s.id);
  const plausible = plausibleSources(args.query, sources, answer.languages);
  const shown = sources.map(({ more: listing, ...s }) => {
    const hits = s.hits.slice(0, per).map((h) => ({
      title: h.title,
      ...(h.snippet ? { snippet: h.snippet } : {}),
      ...(h.url ? { url: h.url } : {}),
      ...(h.date ? { date: h.date } : {}),
      next_calls: [h.next, ...(h.also ?? []).slice(0, 2)].map(route),
    }));
    const empty = s.status === "ok" && hits.length === 0 && (!anyHits || picked.ids.length > 0) &&
        (picked.ids.length > 0 || plausible.has(s.id))
      ? (widen.get(s.id) ?? []).map(route)
      : [];
    // More than shown: the source's own listing, which pages on from there.
    const beyond = s.total === undefined ? hits.length >= per : s.total > hits.length;
    const more = hits.length && listing && beyond
      ? { more: route({ ...listing, for: `more from ${s.id}` }) }
      : {};
    return { ...s, hits, ...more, ...(empty.length ? { next_calls: empty } : {}) };
  });
  const total = shown.reduce((n, s) => n + s.hits.length, 0);
  const next: RoutedCall[] = [];
  // Never the call just made: a search of that one source already was it (its own listing, `more`, goes on).
  const alone = picked.ids.length === 1 && picked.ids[0] === cutSources[0];
  if (cutSources.length && !alone) {
    next.push(route({
      tool: SEARCH_TOOL,
      arguments: { query: args.query, sources: [cutSources[0]], limit: args.limit },
      for: `all ${args.limit} hits of ${cutSources[0]}`,
    }));
  }
  if (total === 0) next.push(...emptyCalls(route, args.query, shown, picked.ids.length > 0));
  const cut = cutSources.length
    ? `At most ${per} hits per source to stay within the ${answer.characterLimit}-character ` +
      `limit (cut: ${cutSources.join(", ")})`
    : undefined;
  const text = searchMarkdown(args.query, shown, total, next, cut, picked.notices);
  const quiet = (s: ShownSource) => s.status === "ok" && s.hits.length === 0 && !s.next_calls?.length;
  const structured = {
    query: args.query,
    // Said once: the licence line and snippets are in the text; a source without hits and
    // without a call to name is only its id.
    sources: shown.filter((s) => !quiet(s)).map((s) => ({
      id: s.id,
      status: s.status,
      ...(s.error ? { error: s.error } : {}),
      ...(s.total === undefined ? {} : { total: s.total }),
      hits: s.hits.map((h) => ({
        title: h.title,
        ...(h.url ? { url: h.url } : {}),
        next_calls: h.next_calls,
      })),
      ...(s.more ? { more: s.more } : {}),
      ...(s.next_calls ? { next_calls: s.next_calls } : {}),
    })),
    ...(shown.some(quiet) ? { no_hits: shown.filter(quiet).map((s) => s.id) } : {}),
    total_hits: total,
    ...(next.length ? { next_calls: next } : {}),
    ...(cutSources.length ? { cut: cutSources.join(", ") } : {}),
  };
  return { text, structured };
}

interface SourceResult {
  id: string;
  name: string;
  licence: string;
  status: "ok" | "failed" | "timeout" | "unavailable";
  error?: string;
  hits: SearchHit[];
  /** How many records match at the source, where it says. */
  total?: number;
  /** The source's own call that lists more of them. */
  more?: NextCall;
}

/** Runs one source under its share of the deadline; a failure or timeout is reported, not thrown. */
async function runSource(
  provider: Provider,
  query: string,
  limit: number,
  ctx: ToolCallContext,
  options: CoreToolsOptions,
): Promise<SourceResult> {
  const source = provider.search!;
  const base = { id: sourceId(provider), name: source.name, licence: source.licence };
  const stop = new AbortController();
  const timer = setTimeout(
    () => stop.abort(new DOMException("The source was too slow", "TimeoutError")),
    options.searchTimeoutMs,
  );
  const scope = requestScope.getStore();
  const deadline = Math.min(scope?.deadline ?? Infinity, options.clock.now() + options.searchTimeoutMs);
  const signal = AbortSignal.any([ctx.signal, stop.signal]);
  try {
    const hits = await requestScope.run(
      {
        fresh: scope?.fresh ?? false,
        deadline,
        ...(scope?.client === undefined ? {} : { client: scope.client }),
        ...(scope?.requestId ? { requestId: scope.requestId } : {}),
      },
      () =>
        new Promise<SearchHits>((resolve, reject) => {
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
          source.search(query, { limit }, { ...ctx, signal }).then(resolve, reject);
        }),
    );
    return {
      ...base,
      status: "ok",
      hits: hits.slice(0, limit),
      ...(typeof hits.total === "number" && Number.isFinite(hits.total) ? { total: hits.total } : {}),
      ...(hits.more ? { more: hits.more } : {}),
    };
  } catch (e) {
    if (stop.signal.aborted || (e instanceof ToolError && e.errorType === "TIMEOUT")) {
      return {
        ...base,
        status: "timeout",
        error: `No answer within ${options.searchTimeoutMs / 1000} s`,
        hits: [],
      };
    }
    const message = e instanceof ToolError
      ? `${e.errorType}: ${e.message}`
      : "The source failed unexpectedly";
    if (!(e instanceof ToolError)) {
      ctx.logger.warn("search source failed", { source: base.id, error: String(e) });
    }
    return { ...base, status: "failed", error: message, hits: [] };
  } finally {
    clearTimeout(timer);
  }
}

type ShownSource = Omit<SourceResult, "hits" | "more"> & {
  hits: { title: string; snippet?: string; url?: string; date?: string; next_calls: RoutedCall[] }[];
  next_calls?: RoutedCall[];
  more?: RoutedCall;
};

function searchMarkdown(
  query: string,
  sources: readonly ShownSource[],
  total: number,
  next: readonly RoutedCall[],
  cut: string | undefined,
  notices: readonly string[],
): string {
  const answered = sources.filter((s) => s.hits.length > 0);
  const empty = sources.filter((s) => s.status === "ok" && s.hits.length === 0);
  const failed = sources.filter((s) => s.status === "failed" || s.status === "timeout");
  const off = sources.filter((s) => s.status === "unavailable");
  const head = [`# "${query}": ${total} hits from ${answered.length} of ${sources.length} sources`];
  if (empty.length) head.push(`no hits: ${empty.map((s) => s.id).join(", ")}`);
  if (failed.length) head.push(`failed: ${failed.map((s) => s.id).join(", ")}`);
  if (off.length) head.push(`not enabled: ${off.map((s) => s.id).join(", ")}`);
  const lines = [head.join("; ")];
  for (const n of notices) lines.push(`(${n})`);
  if (cut) lines.push("", `${cut}.`);
  for (const s of answered) {
    const matches = s.total === undefined
      ? ""
      : ` (${s.total.toLocaleString("en-US")} match${s.total === 1 ? "" : "es"})`;
    lines.push("", `## ${s.name}${matches}`);
    s.hits.forEach((h, i) => {
      lines.push(
        `${i + 1}. **${h.title}**${h.date ? ` (${h.date})` : ""}${
          h.snippet ? ` — ${shorten(h.snippet, 200)}` : ""
        }`,
      );
      if (h.url) lines.push(`   ${h.url}`);
      for (const c of h.next_calls) lines.push(`   → ${callLine(c)}`);
    });
    if (s.more) lines.push(`→ ${callLine(s.more)}`);
    if (s.licence) lines.push(`Licence: ${creditLine(s.licence)}`);
  }
  const problems = [...failed, ...off];
  if (problems.length) lines.push("");
  for (const s of problems) {
    lines.push(
      `${s.id} ${
        s.status === "timeout" ? "too slow" : s.status === "failed" ? "failed" : "not enabled"
      }: ${s.error}`,
    );
  }
  const widen = empty.filter((s) => s.next_calls?.length);
  if (widen.length) lines.push("");
  for (const s of widen) lines.push(`${s.id}, no hits → ${s.next_calls!.map(callLine).join(" | ")}`);
  if (next.length) lines.push("", nextCallsText(next));
  return lines.join("\n");
}
