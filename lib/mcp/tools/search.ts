// opendata_search: one search across every source at once, a few hits per source, each with the
// calls that fetch the record (routed through opendata_call when the tool is not listed).
import { searchView } from "./search_view.ts";
import { z } from "zod";
import type { ToolDefinition } from "../provider.ts";
import { CORE_TOOLSET } from "../toolsets.ts";
import { CORE_ANNOTATIONS, generatedSchemas, nextCallSchema, once, SEARCH_TOOL } from "./_core.ts";
import type { CoreScope } from "./_core.ts";

export const searchInput = once(() =>
  z.strictObject({
    query: z.string().min(1).max(300).describe("What to look for, in any language"),
    sources: z.array(z.string()).max(20).default([]).describe(
      "Source ids to search (default: all); opendata_describe lists them",
    ),
    limit: z.number().int().min(1).max(10).default(3).describe("Hits per source, 1-10 (default 3)"),
  })
);

export const searchOutput = once(() => {
  // The hits' snippets and dates are in the text only: a client that forwards both pays for them once.
  const hitSchema = z.object({
    title: z.string(),
    url: z.string().optional(),
    next_calls: z.array(nextCallSchema()),
  });
  return z.object({
    query: z.string(),
    sources: z.array(z.object({
      id: z.string(),
      status: z.enum(["ok", "failed", "timeout", "unavailable"]),
      error: z.string().optional(),
      /** How many records match at the source, where it says. */
      total: z.number().optional(),
      hits: z.array(hitSchema),
      /** The source's own call that lists more than the hits shown. */
      more: nextCallSchema().optional(),
      next_calls: z.array(nextCallSchema()).optional(),
    })),
    /** Sources that answered with no hits and name no call (listed by id only). */
    no_hits: z.array(z.string()).optional(),
    total_hits: z.number(),
    next_calls: z.array(nextCallSchema()).optional(),
    cut: z.string().optional(),
  });
});

/** opendata_search's input schema (built on the first call). */
export type SearchInput = ReturnType<typeof searchInput>;
type SearchOutput = ReturnType<typeof searchOutput>;

/** opendata_search for one server instance. */
export function searchTool(scope: CoreScope): ToolDefinition<SearchInput, SearchOutput> {
  return {
    name: SEARCH_TOOL,
    title: "Search all open-data sources",
    toolset: CORE_TOOLSET,
    description: searchDescription(scope),
    // Built on the first call: tools/list serves the generated JSON Schemas.
    get input() {
      return searchInput();
    },
    get output() {
      return searchOutput();
    },
    ...generatedSchemas(SEARCH_TOOL),
    annotations: { ...CORE_ANNOTATIONS, idempotentHint: false },
    // Hosts that render views list the hits with their links and sources.
    view: searchView(scope),
    // What answers a search loads on the first one (search_answer.ts): listing needs none of it.
    async handler(args, ctx) {
      return await (await import("./search_answer.ts")).answerSearch(scope, args, ctx);
    },
  };
}

/** What opendata_search says of itself: the sources it searches, and those not enabled and why. */
function searchDescription(scope: CoreScope): string {
  const { catalog, searchable, sourceIds } = scope;
  return `Searches every source at once (${
    searchable.map((p) => p.search!.name).join("; ") || "none enabled"
  }) and lists a few hits per source with next_calls (tool and arguments, ready to send): the ` +
    "record, and e.g. a series' latest values or places nearby. Start here; coordinates like \"59.91N " +
    '10.75E" find places nearby. A source that fails or is slow is reported, the others still answer.' +
    (catalog.unavailable.length
      ? ` Not enabled: ${
        [...new Set(catalog.unavailable.map((u) => u.provider))].filter((id) => !sourceIds.includes(id))
          .map((id) => `${id} (${catalog.unavailable.find((u) => u.provider === id)!.reason.split(":")[0]})`)
          .join(", ")
      }.`
      : "");
}
