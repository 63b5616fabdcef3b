// Esri JSON, read defensively: errors that arrive with HTTP 200, geometries (to GeoJSON
// [lon, lat]) and attribute values (dates, "Null" strings).
import type { Geometry, Position } from "../../geo/geojson.ts";
import { pointInPolygon } from "../../geo/geojson.ts";

/** An ArcGIS REST error body: `{"error": {"code", "message", "details"}}`. */
export interface ArcgisErrorInfo {
  code: number | null;
  message: string;
  details: string[];
}

/** The error an ArcGIS body carries (often with HTTP 200), or null for a normal body. */
export function arcgisError(body: unknown): ArcgisErrorInfo | null {
  const root = asObject(body);
  const err = asObject(root?.["error"]);
  if (!err) return null;
  const code = typeof err["code"] === "number"
    ? err["code"]
    : Number.isFinite(Number(err["code"]))
    ? Number(err["code"])
    : null;
  const details = Array.isArray(err["details"])
    ? err["details"].filter((d): d is string => typeof d === "string" && d.trim() !== "")
    : [];
  const message = typeof err["message"] === "string" ? err["message"].trim() : "";
  return { code, message, details };
}

/** One sentence of an ArcGIS error: the message and the details, without repeats. */
export function describeArcgisError(e: ArcgisErrorInfo): string {
  const parts = [e.message, ...e.details.filter((d) => d !== e.message)].filter((p) => p !== "");
  return parts.length ? parts.join("; ").replace(/\.(;|$)/g, "$1") : "no details given";
}

/**
 * An Esri geometry (point, multipoint, polyline, polygon, envelope) as GeoJSON, or null when it
 * is missing or not in WGS 84 degrees (a server that ignored outSR=4326 sends metres).
 * Polygon rings are grouped by orientation (Esri: outer rings clockwise, holes
 * counter-clockwise) and written the GeoJSON way (outer counter-clockwise).
 */
export function esriToGeoJson(value: unknown, work: { visits: number } = { visits: 0 }): Geometry | null {
  const g = asObject(value);
  if (!g) return null;
  if ("x" in g) {
    const p = pos([g["x"], g["y"]]);
    return p ? { type: "Point", coordinates: p } : null;
  }
  if (Array.isArray(g["points"])) {
    const ps = positions(g["points"]);
    return ps && ps.length ? { type: "MultiPoint", coordinates: ps } : null;
  }
  if (Array.isArray(g["paths"])) {
    const paths = g["paths"].map(positions);
    if (paths.some((p) => !p || p.length < 2) || paths.length === 0) return null;
    const ls = paths as Position[][];
    return ls.length === 1
      ? { type: "LineString", coordinates: ls[0]! }
      : { type: "MultiLineString", coordinates: ls };
  }
  if (Array.isArray(g["rings"])) return ringsToGeoJson(g["rings"], work);
  if ("xmin" in g) {
    const [a, b] = [pos([g["xmin"], g["ymin"]]), pos([g["xmax"], g["ymax"]])];
    if (!a || !b) return null;
    return {
      type: "Polygon",
      coordinates: [[[a[0], a[1]], [b[0], a[1]], [b[0], b[1]], [a[0], b[1]], [a[0], a[1]]]],
    };
  }
  return null;
}

/**
 * Most vertex visits spent finding each hole's outer ring. Matching is holes times outer vertices
 * at worst (a ring of 500,000 vertices with 50,000 holes would take hours); past the budget, which
 * no real answer comes near, a hole goes to the first outer ring.
 */
export const HOLE_MATCH_VISITS = 2_000_000;

type Box = [number, number, number, number];

function boxOf(ring: readonly Position[]): Box {
  const b: Box = [Infinity, Infinity, -Infinity, -Infinity];
  for (const p of ring) {
    if (p[0] < b[0]) b[0] = p[0];
    if (p[1] < b[1]) b[1] = p[1];
    if (p[0] > b[2]) b[2] = p[0];
    if (p[1] > b[3]) b[3] = p[1];
  }
  return b;
}

function ringsToGeoJson(rawRings: unknown[], work: { visits: number }): Geometry | null {
  const rings: Position[][] = [];
  for (const r of rawRings) {
    const ps = positions(r);
    if (!ps || ps.length < 3) return null;
    const first = ps[0]!;
    const last = ps[ps.length - 1]!;
    if (first[0] !== last[0] || first[1] !== last[1]) ps.push([first[0], first[1]]);
    if (ps.length < 4) return null;
    rings.push(ps);
  }
  if (rings.length === 0) return null;
  const outers: Position[][][] = [];
  const boxes: Box[] = [];
  const holes: Position[][] = [];
  for (const r of rings) {
    work.visits += 2 * r.length;
    // Shoelace with y up: clockwise rings have negative area.
    if (signedArea(r) <= 0) {
      outers.push([r.slice().reverse()]);
      boxes.push(boxOf(r));
    } else holes.push(r.slice().reverse());
  }
  for (const h of holes) {
    const owner = work.visits < HOLE_MATCH_VISITS ? ownerOf(h[0]!, outers, boxes, work) : outers[0];
    if (owner) owner.push(h);
    else {
      // A lone counter-clockwise ring: treat as outer.
      outers.push([h.slice().reverse()]);
      boxes.push(boxOf(h));
    }
  }
  return outers.length === 1
    ? { type: "Polygon", coordinates: outers[0]! }
    : { type: "MultiPolygon", coordinates: outers };
}

