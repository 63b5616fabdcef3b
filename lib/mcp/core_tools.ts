// The three tools of the default surface: one search across every source, a description of any
// tool (so an agent that sees only these three learns the others' arguments), and a call of any
// tool by name. Together they reach every tool of the enabled providers in both protocol eras
// and in stateless mode, without a restart and without list-changed support in the client.
import { z } from "zod";
import type { Clock } from "../clock.ts";
import { ToolError } from "../errors.ts";
import { jsonTooDeepAt } from "../http/json_depth.ts";
import { requestScope } from "../http/request_scope.ts";
import { markdownTable, shorten } from "./output.ts";
import { creditLine } from "../output/credit.ts";
import { callLine, didYouMean, nextCallsText, routeCall } from "./next_calls.ts";
import type { RoutedCall } from "./next_calls.ts";
import type {
  NextCall,
  Provider,
  SearchHit,
  ToolCallContext,
  ToolDefinition,
  UnavailableTools,
} from "./provider.ts";
import { DEFAULT_MAX_DEPTH } from "./stdio_transport.ts";
import { CORE_TOOLSET } from "./toolsets.ts";
import type { ToolCatalog } from "./toolsets.ts";
import GENERATED from "./core_schemas.json" with { type: "json" };

/** Tool names of the core toolset. */
export const SEARCH_TOOL = "opendata_search";
export const DESCRIBE_TOOL = "opendata_describe";
export const CALL_TOOL = "opendata_call";

/** What the core tools need to know about the server instance they serve in. */
export interface CoreToolsOptions {
  catalog: ToolCatalog;
  /** Every enabled provider (searched, described and callable whatever is served directly). */
  providers: readonly Provider[];
  /** Names of the tools this instance lists directly (the rest is reached with opendata_call). */
  served: ReadonlySet<string>;
  /** How long opendata_search waits for its sources, in milliseconds. */
  searchTimeoutMs: number;
  clock: Clock;
  /** Describes a tool as tools/list would (the JSON Schemas of its input). */
  inputSchemaOf(tool: ToolDefinition): Record<string, unknown>;
  /** Core tools never listed but described and called (opendata_read). */
  // deno-lint-ignore no-explicit-any
  unlisted?: readonly ToolDefinition<any, any>[];
}

const CORE_ANNOTATIONS = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: true,
} as const;

const searchInput = z.strictObject({
  query: z.string().min(1).max(300).describe("What to look for, in any language"),
  sources: z.array(z.string()).max(20).default([]).describe(
    "Source ids to search (default: all); opendata_describe lists them",
  ),
  limit: z.number().int().min(1).max(10).default(3).describe("Hits per source, 1-10 (default 3)"),
});

const nextCallSchema = z.object({
  tool: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  for: z.string().optional(),
});

// The hits' snippets and dates are in the text only: a client that forwards both pays for them once.
const hitSchema = z.object({
  title: z.string(),
  url: z.string().optional(),
  next_calls: z.array(nextCallSchema),
});

const searchOutput = z.object({
  query: z.string(),
  sources: z.array(z.object({
    id: z.string(),
    status: z.enum(["ok", "failed", "timeout", "unavailable"]),
    error: z.string().optional(),
    hits: z.array(hitSchema),
    next_calls: z.array(nextCallSchema).optional(),
  })),
  /** Sources that answered with no hits and name no call (listed by id only). */
  no_hits: z.array(z.string()).optional(),
  total_hits: z.number(),
  next_calls: z.array(nextCallSchema).optional(),
  cut: z.string().optional(),
});

const describeInput = z.strictObject({
  toolset: z.string().max(64).default("").describe("A toolset id: list its tools"),
  tool: z.string().max(64).default("").describe("A tool name: its arguments (input schema) and use"),
});

const describeOutput = z.object({
  sources: z.array(z.object({ id: z.string(), name: z.string(), enabled: z.boolean() })).optional(),
  toolsets: z.array(z.object({
    id: z.string(),
    description: z.string(),
    tools: z.array(z.string()),
    listed: z.boolean(),
  })).optional(),
  unavailable: z.array(z.object({ toolset: z.string(), tools: z.array(z.string()), reason: z.string() }))
    .optional(),
  tools: z.array(z.object({ name: z.string(), description: z.string(), listed: z.boolean() })).optional(),
  tool: z.object({
    name: z.string(),
    toolset: z.string(),
    description: z.string(),
    listed: z.boolean(),
    input_schema: z.record(z.string(), z.unknown()),
  }).optional(),
});

