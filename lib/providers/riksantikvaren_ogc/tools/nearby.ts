// riksantikvaren-nearby: features within a radius of a point, ranked by true distance. The box
// around the circle is scanned in pages of the service's size (1,000): api.ra.no adds every
// record without a geometry to a bbox answer, so a complete ranking reads all of them. When the
// call's time or the record cap runs out first, the answer ranks what was read and its cursor
// continues the scan, carrying the nearest features found so far so the final ranking is whole.
import { ogcPlacesView } from "../view.ts";
import { z } from "zod";
import { ToolError } from "../../../errors.ts";
import { bboxAround, bboxesIntersect } from "../../../geo/bbox.ts";
import type { Bbox } from "../../../geo/bbox.ts";
import { COORDINATE_CONVENTION, formatLatLon, roundLatLon } from "../../../geo/latlon.ts";
import { distanceToGeometryM, haversineM } from "../../../geo/distance.ts";
import type { LatLon } from "../../../geo/geojson.ts";
import { attachGeometries } from "../../../geo/simplify.ts";
import { NORWAY_EXTENT, swappedPointHint } from "../../../geo/swap.ts";
import type { ToolCallContext, ToolDefinition, ToolOutput } from "../../../mcp/provider.ts";
import { fitToLimit, jsonText, page, truncationNotice } from "../../../mcp/shaping.ts";
import { nextPageBudget } from "../../../http/deadline.ts";
import { mapLimit } from "../../../http/map_limit.ts";
import {
  callOptions,
  COLLECTION_RE,
  collectionField,
  DATASET_RE,
  datasetField,
  featureOut,
  hasLocation,
  licenceOut,
  READ_ONLY,
  resolveDataset,
  TOOLSET,
} from "../_common.ts";
import { fileSchema, formatField, orDefault, outputField, withFile } from "../../../output/result_files.ts";
import type { FileOut } from "../../../output/result_files.ts";
import type { OgcToolDeps } from "../_common.ts";
import type { CallOptions } from "../client.ts";
import { decodeNearbyCursor, encodeNearbyCursor } from "../cursor.ts";
import { featureMarkdown, featureSchema, footer, formatDistance, licenceSchema } from "../format.ts";
import type { FeatureOut, LicenceOut } from "../format.ts";
import { scanItems } from "../scan.ts";
import { nearbyFile } from "../nearby_file.ts";
import type { Ranked } from "../nearby_file.ts";
import type { ScanResult } from "../scan.ts";

/** Nearest features a cursor carries to the next call. */
const CARRY = 100;

const nearbyOutput = z.looseObject({
  features: z.array(featureSchema.extend({ distance_m: z.number() })),
  total: z.number(),
  has_more: z.boolean(),
  next_offset: z.number().nullable(),
  next_cursor: z.string().nullable(),
  licence: licenceSchema,
  file: fileSchema.optional(),
});

/** Everything a nearby answer carries (the output schema declares the main fields only). */
type Output = {
  center: { lat: number; lon: number };
  radius_m: number;
  dataset: string;
  collection: string;
  /** The box searched, [min_lon, min_lat, max_lon, max_lat]. */
  search_bbox: number[];
  /** Great-circle distance from the center to each feature (0 inside it), metres. */
  features: (FeatureOut & { distance_m: number })[];
  total: number;
  count: number;
  offset: number;
  has_more: boolean;
  next_offset: number | null;
  /** False while the scan is incomplete: total is what was found so far. */
  total_is_exact: boolean;
  /** Records read from the search box (this call and the earlier ones of a cursor). */
  scanned: number;
  scan_complete: boolean;
  without_location: number;
  /** Continues the scan of the box (pass as cursor with the same lat and lon); null when complete. */
  next_cursor: string | null;
  warnings: string[];
  source_url: string;
  licence: LicenceOut;
  coordinate_convention: string;
  file?: FileOut;
};

/** The riksantikvaren-nearby tool. */
export function nearbyTool(deps: OgcToolDeps): ToolDefinition<z.ZodType, typeof nearbyOutput> {
  const input = nearbyInput(deps.settings);
  return {
    name: "riksantikvaren-nearby",
    title: "Riksantikvaren nearby",
    toolset: TOOLSET,
    description:
      "Cultural-heritage features within radius_m of a point, nearest first, with distances in metres. An unfinished scan ranks what it read; next_cursor goes on.",
    input,
    output: nearbyOutput,
    view: ogcPlacesView,
    annotations: READ_ONLY,
    handler(args, ctx) {
      return answerNearby(args as NearbyArgs, ctx, deps);
    },
  };
}

