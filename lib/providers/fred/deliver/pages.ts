// Reading a paged FRED operation: the first page parsed, later pages scanned item by item from the
// raw body into the file, and what is missing when a cap or the deadline stops the reading.
import { ToolError } from "../../../errors.ts";
import { remainingMs } from "../../../http/request_scope.ts";
import type { Logger } from "../../../log.ts";
import type { JobCheckpoint, JobHandle } from "../../../output/jobs.ts";
import { pageCheckpoint, writePages } from "../../../output/paged_writes.ts";
import { JsonScanError, scanJsonList } from "../../../output/json_scan.ts";
import { chooseOutput, countRowsTokens, modelProfile, tokenCounter } from "../../../output/tokens.ts";
import type { OutputDecision } from "../../../output/tokens.ts";
import type { RowWriter } from "../../../output/row_writers.ts";
import type { FredSettings } from "../settings.ts";
import { sourceOf } from "../format.ts";
import type { Source } from "../format.ts";
import { LIST_KEYS, listItem, parseResponse, screenItem } from "../parse.ts";
import type { Parsed } from "../parse.ts";
import { autoFacts, BATCH_ROWS, type Call, type Missing, pageSize } from "./call.ts";
import { fileRows, writeRows } from "./file.ts";

/** Fetches one page parsed whole (the first page: at most `job_row_threshold + 1` rows). */
export async function parsedPage(
  call: Call,
  offset: number,
  limit: number,
  signal: AbortSignal,
  logger: Logger,
): Promise<{ parsed: Parsed; url: string }> {
  const response = await call.deps.client.get(
    call.spec.endpoint,
    { ...call.query, limit, offset },
    { signal, logger, noCache: true },
  );
  return { parsed: parseResponse(call.spec.kind, response.data), url: response.url };
}

/**
 * Fetches one page and hands its items to `onItems` batch by batch, scanned from the raw body;
 * at most `limit` items. Resolves to the number of items.
 */
async function streamedPage(
  call: Call,
  offset: number,
  limit: number,
  signal: AbortSignal,
  logger: Logger,
  onItems: (items: Record<string, unknown>[]) => Promise<void>,
): Promise<number> {
  const kind = call.spec.kind;
  const { body } = await call.deps.client.getBytes(
    call.spec.endpoint,
    { ...call.query, limit, offset },
    { signal, logger },
  );
  let taken = 0;
  try {
    const scanned = await scanJsonList(body, LIST_KEYS[kind]!, async (batch) => {
      const room = limit - taken;
      if (room <= 0) return;
      const items = (batch.length > room ? batch.slice(0, room) : batch).map((raw) => listItem(kind, raw));
      taken += items.length;
      await onItems(items);
    }, { batchSize: BATCH_ROWS });
    if (!scanned.found && scanned.fields["error_message"] !== undefined) {
      throw new ToolError(
        "DECODE_ERROR",
        `FRED answered with an error: ${call.deps.client.mask(String(scanned.fields["error_message"]))}`,
      );
    }
    if (!scanned.found) {
      // A page without the list is not "no more rows": it is an answer this call cannot read.
      throw new ToolError(
        "DECODE_ERROR",
        `FRED's answer did not have the expected shape: no "${LIST_KEYS[kind]}" list`,
        {
          retryable: false,
          hint: "Try again; if it persists, FRED may have changed this endpoint",
        },
      );
    }
  } catch (e) {
    if (!(e instanceof JsonScanError)) throw e;
    // Some rows of this page may be written already: retrying the page would repeat them.
    throw new ToolError("DECODE_ERROR", `FRED's answer could not be read: ${e.message}`, {
      retryable: false,
      hint: "Try again; if it persists, FRED may be sending broken data",
    });
  } finally {
    // Frees the page's bytes now rather than at the next full collection, which V8 puts off
    // while memory outside its heap grows: this keeps a job's memory flat across pages.
    release(body);
  }
  return taken;
}

/** Detaches a buffer nobody else holds, so its memory goes back at once. */
function release(bytes: Uint8Array): void {
  const buffer = bytes.buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer };
  if (!(buffer instanceof ArrayBuffer) || buffer.byteLength === 0) return;
  try {
    buffer.transfer?.(0);
  } catch {
    // Not transferable (shared or already detached): the collector will have it.
  }
}

/** What a paged pull is to deliver. */
export interface Plan {
  /** Rows asked for and available (the caller's limit, or everything from the offset). */
  wanted: number;
  /** Rows to write: `wanted`, unless `max_rows` caps it. */
  target: number;
}

/** What the row cap leaves out, or undefined. */
export function capMissing(call: Call, plan: Plan): Missing | undefined {
  if (plan.target >= plan.wanted) return undefined;
  return {
    rows: plan.wanted - plan.target,
    reason: `one file holds at most ${call.deps.settings.max_rows.toLocaleString("en-US")} rows (max_rows)`,
    next_offset: call.offset + plan.target,
  };
}

