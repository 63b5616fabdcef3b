// fred_project_files: a project's files with their resource URIs, sorted and paged.
import { z } from "zod";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { fitToLimit, jsonText, markdownTable } from "../../../mcp/shaping.ts";
import { anyObject } from "../../../output/schema.ts";
import type { ProjectStorage } from "../../../output/storage.ts";
import { pageEnd } from "../format.ts";
import { integer, responseFormat } from "../params.ts";
import { LOCAL, PROJECT_SUBDIRS, projectName } from "../project_fields.ts";

const offset = integer(0, 100_000).optional();

const filesInput = z.strictObject({
  project_name: projectName,
  subdirectory: z.enum(PROJECT_SUBDIRS).optional().describe("Only this one"),
  sort_by: z.enum(["name", "size", "modified", "created"]).optional().describe(
    "Default modified (newest first)",
  ),
  limit: integer(1, 1000).optional().describe("Default 100, at most 1,000"),
  offset: offset.describe("Default 0"),
  response_format: responseFormat,
});

const filesOutput = z.looseObject({
  project_path: z.string(),
  files: z.array(anyObject()),
  count: z.number(),
  total_files: z.number(),
});

/** `fred_project_files`. */
export function projectFilesTool(
  storage: ProjectStorage,
): ToolDefinition<typeof filesInput, typeof filesOutput> {
  return {
    name: "fred_project_files",
    title: "FRED project files",
    toolset: "fred-projects",
    description: "A FRED project's files: size, rows, dates and resource URI of each.",
    input: filesInput,
    output: filesOutput,
    annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, ...LOCAL },
    async handler(args, ctx) {
      const from = args.offset ?? 0;
      // Sorted and cut from the start: ask for the page's end and skip to it.
      const listed = await storage.forOwner(ctx.owner, ctx.client).listFiles(args.project_name, {
        ...(args.subdirectory ? { subdir: args.subdirectory } : {}),
        sortBy: args.sort_by ?? "modified",
        limit: from + (args.limit ?? 100),
      });
      const page = listed.files.slice(from).map((f) => {
        if (ctx.owner === undefined) return f;
        const { full_path: _hidden, ...shown } = f;
        return shown;
      });
      const fitted = fitToLimit(page, ctx.limits.characterLimit, ({ items, truncated }) => {
        const next = from + items.length < listed.total_files ? from + items.length : null;
        const structured = {
          status: "success" as const,
          project_name: args.project_name,
          project_path: ctx.owner === undefined ? listed.path : `${storage.uriPrefix}${args.project_name}/`,
          files: items,
          count: items.length,
          total_files: listed.total_files,
          total_size_mb: listed.total_size_mb,
          offset: from,
          next_offset: next,
        };
        const shown = items.length ? `${from + 1}-${from + items.length}` : "none";
        const text = args.response_format === "json" ? jsonText(structured) : [
          `## Files of FRED project "${args.project_name}" (${shown} of ${listed.total_files}, ${listed.total_size_mb} MB)`,
          items.length === 0 ? "_No files._" : markdownTable(
            ["path", "rows", "MB", "format", "modified", "resource"],
            items.map((f) => [f.path, f.rows ?? "", f.size_mb, f.format, f.modified, f.resource_uri]),
          ),
          ...pageEnd(items.length, page.length, next, truncated, ctx.limits.characterLimit),
        ].join("\n\n");
        return { text, structured };
      });
      return { text: fitted.text, structured: fitted.structured };
    },
  };
}
