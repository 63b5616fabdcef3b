// Background jobs for FRED pulls too large for one call: started with an accepted answer, run
// page by page with retries, and resumed after a restart from the recipe kept with the job.
import * as nodePath from "node:path";
import { ToolError } from "../../../errors.ts";
import { jsonText, markdownTable } from "../../../mcp/shaping.ts";
import type { ToolCallContext, ToolOutput } from "../../../mcp/provider.ts";
import type { JobCheckpoint, JobHandle, JobOutcome, OwnerRef } from "../../../output/jobs.ts";
import { checkProjectName, checkRelativePath } from "../../../output/paths.ts";
import type { ReservedFile } from "../../../output/storage.ts";
import { toMb } from "../../../output/storage.ts";
import type { OutputMode } from "../../../output/tokens.ts";
import { OUTPUT_MODES } from "../../../output/tokens.ts";
import { FILE_FORMATS } from "../../../output/row_writers.ts";
import type { FileFormat, RowWriter, WriterCheckpoint } from "../../../output/row_writers.ts";
import { sourceLines, sourceOf } from "../format.ts";
import type { Source } from "../format.ts";
import { OPERATIONS } from "../operations.ts";
import { parseResponse } from "../parse.ts";
import type { Parsed } from "../parse.ts";
import { fredQuery, resolveOperation } from "../params.ts";
import type { DataArgs } from "../params.ts";
import { base, type Call, type DataResult, type FredDeps, heading, pageSize } from "./call.ts";
import {
  discard,
  finishFile,
  jobRequest,
  leaveFile,
  openFile,
  openWriter,
  pulledMeta,
  reserveFile,
  resumeWriter,
  writeRows,
  type Written,
} from "./file.ts";
import {
  estimatedSeconds,
  missingAfter,
  pagedSource,
  parsedPage,
  type Plan,
  streamPages,
  withJobRetries,
} from "./pages.ts";

function acceptedAnswer(
  call: Call,
  jobId: string,
  estimatedRows: number | null,
  seconds: number,
  source: Source,
): ToolOutput<DataResult> {
  const message = estimatedRows === null
    ? "Large dataset detected. Processing in background..."
    : `Large dataset detected (${estimatedRows.toLocaleString("en-US")} rows). Processing in background...`;
  const structured: DataResult = {
    ...base(call, source),
    status: "accepted",
    output_mode: "file",
    message,
    job_id: jobId,
    estimated_rows: estimatedRows,
    estimated_time_seconds: seconds,
    project: call.project,
    format: call.format,
    check_status: "Use fred_job_status tool with this job_id",
  };
  const text = call.args.response_format === "json" ? jsonText(structured) : [
    heading(call),
    message,
    markdownTable(["job_id", "estimated rows", "estimated seconds", "project", "format"], [[
      jobId,
      estimatedRows ?? "unknown",
      seconds,
      call.project,
      call.format,
    ]]),
    `Check progress with fred_job_status {"job_id": "${jobId}"} (add "wait_seconds" to wait for it); cancel with fred_job_cancel.`,
    sourceLines(source),
  ].join("\n\n");
  return { text, structured };
}

function jobResult(call: Call, written: Written, source: Source): Record<string, unknown> {
  return {
    // Over HTTP the data folder's place on the server is not the caller's business (and a job
    // resumed on another replica has no call context to ask): the view of its storage says.
    file_path: call.storage.localPaths ? written.file.path : written.file.relativePath,
    relative_path: written.file.relativePath,
    resource_uri: written.file.uri,
    project: call.project,
    rows_written: written.rows,
    file_size_mb: toMb(written.bytes),
    file_size_bytes: written.bytes,
    format: call.format,
    ...(written.missing ? { incomplete: true, missing: written.missing } : {}),
    source,
  };
}

/** The message of a finished job: "Ready for analysis" only when the file holds everything. */
function jobMessage(written: Written): string {
  const m = written.missing;
  if (!m) return "Data successfully saved to file. Ready for analysis.";
  return `Incomplete: saved ${written.rows.toLocaleString("en-US")} rows; ${
    m.rows.toLocaleString("en-US")
  } rows asked for are missing because ${m.reason}. For the rest, call again with offset=${m.next_offset}.`;
}

