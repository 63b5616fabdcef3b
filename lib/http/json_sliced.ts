// JSON.parse for big bodies, a slice at a time. JSON.parse runs in one piece on the event loop
// every session and /health share: 70-350 ms for a 13 MB upstream answer on a loaded machine.
// Parsing in a Worker does not help, since posting the value back (a structured clone) costs
// more than the parse. So big bodies are parsed here, iteratively (an explicit stack, no
// recursion), stopping every few milliseconds to let the event loop run (docs/SECURITY.md,
// "Work budgets"). The result equals JSON.parse's: strings with escapes are handed to JSON.parse
// whole, numbers to Number() (which rounds a decimal exactly as JSON.parse does), duplicate keys
// keep their first place and their last value, and `__proto__` is an own property.
import { MAX_JSON_DEPTH } from "./json_depth.ts";

/** Why {@linkcode parseJsonSliced} refused a text, and where. */
export class JsonSliceError extends Error {
  /** "syntax": not JSON; "deep": nested deeper than the limit (at the bracket that does). */
  readonly kind: "syntax" | "deep";
  /** Offset in the text: the bracket for "deep", where reading stopped for "syntax". */
  readonly offset: number;

  constructor(kind: "syntax" | "deep", offset: number) {
    super(
      kind === "deep" ? `JSON nested too deep at offset ${offset}` : `Not valid JSON at offset ${offset}`,
    );
    this.name = "JsonSliceError";
    this.kind = kind;
    this.offset = offset;
  }
}

/** Milliseconds of work between two turns of the event loop. */
export const SLICE_MS = 8;
/** Characters of one string, number-free whitespace run or blank scan read without asking the time. */
const RUN = 1 << 16;

/**
 * Paces work done in slices: `due` says when a slice has run its time, `pause` gives the event
 * loop a turn (a timer: it lets pending I/O in, where a microtask or setImmediate would not) and
 * then calls `check`, which throws to stop (the call was cancelled or is past its deadline).
 */
export class Pace {
  #end: number;
  #check: () => void;
  #sliceMs: number;

  constructor(check: () => void = () => {}, sliceMs: number = SLICE_MS) {
    this.#check = check;
    this.#sliceMs = sliceMs;
    this.#end = performance.now() + sliceMs;
  }

  /** Whether this slice has used its time. */
  due(): boolean {
    return performance.now() >= this.#end;
  }

  /** One turn of the event loop, then the check; starts a new slice. */
  async pause(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 0));
    this.#check();
    this.#end = performance.now() + this.#sliceMs;
  }
}

/** UTF-8 bytes to text as `new TextDecoder().decode(bytes)` would, a chunk per slice. */
export async function decodeUtf8Sliced(
  bytes: Uint8Array,
  pace: Pace,
  chunk: number = 1 << 19,
): Promise<string> {
  const decoder = new TextDecoder();
  const parts: string[] = [];
  for (let at = 0; at < bytes.length; at += chunk) {
    parts.push(decoder.decode(bytes.subarray(at, at + chunk), { stream: true }));
    if (pace.due()) await pace.pause();
  }
  parts.push(decoder.decode());
  return parts.join("");
}

/** The offset of the first character of `text` that is not white space (as `\s` and trim() read it), else -1. */
export async function firstNonBlank(text: string, pace: Pace): Promise<number> {
  for (let at = 0; at < text.length; at += RUN) {
    const i = text.slice(at, at + RUN).search(/\S/);
    if (i >= 0) return at + i;
    if (pace.due()) await pace.pause();
  }
  return -1;
}

const enum Code {
  Tab = 0x09,
  Newline = 0x0a,
  Return = 0x0d,
  Space = 0x20,
  Quote = 0x22,
  Plus = 0x2b,
  Comma = 0x2c,
  Minus = 0x2d,
  Dot = 0x2e,
  Zero = 0x30,
  One = 0x31,
  Nine = 0x39,
  Colon = 0x3a,
  BigE = 0x45,
  OpenArray = 0x5b,
  Backslash = 0x5c,
  CloseArray = 0x5d,
  SmallE = 0x65,
  OpenObject = 0x7b,
  CloseObject = 0x7d,
}

