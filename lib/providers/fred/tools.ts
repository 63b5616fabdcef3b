// The FRED tools: the six data tools (one `operation` argument each, docs/apis/fred.md; each lists
// its operations with the parameters they need, and the handler is shared, deliver.ts), and the job
// and project tools, one file each in tools/.
import { fredSeriesView } from "./view.ts";
import { z } from "zod";
import { anyObject, nullableNumber } from "../../output/schema.ts";
import type { ToolDefinition } from "../../mcp/provider.ts";
import type { DataArgs } from "./params.ts";
import { toolInput } from "./params.ts";
import { DATA_TOOLS } from "./operations.ts";
import type { DataToolSpec } from "./operations.ts";
import { runDataCall } from "./deliver.ts";
import type { DataResult, FredDeps } from "./deliver.ts";
import type { JobManager } from "../../output/jobs.ts";
import type { ProjectStorage } from "../../output/storage.ts";
import { jobCancelTool } from "./tools/job_cancel.ts";
import { jobListTool } from "./tools/job_list.ts";
import { jobStatusTool } from "./tools/job_status.ts";
import { projectCreateTool } from "./tools/project_create.ts";
import { projectFilesTool } from "./tools/project_files.ts";
import { projectListTool } from "./tools/project_list.ts";

// Not read-only: output "file" writes a project file (always a new one, never overwriting).
const DATA_ANNOTATIONS = {
  readOnlyHint: false,
  idempotentHint: false,
  destructiveHint: false,
  openWorldHint: true,
} as const;

// The output schema is open and names the principal fields only, without descriptions: clients
// validate structuredContent against it, and every agent pays for its characters on every turn.
// The other fields (endpoint, kind, meta, excerpt, decision, missing, estimated_rows, ...) are
// described in docs/apis/fred.md.
const object = anyObject();

/** The structured result of every data tool: inline items, a written file, or an accepted job. */
export const dataOutput = z.looseObject({
  status: z.enum(["success", "accepted"]),
  tool: z.string(),
  operation: z.string(),
  output_mode: z.enum(["screen", "file"]),
  message: z.string(),
  items: z.array(object).optional(),
  total: z.number().optional(),
  count: z.number().optional(),
  offset: z.number().optional(),
  has_more: z.boolean().optional(),
  next_offset: nullableNumber().optional(),
  file_path: z.string().optional(),
  resource_uri: z.string().optional(),
  job_id: z.string().optional(),
  source: object,
});

/** The three toolsets of FRED's tools. */
export const FRED_TOOLSETS = [
  {
    id: "fred-data",
    description:
      "FRED economic data: series and observations, categories, releases, sources, tags, regional maps",
  },
  { id: "fred-jobs", description: "Follow and cancel the background jobs of large FRED pulls" },
  { id: "fred-projects", description: "FRED project folders and the files written to them" },
] as const;

/** Parameters said once per tool ("All but get_tables take ...") instead of on every operation's line. */
const COMMON: readonly (readonly string[])[] = [
  ["realtime_start", "realtime_end"],
  ["limit", "offset"],
  ["sort_order"],
  ["order_by"],
];

/** Parameter names joined by ", ", with an x_start/x_end pair written once as x_start/end. */
function paramList(names: readonly string[]): string {
  const out: string[] = [];
  for (const name of names) {
    const start = /^(.*)_start$/.exec(name);
    if (start && names.includes(`${start[1]}_end`)) out.push(`${name}/end`);
    else if (/_end$/.test(name) && names.includes(name.replace(/_end$/, "_start"))) continue;
    else out.push(name);
  }
  return out.join(", ");
}

/**
 * The operation lines of a tool (`operation: required [optional]`, leaving out the parameters
 * of COMMON) and one sentence per common group saying which operations take it.
 */
