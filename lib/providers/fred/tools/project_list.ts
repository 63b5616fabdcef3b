// fred_project_list: the caller's project folders (where output "file" writes), with file counts,
// sizes and dates.
import { z } from "zod";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { fitToLimit, jsonText, markdownTable, truncationNotice } from "../../../mcp/shaping.ts";
import { anyObject } from "../../../output/schema.ts";
import type { ProjectStorage } from "../../../output/storage.ts";
import { integer, responseFormat } from "../params.ts";
import { LOCAL } from "../project_fields.ts";

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

/** `fred_project_list`. */
export function projectListTool(
  storage: ProjectStorage,
): ToolDefinition<typeof listInput, typeof listOutput> {
  return {
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
}
