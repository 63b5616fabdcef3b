// Opaque continuation cursors. A cursor carries the dataset, the collection and the upstream
// query and offset to resume at, never a host: the URL fetched with it is always built on the
// configured base_url, so neither a model nor an upstream can point a cursor at another machine.
import { z } from "zod";

const PREFIX = "ra1.";
const NEARBY_PREFIX = "rn1.";

/** What a riksantikvaren-features cursor holds. */
export interface CursorState {
  dataset: string;
  collection: string;
  /** The upstream query to resume with (including its `offset`), without `?`. */
  query: string;
  /** Offset of the first listed feature of the page it fetches. */
  offset: number;
  /** Features of a bbox listing still to pass over before listing (an offset not yet reached). */
  skip?: number;
}

const stateSchema = z.strictObject({
  d: z.string().min(1).max(200),
  c: z.string().min(1).max(200),
  q: z.string().max(4000),
  o: z.number().int().min(0),
  s: z.number().int().min(0).optional(),
});

/** Encodes a riksantikvaren-features cursor. */
export function encodeCursor(state: CursorState): string {
  const value = { d: state.dataset, c: state.collection, q: state.query, o: state.offset };
  return encode(PREFIX, state.skip ? { ...value, s: state.skip } : value);
}

/** Decodes a riksantikvaren-features cursor, or returns undefined when it is not one this server issued. */
export function decodeCursor(cursor: string): CursorState | undefined {
  const s = decode(PREFIX, cursor, stateSchema);
  if (!s) return undefined;
  const state: CursorState = { dataset: s.d, collection: s.c, query: s.q, offset: s.o };
  if (s.s) state.skip = s.s;
  return state;
}

/** What a riksantikvaren-nearby cursor holds: the search, where the scan stopped, and the best so far. */
export interface NearbyCursorState {
  dataset: string;
  collection: string;
  lat: number;
  lon: number;
  radiusM: number;
  /** Upstream offset to scan on from. */
  position: number;
  /** Records read by the earlier calls. */
  read: number;
  /** Records without a usable location among them. */
  withoutLocation: number;
  /** The nearest features found so far within the radius: id and distance in metres. */
  candidates: [string, number][];
}

const nearbySchema = z.strictObject({
  d: z.string().min(1).max(200),
  c: z.string().min(1).max(200),
  la: z.number().min(-90).max(90),
  lo: z.number().min(-180).max(180),
  r: z.number().positive().max(1_000_000),
  p: z.number().int().min(0),
  s: z.number().int().min(0),
  w: z.number().int().min(0),
  k: z.array(z.tuple([z.string().min(1).max(200), z.number().min(0)])).max(200),
});

/** Encodes a riksantikvaren-nearby cursor. */
export function encodeNearbyCursor(state: NearbyCursorState): string {
  return encode(NEARBY_PREFIX, {
    d: state.dataset,
    c: state.collection,
    la: state.lat,
    lo: state.lon,
    r: state.radiusM,
    p: state.position,
    s: state.read,
    w: state.withoutLocation,
    k: state.candidates,
  });
}

/** Decodes a riksantikvaren-nearby cursor, or returns undefined when it is not one this server issued. */
export function decodeNearbyCursor(cursor: string): NearbyCursorState | undefined {
  const s = decode(NEARBY_PREFIX, cursor, nearbySchema);
  return s && {
    dataset: s.d,
    collection: s.c,
    lat: s.la,
    lon: s.lo,
    radiusM: s.r,
    position: s.p,
    read: s.s,
    withoutLocation: s.w,
    candidates: s.k as [string, number][],
  };
}

function encode(prefix: string, value: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return prefix + btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function decode<S extends z.ZodType>(prefix: string, cursor: string, schema: S): z.output<S> | undefined {
  if (!cursor.startsWith(prefix) || cursor.length > 16_000) return undefined;
  try {
    const b64 = cursor.slice(prefix.length).replaceAll("-", "+").replaceAll("_", "/");
    const bin = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
    const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
    const parsed = schema.safeParse(JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
