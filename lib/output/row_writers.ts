// Streaming CSV and JSON writers. Rows arrive in batches (one upstream page at a time), are
// encoded and written at once, and are not kept: memory follows the batch size, not the file
// size. A file is written under a hidden temporary name and renamed when complete, so a
// listing never shows half a file and a cancelled job leaves nothing behind. A CSV column first
// met in a later batch (FRED's output_type 3 has a column per vintage, and a vintage that only
// added recent observations shows up on the last page) is appended: on close the rows written
// before it are padded with empty cells in one streaming pass. Configured secrets are masked in
// each batch as it is written (an upstream may echo a key into a title or a value). Between
// batches a writer can say where its file stands (a checkpoint), and another process can reopen
// the temporary file there (`resumeRowWriter`): that is how a job taken over by another replica
// carries on (paged_writes.ts). The temporary file is therefore only ever appended to.
import type { SecretMasker } from "../secrets.ts";

/** The file formats the writers produce. */
export type FileFormat = "csv" | "json";

/** The file formats, for zod enums. */
export { FILE_FORMATS } from "./modes.ts";

/** MIME type of a stored file by its format or extension. */
export function mimeTypeOf(format: string): string {
  if (format === "csv") return "text/csv";
  if (format === "json") return "application/json";
  if (format === "md") return "text/markdown";
  return "application/octet-stream";
}

/** What a finished writer reports. */
export interface WriteSummary {
  path: string;
  rows_written: number;
  bytes: number;
  format: FileFormat;
}

/** A file being written batch by batch. */
export interface RowWriter {
  readonly format: FileFormat;
  readonly rowsWritten: number;
  /** The most rows handed over in one call (what the writer ever held at once). */
  readonly largestBatch: number;
  /** Encodes and writes one batch; the rows are not retained. */
  write(rows: readonly Record<string, unknown>[]): Promise<void>;
  /**
   * Finishes the file and moves it to its final name. JSON files get `trailer`'s fields after
   * the rows (e.g. what is missing from an incomplete file); CSV files have no place for them.
   */
  close(trailer?: Record<string, unknown>): Promise<WriteSummary>;
  /** Stops and removes the temporary file. Safe to call more than once, or after `close`. */
  abort(): Promise<void>;
  /**
   * Stops and keeps the temporary file as it is, for another process to carry on from a
   * checkpoint (see {@linkcode resumeRowWriter}); a later `abort` removes nothing.
   */
  leave(): void;
  /**
   * Where the file stands now, between two writes: what {@linkcode resumeRowWriter} needs to
   * carry on from here in another process (no row is held).
   */
  checkpoint(): WriterCheckpoint;
}

/**
 * A point a temporary file can be reopened at: its length, the rows in it, and the writer's own
 * state (CSV: the columns met so far and where each width of row begins).
 */
export interface WriterCheckpoint {
  bytes: number;
  rows: number;
  state: Record<string, unknown>;
}

/** Options for {@linkcode openRowWriter}. */
export interface RowWriterOptions {
  format: FileFormat;
  /** Final path, taken when the file is complete. */
  path: string;
  /** Temporary path written meanwhile. */
  tempPath: string;
  /** CSV: the column order. Keys not listed here are appended in the order they are met. */
  columns?: readonly string[];
  /** JSON: fields written at the top level before the rows (source, metadata). */
  head?: Record<string, unknown>;
  /** JSON: the key of the rows array (default `items`). */
  itemsKey?: string;
  /**
   * Called with the size of each chunk before it is written; throwing (a storage limit) stops
   * the write before the chunk lands. The caller then aborts the writer, removing the file.
   */
  charge?: (bytes: number) => void;
  /** Secrets masked in every row, the JSON head and trailer, before they are encoded. */
  secrets?: SecretMasker;
}

/**
 * Flattens nested objects into dotted keys (`geometry.type`) and encodes arrays as JSON text,
 * as CSV needs one scalar per cell.
 */
export function flattenRow(
  row: Record<string, unknown>,
  prefix = "",
  out: Record<string, unknown> = {},
): Record<
  string,
  unknown