/** A job failure that keeps no file says so. */
function withoutFile(e: unknown): unknown {
  if (e instanceof ToolError && (e.errorType === "STORAGE_LIMIT" || e.errorType === "QUOTA_EXCEEDED")) {
    return new ToolError(e.errorType, `${e.message}; the partial file was removed`, {
      retryable: false,
      ...(e.hint ? { hint: e.hint } : {}),
    });
  }
  return e;
}

/** Starts a background job for the pages after the first; answers at once with the job's id. */
export async function startPagedJob(
  call: Call,
  first: Parsed,
  plan: Plan,
  source: Source,
): Promise<ToolOutput<DataResult>> {
  // Refused before anything is reserved: a client at its running-jobs share loses nothing.
  call.deps.jobs.checkCapacity(call.ctx.client);
  const { file, writer } = await openFile(call, first.meta, source);
  const pages = Math.ceil(plan.target / pageSize(call));
  // The first page is written as soon as the job runs, then let go.
  let firstPage: Parsed | undefined = first;
  const view = call.deps.jobs.start({
    kind: `${call.tool} ${call.spec.operation}`,
    request: jobRequest(call),
    estimatedRows: plan.target,
    ...(call.ctx.owner === undefined ? {} : { owner: call.ctx.owner }),
    ...(call.ctx.client === undefined ? {} : { client: call.ctx.client }),
    resume: { kind: RESUME_PAGED, data: { ...recipe(call, file), plan: { ...plan } } },
    run: (job) => {
      const head = firstPage!;
      firstPage = undefined;
      return pagedJob(call, { file, writer, head, plan, source, job });
    },
  });
  await call.deps.jobs.persisted(view.job_id);
  return acceptedAnswer(
    call,
    view.job_id,
    plan.target,
    estimatedSeconds(call.deps.settings, pages - 1),
    source,
  );
}

/**
 * The work of a paged job: the first page's rows, then the rest page by page, into the file, with
 * a checkpoint after each page; or, taken over, the rest after the checkpoint `from`.
 */
async function pagedJob(
  call: Call,
  o: {
    file: ReservedFile;
    writer: RowWriter;
    head?: Parsed;
    from?: { rows: number; offset: number };
    plan: Plan;
    source: Source;
    job: JobHandle;
  },
): Promise<JobOutcome> {
  const { file, writer, plan, source, job } = o;
  const logger = call.deps.logger.child({ tool_name: call.tool, job_id: job.id });
  let rows: number;
  try {
    rows = await streamPages(call, {
      ...(o.head ? { first: o.head } : {}),
      ...(o.from ? { from: o.from } : {}),
      target: plan.target,
      writer,
      signal: job.signal,
      logger,
      onRows: (_rows, point) =>
        job.checkpoint(point, plan.target, `Fetching ${call.spec.kind} from FRED API...`),
      job,
    });
    if (job.signal.aborted) throw job.signal.reason;
  } catch (e) {
    // Handed over (a shutdown, or a lease lost): the next replica carries on in this file.
    if (job.handedOver) leaveFile(call, file, writer);
    else await discard(call, file, writer);
    throw withoutFile(e);
  }
  const written = await finishFile(call, file, writer, source, missingAfter(call, plan, rows));
  return {
    result: jobResult(call, written, source),
    message: jobMessage(written),
    incomplete: written.missing !== undefined,
  };
}

const RESUME_PAGED = "fred.paged";

const RESUME_SINGLE = "fred.single";

/**
 * What another replica needs to carry a job on: the call's arguments (FRED's key is never
 * among them) and the file it writes. The owner travels as a hash, with the job.
 */
function recipe(call: Call, file: ReservedFile): Record<string, unknown> {
  return {
    tool: call.tool,
    args: call.args,
    mode: call.mode,
    format: call.format,
    project: call.project,
    file: file.relativePath,
  };
}

/**
 * Lets this replica carry on with FRED jobs whose replica died: a paged pull carries on from its
 * last checkpoint (the file is cut back to it and the next page fetched); without a usable one it
 * starts again from its first row (the dead replica's partial file is removed). The file keeps
 * its name.
 */