/** What the parser expects next. */
const enum Want {
  Value,
  /** A value or the `]` of an empty array. */
  FirstItem,
  Key,
  /** A key or the `}` of an empty object. */
  FirstKey,
  Colon,
  /** A `,`, the container's close, or the end of the text. */
  After,
}

type Container = unknown[] | Record<string, unknown>;

const isSpace = (c: number): boolean =>
  c === Code.Space || c === Code.Newline || c === Code.Return || c === Code.Tab;
const isDigit = (c: number): boolean => c >= Code.Zero && c <= Code.Nine;

/** Sets `key` on `object` as JSON.parse does: an own data property, `__proto__` included. */
function setMember(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else object[key] = value;
}

/** The end of the number at `from`, checked against JSON's grammar (a JsonSliceError if it is not one). */
function numberEnd(t: string, from: number): number {
  let i = from;
  if (t.charCodeAt(i) === Code.Minus) i++;
  const first = t.charCodeAt(i);
  if (first === Code.Zero) i++;
  else if (first >= Code.One && first <= Code.Nine) {
    do i++; while (isDigit(t.charCodeAt(i)));
  } else throw new JsonSliceError("syntax", i);
  if (t.charCodeAt(i) === Code.Dot) {
    if (!isDigit(t.charCodeAt(++i))) throw new JsonSliceError("syntax", i);
    do i++; while (isDigit(t.charCodeAt(i)));
  }
  const e = t.charCodeAt(i);
  if (e === Code.SmallE || e === Code.BigE) {
    const sign = t.charCodeAt(++i);
    if (sign === Code.Plus || sign === Code.Minus) i++;
    if (!isDigit(t.charCodeAt(i))) throw new JsonSliceError("syntax", i);
    do i++; while (isDigit(t.charCodeAt(i)));
  }
  return i;
}

/** The offset after the escape at `i` (a backslash), checked as JSON.parse checks it. */
function escapeEnd(t: string, i: number): number {
  const e = t.charCodeAt(i + 1);
  if (e === 0x75) {
    for (let k = 2; k < 6; k++) {
      const h = t.charCodeAt(i + k) | 0x20;
      if (!(isDigit(h) || (h >= 0x61 && h <= 0x66))) throw new JsonSliceError("syntax", i);
    }
    return i + 6;
  }
  // " \ / b f n r t
  if (
    e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 ||
    e === 0x74
  ) {
    return i + 2;
  }
  throw new JsonSliceError("syntax", i);
}

/** A string being read, perhaps over several slices. */
class StringScan {
  /** Where reading goes on. */
  at = 0;
  /** Where the part not yet read into `#done` starts, and whether it holds an escape. */
  #from = 0;
  #escaped = false;
  /** The string's value before `#from`. */
  #done = "";

  start(open: number): void {
    this.at = this.#from = open + 1;
    this.#escaped = false;
    this.#done = "";
  }

  /** Reads on for at most RUN characters: the string's value once its closing quote is read, else undefined. */
  step(t: string): string | undefined {
    const stop = Math.min(t.length, this.at + RUN);
    let i = this.at;
    while (i < stop) {
      const c = t.charCodeAt(i);
      if (c === Code.Quote) {
        this.at = i + 1;
        const value = this.#done + this.#part(t, i);
        this.#done = "";
        return value;
      }
      if (c === Code.Backslash) {
        this.#escaped = true;
        i = escapeEnd(t, i);
      } else if (c < Code.Space) throw new JsonSliceError("syntax", i);
      else i++;
    }
    if (i >= t.length) throw new JsonSliceError("syntax", t.length);
    // A step ends between escapes: what it read is decoded now, so no step decodes more than its own.
    this.#done += this.#part(t, i);
    this.#from = this.at = i;
    this.#escaped = false;
    return undefined;
  }