/**
 * opendata_call's input: `arguments` is served as a JSON string (strict clients cannot pass an
 * open object), and an object is accepted too, for clients that send one.
 */
export const callInput = z.strictObject({
  tool: z.string().min(1).max(64).describe("The tool's name"),
  arguments: z.union([z.string().max(200_000), z.record(z.string(), z.unknown())]).default("{}").describe(
    'The tool\'s arguments as a JSON object in a string, e.g. "{\\"query\\": \\"Oslo\\"}"',
  ),
});

/** The input schema opendata_call is served with (one plain type per property). */
const CALL_INPUT_JSON = {
  type: "object",
  properties: {
    tool: { type: "string", description: "The tool's name (opendata_describe lists them)" },
    arguments: {
      type: "string",
      description: 'The tool\'s arguments as a JSON object in a string, e.g. "{\\"query\\": \\"Oslo\\"}"',
    },
  },
  required: ["tool", "arguments"],
  additionalProperties: false,
};

/**
 * The JSON Schemas a core tool is listed with, generated from its zod schemas by `deno task
 * schemas` (core_schemas.json; tests/providers/listings_test.ts fails when it is stale), so listing
 * the tools converts nothing.
 */
function generatedSchemas(
  name: typeof SEARCH_TOOL | typeof DESCRIBE_TOOL,
): { inputJsonSchema: Record<string, unknown>; outputJsonSchema: Record<string, unknown> } {
  const entry = (GENERATED.tools as Record<
    string,
    { inputSchema: Record<string, unknown>; outputSchema: Record<string, unknown> }
  >)[name]!;
  return { inputJsonSchema: entry.inputSchema, outputJsonSchema: entry.outputSchema };
}

/** The source id of a provider's search source. */
function sourceId(provider: Provider): string {
  return provider.id;
}

