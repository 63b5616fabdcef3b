// geonorge-datasets: Riksantikvaren's (or another organization's) datasets and services in
// GeoNorge's catalogue, with their distribution links; the whole list goes to a file on request.
import { z } from "zod";
import type { ToolCallContext, ToolDefinition } from "../../../mcp/provider.ts";
import {
  fitToLimit,
  jsonText,
  markdownTable,
  page,
  shorten,
  truncationNotice,
} from "../../../mcp/shaping.ts";
import type { Catalog } from "../catalog.ts";
import type { CatalogEntry } from "../parse.ts";
import type { GeonorgeSettings } from "../settings.ts";
import {
  fileName,
  fileSchema,
  formatField,
  orDefault,
  outputField,
  withFile,
  written,
} from "../../../output/result_files.ts";
import type { Written } from "../../../output/result_files.ts";

/** The toolset of geonorge-datasets. */
export const TOOLSET = "geonorge";

/** Most entries the answer pages through (offset + limit); a file reads up to `file_max_entries`. */
const MAX_WINDOW = 200;

/** `organization` values that mean every organization. */
const ALL = new Set(["all", "*"]);

const output = z.looseObject({
  entries: z.array(z.looseObject({ uuid: z.string(), title: z.string() })),
  total: z.number(),
  has_more: z.boolean(),
  next_offset: z.number().nullable(),
  file: fileSchema.optional(),
});

/** The licence line of catalogue results. */
const LICENCE = {
  name: "Per dataset (see each metadata page)",
  url: null,
  note:
    "Catalogue metadata from GeoNorge (Kartverket). Riksantikvaren's open datasets are mostly NLOD 2.0; check each entry's terms",
};

/**
 * The machine-usable addresses of an entry, labelled: the download API, the WMS and WFS
 * capabilities, and a service's own capabilities.
 */
function serviceLinks(e: CatalogEntry): string {
  const links: string[] = [];
  if (e.download_api_url) links.push(`download API ${e.download_api_url}`);
  const wms = e.wms_url ?? e.map_services.find((m) => m.protocol === "OGC:WMS")?.capabilities_url;
  if (wms) links.push(`WMS ${wms}`);
  if (e.wfs_url) links.push(`WFS ${e.wfs_url}`);
  if (e.capabilities_url) links.push(`capabilities ${e.capabilities_url}`);
  return links.join("; ");
}

/** The `geonorge-datasets` tool. */
export function datasetsTool(
  settings: GeonorgeSettings,
  catalog: Catalog,
): ToolDefinition<z.ZodType, typeof output> {
  const input = datasetsInput(settings);
  return {
    name: "geonorge-datasets",
    title: "GeoNorge datasets",
    toolset: TOOLSET,
    description:
      "Datasets and map services (WMS, WFS, downloads) in GeoNorge's catalogue, Riksantikvaren's by default.",
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
      const a = args as DatasetsArgs;
      const given = a.organization ?? settings.organization;
      const organization = ALL.has(given.toLowerCase()) ? null : given;
      const toFile = a.output === "file";
      const want = toFile ? Math.max(settings.file_max_entries, a.offset + a.limit) : a.offset + a.limit;
      const r = await catalog.search(
        { query: a.query, organization, type: a.type, limit: want },
        { signal: ctx.signal, logger: ctx.logger },
      );
      const found: Found = {
        r,
        organization,
        exact: r.numFound !== null,
        total: r.numFound ?? r.entries.length,
      };
      const file = toFile ? await datasetsFile(a, found, { cap: settings.file_max_entries, ctx }) : null;
      const rendered = renderDatasets(a, found, { file, fileMax: settings.file_max_entries, ctx });
      return withFile(rendered, file);
    },
  };
}

/** The tool's arguments. */
function datasetsInput(settings: GeonorgeSettings) {
  return z.strictObject({
    query: z.string().trim()
      .refine((q) => q.length >= 1 && q.length <= 200, { message: "give 1 to 200 characters" })
      .optional().describe("Words to search for"),
    // Strict clients send every field and null for those they leave out: null is the default,
    // never "all organizations" (that is "all").
    organization: z.preprocess(
      (v) => v === null ? undefined : v,
      z.string().trim()
        .refine((o) => o.length >= 1 && o.length <= 200, { message: "give 1 to 200 characters" })
        .optional(),
    ).describe(`Default "${settings.organization}"; "all" for every organization`),
    type: orDefault(z.enum(["any", "dataset", "service", "servicelayer", "series", "software"]), "any")
      .describe("Entry kind (default any)"),
    limit: orDefault(z.int().min(1).max(50), 10).describe("Entries (default 10)"),
    offset: orDefault(z.int().min(0).max(MAX_WINDOW - 1), 0).describe("Entries to skip (next_offset)"),
    response_format: formatField,
    output: outputField("all entries"),
  }).superRefine((v, issues) => {
    if (v.offset + v.limit > MAX_WINDOW) {
      issues.addIssue({
        code: "custom",
        path: ["offset"],
        message: `offset + limit may be at most ${MAX_WINDOW}; use output "file" for more`,
      });
    }
  });
}