export function registerResumers(deps: FredDeps): void {
  // A job ended at its takeover leaves no partial file behind (its recipe is checked first).
  const abandon = async (data: Record<string, unknown>, owner: OwnerRef) => {
    await resumedCall(data, owner, deps, true);
  };
  deps.jobs.resumable(RESUME_PAGED, async (data, job, owner, from) => {
    const plan = recipePlan(data, deps);
    const point = plan && from ? checkedPoint(data, from, plan) : undefined;
    const logger = deps.logger.child({ job_id: job.id });
    if (plan && point) {
      const call = await resumedCall(data, owner, deps, false);
      const source = pagedSource(call);
      const reopened = await reopen(call, checkRecipe(data).file, source, from!.file!).catch((e) => {
        // Not the file the checkpoint describes (gone, shorter, another writer's): start again.
        logger.warn("job checkpoint not usable: starting again from the first row", {
          error: e instanceof Error ? e.message : String(e),
        });
        return undefined;
      });
      if (reopened) return await pagedJob(call, { ...reopened, from: point, plan, source, job });
      job.progress(0, plan.target, "Starting again from the first row");
    } else if (from) {
      logger.warn("job checkpoint not usable: starting again from the first row", {
        error: "it does not fit the job's recipe",
      });
    }
    const call = await resumedCall(data, owner, deps, true);
    const asked = typeof call.args["limit"] === "number" ? call.args["limit"] : Infinity;
    const first = await withJobRetries(
      call,
      job,
      () => parsedPage(call, call.offset, Math.min(asked, pageSize(call)), job.signal, logger),
    );
    const total = first.parsed.total ?? call.offset + first.parsed.items.length;
    const wanted = Math.min(asked, Math.max(0, total - call.offset));
    const again: Plan = { wanted, target: Math.min(wanted, deps.settings.max_rows) };
    const source = pagedSource(call);
    const head: Parsed = { ...first.parsed, meta: pulledMeta(call, first.parsed, again.target) };
    const { file, writer } = await openFile(call, head.meta, source);
    return await pagedJob(call, { file, writer, head, plan: again, source, job });
  }, abandon);
  deps.jobs.resumable(RESUME_SINGLE, async (data, job, owner) => {
    const call = await resumedCall(data, owner, deps, true);
    return await singleFetchJob(call, await reserveFile(call), job);
  }, abandon);
}

/** Claims the unfinished file again and reopens it at the checkpoint `point`. */
async function reopen(
  call: Call,
  relative: string,
  source: Source,
  point: WriterCheckpoint,
): Promise<{ file: ReservedFile; writer: RowWriter }> {
  const file = await call.storage.reclaim(call.project, relative, call.format);
  return { file, writer: await resumeWriter(call, file, source, point) };
}

/** The plan a paged job's recipe holds (recipes of older replicas have none). */
function recipePlan(data: Record<string, unknown>, deps: FredDeps): Plan | undefined {
  const plan = data["plan"] as Record<string, unknown> | undefined;
  const wanted = plan?.["wanted"];
  const target = plan?.["target"];
  const count = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
  if (!count(wanted) || !count(target) || target > wanted || target > deps.settings.max_rows) {
    return undefined;
  }
  return { wanted, target };
}

/**
 * Where a checkpoint says the pull stands, when it fits the recipe: its next offset follows its
 * rows from the recipe's offset, within the plan, and its file holds those rows. A checkpoint
 * comes back from the shared store: it may only ever point inside what the recipe asks for.
 */
function checkedPoint(
  data: Record<string, unknown>,
  from: JobCheckpoint,
  plan: Plan,
): { rows: number; offset: number } | undefined {
  const args = data["args"] as Record<string, unknown> | undefined;
  const start = typeof args?.["offset"] === "number" ? args["offset"] : 0;
  const offset = from.cursor["offset"];
  if (
    from.rows <= 0 || from.rows > plan.target || from.file?.rows !== from.rows ||
    offset !== start + from.rows
  ) return undefined;
  return { rows: from.rows, offset };
}

/** Rebuilds a job's call from its recipe; `fresh` removes what the dead replica left half written. */
async function resumedCall(
  data: Record<string, unknown>,
  owner: OwnerRef,
  deps: FredDeps,
  fresh: boolean,
): Promise<Call> {
  // The recipe comes back from the shared store: every part is checked as a caller's input
  // would be before anything is fetched or removed (a forged one once removed files elsewhere).
  const { tool, args, mode, format, project, file: relative } = checkRecipe(data);
  const spec = resolveOperation(tool, args, { multiPage: mode === "file" });
  // Its file counts against the client it was started for, as on the replica that started it.
  const storage = deps.storage.forOwnerHash(owner.hash, owner.client);
  const path = nodePath.join(storage.projectPath(project), ...checkRelativePath(relative, 2, "file"));
  if (fresh) {
    const partial = nodePath.join(nodePath.dirname(path), `.${nodePath.basename(path)}.partial`);
    await Deno.remove(partial).catch(() => {});
    await Deno.remove(`${partial}.wide`).catch(() => {});
  }
  // A job's work never reads the call's context beyond these: it has its own signal and logger.
  const ctx = {
    signal: new AbortController().signal,
    logger: deps.logger,
    requestId: "resumed",
    limits: { characterLimit: 25_000 },
    progress: () => Promise.resolve(),
  } as unknown as ToolCallContext;
  return {
    tool,
    spec,
    args,
    ctx,
    deps,
    storage,
    query: fredQuery(spec, args),
    offset: typeof args["offset"] === "number" ? args["offset"] : 0,
    mode,
    format,
    project,
    fileName: nodePath.basename(path),
  };
}