  /**
   * The value of the characters from `#from` to `end`: JSON.parse reads their escapes as it would
   * in the whole text (a surrogate pair split between two parts gives the same two code units).
   */
  #part(t: string, end: number): string {
    if (!this.#escaped) return t.slice(this.#from, end);
    try {
      return JSON.parse(`"${t.slice(this.#from, end)}"`) as string;
    } catch {
      throw new JsonSliceError("syntax", this.#from);
    }
  }
}

/**
 * JSON.parse(text) in slices that give the event loop a turn whenever `pace` says so; a leading
 * byte order mark is skipped. Nesting deeper than `maxDepth` is refused at the bracket that goes
 * deeper (the offset {@linkcode jsonTooDeepAt} gives for text that is valid up to there).
 * Throws a {@linkcode JsonSliceError}, or what `pace`'s check throws.
 */
export async function parseJsonSliced(
  text: string,
  pace: Pace,
  maxDepth: number = MAX_JSON_DEPTH,
): Promise<unknown> {
  const t = text;
  const n = t.length;
  const stack: Container[] = [];
  const keys: string[] = [];
  const str = new StringScan();
  let pos = t.charCodeAt(0) === 0xfeff ? 1 : 0;
  let want: Want = Want.Value;
  let inString = false;
  let value: unknown;
  let ticks = 0;
  for (;;) {
    if ((++ticks & 255) === 0 && pace.due()) await pace.pause();
    if (inString) {
      const s = str.step(t);
      if (s === undefined) {
        if (pace.due()) await pace.pause();
        continue;
      }
      inString = false;
      pos = str.at;
      if (want === Want.Colon) {
        keys[keys.length - 1] = s;
        continue;
      }
      value = s;
    } else {
      const c = t.charCodeAt(pos);
      if (isSpace(c)) {
        const stop = Math.min(n, pos + RUN);
        do pos++; while (pos < stop && isSpace(t.charCodeAt(pos)));
        if (pos === stop && pace.due()) await pace.pause();
        continue;
      }
      if (want === Want.After) {
        if (stack.length === 0) {
          if (pos === n) return value;
          throw new JsonSliceError("syntax", pos);
        }
        const top = stack[stack.length - 1]!;
        const array = Array.isArray(top);
        if (c === Code.Comma) {
          pos++;
          want = array ? Want.Value : Want.Key;
          continue;
        }
        if (c !== (array ? Code.CloseArray : Code.CloseObject)) throw new JsonSliceError("syntax", pos);
        pos++;
        const closed = stack.pop()!;
        // An array grown by push holds room for 17 values at least; a copy holds just its own
        // (a GeoJSON position then takes a third of the memory, as after JSON.parse).
        value = array && (closed as unknown[]).length < 32 ? (closed as unknown[]).slice() : closed;
        keys.pop();
      } else if (want === Want.Key || want === Want.FirstKey) {
        if (c === Code.CloseObject && want === Want.FirstKey) {
          pos++;
          value = stack.pop();
          keys.pop();
        } else if (c === Code.Quote) {
          str.start(pos);
          inString = true;
          want = Want.Colon;
          continue;
        } else throw new JsonSliceError("syntax", pos);
      } else if (want === Want.Colon) {
        if (c !== Code.Colon) throw new JsonSliceError("syntax", pos);
        pos++;
        want = Want.Value;
        continue;
      } else {
        if (c === Code.CloseArray && want === Want.FirstItem) {
          pos++;
          value = stack.pop();
          keys.pop();
        } else if (c === Code.OpenArray || c === Code.OpenObject) {
          if (stack.length >= maxDepth) throw new JsonSliceError("deep", pos);
          pos++;
          const array = c === Code.OpenArray;
          stack.push(array ? [] : {});
          keys.push("");
          want = array ? Want.FirstItem : Want.FirstKey;
          continue;
        } else if (c === Code.Quote) {
          str.start(pos);
          inString = true;
          continue;
        } else if (c === 0x74 && t.startsWith("true", pos)) {
          value = true;
          pos += 4;
        } else if (c === 0x66 && t.startsWith("false", pos)) {
          value = false;
          pos += 5;
        } else if (c === 0x6e && t.startsWith("null", pos)) {
          value = null;
          pos += 4;
        } else {
          const end = numberEnd(t, pos);
          value = Number(t.slice(pos, end));
          pos = end;
        }
      }
    }
    // A value is complete: it goes into the container it is in (or is the whole text).
    want = Want.After;
    const top = stack[stack.length - 1];
    if (top === undefined) continue;
    if (Array.isArray(top)) top.push(value);
    else setMember(top, keys[keys.length - 1]!, value);
  }
}