/** The tool's arguments, with the radius the settings allow. */
function nearbyInput(settings: OgcToolDeps["settings"]) {
  return z.strictObject({
    lat: z.number().refine((v) => v >= -90 && v <= 90, "must be between -90 and 90").describe(
      "Latitude (WGS 84)",
    ),
    lon: z.number().refine((v) => v >= -180 && v <= 180, "must be between -180 and 180").describe(
      "Longitude (WGS 84)",
    ),
    radius_m: orDefault(z.number().min(10).max(settings.max_radius_m), 500).describe(
      "Radius in metres (default 500)",
    ),
    dataset: datasetField.optional(),
    collection: orDefault(collectionField, "lokaliteter").describe(
      'Default "lokaliteter" (protected sites); "brukerminner" for user memories',
    ),
    limit: orDefault(z.int().min(1).max(50), 10).describe("Features, nearest first (default 10)"),
    offset: orDefault(z.int().min(0).max(100_000), 0).describe("Features to skip (next_offset)"),
    cursor: z.string().refine((c) => c.length >= 1 && c.length <= 16_000, "not a cursor of this tool")
      .optional()
      .describe("next_cursor of an earlier answer for the same point"),
    include_geometry: orDefault(z.boolean(), false).describe("Include GeoJSON geometries (default false)"),
    response_format: formatField,
    output: outputField("all features found"),
  });
}

type NearbyArgs = z.output<ReturnType<typeof nearbyInput>>;

/**
 * One nearby search: the box around the circle scanned (from where a cursor left off), what it
 * found ranked by true distance with what the cursor carried, one page of it shown, and a
 * cursor while the scan is incomplete.
 */
async function answerNearby(
  a: NearbyArgs,
  ctx: ToolCallContext,
  deps: OgcToolDeps,
): Promise<ToolOutput<z.output<typeof nearbyOutput>>> {
  const { settings } = deps;
  const call = callOptions(ctx);
  const search = searchOf(a);
  const { center, radius, dataset, collection } = search;
  const box = bboxAround(center, radius).map((v) => Math.round(v * 1e6) / 1e6) as Bbox;
  const warnings: string[] = [];
  const scan = await scanBox(deps, search, { box, call, warnings });
  const complete = scan === null || scan.stop === "end";
  const { ranked, foundHere } = rankFound(deps, scan, search);
  const total = ranked.length;
  const withoutLocation = search.withoutBefore + (scan?.passed["none"] ?? 0);
  const scanned = search.readBefore + (scan?.read ?? 0);
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
  const file = a.output === "file"
    ? await nearbyFile(ranked, {
      center,
      radius,
      dataset,
      collection,
      next_cursor,
      sourceUrl,
      licence,
      a,
      cap: settings.file_max_features,
    }, ctx)
    : null;
  const rendered = renderNearby(features, {
    a,
    search,
    box,
    total,
    complete,
    scanned,
    withoutLocation,
    foundHere,
    next_cursor,
    warnings,
    sourceUrl,
    licence,
    fileLine: file?.line ?? null,
  }, ctx);
  const wider = Math.min(radius * 4, settings.max_radius_m);
  const next = total === 0 && !next_cursor && wider > radius
    ? [{
      tool: "riksantikvaren-nearby",
      arguments: { lat: a.lat, lon: a.lon, radius_m: wider, collection, limit: a.limit },
      for: "a wider radius",
    }]
    : [];
  return { ...withFile({ text: rendered.text, structured: rendered.structured }, file), next };
}

/** Where a search stands: fresh from the arguments, or where the cursor's scan left off. */
interface NearbySearch {
  center: LatLon;
  radius: number;
  dataset: string;
  collection: string;
  /** The scan's next record. */
  start: number;
  /** Records the earlier calls of the scan read. */
  readBefore: number;
  /** Records without a location the earlier calls passed. */
  withoutBefore: number;
  /** The nearest features found so far, by id and distance. */
  carried: [string, number][];
}

