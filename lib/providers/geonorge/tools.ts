// geonorge-datasets: Riksantikvaren's (or another organization's) datasets and services in
// GeoNorge's catalogue, with their distribution links.
import { clientSettings } from "../../http/settings.ts";
import { z } from "zod";
import type { QueryValue } from "../../http/fetch_client.ts";
import type { HttpRuntime } from "../../http/runtime.ts";
import { originOf, ssrfGuard } from "../../http/ssrf.ts";
import type { ToolDefinition } from "../../mcp/provider.ts";
import {
  fitToLimit,
  jsonText,
  markdownTable,
  page,
  pageSchema,
  responseFormatField,
  shorten,
  truncationNotice,
} from "../../mcp/output.ts";
import type { GeonorgeSettings } from "./config.ts";
import { parseSearch } from "./parse.ts";

/** Whether a body reads as search results (one that does not is not kept in the cache). */
function searchDecodes(data: unknown): boolean {
  try {
    parseSearch(data);
    return true;
  } catch {
    return false;
  }
}

/** Most entries read from the start of a search (see the handler for why it never sends offset). */
const MAX_WINDOW = 200;

const entrySchema = z.object({
  uuid: z.string().describe("Metadata uuid"),
  title: z.string(),
  type: z.string().nullable().describe("dataset, service, servicelayer, series, software, ..."),
  organization: z.string().nullable(),
  abstract: z.string().nullable(),
  open_data: z.boolean().nullable(),
  access: z.string().nullable(),
  distribution: z.object({
    protocol: z.string().nullable().describe("e.g. OGC:WMS, OGC:WFS, GEONORGE:FILEDOWNLOAD"),
    url: z.string().nullable(),
    name: z.string().nullable(),
  }).nullable(),
  details_url: z.string().describe("The metadata page on kartkatalog.geonorge.no"),
  capabilities_url: z.string().nullable(),
  download_api_url: z.string().nullable().describe(
    "GeoNorge download API capabilities (datasets only; may not exist)",
  ),
});

const output = z.object({
  organization: z.string().nullable(),
  query: z.string().nullable(),
  type: z.string(),
  entries: z.array(entrySchema),
  ...pageSchema.shape,
  total_is_exact: z.boolean(),
  warnings: z.array(z.string()),
  source_url: z.string(),
  licence: z.object({ name: z.string(), url: z.string().nullable(), note: z.string().nullable() }),
});

