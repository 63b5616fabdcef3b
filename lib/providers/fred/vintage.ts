// Which vintage an observations answer shows (ALFRED). FRED answers with the data as
// known in a real-time period (`realtime_start`..`realtime_end`, today's date by default), or by
// vintage date (`vintage_dates`, `output_type` 2 or 3), or as first released (`output_type` 4).
// Every observations answer names it, in its structured content and one line, and says how to ask
// for another vintage.

/** The vintage an observations answer shows. */
export interface Vintage {
  realtime_start: string | null;
  realtime_end: string | null;
  /** 1 real-time period, 2 by vintage date (all), 3 by vintage date (new and revised), 4 initial release. */
  output_type: number;
  /** The vintage dates asked for (output types 2 and 3, or 1 with vintage_dates). */
  vintage_dates: string[] | null;
  /** Whether this is today's data (no real-time period or vintage was asked for). */
  current: boolean;
  /** One phrase for people: "current vintage (as of 2026-11-27)", "as known on 2008-10-01", … */
  label: string;
}

/** How to reach another vintage, said once in an observations answer. */
export const VINTAGE_HINT =
  "Other vintages (ALFRED): realtime_start and realtime_end = a date for the data as known then; " +
  'vintage_dates (from operation "get_vintage_dates") with output_type 2 for one column per vintage; ' +
  "output_type 4 for first releases only";

/** The vintage of an observations answer, from the caller's arguments and FRED's answer fields. */
export function vintageOf(args: Record<string, unknown>, meta: Record<string, unknown>): Vintage {
  const str = (v: unknown) => typeof v === "string" && v !== "" ? v : null;
  const start = str(meta["realtime_start"]) ?? str(args["realtime_start"]);
  const end = str(meta["realtime_end"]) ?? str(args["realtime_end"]);
  // What was asked wins: FRED applies it (and echoes it; a body that says otherwise is not trusted).
  const typeRaw = Number(args["output_type"] ?? meta["output_type"] ?? 1);
  const outputType = Number.isInteger(typeRaw) && typeRaw >= 1 && typeRaw <= 4 ? typeRaw : 1;
  const asked = args["vintage_dates"];
  const dates = Array.isArray(asked) ? asked.map(String) : null;
  const askedPeriod = args["realtime_start"] !== undefined || args["realtime_end"] !== undefined;
  const current = !askedPeriod && !dates && outputType === 1;
  let label: string;
  if (outputType === 4) {
    label = "initial release only (each observation as first published)";
  } else if (dates && dates.length) {
    const span = dates.length === 1 ? dates[0]! : `${dates.length} vintages, ${dates[0]} to ${dates.at(-1)}`;
    label = outputType === 3
      ? `by vintage date, new and revised values only (${span})`
      : outputType === 2
      ? `by vintage date, one column per vintage (${span})`
      : `as known on the vintage dates ${span}`;
  } else if (current) {
    label = `current vintage (FRED's data as of ${end ?? "today"})`;
  } else if (start && end && start === end) {
    label = `as known on ${start}`;
  } else {
    label = `every vintage in force from ${start ?? "1776-07-04"} to ${
      end ?? "9999-12-31"
    } (each row carries its realtime_start and realtime_end)`;
  }
  return {
    realtime_start: start,
    realtime_end: end,
    output_type: outputType,
    vintage_dates: dates,
    current,
    label,
  };
}
