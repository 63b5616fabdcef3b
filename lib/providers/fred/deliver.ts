// Where a FRED result goes: inline (cut to the response limit), to a project file with an
// excerpt, or to a background job that streams pages into a file. Shared by the six data tools.
//
// Paged operations written to a file (observations in auto or file mode, lists in file mode)
// fetch every page asked for. The first request asks for at most `job_row_threshold + 1` rows,
// which is enough to learn FRED's count and so decide, by the row threshold alone, whether the
// rest runs in the call or in a background job; a call whose pages could not finish well within
// its deadline goes to a job too. Pages after the first are scanned item by item from the raw
// body and written in batches (lib/output/json_scan.ts), so memory follows a batch, not the page
// size or the series.
import { cite } from "../../output/provenance.ts";
import type { ToolCallContext, ToolOutput } from "../../mcp/provider.ts";
import { checkFilename, checkProjectName } from "../../output/paths.ts";
import { chooseOutput, countRowsTokens, modelProfile, tokenCounter } from "../../output/tokens.ts";
import { sourceOf } from "./format.ts";
import type { Source } from "./format.ts";
import { isReadable, parseResponse, screenItem } from "./parse.ts";
import type { Parsed } from "./parse.ts";
import { fredQuery, resolveOperation } from "./params.ts";
import type { DataArgs } from "./params.ts";
import {
  autoFacts,
  type Call,
  type DataResult,
  EXCERPT_ROWS,
  type FredDeps,
  type Missing,
  pageSize,
  requestLimit,
} from "./deliver/call.ts";
import { discard, fileAnswer, fileResult, finishFile, openFile, pulledMeta } from "./deliver/file.ts";
import { startPagedJob, startSingleFetchJob } from "./deliver/jobs.ts";
import {
  capMissing,
  fitsDeadline,
  missingAfter,
  pagedDecision,
  pagedSource,
  parsedPage,
  type Plan,
  streamPages,
} from "./deliver/pages.ts";
import { screenResult } from "./deliver/screen.ts";
export { type DataResult, type FredDeps } from "./deliver/call.ts";
export { registerResumers } from "./deliver/jobs.ts";

/** Runs one data tool call: checks, the FRED request(s), and the delivery the mode asks for. */
export async function runDataCall(
  tool: string,
  args: DataArgs,
  ctx: ToolCallContext,
  deps: FredDeps,
): Promise<
  ToolOutput<DataResult>
> {
  const mode = args.output ?? deps.settings.output_mode;
  const spec = resolveOperation(tool, args, { multiPage: mode === "file" });
  deps.client.requireKey();
  const format = args.format ?? deps.settings.output_format;
  const project = args.project ?? deps.settings.project_name;
  if (mode !== "screen") {
    checkProjectName(project, "project");
    if (args.filename !== undefined) checkFilename(args.filename, format);
  }
  const call: Call = {
    tool,
    spec,
    args,
    ctx,
    deps,
    storage: deps.storage.forOwner(ctx.owner, ctx.client),
    query: fredQuery(spec, args),
    offset: typeof args["offset"] === "number" ? args["offset"] : 0,
    mode,
    format,
    project,
  };
  const seriesId = typeof args["series_id"] === "string" ? args["series_id"] : undefined;
  if (seriesId) {
    const alfred = ["realtime_start", "realtime_end", "vintage_dates", "output_type"].some((k) =>
      args[k] !== undefined
    );
    cite({
      permalink: alfred
        ? `https://alfred.stlouisfed.org/series?seid=${encodeURIComponent(seriesId)}`
        : `https://fred.stlouisfed.org/series/${encodeURIComponent(seriesId)}`,
    });
  }
  if (spec.job === "always" && mode !== "screen") return await startSingleFetchJob(call);
  if (spec.paged && mode !== "screen" && (spec.kind === "observations" || mode === "file")) {
    return await pagedToFile(call);
  }

  const limit = requestLimit(call);
  const params = { ...call.query, ...(limit === undefined ? {} : { limit, offset: call.offset }) };
  const response = await deps.client.get(spec.endpoint, params, {
    signal: ctx.signal,
    logger: ctx.logger,
    fresh: args.fresh === true,
    cacheable: (data) => isReadable(spec.kind, data),
  });
  const parsed = parseResponse(spec.kind, response.data);
  // One series' metadata: FRED's own last update is the answer's as-of.
  const updated = spec.kind === "series" && parsed.items.length === 1
    ? parsed.items[0]!["last_updated"]
    : undefined;
  if (typeof updated === "string" && updated !== "") cite({ as_of: `series last updated ${updated}` });
  return await deliver(call, parsed, sourceOf(response.url, args["series_id"]));
}