/** The core toolset's tools for one server instance. opendata_call is dispatched by the core. */
// deno-lint-ignore no-explicit-any
export function coreTools(options: CoreToolsOptions): ToolDefinition<any, any>[] {
  const { catalog } = options;
  // deno-lint-ignore no-explicit-any
  const allTools = new Map<string, { tool: ToolDefinition<any, any>; toolset: string }>();
  for (const set of catalog.toolsets) {
    for (const tool of set.tools) allTools.set(tool.name, { tool, toolset: set.id });
  }
  for (const tool of options.unlisted ?? []) allTools.set(tool.name, { tool, toolset: CORE_TOOLSET });
  const searchable = options.providers.filter((p) => p.search);
  const sourceIds = searchable.map(sourceId);

  /** How to reach a tool from this instance: directly when listed, else through opendata_call. */
  const route = (next: NextCall): RoutedCall => routeCall(next, options.served);

  const search: ToolDefinition<typeof searchInput, typeof searchOutput> = {
    name: SEARCH_TOOL,
    title: "Search all open-data sources",
    toolset: CORE_TOOLSET,
    description:
      `Searches every source at once (${
        searchable.map((p) => p.search!.name).join("; ") || "none enabled"
      }) and lists a few hits per source with next_calls (tool and arguments, ready to send): the ` +
      "record, and e.g. a series' latest values or places nearby. Start here; coordinates like \"59.91N " +
      '10.75E" find places nearby. A source that fails or is slow is reported, the others still answer.' +
      (catalog.unavailable.length
        ? ` Not enabled: ${
          [...new Set(catalog.unavailable.map((u) => u.provider))].filter((id) => !sourceIds.includes(id))
            .map((id) =>
              `${id} (${catalog.unavailable.find((u) => u.provider === id)!.reason.split(":")[0]})`
            )
            .join(", ")
        }.`
        : ""),
    input: searchInput,
    output: searchOutput,
    ...generatedSchemas(SEARCH_TOOL),
    annotations: { ...CORE_ANNOTATIONS, idempotentHint: false },
    async handler(args, ctx) {
      const picked = pickSources(args.sources);
      const chosen = picked.ids.length
        ? searchable.filter((p) => picked.ids.includes(sourceId(p)))
        : searchable;
      const sources: SourceResult[] = await Promise.all(
        chosen.map((p) => runSource(p, args.query, args.limit, ctx, options)),
      );
      for (const u of picked.unavailable) {
        sources.push({ id: u.id, name: u.id, licence: "", status: "unavailable", error: u.reason, hits: [] });
      }
      const widen = new Map(chosen.map((p) => [sourceId(p), p.search!.widen?.(args.query) ?? []]));
      // A source without hits names its widening call when the answer would otherwise be empty, or
      // when the caller asked for it by name; beside other sources' hits it would only cost tokens.
      const anyHits = sources.some((s) => s.hits.length > 0);
      const render = (per: number) => {
        const cutSources = sources.filter((s) => s.hits.length > per).map((s) => s.id);
        const shown = sources.map((s) => {
          const hits = s.hits.slice(0, per).map((h) => ({
            title: h.title,
            ...(h.snippet ? { snippet: h.snippet } : {}),
            ...(h.url ? { url: h.url } : {}),
            ...(h.date ? { date: h.date } : {}),
            next_calls: [h.next, ...(h.also ?? []).slice(0, 2)].map(route),
          }));
          const empty = s.status === "ok" && hits.length === 0 && (!anyHits || picked.ids.length > 0)
            ? (widen.get(s.id) ?? []).map(route)
            : [];
          return { ...s, hits, ...(empty.length ? { next_calls: empty } : {}) };
        });
        const total = shown.reduce((n, s) => n + s.hits.length, 0);
        const next: RoutedCall[] = [];
        if (cutSources.length) {
          next.push(route({
            tool: SEARCH_TOOL,
            arguments: { query: args.query, sources: [cutSources[0]], limit: args.limit },
            for: `all ${args.limit} hits of ${cutSources[0]}`,
          }));
        }
        if (total === 0) next.push(...emptyCalls(args.query, shown, picked.ids.length > 0));
        const cut = cutSources.length
          ? `At most ${per} hits per source to stay within the ${ctx.limits.characterLimit}-character ` +
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
            hits: s.hits.map((h) => ({
              title: h.title,
              ...(h.url ? { url: h.url } : {}),
              next_calls: h.next_calls,
            })),
            ...(s.next_calls ? { next_calls: s.next_calls } : {}),
          })),
          ...(shown.some(quiet) ? { no_hits: shown.filter(quiet).map((s) => s.id) } : {}),
          total_hits: total,
          ...(next.length ? { next_calls: next } : {}),
          ...(cutSources.length ? { cut: cutSources.join(", ") } : {}),
        };
        return { text, structured };
      };
      // Fewer hits from every source rather than losing whole sources to the last-guard cut.
      const fits = (r: { text: string; structured: unknown }) =>
        r.text.length <= ctx.limits.characterLimit &&
        JSON.stringify(r.structured).length <= ctx.limits.characterLimit;
      let per = args.limit;
      let rendered = render(per);
      while (!fits(rendered) && per > 1) rendered = render(--per);
      return rendered;
    },
  };

  /**
   * The sources a search names, by the ids opendata_describe lists (toolset ids of a source's
   * provider are taken too, with a notice); a source left out as configured says what enables it.
   */
  function pickSources(requested: readonly string[]): {
    ids: string[];
    unavailable: { id: string; reason: string }[];
    notices: string[];
  } {
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
  function emptyCalls(query: string, shown: readonly ShownSource[], narrowed: boolean): RoutedCall[] {
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

  const describe: ToolDefinition<typeof describeInput, typeof describeOutput> = {
    name: DESCRIBE_TOOL,
    title: "Describe toolsets and tools",
    toolset: CORE_TOOLSET,
    description: "Lists the toolsets and their tools; with toolset, that toolset's tools; with tool, the " +
      `tool's full description and input schema, to call it with ${CALL_TOOL} when it is not listed.`,
    input: describeInput,
    output: describeOutput,
    ...generatedSchemas(DESCRIBE_TOOL),
    annotations: { ...CORE_ANNOTATIONS, openWorldHint: false },
    handler(args) {
      if (args.tool) {
        const found = allTools.get(args.tool);
        if (!found) throw unknownTool(args.tool, [...allTools.keys()], catalog.unavailable);
        const listed = options.served.has(args.tool);
        const schema = options.inputSchemaOf(found.tool);
        const structured = {
          tool: {
            name: found.tool.name,
            toolset: found.toolset,
            description: found.tool.description,
            listed,
            input_schema: schema,
          },
        };
        const how = listed
          ? "It is listed: call it directly."
          : `It is not listed here: call it with ${CALL_TOOL}, e.g. {"tool": "${found.tool.name}", "arguments": "{...}"}.`;
        const text = [
          `## ${found.tool.name} (toolset ${found.toolset})`,
          "",
          found.tool.description,
          "",
          how,
          "",
          "Input schema:",
          "```json",
          JSON.stringify(schema),
          "```",
        ].join("\n");
        return Promise.resolve({ text, structured });
      }
      if (args.toolset) {
        const set = catalog.get(args.toolset.toLowerCase());
        if (!set) {
          const left = catalog.unavailable.find((u) => u.toolset === args.toolset.toLowerCase());
          if (left) {
            throw new ToolError(
              "CONFIGURATION_ERROR",
              `The toolset "${left.toolset}" is not served: ${left.reason}`,
              {
                hint: left.reason,
              },
            );
          }
          throw new ToolError("VALIDATION_ERROR", `Unknown toolset "${args.toolset}"`, {
            field: "toolset",
            hint: `Known toolsets: ${catalog.ids.join(", ")}`,
          });
        }
        const tools = set.tools.map((t) => ({
          name: t.name,
          description: shorten(t.description, 240),
          listed: options.served.has(t.name),
        }));
        const text = [
          `## Toolset ${set.id}: ${set.description}`,
          "",
          markdownTable(
            ["tool", "listed", "what it does"],
            tools.map((t) => [t.name, t.listed ? "yes" : "no", t.description]),
          ),
          "",
          `Ask ${DESCRIBE_TOOL} with tool for a tool's arguments; tools not listed are called with ${CALL_TOOL}.`,
        ].join("\n");
        return Promise.resolve({ text, structured: { tools } });
      }
      const toolsets = catalog.toolsets.map((s) => ({
        id: s.id,
        description: s.description,
        tools: s.tools.map((t) => t.name),
        listed: s.tools.every((t) => options.served.has(t.name)),
      }));
      const sources = [
        ...searchable.map((p) => ({ id: sourceId(p), name: p.search!.name, enabled: true })),
        ...[...new Set(catalog.unavailable.map((u) => u.provider))]
          .filter((id) => !sourceIds.includes(id))
          .map((id) => ({ id, name: id, enabled: false })),
      ];
      const unavailable = catalog.unavailable.map((u) => ({
        toolset: u.toolset,
        tools: [...u.tools],
        reason: u.reason,
      }));
      const lines = [
        "## Toolsets",
        "",
        markdownTable(
          ["toolset", "listed", "tools", "what for"],
          toolsets.map((s) => [s.id, s.listed ? "yes" : "no", s.tools.join(", "), s.description]),
        ),
        "",
        `Tools of toolsets not listed are still reachable: ${DESCRIBE_TOOL} with tool gives the arguments, ` +
        `${CALL_TOOL} calls it. To list a toolset's tools directly, start the server with --toolsets ` +
        "(or OPENDATA_MCP_TOOLSETS), or over HTTP use /mcp/<toolsets> or the X-MCP-Toolsets header.",
        "",
        `Source ids for ${SEARCH_TOOL} sources: ${
          sources.map((x) => x.enabled ? x.id : `${x.id} (not enabled)`).join(", ")
        }.`,
      ];
      if (unavailable.length) {
        lines.push(
          "",
          "Not served as configured:",
          ...unavailable.map((u) => `- ${u.toolset} (${u.tools.join(", ")}): ${u.reason}`),
        );
      }
      return Promise.resolve({
        text: lines.join("\n"),
        structured: { sources, toolsets, ...(unavailable.length ? { unavailable } : {}) },
      });
    },
  };

  const call: ToolDefinition<typeof callInput, undefined> = {
    name: CALL_TOOL,
    title: "Call any tool",
    toolset: CORE_TOOLSET,
    description:
      "Calls any tool of this server by name, listed here or not, and returns its result unchanged. " +
      `The arguments are checked against that tool's own schema (${DESCRIBE_TOOL} shows it); use the next ` +
      `calls that ${SEARCH_TOOL} suggests as they are.`,
    input: callInput,
    inputJsonSchema: CALL_INPUT_JSON,
    output: undefined,
    annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: true },
    handler() {
      // The core dispatches opendata_call itself (createServer), so the target's result, its
      // validation and its log line are exactly those of a direct call.
      return Promise.reject(new Error(`${CALL_TOOL} is dispatched by the core`));
    },
  };
  return [search, describe, call];
}

