// Scans over api.ra.no pages that the tools filter themselves. Under a bbox, api.ra.no also
// returns every record whose geometry is null, wherever it lies (recorded: 996 of the first 1,000
// lokaliteter of a small box, and `numberMatched` counts them), so a listing of what is in the
// box, or a ranking of what is near a point, has to read on past those records. A scan reads
// pages until it has what it wants, the upstream ends, the record cap is reached, or the call's
// deadline is near; it always says where it stopped, so a cursor resumes there exactly.
import { ToolError } from "../../errors.ts";
import type { QueryValue } from "../../http/fetch_client.ts";
import { nextPageBudget } from "../../http/deadline.ts";
import { itemsWithFallback } from "./_common.ts";
import type { OgcToolDeps } from "./_common.ts";
import type { CallOptions } from "./client.ts";
import type { Licence, RawFeature } from "./parse.ts";

/** What to scan and when to stop. */
export interface ScanRequest {
  dataset: string;
  collection: string;
  /** Sent with every page (bbox, filter), without limit and offset. */
  query: Record<string, QueryValue>;
  /** Upstream offset of the first record to read. */
  start: number;
  /** Page size of the first request; later pages use `pageSize`. */
  firstLimit: number;
  pageSize: number;
  /** Stop once this many records are kept. */
  want: number;
  /** Stop after reading this many records. */
  maxRecords: number;
  /** Sorts a record: `"keep"`, or why it is passed over (counted in `ScanResult.passed`). */
  classify(record: RawFeature): string;
}

/** A kept record and its upstream offset. */
export interface KeptRecord {
  record: RawFeature;
  position: number;
}

/**
 * Why a scan ended: it has `want` records (`filled`), the upstream has nothing after `next`
 * (`end`), time ran short (`deadline`), `maxRecords` were read (`max_records`), the upstream sent
 * the same records again (`repeated`), or a later page failed (`failed`).
 */
export type ScanStop = "filled" | "end" | "deadline" | "max_records" | "repeated" | "failed";

/** What a scan found. */
export interface ScanResult {
  kept: KeptRecord[];
  /** Upstream offset of the first record not read: where a continuation starts. */
  next: number;
  stop: ScanStop;
  /** Records after `next` in the last page read that would have been kept. */
  keptAhead: number;
  /** Records read (kept or not). */
  read: number;
  /** Records read and not kept, by the reason `classify` gave. */
  passed: Record<string, number>;
  /** Upstream requests made. */
  pages: number;
  /** The first page's `numberMatched`. */
  numberMatched: number | null;
  licence: Licence | null;
  /** The URL of the first page. */
  sourceUrl: string;
}

/** Scans from `request.start`; warnings say what went wrong on the way. */
export async function scanItems(
  deps: OgcToolDeps,
  request: ScanRequest,
  call: CallOptions,
  warnings: string[],
): Promise<ScanResult> {
  const kept: KeptRecord[] = [];
  const seen = new Set<string>();
  const out: ScanResult = {
    kept,
    next: request.start,
    stop: "end",
    keptAhead: 0,
    read: 0,
    passed: {},
    pages: 0,
    numberMatched: null,
    licence: null,
    sourceUrl: "",
  };
  let pos = request.start;
  let overflowNoted = false;
  for (;;) {
    if (out.read >= request.maxRecords) {
      out.stop = "max_records";
      break;
    }
    const size = Math.max(
      1,
      Math.min(out.pages === 0 ? request.firstLimit : request.pageSize, request.maxRecords - out.read),
    );
    let pageCall = call;
    if (out.pages > 0) {
      const budget = nextPageBudget(deps.clock.now(), deps.settings);
      if (!budget.go) {
        out.stop = "deadline";
        break;
      }
      if (budget.timeoutMs !== undefined) pageCall = { ...call, timeoutMs: budget.timeoutMs };
    }
    let fetched;
    try {
      fetched = await itemsWithFallback(
        deps,
        request.dataset,
        request.collection,
        { ...request.query, limit: size, offset: pos },
        pageCall,
        warnings,
      );
    } catch (e) {
      // What was read before a later page failed is still an answer; the cursor retries that page.
      if (out.pages === 0 || call.signal.aborted || !(e instanceof ToolError) || !e.retryable) throw e;
      out.stop = e.errorType === "TIMEOUT" ? "deadline" : "failed";
      if (out.stop === "failed") warnings.push(`The page at upstream offset ${pos} failed: ${e.message}`);
      break;
    }
    const { page } = fetched;
    if (out.pages === 0) {
      out.numberMatched = page.numberMatched;
      out.licence = page.licence;
      out.sourceUrl = fetched.url;
    }
    out.pages++;
    let records = page.features;
    if (records.length > fetched.limit) {
      // A server that ignores `limit`: only what was asked for counts, so positions stay exact.
      records = records.slice(0, fetched.limit);
      if (!overflowNoted) {
        warnings.push(
          `api.ra.no sent more records than asked for; only the first ${fetched.limit} of a page were read`,
        );
        overflowNoted = true;
      }
    }
    if (records.length === 0) {
      out.stop = "end";
      break;
    }
    let fresh = 0;
    let i = 0;
    for (; i < records.length && kept.length < request.want; i++) {
      const record = records[i]!;
      out.read++;
      if (record.id !== null) {
        if (seen.has(record.id)) continue;
        seen.add(record.id);
      }
      fresh++;
      const kind = request.classify(record);
      if (kind === "keep") kept.push({ record, position: pos + i });
      else out.passed[kind] = (out.passed[kind] ?? 0) + 1;
    }
    if (i < records.length) {
      out.keptAhead = records.slice(i).filter((r) =>
        !(r.id !== null && seen.has(r.id)) && request.classify(r) === "keep"
      ).length;
      pos += i;
      out.stop = "filled";
      break;
    }
    pos += records.length;
    if (fresh === 0) {
      warnings.push(
        `api.ra.no sent the same records again for offset ${pos - records.length}, so the scan stopped there`,
      );
      out.stop = "repeated";
      break;
    }
    const more = page.next !== null || (page.numberMatched !== null && pos < page.numberMatched);
    if (!more) {
      out.stop = "end";
      break;
    }
    if (kept.length >= request.want) {
      out.stop = "filled";
      break;
    }
  }
  out.next = pos;
  return out;
}