/** The `geonorge-datasets` tool. */
export function datasetsTool(
  settings: GeonorgeSettings,
  runtime: HttpRuntime,
): ToolDefinition<z.ZodObject, typeof output> {
  const http = runtime.client({
    provider: "geonorge",
    upstreamName: "GeoNorge's catalogue (kartkatalog.geonorge.no)",
    ...clientSettings(settings),
    checkUrl: ssrfGuard({ trustedOrigins: [originOf(settings.base_url)] }),
  });
  const input = z.strictObject({
    query: z.string().trim().min(1).max(200).optional().describe(
      'Words to search for, e.g. "kulturminner" or "SEFRAK"; leave out to list everything of the organization',
    ),
    organization: z.string().trim().min(1).max(200).nullable().default(settings.organization).describe(
      `Organization whose entries to list (default "${settings.organization}"); null for all organizations`,
    ),
    type: z.enum(["any", "dataset", "service", "servicelayer", "series", "software"]).default("any").describe(
      "Kind of catalogue entry",
    ),
    limit: z.number().int().min(1).max(50).default(10).describe("Entries per page (1-50)"),
    offset: z.number().int().min(0).max(MAX_WINDOW - 1).default(0).describe(
      `Entries to skip (offset + limit at most ${MAX_WINDOW})`,
    ),
    response_format: responseFormatField,
  }).superRefine((v, issues) => {
    if (v.offset + v.limit > MAX_WINDOW) {
      issues.addIssue({
        code: "custom",
        path: ["offset"],
        message: `offset + limit may be at most ${MAX_WINDOW}`,
      });
    }
  });
  return {
    name: "geonorge-datasets",
    title: "GeoNorge datasets",
    description:
      "Searches GeoNorge's map catalogue (kartkatalog.geonorge.no) for the datasets and map services of an organization — Riksantikvaren by default — with each entry's type, abstract, open-data flag, distribution (WMS, WFS or file download) and metadata page. Use it to find bulk downloads and OGC services beyond the riksantikvaren-* tools.",
    input,
    output,
    annotations: {
      title: "GeoNorge datasets",
      readOnlyHint: true,
      idempotentHint: true,
      destructiveHint: false,
      openWorldHint: true,
    },
    async handler(args, ctx) {
      const a = args as z.output<typeof input>;
      const call = { signal: ctx.signal, logger: ctx.logger };
      const warnings: string[] = [];
      // The catalogue's paging base (0 or 1) is not documented, so `offset` is never sent: the
      // first offset+limit entries are read and the page is cut here.
      const want = a.offset + a.limit;
      const query: Record<string, QueryValue> = { limit: want };
      if (a.query) query["text"] = a.query;
      let facet = 0;
      if (a.organization) {
        query[`facets[${facet}].name`] = "organization";
        query[`facets[${facet++}].value`] = a.organization;
      }
      if (a.type !== "any") {
        query[`facets[${facet}].name`] = "type";
        query[`facets[${facet++}].value`] = a.type;
      }
      let r = await http.json<unknown>("api/search", { query, ...call, cacheable: searchDecodes });
      let parsed = parseSearch(r.data);
      let exact = parsed.numFound !== null;
      if (a.organization && parsed.entries.length === 0) {
        // The organization's name in the facet may differ ("Riksantikvaren - Direktoratet for
        // kulturminneforvaltning"): search its name as text and filter by organization instead.
        const fallback: Record<string, QueryValue> = {
          limit: MAX_WINDOW,
          text: [a.query, a.organization].filter(Boolean).join(" "),
        };
        if (a.type !== "any") {
          Object.assign(fallback, { "facets[0].name": "type", "facets[0].value": a.type });
        }
        r = await http.json<unknown>("api/search", { query: fallback, ...call, cacheable: searchDecodes });
        const all = parseSearch(r.data).entries;
        const org = a.organization.toLowerCase();
        parsed = {
          numFound: null,
          entries: all.filter((e) => (e.organization ?? "").toLowerCase().includes(org)),
        };
        exact = false;
        warnings.push(
          `The organization filter "${a.organization}" matched nothing; searched its name as text and kept entries whose organization contains it`,
        );
      }
      const window = parsed.entries.slice(a.offset, a.offset + a.limit);
      const total = exact ? parsed.numFound! : parsed.entries.length;
      const licence = {
        name: "Per dataset (see each metadata page)",
        url: null,
        note:
          "Catalogue metadata from GeoNorge (Kartverket). Riksantikvaren's open datasets are mostly NLOD 2.0; check each entry's terms",
      };
      const rendered = fitToLimit(window, ctx.limits.characterLimit - 400, ({ items, truncated }) => {
        const env = page(Math.max(total, a.offset + items.length), a.offset, items.length);
        if (env.next_offset !== null && env.next_offset >= MAX_WINDOW) {
          Object.assign(env, { next_offset: null });
        }
        const structured = {
          organization: a.organization,
          query: a.query ?? null,
          type: a.type,
          entries: items,
          ...env,
          total_is_exact: exact,
          warnings,
          source_url: r.url,
          licence,
        };
        if (a.response_format === "json") return { text: jsonText(structured), structured };
        const lines = [
          `# GeoNorge: ${a.organization ?? "all organizations"}${a.query ? ` matching "${a.query}"` : ""}`,
          `${items.length ? `Entries ${a.offset + 1}–${a.offset + items.length}` : "No entries"} of ${total}${
            exact ? "" : "+"
          }.`,
          "",
        ];
        if (items.length) {
          lines.push(markdownTable(
            ["title", "type", "distribution", "open", "metadata"],
            items.map((e) => [
              e.title,
              e.type ?? "",
              e.distribution ? [e.distribution.protocol, e.distribution.url].filter(Boolean).join(" ") : "",
              e.open_data === null ? "" : e.open_data ? "yes" : "no",
              e.details_url,
            ]),
          ));
          for (const e of items) {
            if (e.abstract) lines.push("", `**${e.title}**: ${shorten(e.abstract, 300)}`);
          }
        }
        for (const w of warnings) lines.push("", `Note: ${w}`);
        if (truncated) {
          lines.push(
            "",
            truncationNotice(items.length, window.length, {
              nextOffset: env.next_offset,
              limit: ctx.limits.characterLimit,
            }),
          );
        } else if (env.has_more && env.next_offset !== null) {
          lines.push("", `More: call again with offset=${env.next_offset}.`);
        }
        lines.push("", `Source: ${r.url}`, `Licence: ${licence.name}. ${licence.note}`);
        return { text: lines.join("\n"), structured };
      });
      return { text: rendered.text, structured: rendered.structured };
    },
  };
}
