// The one masker of configured secrets (API keys, tokens): what an upstream echoes must not reach an
// answer, a file, a resource read or a log line in any form (docs/SECURITY.md, "Secrets"). It is built
// once from the secret values and scans each text in linear time: the text is normalised into a
// stream of characters (separators and zero-width characters dropped, escapes decoded, letters
// lowered) that remembers where each came from, and a rolling hash over that stream finds every
// window of a secret's forms; no regular expression runs over the text.

/** What a masked secret becomes. */
export const REDACTED = "[redacted]";

/**
 * The shortest part (head, tail or middle) of a secret masked wherever it stands: 16 characters of
 * a FRED key are 64 bits of it, and no ordinary text holds them by chance.
 */
export const MIN_PART = 16;

/** The shortest head or tail masked where a text (a cut) ends or starts. */
export const MIN_EDGE = 8;

/** Secrets shorter than this are masked only verbatim: fuzzy forms of short values hit ordinary words. */
const MIN_FUZZY = 8;

/** One form of a secret in a stream's alphabet, and the shortest window of it that is masked. */
interface Form {
  codes: Uint16Array;
  window: number;
  /** Whether its head and tail count at a text's edges (the plain secret, not its encodings). */
  edges: boolean;
}

/** The windows of one length, by hash. */
interface WindowTable {
  length: number;
  byHash: Map<number, { form: Form; offset: number }[]>;
  /** One bit per low 16 bits of a window's hash: most positions of a text are ruled out here. */
  seen: Uint8Array;
}

/** A stream: characters of a text as a form compares them, and the text span each came from. */
interface Stream {
  codes: Uint16Array;
  starts: Uint32Array;
  ends: Uint32Array;
  length: number;
}

const HASH_BASE = 0x01000193;

/**
 * Masks every configured secret in texts and values: verbatim, in any letter case, split by
 * zero-width characters, soft hyphens, dashes, dots, underscores, colons, `+` or white space, percent-,
 * JSON-, `\x`- or HTML-escaped, as hex of its bytes, as standard or URL-safe base64 at any byte
 * alignment, and any part of it of {@linkcode MIN_PART} characters or more (a head or tail of
 * {@linkcode MIN_EDGE} or more where a text starts or ends, as a cut leaves it).
 */
export class SecretMasker {
  #plain: string[] = [];
  #folded: Form[] = [];
  #exact: Form[] = [];
  #foldedTables: WindowTable[];
  #exactTables: WindowTable[];
  #shortest: number;
  #exactShortest: number;

