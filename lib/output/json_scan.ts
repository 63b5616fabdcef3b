// Reads a JSON object body of the shape `{"field": ..., "items": [ {...}, {...}, ... ], ...}`
// without parsing it whole: the top-level fields are parsed one by one (they are small), and the
// elements of the one list field are handed over in batches, each parsed on its own. A page of
// 100,000 observations then costs its raw bytes plus one batch of objects, instead of the
// decoded text, the parsed array and every copy made from it at once.

import { MAX_JSON_DEPTH } from "../http/json_depth.ts";

/** What {@linkcode scanJsonList} found besides the list's elements. */
export interface ScanResult {
  /** Every top-level field except the list. */
  fields: Record<string, unknown>;
  /** Elements handed over in all. */
  items: number;
  /** Whether the list field was present. */
  found: boolean;
}

/** Options for {@linkcode scanJsonList}. */
export interface ScanOptions {
  /** Elements per batch (default 2,000). */
  batchSize?: number;
}

/** Thrown for a body that is not a JSON object of the expected shape. */
export class JsonScanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JsonScanError";
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const decoder = new TextDecoder("utf-8", { fatal: true });

function isSpace(b: number | undefined): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/**
 * Scans `body`, calling `onBatch` with the parsed elements of the top-level array `listKey`,
 * in order, a batch at a time (awaited, so a slow writer slows the scan). Throws
 * {@linkcode JsonScanError} on anything that is not a JSON object.
 */
export async function scanJsonList(
  body: Uint8Array,
  listKey: string,
  onBatch: (items: unknown[]) => void | Promise<void>,
  options: ScanOptions = {},
): Promise<ScanResult> {
  const batchSize = Math.max(1, options.batchSize ?? 2000);
  const n = body.length;
  let i = 0;
  const skip = (): void => {
    while (i < n && isSpace(body[i])) i++;
  };
  const fail = (what: string): never => {
    throw new JsonScanError(`${what} at byte ${i}`);
  };
  const expect = (byte: number, what: string): void => {
    skip();
    if (body[i] !== byte) fail(`Expected ${what}`);
    i++;
  };
  /** The end (exclusive) of the string starting at `from` (its opening quote). */
  const stringEnd = (from: number): number => {
    let j = from + 1;
    while (j < n) {
      const b = body[j]!;
      if (b === BACKSLASH) j += 2;
      else if (b === QUOTE) return j + 1;
      else j++;
    }
    return fail("Unterminated string");
  };
  /** The end (exclusive) of the value starting at `from`. */
  const valueEnd = (from: number): number => {
    const first = body[from];
    if (first === QUOTE) return stringEnd(from);
    if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
      let depth = 0;
      let j = from;
      while (j < n) {
        const b = body[j]!;
        if (b === QUOTE) {
          j = stringEnd(j);
          continue;
        }
        if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
          // Refused before anything parses or walks it (see lib/http/json_depth.ts).
          if (++depth > MAX_JSON_DEPTH) {
            i = j;
            fail(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
          }
        } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
          depth--;
          if (depth === 0) return j + 1;
        }
        j++;
      }
      return fail("Unterminated object or array");
    }
    let j = from;
    while (
      j < n && !isSpace(body[j]) && body[j] !== COMMA && body[j] !== CLOSE_OBJECT && body[j] !== CLOSE_ARRAY
    ) j++;
    if (j === from) fail("Expected a value");
    return j;
  };
  const parse = (from: number, to: number): unknown => {
    try {
      return JSON.parse(decoder.decode(body.subarray(from, to)));
    } catch {
      return fail("Invalid JSON");
    }
  };

  const fields: Record<string, unknown> = {};
  let items = 0;
  let found = false;
  expect(OPEN_OBJECT, "a JSON object");
  skip();
  if (body[i] === CLOSE_OBJECT) return { fields, items, found };
  for (;;) {
    skip();
    if (body[i] !== QUOTE) fail("Expected a field name");
    const keyEnd = stringEnd(i);
    const key = parse(i, keyEnd) as string;
    i = keyEnd;
    expect(COLON, '":"');
    skip();
    if (key === listKey && body[i] === OPEN_ARRAY) {
      found = true;
      i++;
      skip();
      if (body[i] === CLOSE_ARRAY) {
        i++;
      } else {
        let batchStart = i;
        let inBatch = 0;
        for (;;) {
          skip();
          i = valueEnd(i);
          inBatch++;
          const end = i;
          skip();
          const last = body[i] === CLOSE_ARRAY;
          if (!last && body[i] !== COMMA) fail('Expected "," or "]"');
          if (inBatch === batchSize || last) {
            // The batch's elements with the commas between them, parsed as one array.
            const text = decoder.decode(body.subarray(batchStart, end));
            let batch: unknown[];
            try {
              batch = JSON.parse(`[${text}]`);
            } catch {
              return fail("Invalid JSON in the list");
            }
            items += batch.length;
            await onBatch(batch);
            inBatch = 0;
            batchStart = i + 1;
          }
          i++;
          if (last) break;
        }
      }
    } else {
      const end = valueEnd(i);
      fields[key] = parse(i, end);
      i = end;
    }
    skip();
    if (body[i] === COMMA) {
      i++;
      continue;
    }
    if (body[i] === CLOSE_OBJECT) break;
    fail('Expected "," or "}"');
  }
  return { fields, items, found };
}