/**
 * The deepest `arguments` of opendata_call sent as a string may nest: as deep as they could as
 * an object inside the message (`params.arguments.arguments` sits three levels down).
 */
const INNER_MAX_DEPTH = DEFAULT_MAX_DEPTH - 3;

/**
 * The target and its arguments of an opendata_call, or the validation error to answer.
 * `unavailable`: the tools not served as configured, whose error says how to enable them.
 */
export function callTarget(
  args: z.output<typeof callInput>,
  // deno-lint-ignore no-explicit-any
  tools: ReadonlyMap<string, ToolDefinition<any, any>>,
  unavailable: readonly UnavailableTools[] = [],
  // deno-lint-ignore no-explicit-any
): { tool: ToolDefinition<any, any>; arguments: unknown } {
  const tool = tools.get(args.tool);
  if (!tool || tool.name === CALL_TOOL) {
    throw unknownTool(
      args.tool,
      [...tools.keys()].filter((n) => n !== CALL_TOOL),
      unavailable,
    );
  }
  let parsed: unknown = args.arguments;
  if (typeof parsed === "string") {
    // The message's own depth check never saw inside the string: the same limit, before parsing.
    if (jsonTooDeepAt(parsed, INNER_MAX_DEPTH) >= 0) {
      throw new ToolError(
        "VALIDATION_ERROR",
        `"arguments" nests objects and arrays more than ${INNER_MAX_DEPTH} levels deep`,
        {
          field: "arguments",
          hint: `${DESCRIBE_TOOL} with tool "${tool.name}" shows the arguments it takes`,
        },
      );
    }
    try {
      parsed = parsed.trim() === "" ? {} : JSON.parse(parsed);
    } catch (e) {
      throw new ToolError(
        "VALIDATION_ERROR",
        `"arguments" is not JSON: ${e instanceof Error ? e.message : String(e)}`,
        {
          field: "arguments",
          hint: 'Send the arguments as a JSON object in a string, e.g. "{\\"query\\": \\"Oslo\\"}"',
        },
      );
    }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ToolError("VALIDATION_ERROR", '"arguments" must be a JSON object', {
      field: "arguments",
      hint: `${DESCRIBE_TOOL} with tool "${tool.name}" shows the arguments it takes`,
    });
  }
  return { tool, arguments: parsed };
}