function operationLines(t: DataToolSpec): { lines: string[]; notes: string[] } {
  const ops = t.operations;
  const common = new Set(COMMON.flat());
  // Operations with the same parameters and no gloss share a line.
  const rows: { names: string[]; gloss?: string; params: string }[] = [];
  for (const o of ops) {
    const optional = o.optional.filter((n) => !common.has(n));
    let required = o.required;
    if (t.name === "fred_release" && o.operation === "get_dates") {
      // Without release_id it is every release's dates (ALL_RELEASE_DATES), which also sort by
      // order_by.
      required = [];
      optional.unshift("release_id (none: all releases, with order_by)");
    }
    const params = [paramList(required), optional.length ? `[${paramList(optional)}]` : ""]
      .filter((p) => p !== "").join(" ");
    const gloss = t.glosses?.[o.operation];
    const same = gloss ? undefined : rows.find((r) => r.gloss === undefined && r.params === params);
    if (same) same.names.push(o.operation);
    else rows.push({ names: [o.operation], params, ...(gloss ? { gloss } : {}) });
  }
  const lines = rows.map((r) =>
    `${r.names.join(", ")}${r.gloss ? ` (${r.gloss})` : ""}${r.params ? `: ${r.params}` : ""}`
  );
  // Groups taken by the same operations are said in one sentence.
  const byTakers = new Map<string, string[]>();
  for (const group of COMMON) {
    const taking = ops.filter((o) => group.every((n) => o.optional.includes(n))).map((o) => o.operation);
    if (taking.length === 0) continue;
    const key = taking.join(",");
    byTakers.set(key, [...(byTakers.get(key) ?? []), ...group]);
  }
  const notes: string[] = [];
  for (const [key, group] of byTakers) {
    const taking = key.split(",");
    const others = ops.map((o) => o.operation).filter((n) => !taking.includes(n));
    const names = paramList(group);
    const but = `All but ${others.join(", ")} take ${names}.`;
    const only = `${taking.join(", ")} take${taking.length === 1 ? "s" : ""} ${names}.`;
    notes.push(others.length === 0 ? `All take ${names}.` : but.length < only.length ? but : only);
  }
  return { lines, notes };
}

/** The six data tools over shared dependencies. */
export function dataTools(deps: FredDeps): ToolDefinition<z.ZodObject, typeof dataOutput>[] {
  const { settings } = deps;
  // Other tools' large pulls (lists to a file) start jobs too; their answer says how to follow them.
  const jobs = `Over ${
    settings.job_row_threshold.toLocaleString("en-US")
  } rows: a background job (fred_job_status).`;
  return DATA_TOOLS.map((t) => {
    const { lines, notes } = operationLines(t);
    return {
      name: t.name,
      title: t.title,
      toolset: "fred-data",
      description: [
        t.summary,
        `Operations (required [optional]):\n${
          [...lines, ...(notes.length ? [notes.join(" ")] : [])].join("\n")
        }`,
        ...(t.name === "fred_series" ? [jobs] : []),
      ].join("\n"),
      input: toolInput(t.name, settings),
      output: dataOutput,
      annotations: DATA_ANNOTATIONS,
      // Large pulls and file exports outlast a client's timeout: clients that speak the Tasks
      // extension get a task, which follows the background job a large pull starts.
      execution: { taskSupport: "optional" },
      ...(t.name === "fred_series" ? { view: fredSeriesView } : {}),
      handler: (args, ctx) =>
        runDataCall(t.name, args as DataArgs, ctx, deps) as Promise<{ text: string; structured: DataResult }>,
    };
  });
}

/** The three job tools over one job manager. */
// deno-lint-ignore no-explicit-any
export function jobTools(jobs: JobManager): ToolDefinition<any, any>[] {
  return [jobStatusTool(jobs), jobListTool(jobs), jobCancelTool(jobs)];
}

/** The three project tools over one storage. */
// deno-lint-ignore no-explicit-any
export function projectTools(storage: ProjectStorage): ToolDefinition<any, any>[] {
  return [projectListTool(storage), projectCreateTool(storage), projectFilesTool(storage)];
}
