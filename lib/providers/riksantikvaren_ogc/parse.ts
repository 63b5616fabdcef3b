// Readers of api.ra.no's JSON (ldproxy, OGC API Features Part 1; real bodies are in
// tests/fixtures/ra_ogc/). A body whose root is not what the resource always sends (`null`, an
// array, a string, an object without the list) is a DECODE_ERROR, never an empty answer; inside
// a good root, each reader ignores what it does not know and skips unusable list entries.
import { ToolError } from "../../errors.ts";
import type { Bbox } from "../../geo/bbox.ts";
import { parseGeometry } from "../../geo/geojson.ts";
import type { Geometry } from "../../geo/geojson.ts";

/** A `links[]` entry. */
export interface OgcLink {
  href: string;
  rel: string;
  type: string | null;
  title: string | null;
}

/** One API (dataset) of the catalog at the root of api.ra.no. */
export interface DatasetEntry {
  id: string;
  title: string | null;
  description: string | null;
}

/** One collection of a dataset. */
export interface CollectionEntry {
  id: string;
  title: string | null;
  description: string | null;
  item_type: string | null;
  /** `[min_lon, min_lat, max_lon, max_lat]` of the spatial extent, when given in CRS84. */
  bbox: Bbox | null;
  licence: Licence | null;
}

/** A licence named by the data. */
export interface Licence {
  name: string;
  url: string | null;
}

/** One feature, as read. */
export interface RawFeature {
  id: string | null;
  geometry: Geometry | null;
  /** Whether the body had a non-null geometry that could not be read (e.g. not CRS84). */
  geometryUnreadable: boolean;
  properties: Record<string, unknown>;
}

/** A page of features. */
export interface FeaturePage {
  features: RawFeature[];
  numberMatched: number | null;
  numberReturned: number | null;
  /** The `next` link's href, as sent (not yet trusted). */
  next: string | null;
  licence: Licence | null;
}

/** Reads the root catalog (`{"apis": [...]}`); ids come from `id` or the landing page URL. */
export function parseCatalog(body: unknown, baseUrl: string): DatasetEntry[] {
  const apis = listIn(body, "apis", "the dataset catalog");
  const out: DatasetEntry[] = [];
  const seen = new Set<string>();
  for (const entry of apis) {
    const api = asObject(entry);
    if (!api) continue;
    const id = str(api["id"]) ??
      idFromUrl(str(api["landingPageUri"]) ?? str(api["url"]) ?? selfHref(api), baseUrl);
    if (!id || seen.has(id)) continue;
    seen.add(id);
    out.push({ id, title: str(api["title"]) ?? str(api["label"]), description: str(api["description"]) });
  }
  return out;
}

/** Reads `/{dataset}/collections`. */
export function parseCollections(body: unknown): { collections: CollectionEntry[]; licence: Licence | null } {
  const list = listIn(body, "collections", "a list of collections");
  const root = asObject(body);
  const collections: CollectionEntry[] = [];
  for (const entry of list) {
    const c = asObject(entry);
    const id = str(c?.["id"]) ?? str(c?.["name"]);
    if (!c || !id) continue;
    collections.push({
      id,
      title: str(c["title"]),
      description: str(c["description"]),
      item_type: str(c["itemType"]),
      bbox: extentBbox(c["extent"]),
      licence: licenceFrom(c),
    });
  }
  return { collections, licence: licenceFrom(root) };
}

/** Reads a FeatureCollection page; a feature that is not a GeoJSON Feature is a DECODE_ERROR. */
export function parseFeaturePage(body: unknown): FeaturePage {
  const list = listIn(body, "features", "a feature collection");
  const root = asObject(body);
  const features = list.map((entry, i) => {
    const f = parseFeature(entry);
    if (!f) throw decodeError(`a feature collection whose feature ${i + 1} is ${describe(entry)}`);
    return f;
  });
  const links = parseLinks(root?.["links"]);
  return {
    features,
    numberMatched: count(root?.["numberMatched"]),
    numberReturned: count(root?.["numberReturned"]),
    next: links.find((l) => l.rel === "next")?.href ?? null,
    licence: licenceFrom(root),
  };
}

