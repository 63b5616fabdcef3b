// fred_project_list, fred_project_create and fred_project_files: the project folders under the
// storage root (seed 003's layout), with their files' resource URIs.
import { z } from "zod";
import type { ToolDefinition } from "../../mcp/provider.ts";
import {
  fitToLimit,
  jsonText,
  markdownTable,
  responseFormatField,
  truncationNotice,
} from "../../mcp/output.ts";
import type { ProjectStorage } from "../../output/storage.ts";

/** The folders every FRED project gets, per seed 003. */
export const PROJECT_SUBDIRS = ["series", "maps", "releases", "categories", "sources", "tags"] as const;

const LOCAL = { openWorldHint: false } as const;

const projectName = z.string().min(1).max(200).describe(
  'Project name: 1-64 letters, digits, "-" or "_", e.g. "inflation-study"',
);

const projectInfo = z.object({
  name: z.string().describe("Project name"),
  path: z.string().describe("Absolute folder on the server"),
  description: z.string().nullable().describe("Description given at creation"),
  file_count: z.number().int().describe("Files stored"),
  total_size_mb: z.number().describe("Their size in MB"),
  created_date: z.string().describe("Creation date (YYYY-MM-DD)"),
  last_modified: z.string().describe("Last change (YYYY-MM-DD)"),
});

const fileInfo = z.object({
  name: z.string().describe("File name"),
  path: z.string().describe("Path inside the project, e.g. series/GNPCA_observations_20251008_143022.csv"),
  full_path: z.string().describe("Absolute path on the server"),
  size_bytes: z.number().int().describe("Size in bytes"),
  size_mb: z.number().describe("Size in MB"),
  rows: z.number().int().nullable().describe("Rows written, when recorded"),
  created: z.string().describe("When written (ISO 8601)"),
  modified: z.string().describe("Last modified (ISO 8601)"),
  format: z.string().describe("csv or json"),
  resource_uri: z.string().describe("Resource URI for resources/read"),
});