/** The search the arguments ask for: a new one, or the cursor's (for the same point only). */
function searchOf(a: NearbyArgs): NearbySearch {
  const search: NearbySearch = {
    center: { lat: a.lat, lon: a.lon },
    radius: a.radius_m,
    dataset: resolveDataset(a.dataset, a.collection),
    collection: a.collection,
    start: 0,
    readBefore: 0,
    withoutBefore: 0,
    carried: [],
  };
  if (a.cursor === undefined) return search;
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
  return {
    center: { lat: state.lat, lon: state.lon },
    radius: state.radiusM,
    dataset: state.dataset,
    collection: state.collection,
    start: state.position,
    readBefore: state.read,
    withoutBefore: state.withoutLocation,
    carried: state.candidates,
  };
}

/** Scans the box for records with a location; a box outside Norway is not read (null), and a warning says why. */
async function scanBox(
  deps: OgcToolDeps,
  search: NearbySearch,
  scope: { box: Bbox; call: CallOptions; warnings: string[] },
): Promise<ScanResult | null> {
  const { settings } = deps;
  const { box, warnings } = scope;
  if (bboxesIntersect(box, NORWAY_EXTENT)) {
    return await scanItems(
      deps,
      {
        dataset: search.dataset,
        collection: search.collection,
        query: { bbox: box.join(",") },
        start: search.start,
        firstLimit: settings.scan_page_size,
        pageSize: settings.scan_page_size,
        want: Infinity,
        maxRecords: settings.max_scan,
        classify: (r) => hasLocation(r) ? "keep" : "none",
      },
      scope.call,
      warnings,
    );
  }
  // Nothing of Riksantikvaren's lies there: say why instead of reading the upstream.
  warnings.push(
    swappedPointHint(search.center) ??
      `lat ${search.center.lat}, lon ${search.center.lon} is outside Norway, where this data is: nothing to search`,
  );
  return null;
}

/** The features within the radius, nearest first: those the scan found, then those carried and not found again. */
function rankFound(
  deps: OgcToolDeps,
  scan: ScanResult | null,
  search: NearbySearch,
): { ranked: Ranked[]; foundHere: number } {
  const { center, radius, dataset, collection } = search;
  const ranked: Ranked[] = [];
  const seen = new Set<string>();
  for (const { record } of scan?.kept ?? []) {
    const out = featureOut(record, deps, dataset, collection, false);
    let d: number | null = null;
    if (record.geometry) d = distanceToGeometryM(center, record.geometry);
    else if (out.lat !== null && out.lon !== null) d = haversineM(center, { lat: out.lat, lon: out.lon });
    if (d === null || d > radius) continue;
    if (record.id !== null) seen.add(record.id);
    ranked.push({ id: record.id, d, out, geometry: record.geometry, record });
  }
  const foundHere = ranked.length;
  for (const [id, d] of search.carried) if (!seen.has(id)) ranked.push({ id, d, out: null, geometry: null });
  ranked.sort((x, y) => x.d - y.d || (x.out?.name ?? "").localeCompare(y.out?.name ?? ""));
  return { ranked, foundHere };
}

/** What a nearby answer says beyond its features. */
interface NearbyFacts {
  a: NearbyArgs;
  search: NearbySearch;
  box: Bbox;
  total: number;
  complete: boolean;
  scanned: number;
  withoutLocation: number;
  /** Features this call's scan found (the rest were carried by the cursor). */
  foundHere: number;
  next_cursor: string | null;
  warnings: string[];
  sourceUrl: string;
  licence: LicenceOut;
  /** The file's sentence, when the features went to a file too. */
  fileLine: string | null;
}

/** The page of features shown, as many as fit the limit, in markdown or JSON. */
function renderNearby(
  features: (FeatureOut & { distance_m: number })[],
  facts: NearbyFacts,
  ctx: ToolCallContext,
) {
  const { a, box, total, complete, scanned, withoutLocation, foundHere, next_cursor, warnings } = facts;
  const { center, radius, dataset, collection } = facts.search;
  const { sourceUrl, licence } = facts;
  const room = ctx.limits.characterLimit - 600 - (facts.fileLine !== null ? 2 * facts.fileLine.length : 0);
  return fitToLimit(features, room, ({ items, truncated }) => {
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
    const budget = nextPageBudget(deps.clock.now(), deps.settings);
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
