// fred_project_list, fred_project_create and fred_project_files: the project folders under the
// storage root (seed 003's layout), with their files' resource URIs.
import { z } from "zod";
import type { ToolDefinition } from "../../mcp/provider.ts";
import { fitToLimit, jsonText, markdownTable, truncationNotice } from "../../mcp/output.ts";
import { anyObject } from "../../output/schema.ts";
import type { ProjectStorage } from "../../output/storage.ts";
import { pageEnd } from "./format.ts";
import { integer, responseFormat, text } from "./params.ts";

/** The folders every FRED project gets, per seed 003. */
export const PROJECT_SUBDIRS = ["series", "maps", "releases", "categories", "sources", "tags"] as const;

const LOCAL = { openWorldHint: false } as const;

const projectName = text(200).describe("Project name");

/** The three project tools over one storage. */
// deno-lint-ignore no-explicit-any
export function projectTools(storage: ProjectStorage): ToolDefinition<any, any>[] {
  const offset = integer(0, 100_000).optional();
  const listInput = z.strictObject({
    offset: offset.describe("Default 0"),
    response_format: responseFormat,
  });
  // Compact output schemas: open, principal fields only (the text and docs describe the rest).
  const listOutput = z.looseObject({
    storage_dir: z.string(),
    projects: z.array(anyObject()),
    total_projects: z.number(),
  });
  const createInput = z.strictObject({
    project_name: text(200).describe("Letters, digits, - and _, e.g. gdp-study"),
    description: text(500).optional().describe("What it is for"),
    response_format: responseFormat,
  });
  const createOutput = z.looseObject({
    project_name: z.string(),
    project_path: z.string(),
    created: z.boolean(),
  });
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

  const list: ToolDefinition<typeof listInput, typeof listOutput> = {
    name: "fred_project_list",
    title: "FRED projects",
    toolset: "fred-projects",
    description: 'FRED project folders (where output "file" writes), with file counts, sizes and dates.',
    input: listInput,
    output: listOutput,
    annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, ...LOCAL },
    async handler(args, ctx) {
      const mine = storage.forOwner(ctx.owner, ctx.client);
      // Over HTTP the server's folders mean nothing to the caller (and are not theirs to know).
      const shownBase = ctx.owner === undefined ? mine.base : storage.uriPrefix;
      const projects = (await mine.listProjects()).map((p) =>
        ctx.owner === undefined ? p : { ...p, path: `${storage.uriPrefix}${p.name}/` }
      );
      const totalMb = Math.round(projects.reduce((s, p) => s + p.total_size_mb, 0) * 1000) / 1000;
      const from = args.offset ?? 0;
      const page = projects.slice(from);
      const fitted = fitToLimit(page, ctx.limits.characterLimit, ({ items, truncated }) => {
        const next = from + items.length < projects.length ? from + items.length : null;
        const structured = {
          status: "success" as const,
          storage_dir: shownBase,
          projects: items,
          total_projects: projects.length,
          total_storage_mb: totalMb,
          offset: from,
          next_offset: next,
        };
        const text = args.response_format === "json" ? jsonText(structured) : [
          `## FRED projects in \`${shownBase}\``,
          items.length === 0
            ? '_No projects yet: create one with fred_project_create, or write a file with output: "file"._'
            : markdownTable(
              ["name", "files", "MB", "created", "modified", "description"],
              items.map((
                p,
              ) => [p.name, p.file_count, p.total_size_mb, p.created_date, p.last_modified, p.description]),
            ),
          ...(truncated
            ? [
              truncationNotice(items.length, page.length, {
                nextOffset: next,
                limit: ctx.limits.characterLimit,
              }),
            ]
            : []),
        ].join("\n\n");
        return { text, structured };
      });
      return { text: fitted.text, structured: fitted.structured };
    },
  };

  const create: ToolDefinition<typeof createInput, typeof createOutput> = {
    name: "fred_project_create",
    title: "Create a FRED project",
    toolset: "fred-projects",
    description: 'Creates a FRED project folder for output "file" (an existing one is kept).',
    input: createInput,
    output: createOutput,
    annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, ...LOCAL },
    async handler(args, ctx) {
      const result = await storage.forOwner(ctx.owner, ctx.client).ensureProject(
        args.project_name,
        args.description ?? null,
        "project_name",
      );
      const message = result.created
        ? `Project '${args.project_name}' created successfully`
        : `Project '${args.project_name}' already exists; nothing was changed`;
      const structured = {
        status: "success" as const,
        project_name: args.project_name,
        project_path: ctx.owner === undefined ? result.path : `${storage.uriPrefix}${args.project_name}/`,
        created: result.created,
        subdirectories_created: result.subdirs,
        message,
      };
      const text = args.response_format === "json"
        ? jsonText(structured)
        : `${message}.\n\nFolder: \`${
          ctx.owner === undefined ? result.path : `${storage.uriPrefix}${args.project_name}/`
        }\`\nSubfolders: ${result.subdirs.join(", ")}`;
      return { text, structured };
    },
  };

  const files: ToolDefinition<typeof filesInput, typeof filesOutput> = {
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

  return [list, create, files];
}
