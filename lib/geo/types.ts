// The shapes every geo module shares, in one module of their own so the modules that compute
// with them (bbox.ts, distance.ts, geojson.ts) import each other in one direction only.

/** A GeoJSON position: `[lon, lat]` (an optional third value is dropped). */
export type Position = [number, number];

/** A GeoJSON geometry (RFC 7946), positions `[lon, lat]`. */
export type Geometry =
  | { type: "Point"; coordinates: Position }
  | { type: "MultiPoint"; coordinates: Position[] }
  | { type: "LineString"; coordinates: Position[] }
  | { type: "MultiLineString"; coordinates: Position[][] }
  | { type: "Polygon"; coordinates: Position[][] }
  | { type: "MultiPolygon"; coordinates: Position[][][] }
  | { type: "GeometryCollection"; geometries: Geometry[] };

/** A point given by name, so the order can never be mixed up. */
export interface LatLon {
  lat: number;
  lon: number;
}

/** `[min_lon, min_lat, max_lon, max_lat]` in degrees (WGS 84 / CRS84). */
export type Bbox = [number, number, number, number];