  constructor(secrets: Iterable<string>) {
    const seen = new Set<string>();
    for (const secret of secrets) {
      if (secret.length < 4 || seen.has(secret)) continue;
      seen.add(secret);
      const folded = normalise(secret, FOLDED);
      if (folded.length < MIN_FUZZY) {
        this.#plain.push(secret);
        continue;
      }
      this.#folded.push(form(folded.codes.slice(0, folded.length), MIN_PART, true));
      const bytes = new TextEncoder().encode(secret);
      this.#folded.push(form(codesOf(hex(bytes)), MIN_PART, false));
      for (const b64 of base64Forms(bytes)) {
        this.#exact.push(form(codesOf(b64), Math.ceil(MIN_PART * 4 / 3), false));
      }
    }
    this.#foldedTables = tables(this.#folded);
    this.#exactTables = tables(this.#exact);
    const windows = [...this.#folded, ...this.#exact].map((f) => Math.min(f.window, MIN_EDGE));
    const plain = this.#plain.map((s) => s.length);
    this.#shortest = Math.min(...windows, ...plain, Number.MAX_SAFE_INTEGER);
    this.#exactShortest = Math.min(...this.#exact.map((f) => f.window), Number.MAX_SAFE_INTEGER);
  }

  /** Whether there is nothing to mask (no secret configured). */
  get empty(): boolean {
    return this.#plain.length === 0 && this.#folded.length === 0;
  }

  /** `text` with every form of every secret replaced by {@linkcode REDACTED}. */
  mask(text: string): string {
    if (text.length < this.#shortest) return text;
    let out = text;
    for (const secret of this.#plain) if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
    if (this.#folded.length === 0) return out;
    const spans: [number, number][] = [];
    const folded = normalise(out, FOLDED);
    findAll(folded, this.#foldedTables, spans);
    findEdges(folded, this.#folded, spans);
    // A text shorter than every base64 window cannot hold one (a stream is never longer than its text).
    if (out.length >= this.#exactShortest) findAll(normalise(out, EXACT), this.#exactTables, spans);
    return spans.length ? replaceSpans(out, spans) : out;
  }

  /**
   * `value` with every string in it masked (object keys too), as a new value where anything
   * changed: structured content and rows keep their shape.
   */
  maskDeep<T>(value: T): T {
    return this.empty ? value : this.#deep(value, 0) as T;
  }

  #deep(value: unknown, depth: number): unknown {
    if (typeof value === "string") return this.mask(value);
    if (typeof value !== "object" || value === null) return value;
    if (depth > 64) return this.#deepJson(value);
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const next = this.#deep(value[i], depth + 1);
        if (next !== value[i]) (copy ??= [...value])[i] = next;
      }
      return copy ?? value;
    }
    if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) {
      return value;
    }
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const k = this.mask(key);
      const next = this.#deep(v, depth + 1);
      if (k !== key || next !== v) changed = true;
      out[k] = next;
    }
    return changed ? out : value;
  }

  /** A value nested too deep to walk, masked as its JSON text (a mask never spans a quote). */
  #deepJson(value: object): unknown {
    let json: string | undefined;
    try {
      json = JSON.stringify(value);
    } catch {
      // Not serialisable (a cycle, or deeper than the stack): it cannot be sent either.
      return value;
    }
    if (json === undefined) return value;
    const masked = this.mask(json);
    if (masked === json) return value;
    try {
      return JSON.parse(masked);
    } catch {
      return REDACTED;
    }
  }
}

/** A masker without secrets: masks nothing. */
export const NO_SECRETS: SecretMasker = new SecretMasker([]);

function form(codes: Uint16Array, window: number, edges: boolean): Form {
  return { codes, window: Math.min(window, codes.length), edges };
}

function codesOf(text: string): Uint16Array {
  const out = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

function hex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The base64 of the secret's bytes as they encode after 0, 1 or 2 other bytes, each trimmed to the
 * characters that depend on the secret alone, in the standard alphabet (the URL-safe one is mapped
 * to it when the text is read).
 */
function base64Forms(bytes: Uint8Array): string[] {
  const out: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = new Uint8Array(offset + bytes.length);
    padded.set(bytes, offset);
    const encoded = btoa(String.fromCharCode(...padded));
    const from = Math.ceil(offset * 8 / 6);
    const to = Math.floor((offset + bytes.length) * 8 / 6);
    if (to - from >= MIN_EDGE) out.push(encoded.slice(from, to));
  }
  return out;
}

/** The windows of every form, grouped by window length. */
function tables(forms: readonly Form[]): WindowTable[] {
  const byLength = new Map<number, WindowTable>();
  for (const f of forms) {
    let table = byLength.get(f.window);
    if (!table) {
      byLength.set(f.window, table = { length: f.window, byHash: new Map(), seen: new Uint8Array(8192) });
    }
    const m = f.window;
    for (let offset = 0; offset + m <= f.codes.length; offset++) {
      const h = hashOf(f.codes, offset, m);
      table.seen[(h & 0xffff) >>> 3]! |= 1 << (h & 7);
      const list = table.byHash.get(h);
      if (list) list.push({ form: f, offset });
      else table.byHash.set(h, [{ form: f, offset }]);
    }
  }
  return [...byLength.values()];
}

function hashOf(codes: Uint16Array, from: number, length: number): number {
  let h = 0;
  for (let i = from; i < from + length; i++) h = (Math.imul(h, HASH_BASE) + codes[i]!) | 0;
  return h;
}

/** Adds the text span of every stretch of `stream` that matches a window of a form, extended as far as it matches. */
function findAll(stream: Stream, all: readonly WindowTable[], spans: [number, number][]): void {
  for (const table of all) {
    const m = table.length;
    if (stream.length < m) continue;
    let power = 1;
    for (let i = 1; i < m; i++) power = Math.imul(power, HASH_BASE);
    let h = hashOf(stream.codes, 0, m);
    let covered = 0;
    for (let p = 0; p + m <= stream.length; p++) {
      if (p > 0) {
        h = (Math.imul(h - Math.imul(stream.codes[p - 1]!, power), HASH_BASE) + stream.codes[p + m - 1]!) | 0;
      }
      if (p < covered || (table.seen[(h & 0xffff) >>> 3]! & (1 << (h & 7))) === 0) continue;
      const candidates = table.byHash.get(h);
      if (!candidates) continue;
      let best = 0;
      for (const { form, offset } of candidates) {
        best = Math.max(best, matchLength(stream, p, form.codes, offset));
      }
      if (best >= m) {
        const [from, to] = trimmed(stream, p, p + best, m);
        spans.push([stream.starts[from]!, stream.ends[to - 1]!]);
        covered = p + best;
      }
    }
  }
}

/**
 * The match `[from, to)` without a character that only joined it across a separator: with gaps
 * dropped, the "e" of "title 5b2d…" continues a key that has an "e" before "5b2d". A split key
 * has a gap after every character and keeps them all.
 */
function trimmed(stream: Stream, from: number, to: number, m: number): [number, number] {
  const gapAfter = (i: number): boolean => i + 1 < stream.length && stream.ends[i]! < stream.starts[i + 1]!;
  while (to - from > m && gapAfter(from) && !gapAfter(from + 1)) from++;
  while (to - from > m && gapAfter(to - 2) && !gapAfter(to - 3)) to--;
  return [from, to];
}

/** How many characters of `codes` from `offset` match the stream from `p`. */
function matchLength(stream: Stream, p: number, codes: Uint16Array, offset: number): number {
  let k = 0;
  while (offset + k < codes.length && p + k < stream.length && stream.codes[p + k] === codes[offset + k]) k++;
  return k;
}

/** A head of a secret where the text ends, or a tail where it starts: what a cut leaves. */
function findEdges(stream: Stream, forms: readonly Form[], spans: [number, number][]): void {
  const n = stream.length;
  for (const f of forms) {
    if (!f.edges) continue;
    const len = f.codes.length;
    for (let k = Math.min(len - 1, n); k >= MIN_EDGE; k--) {
      if (matchLength(stream, n - k, f.codes, 0) >= k) {
        spans.push([stream.starts[n - k]!, stream.ends[n - 1]!]);
        break;
      }
    }
    for (let k = Math.min(len - 1, n); k >= MIN_EDGE; k--) {
      if (matchLength(stream, 0, f.codes, len - k) >= k) {
        spans.push([stream.starts[0]!, stream.ends[k - 1]!]);
        break;
      }
    }
  }
}

/** `text` with the (possibly overlapping) spans replaced, each merged run once. */
function replaceSpans(text: string, spans: [number, number][]): string {
  spans.sort((a, b) => a[0] - b[0]);
  let out = "";
  let at = 0;
  let i = 0;
  while (i < spans.length) {
    let [start, end] = spans[i]!;
    while (i + 1 < spans.length && spans[i + 1]![0] <= end) end = Math.max(end, spans[++i]![1]);
    out += text.slice(at, start) + REDACTED;
    at = end;
    i++;
  }
  return out + text.slice(at);
}

/** How a stream reads a text: which characters it drops and whether it folds case. */
interface Reading {
  drop: (code: number) => boolean;
  map: (code: number) => number;
  /** `drop` and `map` for ASCII, precomputed: 0 drops the character, else what it maps to. */
  ascii: Uint16Array;
}

function reading(drop: (code: number) => boolean, map: (code: number) => number): Reading {
  const ascii = new Uint16Array(128);
  for (let c = 0; c < 128; c++) ascii[c] = drop(c) ? 0 : map(c);
  return { drop, map, ascii };
}

function isGap(c: number): boolean {
  // Every code point JavaScript counts as white space (\s: thin and other fixed-width spaces, line
  // and paragraph separators, ideographic space ...), and the invisible ones.
  return c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0xa0 || c === 0xad || c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200d) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f ||
    c === 0x2060 || c === 0x3000 || c === 0xfeff || c === 0x180e;
}

