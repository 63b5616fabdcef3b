// opendata_read (issue 23): a result file read by a tool call, page by page, for clients that
// offer their model tools only (no resources/read, or one that cannot take a resource_link). It
// reads through the same resource templates resources/read serves, as the same caller, so it
// sees exactly the files that caller's resources/read would. Not listed by default: every
// answer that writes a file names it as a next call (through opendata_call).
import { z } from "zod";
import { ToolError } from "../errors.ts";
import { READ_TOOL } from "./next_calls.ts";
import type { ResourceTemplateDefinition, ToolDefinition } from "./provider.ts";
import { isInputRequiredResult, ProtocolError, ResourceNotFoundError, UriTemplate } from "./sdk.ts";

/** Default rows of a CSV page, and characters of a page of any other file. */
const DEFAULT_ROWS = 50;
const DEFAULT_CHARS = 8_000;

const input = z.strictObject({
  uri: z.string().min(1).max(2_000).describe("The file's URI (file.uri or resource_link of an answer)"),
  offset: z.number().int().min(0).max(100_000_000).optional().describe(
    "CSV: rows to skip; other files: characters (next_offset; default 0)",
  ),
  limit: z.number().int().min(1).max(100_000).optional().describe(
    `CSV: rows (default ${DEFAULT_ROWS}); other files: characters (default ${DEFAULT_CHARS})`,
  ),
});

const output = z.object({
  uri: z.string(),
  unit: z.enum(["rows", "characters"]),
  offset: z.number(),
  count: z.number(),
  total: z.number(),
  has_more: z.boolean(),
  next_offset: z.number().nullable(),
  next_calls: z.array(z.object({
    tool: z.string(),
    arguments: z.record(z.string(), z.unknown()),
    for: z.string().optional(),
  })).optional(),
});

/** The records of CSV text (a quoted field may hold line breaks), without the line ends. */
export function csvRecords(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (c === "\n" && !quoted) {
      out.push(text.slice(start, i).replace(/\r$/, ""));
      start = i + 1;
    }
  }
  if (start < text.length) out.push(text.slice(start).replace(/\r$/, ""));
  return out;
}

/** The opendata_read tool over `templates` (the served resource templates, files among them). */
export function readTool(
  templates: () => readonly ResourceTemplateDefinition[],
): ToolDefinition<typeof input, typeof output> {
  return {
    name: READ_TOOL,
    title: "Read a result file",
    toolset: "core",
    description: "Reads a file an answer wrote (its uri), a page at a time: CSV by rows (the header " +
      "repeated on every page), other files by characters. For clients without resources/read.",
    input,
    output,
    annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    async handler(args, ctx) {
      let url: URL;
      try {
        url = new URL(args.uri);
      } catch {
        throw new ToolError("VALIDATION_ERROR", `"${args.uri}" is not a URI`, {
          field: "uri",
          hint: "Pass file.uri (or the resource_link's uri) of the answer that wrote the file",
        });
      }
      const all = templates();
      let found: { t: ResourceTemplateDefinition; vars: Record<string, string | string[]> } | undefined;
      for (const t of all) {
        const vars = new UriTemplate(t.uriTemplate).match(url.href);
        if (vars) {
          found = { t, vars };
          break;
        }
      }
      if (!found) {
        throw new ToolError("NOT_FOUND", `No file is served at "${args.uri}"`, {
          field: "uri",
          hint: `Files are under ${all.map((t) => t.uriTemplate.replace(/\{.*$/, "")).join(", ")}`,
        });
      }
      let body: string;
      let mime: string | undefined;
      try {
        const read = await found.t.read(url, found.vars, {
          ...ctx.mcp,
          ...(ctx.owner === undefined ? {} : { owner: ctx.owner }),
        });
        if (isInputRequiredResult(read)) throw new Error("a file read asked for input");
        const first = read.contents[0] as { text?: string; mimeType?: string } | undefined;
        body = first?.text ?? "";
        mime = first?.mimeType;
      } catch (e) {
        if (e instanceof ResourceNotFoundError) {
          throw new ToolError("NOT_FOUND", `No file at "${args.uri}" for this caller`, {
            field: "uri",
            hint: "Files are kept for their session; write it again with the call that made it",
          });
        }
        if (e instanceof ProtocolError) throw new ToolError("VALIDATION_ERROR", e.message, { field: "uri" });
        throw e;
      }
      const offset = args.offset ?? 0;
      const room = Math.max(1_000, ctx.limits.characterLimit - 600);
      if (mime === "text/csv" || url.pathname.endsWith(".csv")) {
        const records = csvRecords(body);
        const header = records[0] ?? "";
        const rows = records.slice(1);
        const wanted = rows.slice(offset, offset + (args.limit ?? DEFAULT_ROWS));
        let size = header.length;
        let count = 0;
        for (const r of wanted) {
          if (size + r.length + 1 > room) break;
          size += r.length + 1;
          count++;
        }
        return page(
          args.uri,
          "rows",
          offset,
          count,
          rows.length,
          [
            `${args.uri}: rows ${count ? `${offset + 1}-${offset + count}` : "none"} of ${rows.length}`,
            "```csv",
            header,
            ...wanted.slice(0, count),
            "```",
          ].join("\n"),
        );
      }
      const count = Math.max(0, Math.min(args.limit ?? DEFAULT_CHARS, room, body.length - offset));
      return page(
        args.uri,
        "characters",
        offset,
        count,
        body.length,
        `${args.uri}: characters ${offset + 1}-${offset + count} of ${body.length}\n\n${
          body.slice(offset, offset + count)
        }`,
      );
    },
  };
}

function page(
  uri: string,
  unit: "rows" | "characters",
  offset: number,
  count: number,
  total: number,
  text: string,
) {
  const next = offset + count < total && count > 0 ? offset + count : null;
  return {
    text,
    structured: { uri, unit, offset, count, total, has_more: next !== null, next_offset: next },
    ...(next === null ? {} : {
      next: [{ tool: READ_TOOL, arguments: { uri, offset: next }, for: `next ${unit}` }],
    }),
  };
}
