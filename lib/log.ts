import { SecretMasker } from "./secrets.ts";

/** Log levels, least to most severe. */
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;

/** One of {@linkcode LOG_LEVELS}. */
export type LogLevel = typeof LOG_LEVELS[number];

/** Extra structured fields on a log line. */
export type LogFields = Record<string, unknown>;

/** Options for {@linkcode Logger}. */
export interface LoggerOptions {
  /** Lines below this level are dropped. Default `info`. */
  level?: LogLevel;
  /** Receives each finished line (without newline). Default: nothing is written. */
  write?: (line: string) => void;
  /** Fields added to every line. */
  fields?: LogFields;
  /** Strings that must never appear in a log line (API keys, tokens). */
  secrets?: Iterable<string>;
  /** Clock for the `time` field. */
  now?: () => number;
}

// Lets child() hand its output (and the messages it leaves out) to the Logger it constructs next
// without a public constructor parameter (set and taken within one synchronous call).
let inherited: { shared: Shared; skip: ReadonlySet<string> | undefined; base: LogFields } | undefined;

interface Shared {
  level: number;
  write: (line: string) => void;
  secrets: Set<string>;
  /** The forms the patterns below do not cover (split, base64, hex, a part of a secret). */
  masker: SecretMasker;
  now: () => number;
}

/**
 * One JSON object per line, written to stderr by the caller's `write` (stdout belongs to the
 * stdio protocol). Secrets are masked in every line, whichever field they hide in.
 */
export class Logger {
  #shared: Shared;
  /** The parent's fields (a child's), merged with `#own` on the first line: most children log none. */
  #base: LogFields | undefined;
  #own: LogFields;
  #fields: LogFields | undefined;
  /** Whether a field every line carries holds an Error (worked out with `#fields`). */
  #fieldsHaveError = false;
  #skip: ReadonlySet<string> | undefined;

  constructor(options: LoggerOptions = {}) {
    const from = inherited;
    inherited = undefined;
    this.#shared = from?.shared ?? sharedOf(options);
    this.#skip = from?.skip;
    this.#base = from?.base;
    this.#own = options.fields ?? {};
  }

  /**
   * A logger that adds `fields` to every line and shares this one's output and secrets;
   * `skip` names messages it leaves out (e.g. warnings the start-up log already gave).
   */
  child(fields: LogFields, skip?: ReadonlySet<string>): Logger {
    inherited = { shared: this.#shared, skip: skip ?? this.#skip, base: this.#merged() };
    return new Logger({ fields: { ...fields } });
  }

  /** The fields every line carries (the parent's, then this logger's own). */
  #merged(): LogFields {
    if (this.#fields === undefined) {
      this.#fields = this.#base === undefined ? this.#own : { ...this.#base, ...this.#own };
      this.#fieldsHaveError = hasError(this.#fields, ERROR_SEARCH_DEPTH);
    }
    return this.#fields;
  }