/** Secrets and hex: case folded, separators between characters dropped. */
const FOLDED: Reading = reading(
  (c) =>
    c === 0 || isGap(c) || c === 0x2d || c === 0x5f || c === 0x2e || c === 0x2b ||
    (c >= 0x2010 && c <= 0x2015) || c === 0x2026 || c === 0x2212 || c === 0x3a,
  (
    c,
  ) => (c >= 0x41 && c <= 0x5a ? c + 32 : c < 0x80 ? c : String.fromCharCode(c).toLowerCase().charCodeAt(0)),
);

/** Base64: case kept, only white space and invisible characters dropped, URL-safe mapped to standard. */
const EXACT: Reading = reading(
  (c) => c === 0 || isGap(c),
  (c) => (c === 0x2d ? 0x2b : c === 0x5f ? 0x2f : c),
);

/** The stream of `text` as `reading` reads it, escapes decoded. */
function normalise(text: string, reading: Reading): Stream {
  const n = text.length;
  // Most texts are short (a cell, a log line): one scratch buffer serves them all. A stream is
  // used up before the next is read, so they never share it at once.
  const small = n <= SCRATCH_MAX;
  if (small && scratch.codes.length < n) {
    scratch = buffers(Math.min(SCRATCH_MAX, Math.max(n, 2 * scratch.codes.length)));
  }
  const { codes, starts, ends } = small ? scratch : buffers(n);
  const ascii = reading.ascii;
  let length = 0;
  let i = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    let next = i + 1;
    if (c === 0x25 || c === 0x5c || c === 0x26) {
      const escaped = unescapeAt(text, i);
      if (escaped) [c, next] = escaped;
    }
    // NUL is dropped by both readings: 0 in the ASCII table means "drop".
    const code = c < 128 ? ascii[c]! : reading.drop(c) ? 0 : reading.map(c);
    if (code !== 0) {
      codes[length] = code;
      starts[length] = i;
      ends[length] = next;
      length++;
    }
    i = next;
  }
  return { codes, starts, ends, length };
}