/** The first outer ring around `p` (boxes first, then ray casting), counting the visits. */
function ownerOf(
  p: Position,
  outers: Position[][][],
  boxes: readonly Box[],
  work: { visits: number },
): Position[][] | undefined {
  for (let i = 0; i < outers.length; i++) {
    const b = boxes[i]!;
    work.visits++;
    if (p[0] < b[0] || p[0] > b[2] || p[1] < b[1] || p[1] > b[3]) continue;
    const outer = outers[i]!;
    work.visits += outer[0]!.length;
    if (pointInPolygon(p, [outer[0]!])) return outer;
    if (work.visits >= HOLE_MATCH_VISITS) return outers[0];
  }
  return undefined;
}

/** A field of a query or layer response. */
export interface EsriField {
  name: string;
  type: string | null;
  alias: string | null;
}

/** Reads `fields[]`. */
export function parseFields(value: unknown): EsriField[] {
  if (!Array.isArray(value)) return [];
  const out: EsriField[] = [];
  for (const f of value) {
    const o = asObject(f);
    if (typeof o?.["name"] !== "string") continue;
    out.push({
      name: o["name"],
      type: typeof o["type"] === "string" ? o["type"] : null,
      alias: typeof o["alias"] === "string" ? o["alias"] : null,
    });
  }
  return out;
}

/**
 * Attribute values made readable: date fields (epoch milliseconds) become ISO dates, and the
 * text "Null" that identify sends for empty formatted values becomes null.
 */
export function normalizeAttributes(
  attributes: unknown,
  fields: readonly EsriField[],
): Record<string, unknown> {
  const attrs = asObject(attributes) ?? {};
  const dateFields = new Set(
    fields.filter((f) => f.type === "esriFieldTypeDate").flatMap((f) => [f.name, f.alias ?? f.name]),
  );
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(attrs)) {
    if (v === "Null" || v === "<Null>") out[k] = null;
    else if (dateFields.has(k) && typeof v === "number" && Number.isFinite(v)) {
      out[k] = new Date(v).toISOString().slice(0, 10);
    } else out[k] = v;
  }
  return out;
}

/** The object id of a feature: the OID field's value, or OBJECTID/FID in any case. */
export function objectId(attrs: Record<string, unknown>, fields: readonly EsriField[]): string | null {
  const oid = fields.find((f) => f.type === "esriFieldTypeOID")?.name;
  const key = oid ?? Object.keys(attrs).find((k) => /^(objectid|fid|oid)$/i.test(k));
  const v = key === undefined ? undefined : attrs[key];
  return typeof v === "number" || (typeof v === "string" && v !== "") ? String(v) : null;
}

function signedArea(ring: readonly Position[]): number {
  let sum = 0;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    sum += ring[j]![0] * ring[i]![1] - ring[i]![0] * ring[j]![1];
  }
  return sum / 2;
}

function pos(v: unknown): Position | undefined {
  if (!Array.isArray(v) || v.length < 2) return undefined;
  const x: unknown = v[0];
  const y: unknown = v[1];
  if (typeof x !== "number" || typeof y !== "number" || !Number.isFinite(x) || !Number.isFinite(y)) {
    return undefined;
  }
  if (Math.abs(x) > 180 || Math.abs(y) > 90) return undefined;
  return [x, y];
}

function positions(v: unknown): Position[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: Position[] = [];
  for (const p of v) {
    const q = pos(p);
    if (!q) return undefined;
    out.push(q);
  }
  return out;
}

/** The value as a plain object, or undefined. */
export function asObject(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : undefined;
}

/** Esri wants outer rings clockwise; a GeoJSON-style (counter-clockwise) ring is reversed. */
export function esriRing(positions: Position[]): Position[] {
  const ring = positions.slice();
  const first = ring[0]!;
  const last = ring[ring.length - 1]!;
  if (first[0] !== last[0] || first[1] !== last[1]) ring.push([first[0], first[1]]);
  let area = 0;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    area += ring[j]![0] * ring[i]![1] - ring[i]![0] * ring[j]![1];
  }
  return area > 0 ? ring.reverse() : ring;
}
