// Coordinates typed as a search query ("59.91N 10.75E", "59.91, 10.75", "N 59.91 E 10.75",
// "59.91° N, 10.75° E"), so a search can answer with the places nearby instead of a name match.

/** A point in WGS 84 degrees. */
export interface LatLon {
  lat: number;
  lon: number;
}

const NUM = String.raw`([+-]?\d{1,3}(?:[.,]\d+)?)\s*°?`;
/** "59.91N 10.75E" and "59.91 N, 10.75 W". */
const SUFFIXED = new RegExp(String.raw`^${NUM}\s*([NS])[\s,;]+${NUM}\s*([EWØOV])$`, "i");
/** "N59.91 E10.75". */
const PREFIXED = new RegExp(String.raw`^([NS])\s*${NUM}[\s,;]+([EWØOV])\s*${NUM}$`, "i");
/** "59.91, 10.75" (latitude first, as maps show it). */
const PLAIN = /^([+-]?\d{1,2}\.\d+)\s*[,;\s]\s*([+-]?\d{1,3}\.\d+)$/;

function num(text: string): number {
  return Number(text.replace(",", "."));
}

function sign(value: number, hemisphere: string, negative: string): number {
  return hemisphere.toUpperCase() === negative ? -Math.abs(value) : value;
}

/** The point `query` names, when it is nothing but a coordinate pair within range; else undefined. */
export function parseCoordinates(query: string): LatLon | undefined {
  const q = query.trim();
  let point: LatLon | undefined;
  let m = SUFFIXED.exec(q);
  if (m) point = { lat: sign(num(m[1]!), m[2]!, "S"), lon: sign(num(m[3]!), m[4]!, "W") };
  m = point ? null : PREFIXED.exec(q);
  if (m) point = { lat: sign(num(m[2]!), m[1]!, "S"), lon: sign(num(m[4]!), m[3]!, "W") };
  m = point ? null : PLAIN.exec(q);
  if (m) point = { lat: num(m[1]!), lon: num(m[2]!) };
  if (!point || !Number.isFinite(point.lat) || !Number.isFinite(point.lon)) return undefined;
  if (Math.abs(point.lat) > 90 || Math.abs(point.lon) > 180) return undefined;
  return point;
}