> {
  for (const [key, value] of Object.entries(row)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      flattenRow(value as Record<string, unknown>, name, out);
    } else if (Array.isArray(value)) {
      out[name] = JSON.stringify(value);
    } else {
      out[name] = value;
    }
  }
  return out;
}

/** One CSV cell (RFC 4180): quoted when it holds a comma, quote, CR or LF. Null is empty. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = typeof value === "string"
    ? value
    : typeof value === "object"
    ? JSON.stringify(value)
    : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV line with CRLF, as RFC 4180 and spreadsheet programs expect. */
export function csvLine(cells: readonly unknown[]): string {
  return `${cells.map(csvCell).join(",")}\r\n`;
}

/** Opens a streaming writer for `options.format`. */
export async function openRowWriter(options: RowWriterOptions): Promise<RowWriter> {
  const file = await Deno.open(options.tempPath, { write: true, createNew: true });
  return options.format === "csv" ? new CsvWriter(file, options) : new JsonWriter(file, options);
}

/**
 * Reopens a temporary file another writer left at `point` (its process died): what was written
 * after that point (a half-written batch) is cut off and writing carries on there. The kept bytes
 * are charged again. Throws when the file is not a plain file at least that long, or the state
 * does not fit it: a checkpoint read back from a shared store only ever shortens its own file.
 */
export async function resumeRowWriter(
  options: RowWriterOptions,
  point: WriterCheckpoint,
): Promise<RowWriter> {
  const info = await Deno.lstat(options.tempPath);
  if (!info.isFile || !isCount(point.bytes) || !isCount(point.rows) || point.bytes > info.size) {
    throw new Error(`Cannot resume "${options.tempPath}": the file does not match its checkpoint`);
  }
  // A leftover of a CSV file being widened when its writer died; it is made again on close.
  await Deno.remove(widerPath(options.tempPath)).catch(() => {});
  options.charge?.(point.bytes);
  const file = await Deno.open(options.tempPath, { write: true });
  try {
    await file.truncate(point.bytes);
    await file.seek(0, Deno.SeekMode.End);
    const writer = options.format === "csv" ? new CsvWriter(file, options) : new JsonWriter(file, options);
    writer.restore(point);
    return writer;
  } catch (e) {
    file.close();
    throw e;
  }
}

function isCount(n: unknown): n is number {
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
}

const encoder = new TextEncoder();

abstract class BaseWriter implements RowWriter {
  abstract readonly format: FileFormat;
  rowsWritten = 0;
  largestBatch = 0;
  protected bytes = 0;
  protected options: RowWriterOptions;
  #file: Deno.FsFile;
  #state: "open" | "closed" | "aborted" | "left" = "open";

  constructor(file: Deno.FsFile, options: RowWriterOptions) {
    this.#file = file;
    this.options = options;
  }

  protected abstract encodeBatch(rows: readonly Record<string, unknown>[]): string;
  protected abstract tail(trailer?: Record<string, unknown>): string;
  /**
   * Last changes to the closed temporary file; resolves to true when they moved the file to its
   * final name themselves (the temporary file itself is never rewritten: a checkpoint of it
   * stays valid until the end).
   */
  protected finish(): Promise<boolean> {
    return Promise.resolve(false);
  }
  /** The format's own part of a checkpoint. */
  protected abstract state(): Record<string, unknown>;
  /** Takes a checkpoint's state back; throws when it does not fit the file. */
  protected abstract restoreState(state: Record<string, unknown>): void;

  checkpoint(): WriterCheckpoint {
    return { bytes: this.bytes, rows: this.rowsWritten, state: this.state() };
  }

  /** Carries on from `point` (see {@linkcode resumeRowWriter}). */
  restore(point: WriterCheckpoint): void {
    this.bytes = point.bytes;
    this.rowsWritten = point.rows;
    this.restoreState(point.state);
  }