/** A stored recipe ({@linkcode recipe}) read back: each part checked, else a refusal. */
function checkRecipe(data: Record<string, unknown>): {
  tool: string;
  args: DataArgs;
  mode: OutputMode;
  format: FileFormat;
  project: string;
  file: string;
} {
  const bad = (what: string): never => {
    throw new ToolError("WORKER_LOST", `The stored job cannot be resumed: its ${what} is not valid`, {
      retryable: true,
      hint: "Start the same request again",
    });
  };
  const { tool, args, mode, format, project, file } = data;
  if (typeof tool !== "string" || !Object.hasOwn(OPERATIONS, tool)) bad("tool");
  const scalar = (v: unknown) => v === null || ["string", "number", "boolean"].includes(typeof v);
  if (
    typeof args !== "object" || args === null || Array.isArray(args) ||
    !Object.values(args).every((v) => scalar(v) || (Array.isArray(v) && v.length <= 1000 && v.every(scalar)))
  ) bad("arguments");
  if (typeof mode !== "string" || !(OUTPUT_MODES as readonly string[]).includes(mode)) bad("output mode");
  if (typeof format !== "string" || !(FILE_FORMATS as readonly string[]).includes(format)) bad("file format");
  if (typeof project !== "string" || typeof file !== "string") bad("file");
  return {
    tool: tool as string,
    args: args as DataArgs,
    mode: mode as OutputMode,
    format: format as FileFormat,
    project: checkProjectName(project as string, "project"),
    file: file as string,
  };
}

/** Shape files and other single large answers: fetched and written by a background job. */
export async function startSingleFetchJob(call: Call): Promise<ToolOutput<DataResult>> {
  const source = singleSource(call);
  call.deps.jobs.checkCapacity(call.ctx.client);
  const file = await reserveFile(call);
  const view = call.deps.jobs.start({
    kind: `${call.tool} ${call.spec.operation}`,
    request: jobRequest(call),
    estimatedRows: null,
    ...(call.ctx.owner === undefined ? {} : { owner: call.ctx.owner }),
    ...(call.ctx.client === undefined ? {} : { client: call.ctx.client }),
    resume: { kind: RESUME_SINGLE, data: recipe(call, file) },
    run: (job) => singleFetchJob(call, file, job),
  });
  await call.deps.jobs.persisted(view.job_id);
  return acceptedAnswer(call, view.job_id, null, estimatedSeconds(call.deps.settings, 1), source);
}

function singleSource(call: Call): Source {
  return sourceOf(call.deps.client.publicUrl(call.spec.endpoint, call.query));
}

/** The work of a single-fetch job: one request, written to the reserved file. */
async function singleFetchJob(call: Call, file: ReservedFile, job: JobHandle): Promise<JobOutcome> {
  const source = singleSource(call);
  const logger = call.deps.logger.child({ tool_name: call.tool, job_id: job.id });
  let writer: RowWriter | undefined;
  try {
    const response = await withJobRetries(
      call,
      job,
      () =>
        call.deps.client.get(call.spec.endpoint, call.query, {
          signal: job.signal,
          logger,
          noCache: true,
        }),
    );
    const parsed = parseResponse(call.spec.kind, response.data);
    job.progress(0, parsed.items.length, "Writing the file");
    writer = await openWriter(call, file, parsed.meta, source);
    await writeRows(call, writer, parsed.items);
    job.progress(parsed.items.length, parsed.items.length, "Written");
    if (job.signal.aborted) throw job.signal.reason;
  } catch (e) {
    await discard(call, file, writer);
    throw withoutFile(e);
  }
  const written = await finishFile(call, file, writer, source);
  return { result: jobResult(call, written, source), message: jobMessage(written) };
}