/** Reads one Feature; null when the value is not a GeoJSON Feature object. */
export function parseFeature(value: unknown): RawFeature | null {
  const f = asObject(value);
  if (!f || !(f["type"] === "Feature" || ("properties" in f && "geometry" in f))) return null;
  const properties = asObject(f["properties"]) ?? {};
  const rawId = f["id"] ?? properties["id"] ?? properties["kulturminneId"] ?? properties["lokalId"];
  const id = typeof rawId === "number" && Number.isFinite(rawId) ? String(rawId) : str(rawId);
  const rawGeometry = f["geometry"] ?? null;
  const geometry = parseGeometry(rawGeometry);
  return { id, geometry, geometryUnreadable: rawGeometry !== null && geometry === null, properties };
}

/** Reads `links[]`, keeping entries with a string `href`. */
export function parseLinks(value: unknown): OgcLink[] {
  if (!Array.isArray(value)) return [];
  const out: OgcLink[] = [];
  for (const entry of value) {
    const l = asObject(entry);
    const href = str(l?.["href"]);
    if (!l || !href) continue;
    out.push({ href, rel: str(l["rel"]) ?? "", type: str(l["type"]), title: str(l["title"]) });
  }
  return out;
}

/** A licence from a `license` link or ldproxy's `license`/`licenseName` keys. */
export function licenceFrom(value: Record<string, unknown> | undefined): Licence | null {
  if (!value) return null;
  const link = parseLinks(value["links"]).find((l) => l.rel === "license");
  if (link) return { name: link.title ?? link.href, url: link.href };
  const name = str(value["license"]) ?? str(value["licenseName"]);
  return name ? { name, url: str(value["licenseUrl"]) } : null;
}

function extentBbox(extent: unknown): Bbox | null {
  const spatial = asObject(asObject(extent)?.["spatial"]);
  const boxes = spatial?.["bbox"];
  const first = Array.isArray(boxes) && Array.isArray(boxes[0]) ? boxes[0] : boxes;
  if (!Array.isArray(first) || (first.length !== 4 && first.length !== 6)) return null;
  if (!first.every((n) => typeof n === "number" && Number.isFinite(n))) return null;
  const n = first as number[];
  const b: Bbox = n.length === 6 ? [n[0]!, n[1]!, n[3]!, n[4]!] : [n[0]!, n[1]!, n[2]!, n[3]!];
  const inRange = Math.abs(b[0]) <= 180 && Math.abs(b[2]) <= 180 && Math.abs(b[1]) <= 90 &&
    Math.abs(b[3]) <= 90;
  return inRange ? b : null;
}

function idFromUrl(url: string | null, baseUrl: string): string | null {
  if (!url) return null;
  try {
    const u = new URL(url, baseUrl);
    const basePath = new URL(baseUrl).pathname.replace(/\/+$/, "");
    let path = u.pathname.replace(/\/+$/, "");
    if (basePath && path.startsWith(`${basePath}/`)) path = path.slice(basePath.length);
    const id = path.replace(/^\/+/, "");
    return id ? decodeURIComponent(id) : null;
  } catch {
    return null;
  }
}

function selfHref(o: Record<string, unknown>): string | null {
  const links = parseLinks(o["links"]);
  return (links.find((l) => l.rel === "self") ?? links.find((l) => l.rel === "service") ?? links[0])?.href ??
    null;
}

/** The array under `key` of an object body, or a DECODE_ERROR naming what came instead. */
function listIn(body: unknown, key: string, expected: string): unknown[] {
  const root = asObject(body);
  const list = root?.[key];
  if (Array.isArray(list)) return list;
  const got = root
    ? (key in root ? `an object whose "${key}" is ${describe(list)}` : `an object without "${key}"`)
    : describe(body);
  throw decodeError(`${expected}: it sent ${got}`, true);
}

function decodeError(what: string, expectedPrefix = false): ToolError {
  return new ToolError(
    "DECODE_ERROR",
    expectedPrefix ? `api.ra.no did not answer with ${what}` : `api.ra.no answered with ${what}`,
    { hint: "The upstream sent a body of the wrong shape; try again later, or report it if it persists" },
  );
}

/** `null`, `an array`, `a string`, ... for messages. */
export function describe(v: unknown): string {
  if (v === null) return "null";
  if (v === undefined) return "nothing";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  return `a ${typeof v}`;
}

function count(v: unknown): number | null {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : null;
}

/** A trimmed non-empty string, or null. */
export function str(v: unknown): string | null {
  if (typeof v !== "string") return null;
  const t = v.trim();
  return t === "" ? null : t;
}

/** The value as a plain object, or undefined. */
export function asObject(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : undefined;
}