  /** Registers a value to mask from now on (short values are ignored to keep lines readable). */
  addSecret(secret: string): void {
    if (secret.length < 4 || this.#shared.secrets.has(secret)) return;
    this.#shared.secrets.add(secret);
    this.#shared.masker = new SecretMasker(this.#shared.secrets);
  }

  /** Changes the level for this logger and every logger sharing its output. */
  setLevel(level: LogLevel): void {
    this.#shared.level = LOG_LEVELS.indexOf(level);
  }

  /** True when lines at `level` are written. */
  enabled(level: LogLevel): boolean {
    return LOG_LEVELS.indexOf(level) >= this.#shared.level;
  }

  debug(msg: string, fields?: LogFields): void {
    this.#log("debug", msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.#log("info", msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.#log("warn", msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.#log("error", msg, fields);
  }

  #log(level: LogLevel, msg: string, fields?: LogFields): void {
    if (!this.enabled(level) || this.#skip?.has(msg)) return;
    const record = {
      time: isoTime(this.#shared.now()),
      level,
      msg,
      ...this.#merged(),
      ...fields,
    };
    let line: string;
    try {
      // A replacer slows every line down: it is only used when a field holds an Error.
      line = this.#fieldsHaveError || (fields !== undefined && hasError(fields, ERROR_SEARCH_DEPTH))
        ? JSON.stringify(record, errorReplacer)
        : JSON.stringify(record);
    } catch {
      line = JSON.stringify({ time: record.time, level, msg });
    }
    this.#shared.write(this.#shared.masker.mask(maskSecrets(line, this.#shared.secrets)));
  }
}

/** The second {@linkcode isoTime} last formatted, and its text up to the milliseconds. */
let isoSecond = NaN;
let isoHead = "";

/**
 * `new Date(ms).toISOString()`, with the text up to the second kept from the last call: a busy
 * server logs many lines a second, and formatting a date cost each about 3.5 µs of the line's 9
 * (measured in the running handler; docs/BENCHMARKS.md).
 */
export function isoTime(ms: number): string {
  // A date's time value drops the fraction (TimeClip); one out of range throws, as Date does.
  const t = Math.trunc(ms);
  if (!(Math.abs(t) <= 8.64e15)) return new Date(ms).toISOString();
  const second = Math.floor(t / 1000);
  if (second !== isoSecond) {
    const whole = new Date(second * 1000).toISOString();
    // "….000Z": the head ends at the decimal point (years past 9999 have a longer one).
    isoHead = whole.slice(0, whole.length - 4);
    isoSecond = second;
  }
  return `${isoHead}${String(t - second * 1000).padStart(3, "0")}Z`;
}

/** The output, level and secrets of a logger made from `options` (not a child). */
function sharedOf(options: LoggerOptions): Shared {
  const secrets = new Set([...(options.secrets ?? [])].filter((s) => s.length >= 4));
  return {
    level: LOG_LEVELS.indexOf(options.level ?? "info"),
    write: options.write ?? (() => {}),
    secrets,
    masker: new SecretMasker(secrets),
    now: options.now ?? Date.now,
  };
}

/**
 * Replaces each secret in `text` with `***`, however an upstream or a client echoed it: in any
 * letter case, URL-encoded (`%61`), as JSON (`\u0061`) or HTML (`&#97;`) escapes, with spaces or
 * `+` between its characters, and cut off (the first 4 or more characters of a secret are masked
 * too where a text, a quoted string or an ellipsis ends them). Mask before cutting a text, never after: a cut
 * can only leave a secret's head at the end, which this catches.
 */
export function maskSecrets(text: string, secrets: Iterable<string>): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length === 0 || !mayHoldSecret(out, secret)) continue;
    out = maskSecretFully(out, secret);
  }
  return out;
}

/** {@linkcode maskSecrets} for one secret, without {@linkcode mayHoldSecret}'s shortcut (tests). */
export function maskSecretFully(text: string, secret: string): string {
  const { whole, head } = secretPatterns(secret);
  whole.lastIndex = 0;
  const out = text.replace(whole, "***");
  return head ? out.replace(head, "***") : out;
}

/**
 * False only when `text` cannot hold `secret` in a form the masking patterns match: the secret is
 * printable ASCII, the text has no "%", "\\" or "&" (so no character of it is encoded), and with
 * white space and "+" (the gaps the patterns allow) taken out of both, the text, in lower case,
 * does not contain the secret's first characters (which its head and the whole secret start
 * with). Each pattern is a regular expression of some kilobytes: compiling and running them on
 * every log line of a start took about 3 ms when FRED_API_KEY was set (docs/BENCHMARKS.md).
 */
export function mayHoldSecret(text: string, secret: string): boolean {
  if (!/^[\x21-\x7e]+$/.test(secret) || /[%\\&]/.test(text)) return true;
  const squeeze = (s: string): string => s.replace(/[\s+]/g, "").toLowerCase();
  return squeeze(text).includes(squeeze(secret.slice(0, SHORTEST_HEAD)));
}

/**
 * The shortest head of a secret masked at the end of a text: shorter heads are ordinary words too
 * ("serving metrics" ends in the head of a token "metrics-…").
 */
const SHORTEST_HEAD = 8;
const patterns = new Map<string, { whole: RegExp; head: RegExp | undefined }>();

