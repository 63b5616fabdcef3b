// fred_project_create: a project folder for output "file" (an existing one is kept).
import { z } from "zod";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { jsonText } from "../../../mcp/shaping.ts";
import type { ProjectStorage } from "../../../output/storage.ts";
import { responseFormat, text } from "../params.ts";
import { LOCAL } from "../project_fields.ts";

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

/** `fred_project_create`. */
export function projectCreateTool(
  storage: ProjectStorage,
): ToolDefinition<typeof createInput, typeof createOutput> {
  return {
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
}