const SCRATCH_MAX = 64 * 1024;
let scratch = buffers(256);

function buffers(n: number): { codes: Uint16Array; starts: Uint32Array; ends: Uint32Array } {
  return { codes: new Uint16Array(n), starts: new Uint32Array(n), ends: new Uint32Array(n) };
}

/** The character an escape at `i` stands for (`%61`, `\u0061`, `\x61`, `&#97;`, `&#x61;`) and where it ends. */
function unescapeAt(text: string, i: number): [number, number] | undefined {
  const c = text[i];
  if (c === "%") return hexAt(text, i + 1, 2);
  if (c === "\\") {
    // `\\u0061` is `\u0061` escaped once more (a JSON text holding JSON): the run counts as one escape.
    let k = i + 1;
    while (text[k] === "\\" && k - i < 8) k++;
    const kind = text[k];
    if (kind === "u") return hexAt(text, k + 1, 4);
    if (kind === "x") return hexAt(text, k + 1, 2);
    if (kind === "/") return [0x2f, k + 1];
    return undefined;
  }
  const m = /^&#(?:x([0-9a-f]{1,6})|([0-9]{1,7}));/i.exec(text.slice(i, i + 12));
  if (!m) return undefined;
  const code = m[1] !== undefined ? parseInt(m[1], 16) : parseInt(m[2]!, 10);
  return code <= 0xffff ? [code, i + m[0].length] : undefined;
}

function hexAt(text: string, from: number, digits: number): [number, number] | undefined {
  const part = text.slice(from, from + digits);
  return part.length === digits && /^[0-9a-f]+$/i.test(part)
    ? [parseInt(part, 16), from + digits]
    : undefined;
}