function secretPatterns(secret: string): { whole: RegExp; head: RegExp | undefined } {
  let found = patterns.get(secret);
  if (!found) {
    const forms = [...secret].map(charForms);
    // Between characters: white space, "+" (a URL's space) and their URL encodings.
    const gap = "(?:\\s|\\+|%20|%2b|%09|%0a|%0d)*";
    const whole = new RegExp(forms.join(gap), "gi");
    let head: RegExp | undefined;
    if (forms.length > SHORTEST_HEAD) {
      // c1 gap c2 ... c4 (gap c5 (gap c6 (...)?)?)? at the very end: a head cut off there.
      let tail = "";
      for (let i = forms.length - 2; i >= SHORTEST_HEAD; i--) tail = `(?:${gap}${forms[i]}${tail})?`;
      head = new RegExp(`${forms.slice(0, SHORTEST_HEAD).join(gap)}${tail}${gap}(?=$|"|…|\\.\\.\\.)`, "gi");
    }
    found = { whole, head };
    if (patterns.size > 64) patterns.clear();
    patterns.set(secret, found);
  }
  return found;
}

/** The ways one character of a secret can be written: itself, %XX bytes, \uXXXX, &#N; or &#xH;. */
function charForms(char: string): string {
  const code = char.codePointAt(0)!;
  const bytes = [...new TextEncoder().encode(char)].map((b) => `%${b.toString(16).padStart(2, "0")}`).join(
    "",
  );
  const units = [...char].length === 1 && code > 0xffff
    ? [Math.floor((code - 0x10000) / 0x400) + 0xd800, ((code - 0x10000) % 0x400) + 0xdc00]
    : [code];
  const json = units.map((u) => `\\\\u${u.toString(16).padStart(4, "0")}`).join("");
  const literal = char.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
  return `(?:${literal}|${bytes}|${json}|&#0*${code};|&#x0*${code.toString(16)};)`;
}

/**
 * How deep in a line's fields an Error is looked for (and logged as name and message). One
 * nested deeper is logged as its enumerable fields, without message or stack.
 */
const ERROR_SEARCH_DEPTH = 4;

/** Whether `value` holds an Error within `depth` levels of objects and arrays. */
function hasError(value: unknown, depth: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (value instanceof Error) return true;
  if (depth === 0) return false;
  for (const key in value) {
    // Most fields are strings and numbers: only objects are looked into.
    const field = (value as Record<string, unknown>)[key];
    if (typeof field === "object" && field !== null && hasError(field, depth - 1)) return true;
  }
  return false;
}

