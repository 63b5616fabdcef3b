// A depth limit for JSON from outside, checked on the text before it is parsed.
//
// JSON.parse and JSON.stringify are iterative, but much else that walks a value is not:
// structuredClone, recursive flattening and shaping, and measuring every array inside an array
// (a chain of 100,000 arrays cost 43 s of a shared event loop). No real answer of a public API
// nests deeper than a dozen levels (GeoJSON multipolygons in a feature collection: 7), so a body
// deeper than the limit is refused before any of that runs, in one pass over its text.

/** The deepest nesting of objects and arrays accepted from an upstream or a stored record. */
export const MAX_JSON_DEPTH = 64;

import { UpstreamError, type UpstreamErrorOptions } from "../errors.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/**
 * Where `json` (text or UTF-8 bytes) first nests objects and arrays deeper than `max` levels:
 * the offset of the bracket that does, or -1 when it never does. Brackets inside strings do not
 * count. Linear in the length, no recursion, no allocation.
 */
export function jsonTooDeepAt(json: string | Uint8Array, max: number = MAX_JSON_DEPTH): number {
  return new JsonDepthScan(max).scan(json, 0, json.length);
}

/**
 * {@linkcode jsonTooDeepAt} in pieces: `scan` reads `json` from `from` to `to` and carries the
 * depth and whether it is inside a string (or just after a backslash in one) to the next piece,
 * so a big body can be checked a slice at a time between turns of the event loop.
 */
export class JsonDepthScan {
  #max: number;
  #depth = 0;
  #inString = false;
  #escape = false;

  constructor(max: number = MAX_JSON_DEPTH) {
    this.#max = max;
  }

  /** The offset of the first bracket nested deeper than the limit in `[from, to)`, else -1. */
  scan(json: string | Uint8Array, from: number, to: number): number {
    const at = typeof json === "string" ? (i: number) => json.charCodeAt(i) : (i: number) => json[i]!;
    let depth = this.#depth;
    let inString = this.#inString;
    let i = from;
    if (this.#escape && i < to) {
      this.#escape = false;
      i++;
    }
    for (; i < to; i++) {
      const c = at(i);
      if (inString) {
        if (c === BACKSLASH) i++;
        else if (c === QUOTE) inString = false;
      } else if (c === QUOTE) {
        inString = true;
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        if (++depth > this.#max) return i;
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        depth--;
      }
    }
    // A backslash that ends the piece escapes the first character of the next one.
    if (i > to) this.#escape = true;
    this.#depth = depth;
    this.#inString = inString;
    return -1;
  }
}

/** The error for a body {@linkcode jsonTooDeepAt} refused: the upstream's fault, not retried. */
export function tooDeep(
  upstreamName: string,
  offset: number,
  options: Omit<UpstreamErrorOptions, "retryable" | "hint">,
): UpstreamError {
  return new UpstreamError(
    "DECODE_ERROR",
    `${upstreamName} sent JSON nested deeper than ${MAX_JSON_DEPTH} levels (at offset ${offset}); ` +
      "no real answer nests so deep, so it was refused unread",
    {
      ...options,
      retryable: false,
      hint: "The upstream is sending broken or hostile data: try another query or source, or try again later",
    },
  );
}
