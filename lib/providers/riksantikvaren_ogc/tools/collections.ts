// riksantikvaren-collections: the datasets (APIs) of api.ra.no and the collections of each.
import { z } from "zod";
import { ToolError } from "../../../errors.ts";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { fitToLimit, jsonText, page, truncationNotice } from "../../../mcp/shaping.ts";
import { nextPageBudget } from "../../../http/deadline.ts";
import { mapLimit } from "../../../http/map_limit.ts";
import { callOptions, datasetField, licenceOut, READ_ONLY, TOOLSET } from "../_common.ts";
import { formatField, orDefault } from "../../../output/result_files.ts";
import type { OgcToolDeps } from "../_common.ts";
import { collectionsTable, footer, licenceSchema } from "../format.ts";
import type { CollectionEntry } from "../parse.ts";

type CollectionOut = {
  id: string;
  title: string | null;
  description: string | null;
  item_type: string | null;
  /** Spatial extent [min_lon, min_lat, max_lon, max_lat]. */
  bbox: number[] | null;
  licence: { name: string; url: string | null } | null;
};

const collectionsOutput = z.looseObject({
  datasets: z.array(z.looseObject({ id: z.string(), collections: z.array(z.looseObject({})).nullable() })),
  total: z.number(),
  has_more: z.boolean(),
  next_offset: z.number().nullable(),
  licence: licenceSchema,
});

/** The riksantikvaren-collections tool. */
export function collectionsTool(deps: OgcToolDeps): ToolDefinition<z.ZodObject, typeof collectionsOutput> {
  const input = z.strictObject({
    dataset: datasetField.optional(),
    limit: orDefault(z.int().min(1).max(50), 20).describe("Datasets per page (default 20)"),
    offset: orDefault(z.int().min(0).max(1000), 0).describe("Datasets to skip (next_offset)"),
    response_format: formatField,
  });
  return {
    name: "riksantikvaren-collections",
    title: "Riksantikvaren collections",
    toolset: TOOLSET,
    description: "Lists the datasets of api.ra.no (Riksantikvaren's OGC API) and their collections.",
    input,
    output: collectionsOutput,
    annotations: READ_ONLY,
    async handler(args, ctx) {
      const call = callOptions(ctx);
      const a = args as z.output<typeof input>;
      let entries: { id: string; title: string | null; description: string | null }[];
      let total: number;
      let offset: number;
      let sourceUrl: string;
      if (a.dataset !== undefined) {
        entries = [{ id: a.dataset, title: null, description: null }];
        [total, offset] = [1, 0];
        sourceUrl = deps.client.url(`${a.dataset}/collections`, { f: "json" });
      } else {
        const catalog = await deps.client.catalog(call);
        total = catalog.datasets.length;
        offset = a.offset;
        entries = catalog.datasets.slice(a.offset, a.offset + a.limit);
        sourceUrl = catalog.url;
      }
      const datasets = await mapLimit(entries, 4, async (d) => {
        let c = call;
        if (a.dataset === undefined) {
          // Each dataset is its own request: those that would end past the deadline are named, not read.
          const budget = nextPageBudget(deps.clock.now(), deps.settings);
          if (!budget.go) {
            return {
              ...d,
              collections: null,
              error: `Not read: this call ran short of time; call again with dataset "${d.id}"`,
            };
          }
          if (budget.timeoutMs !== undefined) c = { ...call, timeoutMs: budget.timeoutMs };
        }
        try {
          const r = await deps.client.collections(d.id, c);
          // A collection without its own licence link is under the dataset's.
          const collections = r.collections.map((c) => ({
            ...collectionShape(c),
            licence: c.licence ?? r.licence,
          }));
          return { ...d, collections, error: null };
        } catch (e) {
          // One broken dataset must not hide the others; a single asked-for dataset fails loudly.
          if (a.dataset !== undefined || ctx.signal.aborted) throw e;
          const late = e instanceof ToolError && e.errorType === "TIMEOUT" && c.timeoutMs !== undefined;
          const error = late
            ? `Not read: it did not answer before this call ran short of time; call again with dataset "${d.id}"`
            : e instanceof Error
            ? e.message
            : String(e);
          return { ...d, collections: null, error };
        }
      });
      const licence = licenceOut(null, "", "");
      const rendered = fitToLimit(datasets, ctx.limits.characterLimit - 300, ({ items, truncated }) => {
        const env = page(total, offset, items.length);
        const structured = { datasets: items, ...env, source_url: sourceUrl, licence };
        if (a.response_format === "json") return { text: jsonText(structured), structured };
        const lines = [
          a.dataset === undefined
            ? `# Riksantikvaren OGC API: ${total} datasets (showing ${offset + 1}–${offset + items.length})`
            : `# Riksantikvaren OGC API: collections of "${a.dataset}"`,
        ];
        for (const d of items) {
          lines.push("", `## ${d.id}${d.title ? ` — ${d.title}` : ""}`);
          if (d.description) lines.push(d.description);
          if (d.collections) {
            lines.push("", d.collections.length ? collectionsTable(d.collections) : "(no collections)");
          } else lines.push(`Collections could not be read: ${d.error}`);
        }
        lines.push(
          "",
          'Next: riksantikvaren-features with {"dataset": "<dataset id>", "collection": "<collection id>"}.',
        );
        if (env.has_more) {
          lines.push(
            truncated
              ? truncationNotice(items.length, total - offset, {
                nextOffset: env.next_offset,
                limit: ctx.limits.characterLimit,
              })
              : `More datasets: call again with offset=${env.next_offset}.`,
          );
        }
        lines.push("", footer(sourceUrl, licence));
        return { text: lines.join("\n").replace(/\n{3,}/g, "\n\n"), structured };
      });
      return { text: rendered.text, structured: rendered.structured };
    },
  };
}

function collectionShape(c: CollectionEntry): CollectionOut {
  return {
    id: c.id,
    title: c.title,
    description: c.description,
    item_type: c.item_type,
    bbox: c.bbox,
    licence: c.licence,
  };
}