/** What is missing after writing `written` of `plan`'s rows (FRED may hold fewer than it said). */
export function missingAfter(call: Call, plan: Plan, written: number): Missing | undefined {
  if (written < plan.target) {
    return {
      rows: plan.wanted - written,
      reason: `FRED stopped answering rows after ${
        (call.offset + written).toLocaleString("en-US")
      }, though its count said ${
        (call.offset + plan.wanted).toLocaleString("en-US")
      } (the series may have been revised meanwhile)`,
      next_offset: call.offset + written,
    };
  }
  return capMissing(call, plan);
}

/** Where a paged pull's data comes from, as results and files cite it. */
export function pagedSource(call: Call): Source {
  return sourceOf(
    call.deps.client.publicUrl(call.spec.endpoint, {
      ...call.query,
      ...(call.args["limit"] === undefined ? {} : { limit: call.args["limit"] as number }),
      ...(call.offset ? { offset: call.offset } : {}),
    }),
    call.args["series_id"],
  );
}

/** Whether fetching `pages` more pages fits well within the call's deadline. */
export function fitsDeadline(call: Call, pages: number): boolean {
  const left = remainingMs(call.deps.clock.now());
  return estimatedSeconds(call.deps.settings, pages) * 1000 <= left / 2;
}

/** Why auto wrote a paged result to a file: its tokens, counted on the first page and scaled. */
export async function pagedDecision(call: Call, first: Parsed, rows: number): Promise<OutputDecision> {
  const counter = await tokenCounter(modelProfile(call.deps.settings.model_name).encoding);
  const shown = first.items.map((i) => screenItem(call.spec.kind, i, first.meta));
  const tokens = Math.ceil(countRowsTokens(shown, counter) * rows / Math.max(1, shown.length));
  return chooseOutput("auto", { ...autoFacts(call, rows, tokens), fitsOnScreen: false });
}

interface StreamOptions {
  /** The first page, parsed: its rows are written first. Absent when carrying on from `from`. */
  first?: Parsed;
  /** Where a file taken over from another replica stands (its first page is in it already). */
  from?: { rows: number; offset: number };
  target: number;
  writer: RowWriter;
  signal: AbortSignal;
  logger: Logger;
  /** Called with the rows in the file after each page, and the point a job can carry on from. */
  onRows(rows: number, point: JobCheckpoint): void | Promise<void>;
  /** Jobs retry a failed page; calls rely on the client's retries. */
  job?: JobHandle;
}

/**
 * Writes the first page's rows, then fetches and writes the rest page by page, batch by batch
 * (or carries on from `o.from`). Resolves to the rows written: fewer than `target` when FRED runs
 * out early.
 */
export async function streamPages(call: Call, o: StreamOptions): Promise<number> {
  const size = pageSize(call);
  let written = o.from?.rows ?? 0;
  if (!o.from) {
    const head = (o.first?.items ?? []).slice(0, o.target);
    await writeRows(call, o.writer, head);
    written = head.length;
    await o.onRows(written, pageCheckpoint(o.writer, written, { offset: call.offset + written }));
  }
  return await writePages({
    writer: o.writer,
    cursor: { offset: o.from?.offset ?? call.offset + written },
    rows: written,
    target: o.target,
    fetchPage: async ({ offset }, room, write) => {
      const fetch = () =>
        streamedPage(
          call,
          offset,
          Math.min(size, room),
          o.signal,
          o.logger,
          (items) => write(fileRows(call, items)),
        );
      const rows = o.job ? await withJobRetries(call, o.job, fetch) : await fetch();
      return { rows, next: { offset: offset + rows } };
    },
    // FRED may hold fewer rows than its count said (a revision between pages): a page of none ends it.
    onPage: o.onRows,
  });
}

/** Retries a job step after a retryable failure, waiting `rate_limit_retry_delay` (or Retry-After). */
export async function withJobRetries<T>(call: Call, job: JobHandle, step: () => Promise<T>): Promise<T> {
  const { settings, clock } = call.deps;
  for (let attempt = 0;; attempt++) {
    try {
      return await step();
    } catch (e) {
      if (
        !(e instanceof ToolError) || !e.retryable || attempt >= settings.job_retries || job.signal.aborted
      ) throw e;
      const delay = (e.retryAfterS ?? settings.rate_limit_retry_delay) * 1000;
      job.retrying({ code: e.errorType, message: e.message }, attempt + 1, delay);
      await clock.sleep(delay, job.signal);
    }
  }
}

/** About how long `requests` FRED requests take under the configured rate limits. */
export function estimatedSeconds(settings: FredSettings, requests: number): number {
  const perRequest = Math.max(
    settings.rate_limit_per_second > 0 ? 1 / settings.rate_limit_per_second : 0,
    settings.rate_limit_per_minute > 0 ? 60 / settings.rate_limit_per_minute : 0,
  );
  // About one second of FRED's own time per page, plus the pacing the rate limits impose.
  return Math.max(1, Math.ceil(requests * (perRequest + 1)));
}