/**
 * The error for a tool name this instance cannot run: a tool left out for want of a key says how
 * to enable it (the keyless default), any other name points at opendata_describe.
 */
function unknownTool(
  name: string,
  known: readonly string[],
  unavailable: readonly UnavailableTools[] = [],
): ToolError {
  const left = unavailable.find((u) => u.tools.includes(name));
  if (left) {
    return new ToolError("CONFIGURATION_ERROR", `The tool "${name}" is not served: ${left.reason}`, {
      field: "tool",
      hint: left.reason,
    });
  }
  return new ToolError("NOT_FOUND", `There is no tool "${name}"`, {
    field: "tool",
    hint: `${DESCRIBE_TOOL} lists the tools; e.g. ${known.slice(0, 6).map((n) => `"${n}"`).join(", ")}`,
  });
}

interface SourceResult {
  id: string;
  name: string;
  licence: string;
  status: "ok" | "failed" | "timeout" | "unavailable";
  error?: string;
  hits: SearchHit[];
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
        new Promise<SearchHit[]>((resolve, reject) => {
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
          source.search(query, { limit }, { ...ctx, signal }).then(resolve, reject);
        }),
    );
    return { ...base, status: "ok", hits: hits.slice(0, limit) };
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

type ShownSource = Omit<SourceResult, "hits"> & {
  hits: { title: string; snippet?: string; url?: string; date?: string; next_calls: RoutedCall[] }[];
  next_calls?: RoutedCall[];
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
    lines.push("", `## ${s.name}`);
    s.hits.forEach((h, i) => {
      lines.push(
        `${i + 1}. **${h.title}**${h.date ? ` (${h.date})` : ""}${
          h.snippet ? ` — ${shorten(h.snippet, 200)}` : ""
        }`,
      );
      if (h.url) lines.push(`   ${h.url}`);
      for (const c of h.next_calls) lines.push(`   → ${callLine(c)}`);
    });
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
