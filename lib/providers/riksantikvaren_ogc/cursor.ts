// Opaque paging cursors. A cursor carries the dataset, the collection, the query string of the
// upstream's `next` link and the offset it starts at, never a host: the URL fetched with it is
// always built on the configured base_url, so neither a model nor an upstream can point a
// cursor at another machine.
import { z } from "zod";

const PREFIX = "ra1.";

/** What a cursor holds. */
export interface CursorState {
  dataset: string;
  collection: string;
  /** The `next` link's query string, without `?`. */
  query: string;
  /** Offset of the first item of the page it fetches. */
  offset: number;
}

const stateSchema = z.strictObject({
  d: z.string().min(1).max(200),
  c: z.string().min(1).max(200),
  q: z.string().max(4000),
  o: z.number().int().min(0),
});

/** Encodes a cursor for the model to pass back. */
export function encodeCursor(state: CursorState): string {
  const json = JSON.stringify({ d: state.dataset, c: state.collection, q: state.query, o: state.offset });
  const bytes = new TextEncoder().encode(json);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return PREFIX + btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Decodes a cursor, or returns undefined when it is not one this server issued. */
export function decodeCursor(cursor: string): CursorState | undefined {
  if (!cursor.startsWith(PREFIX) || cursor.length > 8000) return undefined;
  try {
    const b64 = cursor.slice(PREFIX.length).replaceAll("-", "+").replaceAll("_", "/");
    const bin = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
    const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
    const parsed = stateSchema.safeParse(JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)));
    if (!parsed.success) return undefined;
    const s = parsed.data;
    return { dataset: s.d, collection: s.c, query: s.q, offset: s.o };
  } catch {
    return undefined;
  }
}