function errorReplacer(_key: string, value: unknown): unknown {
  // Errors log as name and message only: a stack trace is for a debugger, not a log a user shares.
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

/** Something written synchronously, like `Deno.stdout` and `Deno.stderr`. */
export interface SyncWriter {
  writeSync(p: Uint8Array): number;
}

/** Writes all of `bytes` to `writer` (one `writeSync` may take only part). */
export function writeAllSync(writer: SyncWriter, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += writer.writeSync(bytes.subarray(written));
}

/** Where a {@linkcode LineWriter} writes: `Deno.stderr`, or a fake in tests. */
export interface ByteSink extends SyncWriter {
  write(p: Uint8Array): Promise<number>;
}

/**
 * How long the server's log lines gather before they are written while it serves HTTP: under
 * load a write per request cost a system call and a wake-up of the log's reader each; a line
 * reaching the log this much later changes nothing for its reader.
 */
export const LOG_GATHER_MS = 20;

/** Options for {@linkcode LineWriter}. */
export interface LineWriterOptions {
  /** Bounds what waits for a sink that stopped taking lines (default 8 MiB). */
  maxQueuedBytes?: number;
  /**
   * While serving, how long the first line of a batch waits for others before they go out in one
   * write (default 0: at the end of the synchronous run that logged it).
   */
  gatherMs?: number;
  /** While gathering, a batch this large goes out at once (default 64 KiB). */
  gatherBytes?: number;
}

/**
 * Writes log lines to a sink such as stderr. At first each line goes out at once, in a
 * synchronous write, so it keeps its order with everything else the process writes (a command's
 * output, answers over stdio). Once the process serves HTTP (`serving()`), lines are gathered for
 * up to `gatherMs` (or `gatherBytes`) and go out in one asynchronous write, and lines logged while
 * a write is under way go out together in the next: a busy server spends one system call (and
 * wakes whatever reads its log once) for many lines, off its main thread, and a line may reach
 * stderr shortly after the response it describes. Whoever ends the process waits for `drain()`,
 * which writes what is gathered at once; an uncaught error, which cannot wait, gets `flushSync()`.
 * A sink that fails (stderr closed) drops lines instead of taking the process down, and one that
 * stops taking them (a stalled reader) makes it drop lines past `maxQueuedBytes`, saying how many
 * once it takes them again.
 */
export class LineWriter {
  #sink: ByteSink;
  #maxQueuedBytes: number;
  #async = false;
  #queued: string[] = [];
  #queuedBytes = 0;
  #dropped = 0;
  #writing: Promise<void> | null = null;
  #gatherMs: number;
  #gatherBytes: number;
  /** The timer of the batch being gathered, if one is. */
  #gathering: ReturnType<typeof setTimeout> | undefined;
  #encoder = new TextEncoder();

  constructor(sink: ByteSink, options: LineWriterOptions = {}) {
    this.#sink = sink;
    this.#maxQueuedBytes = options.maxQueuedBytes ?? 8 * 1024 * 1024;
    this.#gatherMs = options.gatherMs ?? 0;
    this.#gatherBytes = options.gatherBytes ?? 64 * 1024;
  }

  /** Writes one line (without its newline). */
  readonly write = (line: string): void => {
    if (!this.#async) {
      this.#writeSync(`${line}\n`);
      return;
    }
    if (this.#queuedBytes + line.length > this.#maxQueuedBytes) {
      this.#dropped++;
      return;
    }
    this.#queued.push(line);
    this.#queuedBytes += line.length + 1;
    // Lines logged while a write is under way go out with the next one.
    if (this.#writing) return;
    if (this.#gatherMs > 0 && this.#queuedBytes < this.#gatherBytes) {
      this.#gathering ??= setTimeout(this.#flush, this.#gatherMs);
    } else {
      this.#flush();
    }
  };

  /** Ends the gathering and starts a write of what waits, unless one is under way. */
  readonly #flush = (): void => {
    clearTimeout(this.#gathering);
    this.#gathering = undefined;
    if (!this.#writing) this.#writing = this.#pump();
  };

  /** From now on lines are written asynchronously, many to a write. */
  serving(): void {
    this.#async = true;
  }

  /** Settles once every line written so far is out (or the sink failed). */
  async drain(): Promise<void> {
    for (;;) {
      // A line logged while the last write ended starts a new batch: it goes out at once too.
      if (this.#gathering !== undefined) this.#flush();
      if (!this.#writing) return;
      await this.#writing;
    }
  }

  /** Writes the queued lines at once; a write already under way is left to finish. */
  flushSync(): void {
    clearTimeout(this.#gathering);
    this.#gathering = undefined;
    if (this.#queued.length === 0 && this.#dropped === 0) return;
    this.#writeSync(this.#take());
  }

  /** The queued lines as one text, after a line saying how many were dropped, if any were. */
  #take(): string {
    const lines = this.#queued;
    if (this.#dropped > 0) {
      lines.unshift(JSON.stringify({
        time: new Date().toISOString(),
        level: "warn",
        msg: "log lines dropped: stderr did not take them fast enough",
        dropped: this.#dropped,
      }));
      this.#dropped = 0;
    }
    this.#queued = [];
    this.#queuedBytes = 0;
    return `${lines.join("\n")}\n`;
  }

  async #pump(): Promise<void> {
    // Not a byte before `#writing` holds this call: a sink that throws at once must still
    // find it set, so that the `finally` below clears it.
    await null;
    try {
      while (this.#queued.length > 0 || this.#dropped > 0) {
        const bytes = this.#encoder.encode(this.#take());
        let written = 0;
        while (written < bytes.length) written += await this.#sink.write(bytes.subarray(written));
      }
    } catch {
      // The sink is gone: logging must not take the server down with it.
      this.#queued = [];
      this.#queuedBytes = 0;
    } finally {
      this.#writing = null;
    }
  }

  #writeSync(text: string): void {
    try {
      writeAllSync(this.#sink, this.#encoder.encode(text));
    } catch {
      // As above.
    }
  }
}
