// A geometry in a few words, for answers that name a place without spending tokens on its
// coordinates: its type, parts, vertex count, bounding box, and its area (polygons) or length
// (lines). Linear in the vertices; the measures are good to a few percent at the scale of a
// heritage site or a town (an equirectangular projection about each ring's own latitude).
import { countVertices, geometryBbox } from "./geojson.ts";
import { haversineM } from "./distance.ts";
import { formatBbox } from "./bbox.ts";
import type { Geometry, Position } from "./types.ts";

/** Metres per degree of latitude (and of longitude at the equator) on the WGS 84 mean sphere. */
const M_PER_DEGREE = 111_195;

/** What {@linkcode geometrySummary} measures. */
export interface GeometryFacts {
  type: Geometry["type"];
  /** Polygons, lines or points it is made of (1 for a single one). */
  parts: number;
  vertices: number;
  bbox: [number, number, number, number] | null;
  /** Polygons: square metres, holes subtracted. */
  areaM2?: number;
  /** Lines: metres along them. */
  lengthM?: number;
}

/** The facts of `geometry`: type, parts, vertices, bounding box, area or length. */
export function geometryFacts(geometry: Geometry): GeometryFacts {
  const base = { type: geometry.type, vertices: countVertices(geometry), bbox: geometryBbox(geometry) };
  switch (geometry.type) {
    case "Polygon":
      return { ...base, parts: 1, areaM2: polygonArea(geometry.coordinates) };
    case "MultiPolygon":
      return {
        ...base,
        parts: geometry.coordinates.length,
        areaM2: geometry.coordinates.reduce((sum, p) => sum + polygonArea(p), 0),
      };
    case "LineString":
      return { ...base, parts: 1, lengthM: lineLength(geometry.coordinates) };
    case "MultiLineString":
      return {
        ...base,
        parts: geometry.coordinates.length,
        lengthM: geometry.coordinates.reduce((sum, l) => sum + lineLength(l), 0),
      };
    case "MultiPoint":
      return { ...base, parts: geometry.coordinates.length };
    case "GeometryCollection":
      return { ...base, parts: geometry.geometries.length };
    default:
      return { ...base, parts: 1 };
  }
}

/**
 * One line for an answer's text: "MultiPolygon, 1 part, 6 vertices, about 3,100 m², bbox
 * [10.76509, 59.90393, 10.76634, 59.90462]".
 */
export function geometrySummary(geometry: Geometry): string {
  const f = geometryFacts(geometry);
  const words: string[] = [f.type];
  if (f.type !== "Point") {
    if (f.parts !== 1 || f.type.startsWith("Multi")) words.push(`${f.parts} part${f.parts === 1 ? "" : "s"}`);
    words.push(`${f.vertices.toLocaleString("en-US")} vertices`);
  }
  if (f.areaM2 !== undefined) words.push(`about ${formatArea(f.areaM2)}`);
  if (f.lengthM !== undefined) words.push(`about ${formatLength(f.lengthM)} long`);
  if (f.bbox && f.type !== "Point") words.push(`bbox ${formatBbox(f.bbox)}`);
  return words.join(", ");
}

/** Square metres below 100,000, hectares below 10 km², else km²; two significant figures. */
export function formatArea(m2: number): string {
  const round = (x: number) => Number(x.toPrecision(2)).toLocaleString("en-US");
  if (m2 < 100_000) return `${round(m2)} m²`;
  if (m2 < 10_000_000) return `${round(m2 / 10_000)} ha`;
  return `${round(m2 / 1_000_000)} km²`;
}

function formatLength(m: number): string {
  const round = (x: number) => Number(x.toPrecision(2)).toLocaleString("en-US");
  return m < 1000 ? `${round(m)} m` : `${round(m / 1000)} km`;
}

/** The area of a polygon's outer ring less its holes, in square metres. */
function polygonArea(rings: readonly Position[][]): number {
  const [outer, ...holes] = rings;
  if (!outer) return 0;
  return Math.max(0, ringArea(outer) - holes.reduce((sum, h) => sum + ringArea(h), 0));
}

/** The shoelace area of one ring, projected about its first latitude (square metres, unsigned). */
function ringArea(ring: readonly Position[]): number {
  if (ring.length < 3) return 0;
  const lat0 = ring[0]![1];
  const kx = M_PER_DEGREE * Math.cos((lat0 * Math.PI) / 180);
  let twice = 0;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    twice += (xj * kx) * (yi * M_PER_DEGREE) - (xi * kx) * (yj * M_PER_DEGREE);
  }
  return Math.abs(twice) / 2;
}

function lineLength(line: readonly Position[]): number {
  let sum = 0;
  for (let i = 1; i < line.length; i++) {
    const [lon0, lat0] = line[i - 1]!;
    const [lon1, lat1] = line[i]!;
    sum += haversineM({ lat: lat0, lon: lon0 }, { lat: lat1, lon: lon1 });
  }
  return sum;
}
