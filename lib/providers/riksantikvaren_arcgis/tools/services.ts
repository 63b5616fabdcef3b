// arcgis-services: the folder's map services, one service's layers, or one layer's fields.
import { z } from "zod";
import type { ToolCallContext, ToolDefinition } from "../../../mcp/provider.ts";
import { fitToLimit, jsonText, page, truncationNotice } from "../../../mcp/shaping.ts";
import { formatField, orDefault } from "../../../output/result_files.ts";
import { mapLimit } from "../../../http/map_limit.ts";
import type { CallOptions, ServiceType } from "../client.ts";
import {
  ARCGIS_LICENCE,
  arcgisFooter,
  fieldsTable,
  layersTable,
  licenceSchema,
  parseFolder,
  parseLayer,
  parseService,
} from "../format.ts";
import type { LayerDetail, LayerSummary } from "../format.ts";
import {
  type ArcgisToolDeps,
  budgetFor,
  callOptions,
  folderOf,
  READ_ONLY,
  serviceName,
  TOOLSET,
  withTimeout,
} from "../_common.ts";

const servicesOutput = z.looseObject({
  services: z.array(z.looseObject({ name: z.string() })),
  layer: z.looseObject({}).nullable(),
  total: z.number(),
  has_more: z.boolean(),
  next_offset: z.number().nullable(),
  licence: licenceSchema,
});

type ServiceOut = {
  /** Pass as service. */
  name: string;
  full_name: string;
  type: string;
  url: string;
  layers: LayerSummary[] | null;
  max_record_count: number | null;
  copyright: string | null;
  /** Why the layers could not be read. */
  error: string | null;
};

/** `arcgis-services`. */
export function servicesTool(deps: ArcgisToolDeps): ToolDefinition<z.ZodType, typeof servicesOutput> {
  const input = servicesInput();
  return {
    name: "arcgis-services",
    title: "ArcGIS services",
    toolset: TOOLSET,
    description: "Lists Riksantikvaren's map services on kart.ra.no and their layers, or one layer's fields.",
    input,
    output: servicesOutput,
    annotations: READ_ONLY,
    async handler(args, ctx) {
      const a = args as ServicesArgs;
      const folder = folderOf(deps.settings.base_url);
      const found = a.service === undefined
        ? await listFolder(a, folder, ctx, deps)
        : await describeOne(a, { service: a.service, folder }, ctx, deps);
      const rendered = renderServices(a, { ...found, folder }, ctx);
      return { text: rendered.text, structured: rendered.structured };
    },
  };
}

/** The tool's arguments. */
function servicesInput() {
  return z.strictObject({
    service: z.string().refine((v) => v.length >= 1 && v.length <= 140, "give 1 to 140 characters").optional()
      .describe("Service to describe (default: list all)"),
    layer: z.int().min(0).max(10_000).optional().describe(
      "Layer to describe (needs service)",
    ),
    service_type: orDefault(z.enum(["MapServer", "FeatureServer"]), "MapServer").describe(
      "Default MapServer",
    ),
    limit: orDefault(z.int().min(1).max(50), 20).describe("Services per page (default 20)"),
    offset: orDefault(z.int().min(0).max(1000), 0).describe("Skip this many (next_offset)"),
    response_format: formatField,
  }).superRefine((v, issues) => {
    if (v.layer !== undefined && v.service === undefined) {
      issues.addIssue({ code: "custom", path: ["layer"], message: "needs service as well" });
    }
  });
}

type ServicesArgs = z.output<ReturnType<typeof servicesInput>>;

/** What the tool found: a page of the folder's services, or one service (and one of its layers). */
interface ServicesFound {
  level: "folder" | "service" | "layer";
  services: ServiceOut[];
  folders: string[];
  layer: LayerDetail | null;
  total: number;
  offset: number;
  sourceUrl: string;
}

/** One service's description: its layers, transfer limit and copyright. */
async function describeService(
  client: ArcgisToolDeps["client"],
  name: string,
  fullName: string,
  t: string,
  c: CallOptions,
): Promise<ServiceOut> {
  const r = await client.service({ service: name, type: t as ServiceType }, c);
  const s = parseService(r.data);
  return {
    name,
    full_name: fullName,
    type: t,
    url: r.url,
    layers: s.layers,
    max_record_count: s.max_record_count,
    copyright: s.copyright,
    error: null,
  };
}

