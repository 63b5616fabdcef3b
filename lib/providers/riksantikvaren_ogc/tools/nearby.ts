// riksantikvaren-nearby: features within a radius of a point, ranked by true distance. The box
// around the circle is scanned in pages of the service's size (1,000): api.ra.no adds every
// record without a geometry to a bbox answer, so a complete ranking reads all of them. When the
// call's time or the record cap runs out first, the answer ranks what was read and its cursor
// continues the scan, carrying the nearest features found so far so the final ranking is whole.
import { z } from "zod";
import { ToolError } from "../../../errors.ts";
import { bboxAround, bboxesIntersect } from "../../../geo/bbox.ts";
import type { Bbox } from "../../../geo/bbox.ts";
import { COORDINATE_CONVENTION, formatLatLon, roundLatLon } from "../../../geo/coords.ts";
import { distanceToGeometryM, haversineM } from "../../../geo/distance.ts";
import type { Geometry, LatLon } from "../../../geo/geojson.ts";
import { attachGeometries } from "../../../geo/simplify.ts";
import { NORWAY_EXTENT, swappedPointHint } from "../../../geo/swap.ts";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import {
  fitToLimit,
  jsonText,
  page,
  pageSchema,
  responseFormatField,
  truncationNotice,
} from "../../../mcp/output.ts";
import { nextPageBudget } from "../_deadline.ts";
import {
  callOptions,
  COLLECTION_RE,
  collectionField,
  DATASET_RE,
  datasetField,
  featureOut,
  hasLocation,
  licenceOut,
  mapLimit,
  READ_ONLY,
  resolveDataset,
} from "../_common.ts";
import type { OgcToolDeps } from "../_common.ts";
import type { CallOptions } from "../client.ts";
import { decodeNearbyCursor, encodeNearbyCursor } from "../cursor.ts";
import { featureMarkdown, featureSchema, footer, formatDistance, licenceSchema } from "../format.ts";
import type { FeatureOut } from "../format.ts";
import { scanItems } from "../scan.ts";
import type { ScanResult } from "../scan.ts";

/** Nearest features a cursor carries to the next call. */
const CARRY = 100;

const nearbyOutput = z.object({
  center: z.object({ lat: z.number(), lon: z.number() }),
  radius_m: z.number(),
  dataset: z.string(),
  collection: z.string(),
  search_bbox: z.array(z.number()).describe("The box searched, [min_lon, min_lat, max_lon, max_lat]"),
  features: z.array(featureSchema.extend({
    distance_m: z.number().describe(
      "Great-circle distance from the center to the feature (0 inside it), metres",
    ),
  })),
  ...pageSchema.shape,
  total_is_exact: z.boolean().describe("False while the scan is incomplete: total is what was found so far"),
  scanned: z.number().int().describe(
    "Records read from the search box (this call and the earlier ones of a cursor)",
  ),
  scan_complete: z.boolean().describe(
    "False when the box was not read to its end: the ranking covers what was read; continue with next_cursor",
  ),
  without_location: z.number().int().describe("Records read with no usable location (left out)"),
  next_cursor: z.string().nullable().describe(
    "Continues the scan of the box (pass as cursor with the same lat and lon); null when the scan is complete",
  ),
  warnings: z.array(z.string()),
  source_url: z.string(),
  licence: licenceSchema,
  coordinate_convention: z.string(),
});

type Output = z.output<typeof nearbyOutput>;
type Ranked = { id: string | null; d: number; out: FeatureOut | null; geometry: Geometry | null };