  async write(rows: readonly Record<string, unknown>[]): Promise<void> {
    if (this.#state !== "open") throw new Error("The writer is no longer open");
    this.largestBatch = Math.max(this.largestBatch, rows.length);
    const text = this.encodeBatch(this.masked(rows));
    this.rowsWritten += rows.length;
    await this.put(text);
  }

  /** `value` with the configured secrets masked in every string it holds. */
  protected masked<T>(value: T): T {
    return this.options.secrets ? this.options.secrets.maskDeep(value) : value;
  }

  protected async put(text: string): Promise<void> {
    if (text === "") return;
    const bytes = encoder.encode(text);
    this.options.charge?.(bytes.length);
    let done = 0;
    while (done < bytes.length) done += await this.#file.write(bytes.subarray(done));
    this.bytes += bytes.length;
  }

  async close(trailer?: Record<string, unknown>): Promise<WriteSummary> {
    if (this.#state !== "open") throw new Error("The writer is no longer open");
    try {
      await this.put(this.tail(trailer));
      this.#file.close();
      this.#state = "closed";
      if (await this.finish()) await Deno.remove(this.options.tempPath);
      else await Deno.rename(this.options.tempPath, this.options.path);
    } catch (e) {
      await this.abort();
      throw e;
    }
    return {
      path: this.options.path,
      rows_written: this.rowsWritten,
      bytes: this.bytes,
      format: this.format,
    };
  }

  leave(): void {
    if (this.#state !== "open") return;
    this.#file.close();
    this.#state = "left";
  }

  async abort(): Promise<void> {
    if (this.#state === "aborted" || this.#state === "left") return;
    if (this.#state === "open") {
      try {
        this.#file.close();
      } catch {
        // Already closed.
      }
    }
    this.#state = "aborted";
    await Deno.remove(this.options.tempPath).catch(() => {});
    await Deno.remove(widerPath(this.options.tempPath)).catch(() => {});
  }
}

/** Where a CSV file is rewritten with its late columns (hidden, like the temporary file). */
function widerPath(tempPath: string): string {
  return `${tempPath}.wide`;
}

/** Where rows of one column count begin in a CSV file (byte offset of the first such row). */
interface Segment {
  start: number;
  width: number;
}

const QUOTE = 0x22;
const CR = 0x0d;
const LF = 0x0a;

class CsvWriter extends BaseWriter {
  readonly format = "csv" as const;
  #columns: string[] | undefined;
  #known = new Set<string>();
  #segments: Segment[] = [];

  protected encodeBatch(rows: readonly Record<string, unknown>[]): string {
    const flat = rows.map((r) => flattenRow(r));
    if (!this.#columns) {
      this.#columns = [...(this.options.columns ?? [])];
      this.#known = new Set(this.#columns);
    }
    const columns = this.#columns;
    const before = columns.length;
    for (const row of flat) {
      for (const key of Object.keys(row)) {
        if (!this.#known.has(key)) {
          this.#known.add(key);
          columns.push(key);
        }
      }
    }
    let out = "";
    // Rows are written with every column known so far; earlier, narrower rows are padded on close.
    if (this.#segments.length === 0) {
      out = csvLine(columns);
      this.#segments.push({ start: this.bytes + encoder.encode(out).length, width: columns.length });
    } else if (columns.length > before) {
      this.#segments.push({ start: this.bytes, width: columns.length });
    }
    for (const row of flat) out += csvLine(columns.map((c) => row[c]));
    return out;
  }

  protected tail(): string {
    // A result with no rows still gets its header, so the file is a valid, empty table.
    if (!this.#columns && this.options.columns?.length) return csvLine(this.options.columns);
    return "";
  }

  /** Pads rows written before a late column, and writes the full header, in one pass. */
  protected override async finish(): Promise<boolean> {
    const columns = this.#columns;
    if (!columns || this.#segments.every((s) => s.width === columns.length)) return false;
    const wide = widerPath(this.options.tempPath);
    const source = await Deno.open(this.options.tempPath, { read: true });
    const target = await Deno.open(wide, { write: true, createNew: true });
    try {
      const header = encoder.encode(csvLine(columns));
      await writeAll(target, header);
      let bytes = header.length;
      const segments = this.#segments;
      let next = 0; // the segment the current row belongs to is segments[next - 1]
      let padding = new Uint8Array(0);
      let offset = 0; // byte offset in the source of the chunk being read
      let rowStart = 0;
      let inQuotes = false;
      let skipping = true; // the old header, replaced above
      const buffer = new Uint8Array(64 * 1024);
      for (;;) {
        const n = await source.read(buffer);
        if (n === null) break;
        const chunk = buffer.subarray(0, n);
        const parts: Uint8Array[] = [];
        let from = 0;
        for (let i = 0; i < n; i++) {
          const b = chunk[i]!;
          const at = offset + i;
          if (at === rowStart && !skipping) {
            while (next < segments.length && segments[next]!.start <= at) next++;
            padding = encoder.encode(",".repeat(columns.length - segments[next - 1]!.width));
          }
          if (b === QUOTE) inQuotes = !inQuotes;
          else if (b === CR && !inQuotes && !skipping && padding.length > 0) {
            parts.push(chunk.subarray(from, i), padding);
            from = i;
          } else if (b === LF && !inQuotes) {
            if (skipping) {
              skipping = false;
              from = i + 1;
            }
            rowStart = at + 1;
          }
        }
        if (!skipping) parts.push(chunk.subarray(from, n));
        for (const part of parts) {
          await writeAll(target, part);
          bytes += part.length;
        }
        offset += n;
      }
      this.bytes = bytes;
    } finally {
      // On failure close() aborts, which removes both files.
      source.close();
      target.close();
    }
    await Deno.rename(wide, this.options.path);
    return true;
  }

  protected state(): Record<string, unknown> {
    // Copies: the checkpoint is stored later, after more rows may have added columns.
    return {
      columns: this.#columns ? [...this.#columns] : null,
      segments: this.#segments.map((s) => [s.start, s.width]),
    };
  }

  protected restoreState(state: Record<string, unknown>): void {
    const { columns, segments } = state;
    const bad = (): never => {
      throw new Error("Cannot resume a CSV file: its checkpoint's columns do not fit it");
    };
    if (columns === null && (this.bytes > 0 || (Array.isArray(segments) && segments.length > 0))) bad();
    if (columns === null) return;
    if (!Array.isArray(columns) || !columns.every((c) => typeof c === "string")) bad();
    if (!Array.isArray(segments) || segments.length === 0) bad();
    const names = columns as string[];
    let last: Segment = { start: 0, width: 0 };
    const parsed: Segment[] = [];
    for (const s of segments as unknown[]) {
      if (!Array.isArray(s) || !isCount(s[0]) || !isCount(s[1])) bad();
      const [start, width] = s as [number, number];
      // Each width starts later and is wider than the one before, within the file and the columns.
      if (start < last.start || width <= last.width || start > this.bytes || width > names.length) bad();
      last = { start, width };
      parsed.push(last);
    }
    if (last.width !== names.length || new Set(names).size !== names.length) bad();
    this.#columns = [...names];
    this.#known = new Set(names);
    this.#segments = parsed;
  }
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) done += await file.write(bytes.subarray(done));
}

class JsonWriter extends BaseWriter {
  readonly format = "json" as const;
  #started = false;
  #first = true;

  protected encodeBatch(rows: readonly Record<string, unknown>[]): string {
    let out = this.#start();
    for (const row of rows) {
      out += `${this.#first ? "" : ",\n"}${JSON.stringify(row)}`;
      this.#first = false;
    }
    return out;
  }

  #start(): string {
    if (this.#started) return "";
    this.#started = true;
    const head = Object.entries(this.masked(this.options.head ?? {}))
      .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)},\n`)
      .join("");
    return `{\n${head}${JSON.stringify(this.options.itemsKey ?? "items")}: [\n`;
  }

  protected state(): Record<string, unknown> {
    return {};
  }

  protected restoreState(): void {
    // Whether the head and a first row were written follows from the bytes and rows.
    this.#started = this.bytes > 0;
    this.#first = this.rowsWritten === 0;
  }

  protected tail(trailer: Record<string, unknown> = {}): string {
    const extra = Object.entries(this.masked(trailer)).map(([k, v]) =>
      `${JSON.stringify(k)}: ${JSON.stringify(v)},\n`
    )
      .join("");
    return `${this.#start()}\n],\n${extra}"rows_written": ${this.rowsWritten}\n}\n`;
  }
}