/** Sends a fetched result inline or to a file, as the mode (and for auto, its size) decides. */
async function deliver(
  call: Call,
  parsed: Parsed,
  source: Source,
  missing?: Missing,
): Promise<ToolOutput<DataResult>> {
  if (call.mode === "screen") return screenResult(call, parsed, source);
  if (call.mode === "file") return await fileResult(call, parsed, source, undefined, missing);
  // Tokens are counted on what would be shown (notes shortened, repeated fields dropped).
  const shown = parsed.items.map((i) => screenItem(call.spec.kind, i, parsed.meta));
  const counter = await tokenCounter(modelProfile(call.deps.settings.model_name).encoding);
  const facts = autoFacts(call, parsed.items.length, countRowsTokens(shown, counter));
  // First as if it fitted: over the token budget or the row threshold it goes to a file anyway.
  const hopeful = chooseOutput("auto", { ...facts, fitsOnScreen: true });
  if (hopeful.mode === "screen" && !missing) {
    const screen = screenResult(call, parsed, source, hopeful);
    if (screen.structured?.["truncated"] === false && !screen.structured["clipped_fields"]) return screen;
  }
  return await fileResult(
    call,
    parsed,
    source,
    chooseOutput("auto", { ...facts, fitsOnScreen: false }),
    missing,
  );
}

/**
 * Paged operations to a file (observations with auto or file output, lists with file output):
 * the first request tells how many rows there are; small results are delivered at once, the rest
 * is streamed page by page into a file, in the call or, above the job threshold, in a job.
 */
async function pagedToFile(call: Call): Promise<ToolOutput<DataResult>> {
  const { settings } = call.deps;
  const asked = typeof call.args["limit"] === "number" ? call.args["limit"] : Infinity;
  const size = pageSize(call);
  const first = await parsedPage(
    call,
    call.offset,
    Math.min(asked, size, settings.job_row_threshold + 1),
    call.ctx.signal,
    call.ctx.logger,
  );
  const source = pagedSource(call);
  const total = first.parsed.total ?? call.offset + first.parsed.items.length;
  const wanted = Math.min(asked, Math.max(0, total - call.offset));
  const plan: Plan = { wanted, target: Math.min(wanted, settings.max_rows) };
  const got = first.parsed.items;
  const head: Parsed = { ...first.parsed, meta: pulledMeta(call, first.parsed, plan.target) };
  if (plan.target <= got.length) {
    return await deliver(
      call,
      { ...head, items: got.slice(0, plan.target) },
      source,
      capMissing(call, plan),
    );
  }
  if (call.mode === "auto" && plan.target <= settings.screen_row_threshold) {
    // Small enough to show: gather the few pages, then let auto decide.
    const items = [...got];
    while (items.length < plan.target) {
      const next = await parsedPage(
        call,
        call.offset + items.length,
        Math.min(size, plan.target - items.length),
        call.ctx.signal,
        call.ctx.logger,
      );
      if (next.parsed.items.length === 0) break;
      items.push(...next.parsed.items);
    }
    return await deliver(
      call,
      { ...head, items: items.slice(0, plan.target) },
      source,
      missingAfter(call, plan, Math.min(items.length, plan.target)),
    );
  }
  const pages = Math.ceil((plan.target - got.length) / size);
  if (plan.target > settings.job_row_threshold || !fitsDeadline(call, pages)) {
    return await startPagedJob(call, head, plan, source);
  }

  // At most the job threshold, and quick: stream in this call, reporting progress per page.
  const { file, writer } = await openFile(call, head.meta, source);
  let written: number;
  try {
    written = await streamPages(call, {
      first: head,
      target: plan.target,
      writer,
      signal: call.ctx.signal,
      logger: call.ctx.logger,
      onRows: (rows) => call.ctx.progress(rows, plan.target, `Fetched ${rows} of ${plan.target} rows`),
    });
  } catch (e) {
    await discard(call, file, writer);
    throw e;
  }
  const done = await finishFile(call, file, writer, source, missingAfter(call, plan, written));
  const decision = call.mode === "auto" ? await pagedDecision(call, head, plan.target) : undefined;
  return fileAnswer(call, done, source, got.slice(0, EXCERPT_ROWS), head, decision);
}