/** The riksantikvaren-nearby tool. */
export function nearbyTool(deps: OgcToolDeps): ToolDefinition<z.ZodObject, typeof nearbyOutput> {
  const { settings } = deps;
  const input = z.strictObject({
    lat: z.number().min(-90).max(90).describe("Latitude of the center in WGS 84 degrees, e.g. 59.9075"),
    lon: z.number().min(-180).max(180).describe("Longitude of the center in WGS 84 degrees, e.g. 10.7637"),
    radius_m: z.number().min(10).max(settings.max_radius_m).default(500).describe(
      `Search radius in metres (10-${settings.max_radius_m})`,
    ),
    dataset: datasetField.optional(),
    collection: collectionField.default("lokaliteter").describe(
      'Collection to search: "lokaliteter" (protected sites, default), "enkeltminner", "brukerminner" (user-contributed memories), ...',
    ),
    limit: z.number().int().min(1).max(50).default(10).describe("Features to return, nearest first (1-50)"),
    offset: z.number().int().min(0).default(0).describe("Nearest features to skip (for the next page)"),
    cursor: z.string().min(1).max(16_000).optional().describe(
      "next_cursor of an earlier result with the same lat and lon: reads on where that scan stopped (its radius and collection apply)",
    ),
    include_geometry: z.boolean().default(false).describe(
      "Include GeoJSON geometries ([lon, lat]), simplified to fit",
    ),
    response_format: responseFormatField,
  });
  type Args = z.output<typeof input>;
  return {
    name: "riksantikvaren-nearby",
    title: "Riksantikvaren features near a point",
    description:
      "Finds cultural-heritage features (protected sites by default; brukerminner for user-contributed memories) within radius_m of a point given as lat and lon, sorted by true distance on the sphere (0 when the point is inside a site), with distances in metres. When the search box is too large to read in one call, the answer ranks what was read and next_cursor continues. " +
      COORDINATE_CONVENTION,
    input,
    output: nearbyOutput,
    annotations: { ...READ_ONLY, title: "Riksantikvaren features near a point" },
    async handler(args, ctx) {
      const a = args as Args;
      const call = callOptions(ctx);
      let center: LatLon = { lat: a.lat, lon: a.lon };
      let radius = a.radius_m;
      let dataset = resolveDataset(a.dataset, a.collection);
      let collection = a.collection;
      let start = 0;
      let readBefore = 0;
      let withoutBefore = 0;
      let carried: [string, number][] = [];
      if (a.cursor !== undefined) {
        const state = decodeNearbyCursor(a.cursor);
        if (!state || !DATASET_RE.test(state.dataset) || !COLLECTION_RE.test(state.collection)) {
          throw new ToolError("VALIDATION_ERROR", "The cursor is not one this tool issued", {
            field: "cursor",
            hint: "Pass next_cursor exactly as an earlier riksantikvaren-nearby result gave it",
          });
        }
        if (Math.abs(state.lat - a.lat) > 1e-9 || Math.abs(state.lon - a.lon) > 1e-9) {
          throw new ToolError(
            "VALIDATION_ERROR",
            `The cursor continues a search around lat ${state.lat}, lon ${state.lon}, not lat ${a.lat}, lon ${a.lon}`,
            { field: "cursor", hint: "Pass the same lat and lon as the call that gave the cursor" },
          );
        }
        center = { lat: state.lat, lon: state.lon };
        [radius, dataset, collection] = [state.radiusM, state.dataset, state.collection];
        [start, readBefore, withoutBefore, carried] = [
          state.position,
          state.read,
          state.withoutLocation,
          state.candidates,
        ];
      }
      const box = bboxAround(center, radius).map((v) => Math.round(v * 1e6) / 1e6) as Bbox;
      const warnings: string[] = [];
      let scan: ScanResult | null = null;
      if (bboxesIntersect(box, NORWAY_EXTENT)) {
        scan = await scanItems(
          deps,
          {
            dataset,
            collection,
            query: { bbox: box.join(",") },
            start,
            firstLimit: settings.scan_page_size,
            pageSize: settings.scan_page_size,
            want: Infinity,
            maxRecords: settings.max_scan,
            classify: (r) => hasLocation(r) ? "keep" : "none",
          },
          call,
          warnings,
        );
      } else {
        // Nothing of Riksantikvaren's lies there: say why instead of reading the upstream.
        warnings.push(
          swappedPointHint(center) ??
            `lat ${center.lat}, lon ${center.lon} is outside Norway, where this data is: nothing to search`,
        );
      }
      const complete = scan === null || scan.stop === "end";
      const ranked: Ranked[] = [];
      const seen = new Set<string>();
      for (const { record } of scan?.kept ?? []) {
        const out = featureOut(record, deps, dataset, collection, false);
        let d: number | null = null;
        if (record.geometry) d = distanceToGeometryM(center, record.geometry);
        else if (out.lat !== null && out.lon !== null) d = haversineM(center, { lat: out.lat, lon: out.lon });
        if (d === null || d > radius) continue;
        if (record.id !== null) seen.add(record.id);
        ranked.push({ id: record.id, d, out, geometry: record.geometry });
      }
      const foundHere = ranked.length;
      for (const [id, d] of carried) if (!seen.has(id)) ranked.push({ id, d, out: null, geometry: null });
      ranked.sort((x, y) => x.d - y.d || (x.out?.name ?? "").localeCompare(y.out?.name ?? ""));
      const total = ranked.length;
      const withoutLocation = withoutBefore + (scan?.passed["none"] ?? 0);
      const scanned = readBefore + (scan?.read ?? 0);
      const stopNote = scan ? incompleteNote(scan, scanned) : null;
      if (stopNote) warnings.push(stopNote);
      const slice = ranked.slice(a.offset, a.offset + a.limit);
      await fillCarried(deps, slice, dataset, collection, call, warnings);
      const features = slice.map((r) => ({ ...r.out!, distance_m: Math.round(r.d * 10) / 10 }));
      if (a.include_geometry) {
        attachGeometries(features, slice.map((r) => r.geometry), {
          format: a.response_format,
          characterLimit: ctx.limits.characterLimit,
          leftOutHint: "use riksantikvaren-feature",
        });
      }
      const next_cursor = complete ? null : encodeNearbyCursor({
        dataset,
        collection,
        lat: center.lat,
        lon: center.lon,
        radiusM: radius,
        position: scan!.next,
        read: scanned,
        withoutLocation,
        candidates: ranked.filter((r) => r.id !== null).slice(0, CARRY).map((r) => [r.id!, r.d]),
      });
      if (!complete && ranked.length > CARRY) {
        warnings.push(
          `Only the nearest ${CARRY} features found so far are carried on by the cursor; a later page past them may miss some`,
        );
      }
      const sourceUrl = scan?.sourceUrl ||
        deps.client.url(`${dataset}/collections/${collection}/items`, { bbox: box.join(","), f: "json" });
      const licence = licenceOut(scan?.licence ?? null, dataset, collection);
      const rendered = fitToLimit(features, ctx.limits.characterLimit - 600, ({ items, truncated }) => {
        const env = page(total, a.offset, items.length);
        const structured: Output = {
          center: roundLatLon(center),
          radius_m: radius,
          dataset,
          collection,
          search_bbox: box,
          features: items,
          ...env,
          total_is_exact: complete,
          scanned,
          scan_complete: complete,
          without_location: withoutLocation,
          next_cursor,
          warnings,
          source_url: sourceUrl,
          licence,
          coordinate_convention: COORDINATE_CONVENTION,
        };
        if (a.response_format === "json") return { text: jsonText(structured), structured };
        const lines = [
          `# ${collection} within ${formatDistance(radius)} of ${formatLatLon(center)}`,
          `${total} found${complete ? "" : " so far (scan incomplete)"}; showing ${
            items.length ? `${a.offset + 1}–${a.offset + items.length}` : "none"
          }, nearest first.`,
          "",
        ];
        items.forEach((f, i) => lines.push(featureMarkdown(f, a.offset + i + 1), ""));
        for (const w of warnings) lines.push(`Note: ${w}`);
        if (truncated) {
          lines.push(truncationNotice(items.length, total - a.offset, {
            nextOffset: env.next_offset,
            limit: ctx.limits.characterLimit,
          }));
        } else if (env.has_more) lines.push(`More: call again with offset=${env.next_offset}.`);
        if (next_cursor) {
          lines.push(
            `Read on: call again with the same lat and lon and cursor="${next_cursor}"; the scan continues where it stopped and ranks these ${
              foundHere ? "features " : ""
            }with the rest.`,
          );
        }
        lines.push("", footer(sourceUrl, licence));
        return { text: lines.join("\n").replace(/\n{3,}/g, "\n\n"), structured };
      });
      return { text: rendered.text, structured: rendered.structured };
    },
  };
}

