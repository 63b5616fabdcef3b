// An upstream pull written into a file page by page, with a checkpoint after each completed
// page: a job taken over by another replica (jobs.ts) reopens the file at the last one
// (row_writers.ts's resumeRowWriter) and carries on from the next page, so no recorded page is
// fetched again and none is written twice. A provider only fetches one page at a cursor; the
// loop and what a checkpoint holds are here.
import type { JobCheckpoint } from "./job_types.ts";
import type { RowWriter } from "./row_writers.ts";

/** What fetching one page did: the rows it wrote and the cursor of the page after it. */
export interface FetchedPage<C> {
  rows: number;
  next: C;
}

/** Options for {@linkcode writePages}. */
export interface WritePagesOptions<C extends Record<string, unknown>> {
  writer: RowWriter;
  /** The cursor of the next page to fetch. */
  cursor: C;
  /** Rows in the file already. */
  rows: number;
  /** Rows to stop at. */
  target: number;
  /**
   * Fetches the page at `cursor`, at most `room` rows, handing them to `write` as they arrive.
   * A page of no rows ends the pull (the upstream ran out early).
   */
  fetchPage(
    cursor: C,
    room: number,
    write: (rows: readonly Record<string, unknown>[]) => Promise<void>,
  ): Promise<FetchedPage<C>>;
  /** Called after each completed page with the rows so far and the point to carry on from. */
  onPage(rows: number, point: JobCheckpoint): void | Promise<void>;
}

/** The point a pull can carry on from: `rows` in the file and the next page's `cursor`. */
export function pageCheckpoint(
  writer: RowWriter,
  rows: number,
  cursor: Record<string, unknown>,
): JobCheckpoint {
  return { rows, cursor: { ...cursor }, file: writer.checkpoint() };
}

/** Fetches and writes pages from `o.cursor` until `o.target` rows; resolves to the rows in the file. */
export async function writePages<C extends Record<string, unknown>>(
  o: WritePagesOptions<C>,
): Promise<number> {
  let rows = o.rows;
  let cursor = o.cursor;
  const write = (items: readonly Record<string, unknown>[]) => o.writer.write(items);
  while (rows < o.target) {
    const page = await o.fetchPage(cursor, o.target - rows, write);
    if (page.rows === 0) break;
    rows += page.rows;
    cursor = page.next;
    await o.onPage(rows, pageCheckpoint(o.writer, rows, cursor));
  }
  return rows;
}
