// A FRED export whose page requests a fake FRED counts, one of them held until the test lets it go
// (the replica asking it is killed meanwhile), for the tests of jobs resumed on another replica.
import type { FakeUpstream, Received } from "../fakes/upstream.ts";
import { fredError, syntheticObservations } from "../providers/fred/fake_fred.ts";

/** Rows of every held export's series. */
export const EXPORT_ROWS = 20_000;

/** FRED's settings for these exports: pages of 2,000 after a first page of 1,001, CSV files. */
export const EXPORT_SETTINGS = {
  page_size: 2000,
  job_row_threshold: 1000,
  output_format: "csv",
  job_retries: 1,
};

/** One request for an export's page, with when it arrived. */
export interface PageRequest {
  offset: number;
  limit: number;
  at: number;
}

/** A series served page by page, its requests recorded, the one numbered `held` (0-based) held. */
export interface HeldSeries {
  asked: PageRequest[];
  /** Resolves when the held request has arrived. */
  arrived: Promise<void>;
  /** Lets the held request be answered. */
  release(): void;
}

/**
 * Routes `series` (EXPORT_ROWS rows, shaped as FRED's observations) on `fake`, holding its
 * request number `held` (none: -1); with `failAfter`, every request after the held one is
 * answered with FRED's error body and that status.
 */
export function heldSeries(fake: FakeUpstream, series: string, held: number, failAfter?: number): HeldSeries {
  const asked: PageRequest[] = [];
  const gate = Promise.withResolvers<void>();
  const arrived = Promise.withResolvers<void>();
  fake.route({
    path: "/fred/series/observations",
    match: (r: Received) => r.url.searchParams.get("series_id") === series,
    reply: async (r: Received) => {
      const offset = Number(r.url.searchParams.get("offset") ?? 0);
      const limit = Number(r.url.searchParams.get("limit"));
      asked.push({ offset, limit, at: Date.now() });
      if (asked.length === held + 1) {
        arrived.resolve();
        await gate.promise;
      }
      if (failAfter !== undefined && held >= 0 && asked.length > held + 1) {
        return fredError(failAfter, "Internal Server Error.");
      }
      return { json: syntheticObservations(EXPORT_ROWS, offset, limit) };
    },
  });
  return { asked, arrived: arrived.promise, release: () => gate.resolve() };
}

/** The files under `root` named `name` (a job's file lives in its owner's project folder). */
export function filesNamed(root: string, name: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(root)) {
    const path = `${root}/${e.name}`;
    if (e.isDirectory) out.push(...filesNamed(path, name));
    else if (e.name === name) out.push(path);
  }
  return out;
}

/** The bytes of the finished file a job's result names (its relative path's last part). */
export function resultBytes(home: string, result: Record<string, unknown>): Uint8Array {
  const name = String(result["relative_path"]).split("/").pop()!;
  const found = filesNamed(home, name);
  if (found.length !== 1) throw new Error(`Expected one file named "${name}", found ${found.length}`);
  return Deno.readFileSync(found[0]!);
}