/** What an incomplete scan read, and how to go on; null when there is nothing to add to the scan's own warnings. */
function incompleteNote(scan: ScanResult, scanned: number): string | null {
  const read = `${scanned.toLocaleString("en-US")} records of the search box`;
  switch (scan.stop) {
    case "deadline":
      return `Read ${read} before the server's time limit for one call; the ranking covers those. Continue with next_cursor`;
    case "max_records":
      return `Read ${read}, the most one call reads (max_scan); the ranking covers those. Continue with next_cursor`;
    case "failed":
      return `The ranking covers the ${read} read before a page failed; next_cursor asks for that page again`;
    default:
      return null;
  }
}

/**
 * Features carried by a cursor are known by id and distance only: the ones on this page are
 * fetched again for their details, as far as time allows; the others keep id and distance.
 */
async function fillCarried(
  deps: OgcToolDeps,
  slice: Ranked[],
  dataset: string,
  collection: string,
  call: CallOptions,
  warnings: string[],
): Promise<void> {
  let missed = 0;
  await mapLimit(slice.filter((r) => r.out === null), 4, async (r) => {
    const budget = nextPageBudget(deps.clock, deps.settings.deadline_margin_ms, deps.settings.timeout * 1000);
    if (budget.go) {
      try {
        const c = budget.timeoutMs === undefined ? call : { ...call, timeoutMs: budget.timeoutMs };
        const { feature } = await deps.client.feature({ dataset, collection, id: r.id! }, c);
        r.out = featureOut(feature, deps, dataset, collection, false);
        r.geometry = feature.geometry;
        return;
      } catch (e) {
        if (call.signal.aborted) throw e;
      }
    }
    missed++;
    r.out = {
      ...featureOut(
        { id: r.id, geometry: null, geometryUnreadable: false, properties: {} },
        deps,
        dataset,
        collection,
        false,
      ),
      geometry_note:
        "Found by an earlier call of this scan; its details could not be fetched now: use riksantikvaren-feature",
    };
  });
  if (missed > 0) warnings.push(`${missed} features found earlier are shown by id and distance only`);
}