type DatasetsArgs = z.output<ReturnType<typeof datasetsInput>>;

/** What the catalogue answered, and for which organization (null: all). */
interface Found {
  r: Awaited<ReturnType<Catalog["search"]>>;
  organization: string | null;
  /** Whether the catalogue said how many match. */
  exact: boolean;
  total: number;
}

/** output "file": every entry read, up to file_max_entries, as CSV rows or JSON. */
async function datasetsFile(
  a: DatasetsArgs,
  found: Found,
  to: { cap: number; ctx: ToolCallContext },
): Promise<Written> {
  const { r, organization, exact, total } = found;
  const { ctx } = to;
  const all = r.entries.slice(0, to.cap);
  const saved = await ctx.files.save({
    name: fileName("datasets", [organization ?? "all", a.query ?? ""].join(" ")),
    format: a.response_format === "json" ? "json" : "csv",
    rows: [all.map((e) => ({
      uuid: e.uuid,
      title: e.title,
      type: e.type,
      organization: e.organization,
      open_data: e.open_data,
      access: e.access,
      protocol: e.distribution?.protocol ?? null,
      distribution_url: e.distribution?.url ?? null,
      distribution_name: e.distribution?.name ?? null,
      details_url: e.details_url,
      capabilities_url: e.capabilities_url,
      download_api_url: e.download_api_url,
      wms_url: e.wms_url,
      wfs_url: e.wfs_url,
      map_services: e.map_services.map((m) => m.capabilities_url).join(" "),
      date: e.date,
      date_raw: e.date_raw,
      abstract: e.abstract,
    }))],
    head: { organization, query: a.query ?? null, type: a.type, source_url: r.url, licence: LICENCE },
    itemsKey: "entries",
    description: `GeoNorge catalogue (${organization ?? "all organizations"}${
      a.query ? `, "${a.query}"` : ""
    }): ${all.length} entries; ${LICENCE.note}`,
  });
  const partial = total > all.length
    ? `the catalogue has ${total}${
      exact ? "" : "+"
    } entries, the file holds the first ${all.length} (file_max_entries): narrow with query or type`
    : undefined;
  return written(saved, `${all.length} entries`, ctx, partial);
}

/** The page of entries shown, as many as fit the limit, in markdown or JSON. */
function renderDatasets(
  a: DatasetsArgs,
  found: Found,
  parts: { file: Written | null; fileMax: number; ctx: ToolCallContext },
) {
  const { r, organization, exact, total } = found;
  const { file, ctx } = parts;
  const window = r.entries.slice(a.offset, a.offset + a.limit);
  const room = ctx.limits.characterLimit - 400 - (file ? 2 * file.line.length : 0);
  return fitToLimit(window, room, ({ items, truncated }) => {
    const env = page(Math.max(total, a.offset + items.length), a.offset, items.length);
    const pastWindow = env.next_offset !== null && env.next_offset >= MAX_WINDOW;
    if (pastWindow) Object.assign(env, { next_offset: null });
    const structured = {
      organization,
      query: a.query ?? null,
      type: a.type,
      entries: items,
      ...env,
      total_is_exact: exact,
      warnings: r.warnings,
      source_url: r.url,
      licence: LICENCE,
    };
    if (a.response_format === "json") return { text: jsonText(structured), structured };
    const lines = [
      `# GeoNorge: ${organization ?? "all organizations"}${a.query ? ` matching "${a.query}"` : ""}`,
      `${items.length ? `Entries ${a.offset + 1}–${a.offset + items.length}` : "No entries"} of ${total}${
        exact ? "" : "+"
      }.`,
      "",
    ];
    if (items.length) {
      lines.push(markdownTable(
        ["title", "type", "date", "distribution", "services", "open", "metadata"],
        items.map((e) => [
          e.title,
          e.type ?? "",
          e.date ?? "",
          e.distribution ? [e.distribution.protocol, e.distribution.url].filter(Boolean).join(" ") : "",
          serviceLinks(e),
          e.open_data === null ? "" : e.open_data ? "yes" : "no",
          e.details_url,
        ]),
      ));
      for (const e of items) {
        if (e.abstract) lines.push("", `**${e.title}**: ${shorten(e.abstract, 300)}`);
      }
    }
    for (const w of r.warnings) lines.push("", `Note: ${w}`);
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
    if (pastWindow && !file) {
      lines.push(
        "",
        `Paging stops at ${MAX_WINDOW} entries: call with output "file" for up to ${parts.fileMax}, or narrow with query or type.`,
      );
    }
    lines.push("", `Source: ${r.url}`, `Licence: ${LICENCE.name}. ${LICENCE.note}`);
    return { text: lines.join("\n"), structured };
  });
}