/** The three project tools over one storage. */
// deno-lint-ignore no-explicit-any
export function projectTools(storage: ProjectStorage): ToolDefinition<any, any>[] {
  const listInput = z.strictObject({ response_format: responseFormatField });
  const listOutput = z.object({
    status: z.literal("success").describe("Always success"),
    storage_dir: z.string().describe("The storage root on the server"),
    projects: z.array(projectInfo).describe("Projects by name"),
    total_projects: z.number().int().describe("Projects in all"),
    total_storage_mb: z.number().describe("Size of every project's files in MB"),
  });
  const createInput = z.strictObject({
    project_name: projectName,
    description: z.string().max(500).optional().describe("What the project is for"),
    response_format: responseFormatField,
  });
  const createOutput = z.object({
    status: z.literal("success").describe("Always success"),
    project_name: z.string().describe("The project"),
    project_path: z.string().describe("Its folder on the server"),
    created: z.boolean().describe("False when it existed already (nothing was changed)"),
    subdirectories_created: z.array(z.string()).describe("Its folders"),
    message: z.string().describe("What happened"),
  });
  const filesInput = z.strictObject({
    project_name: projectName,
    subdirectory: z.enum(PROJECT_SUBDIRS).optional().describe(
      "Only files in this folder: series, maps, releases, categories, sources or tags",
    ),
    sort_by: z.enum(["name", "size", "modified", "created"]).default("modified").describe(
      "name (A-Z), size, modified or created (largest or newest first); default modified",
    ),
    limit: z.number().int().min(1).max(1000).default(100).describe("Most files to list (default 100)"),
    response_format: responseFormatField,
  });
  const filesOutput = z.object({
    status: z.literal("success").describe("Always success"),
    project_name: z.string().describe("The project"),
    project_path: z.string().describe("Its folder on the server"),
    files: z.array(fileInfo).describe("Files, in the order asked"),
    count: z.number().int().describe("Files in this answer"),
    total_files: z.number().int().describe("Files matching in all"),
    total_size_mb: z.number().describe("Their size in MB"),
  });

  const list: ToolDefinition<typeof listInput, typeof listOutput> = {
    name: "fred_project_list",
    title: "FRED projects",
    description:
      'Lists the FRED data projects in the storage folder (FRED_STORAGE_DIR, by default the per-user data folder\'s fred/), with file counts, sizes and dates. Use it to pick a project for output: "file". Over HTTP each session sees only the projects it made.',
    input: listInput,
    output: listOutput,
    annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, ...LOCAL },
    async handler(args, ctx) {
      const mine = storage.forOwner(ctx.owner);
      const projects = await mine.listProjects();
      const totalMb = Math.round(projects.reduce((s, p) => s + p.total_size_mb, 0) * 1000) / 1000;
      const fitted = fitToLimit(projects, ctx.limits.characterLimit, ({ items, truncated }) => {
        const structured = {
          status: "success" as const,
          storage_dir: mine.base,
          projects: items,
          total_projects: projects.length,
          total_storage_mb: totalMb,
        };
        const text = args.response_format === "json" ? jsonText(structured) : [
          `## FRED projects in \`${mine.base}\``,
          items.length === 0
            ? '_No projects yet: create one with fred_project_create, or write a file with output: "file"._'
            : markdownTable(
              ["name", "files", "MB", "created", "modified", "description"],
              items.map((
                p,
              ) => [p.name, p.file_count, p.total_size_mb, p.created_date, p.last_modified, p.description]),
            ),
          ...(truncated ? [truncationNotice(items.length, projects.length)] : []),
        ].join("\n\n");
        return { text, structured };
      });
      return { text: fitted.text, structured: fitted.structured };
    },
  };

  const create: ToolDefinition<typeof createInput, typeof createOutput> = {
    name: "fred_project_create",
    title: "Create a FRED project",
    description: `Creates a project folder in the storage folder with the subfolders ${
      PROJECT_SUBDIRS.join(", ")
    } and a .project.json holding its description. An existing project is left unchanged. Names: 1-64 letters, digits, "-" or "_". The storage folder holds at most FRED_MAX_PROJECTS projects (STORAGE_LIMIT past that).`,
    input: createInput,
    output: createOutput,
    annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, ...LOCAL },
    async handler(args, ctx) {
      const result = await storage.forOwner(ctx.owner).ensureProject(
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
        project_path: result.path,
        created: result.created,
        subdirectories_created: result.subdirs,
        message,
      };
      const text = args.response_format === "json"
        ? jsonText(structured)
        : `${message}.\n\nFolder: \`${result.path}\`\nSubfolders: ${result.subdirs.join(", ")}`;
      return { text, structured };
    },
  };

  const files: ToolDefinition<typeof filesInput, typeof filesOutput> = {
    name: "fred_project_files",
    title: "FRED project files",
    description:
      "Lists the files of a FRED project (optionally one subfolder), with size, rows, dates, format and the resource URI to read each through resources/read.",
    input: filesInput,
    output: filesOutput,
    annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, ...LOCAL },
    async handler(args, ctx) {
      const listed = await storage.forOwner(ctx.owner).listFiles(args.project_name, {
        ...(args.subdirectory ? { subdir: args.subdirectory } : {}),
        sortBy: args.sort_by,
        limit: args.limit,
      });
      const fitted = fitToLimit(listed.files, ctx.limits.characterLimit, ({ items, truncated }) => {
        const structured = {
          status: "success" as const,
          project_name: args.project_name,
          project_path: listed.path,
          files: items,
          count: items.length,
          total_files: listed.total_files,
          total_size_mb: listed.total_size_mb,
        };
        const text = args.response_format === "json" ? jsonText(structured) : [
          `## Files of FRED project "${args.project_name}" (${items.length} of ${listed.total_files}, ${listed.total_size_mb} MB)`,
          items.length === 0 ? "_No files._" : markdownTable(
            ["path", "rows", "MB", "format", "modified", "resource"],
            items.map((f) => [f.path, f.rows ?? "", f.size_mb, f.format, f.modified, f.resource_uri]),
          ),
          ...(truncated
            ? [truncationNotice(items.length, listed.total_files, { hint: "Ask for a smaller limit." })]
            : []),
        ].join("\n\n");
        return { text, structured };
      });
      return { text: fitted.text, structured: fitted.structured };
    },
  };

  return [list, create, files];
}