/** A page of the folder's services, each described as far as the call's time allows. */
async function listFolder(
  a: ServicesArgs,
  folder: string,
  ctx: ToolCallContext,
  deps: ArcgisToolDeps,
): Promise<ServicesFound> {
  const { client } = deps;
  const call = callOptions(ctx);
  const r = await client.root(call);
  const listing = parseFolder(r.data, folder);
  const services = await mapLimit(listing.services.slice(a.offset, a.offset + a.limit), 4, async (s) => {
    const base = {
      name: s.name,
      full_name: s.full_name,
      type: s.type,
      url: client.url(`${encodeURIComponent(s.name)}/${s.type}`),
      layers: null,
      max_record_count: null,
      copyright: null,
    };
    if (s.type !== "MapServer" && s.type !== "FeatureServer") return { ...base, error: null };
    if (s.name.includes("/")) {
      return { ...base, error: "In another folder: not reachable through this base_url" };
    }
    // Each service is its own request: those that would end past the deadline are named, not read.
    const budget = budgetFor(deps);
    if (!budget.go) {
      return {
        ...base,
        error: `Not read: this call ran short of time; call again with service "${s.name}"`,
      };
    }
    try {
      return await describeService(client, s.name, s.full_name, s.type, withTimeout(call, budget));
    } catch (e) {
      if (ctx.signal.aborted) throw e;
      return { ...base, error: e instanceof Error ? e.message : String(e) };
    }
  });
  return {
    level: "folder",
    services,
    folders: listing.folders,
    layer: null,
    total: listing.services.length,
    offset: a.offset,
    sourceUrl: r.url,
  };
}

/** One service described, and one of its layers when the arguments name it. */
async function describeOne(
  a: ServicesArgs,
  where: { service: string; folder: string },
  ctx: ToolCallContext,
  deps: ArcgisToolDeps,
): Promise<ServicesFound> {
  const { client, settings } = deps;
  const call = callOptions(ctx);
  const type = a.service_type as ServiceType;
  const name = serviceName(where.service, settings.base_url);
  const described = await describeService(client, name, `${where.folder}/${name}`, type, call);
  const found: ServicesFound = {
    level: "service",
    services: [described],
    folders: [],
    layer: null,
    total: 1,
    offset: 0,
    sourceUrl: described.url,
  };
  if (a.layer === undefined) return found;
  const r = await client.layer({ service: name, type, layer: a.layer }, call);
  const { esriFields: _, ...detail } = parseLayer(r.data, a.layer);
  return { ...found, level: "layer", layer: detail, sourceUrl: r.url };
}

/** The services (and the layer) shown, as many as fit the limit, in markdown or JSON. */
function renderServices(a: ServicesArgs, found: ServicesFound & { folder: string }, ctx: ToolCallContext) {
  const { level, services, folders, layer, total, offset, sourceUrl, folder } = found;
  return fitToLimit(services, ctx.limits.characterLimit - 300, ({ items, truncated }) => {
    const env = page(total, offset, items.length);
    const structured = {
      level,
      services: items,
      layer,
      folders,
      ...env,
      source_url: sourceUrl,
      licence: ARCGIS_LICENCE,
    };
    if (a.response_format === "json") return { text: jsonText(structured), structured };
    const lines = [
      level === "folder"
        ? `# kart.ra.no ${folder}: ${total} services (showing ${
          items.length ? `${offset + 1}–${offset + items.length}` : "none"
        })`
        : `# kart.ra.no ${folder}/${items[0]?.name ?? ""}`,
    ];
    for (const s of items) {
      if (level === "folder") lines.push("", `## ${s.name} (${s.type})`);
      if (s.max_record_count !== null) {
        lines.push(`Transfer limit (maxRecordCount): ${s.max_record_count}`);
      }
      if (s.layers) lines.push("", s.layers.length ? layersTable(s.layers) : "(no layers)");
      if (s.error) lines.push(`Layers could not be read: ${s.error}`);
    }
    if (layer) {
      lines.push(
        "",
        `## Layer ${layer.id}: ${layer.name ?? ""}`,
        `Geometry: ${layer.geometry_type ?? "none"} · display field: ${
          layer.display_field ?? "?"
        } · maxRecordCount: ${layer.max_record_count ?? "?"} · paging: ${
          layer.supports_pagination === null ? "?" : layer.supports_pagination ? "yes" : "no"
        }`,
        "",
        fieldsTable(layer.fields),
      );
    }
    if (folders.length) {
      lines.push("", `Sub-folders (not served through this base_url): ${folders.join(", ")}`);
    }
    lines.push("", 'Next: arcgis-query with {"service": "<name>", "layer": <id>, "where": "..."}.');
    if (env.has_more) {
      lines.push(
        truncated
          ? truncationNotice(items.length, total - offset, {
            nextOffset: env.next_offset,
            limit: ctx.limits.characterLimit,
          })
          : `More services: call again with offset=${env.next_offset}.`,
      );
    }
    lines.push("", arcgisFooter(sourceUrl));
    return { text: lines.join("\n").replace(/\n{3,}/g, "\n\n"), structured };
  });
}
