// opendata_read: a result file read by a tool call, page by page, for clients that
// offer their model tools only (no resources/read, or one that cannot take a resource_link). It
// reads through the same resource templates resources/read serves, as the same caller, so it
// sees exactly the files that caller's resources/read would. Not listed by default: every
// answer that writes a file names it as a next call (through opendata_call). Every page names
// the data's source and licence (DESIGN: every result says where its data came from): the
// provider the file's template belongs to (or, for the result exports, the one it was written
// for), with the licence that provider declares for opendata_search, and the request the file
// was written from when its project metadata records one.
import { z } from "zod";
import { ToolError } from "../../errors.ts";
import { creditLine } from "../../output/credit.ts";
import { READ_TOOL } from "../next_calls.ts";
import { once } from "./_core.ts";
import type { FileSource, McpExtra, ResourceTemplateDefinition, ToolDefinition } from "../provider.ts";
import { isInputRequiredResult, ProtocolError, ResourceNotFoundError, UriTemplate } from "../sdk.ts";

/** Most characters of the source request named on a page. */
const REQUEST_MAX = 200;

/** Default rows of a CSV page, and characters of a page of any other file. */
const DEFAULT_ROWS = 50;
const DEFAULT_CHARS = 8_000;

const input = once(() =>
  z.strictObject({
    uri: z.string().min(1).max(2_000).describe("The file's URI (file.uri or resource_link of an answer)"),
    offset: z.number().int().min(0).max(100_000_000).optional().describe(
      "CSV: rows to skip; other files: characters (next_offset; default 0)",
    ),
    limit: z.number().int().min(1).max(100_000).optional().describe(
      `CSV: rows (default ${DEFAULT_ROWS}); other files: characters (default ${DEFAULT_CHARS})`,
    ),
  })
);

const output = once(() =>
  z.object({
    uri: z.string(),
    unit: z.enum(["rows", "characters"]),
    offset: z.number(),
    count: z.number(),
    total: z.number(),
    has_more: z.boolean(),
    next_offset: z.number().nullable(),
    source: z.object({
      provider: z.string(),
      name: z.string(),
      licence: z.string().nullable(),
      request: z.string().nullable(),
    }),
    next_calls: z.array(z.object({
      tool: z.string(),
      arguments: z.record(z.string(), z.unknown()),
      for: z.string().optional(),
    })).optional(),
  })
);

// Built on the first call (opendata_read is never listed, only called).
type ReadInput = ReturnType<typeof input>;
type ReadOutput = ReturnType<typeof output>;

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

/** The fields of one CSV record as written (quotes kept), split at the commas outside quotes. */
function rawFields(record: string): string[] {
  const out: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < record.length; i++) {
    const c = record[i];
    if (c === '"') quoted = !quoted;
    else if (c === "," && !quoted) {
      out.push(record.slice(start, i));
      start = i + 1;
    }
  }
  out.push(record.slice(start));
  return out;
}

/**
 * A page of CSV rows without the columns that hold one value on all of them (FRED's realtime_start
 * and realtime_end, say), and a line that says those values once. Two rows at least, and one
 * column always kept; rows whose field count differs from the header's leave the page as it is.
 */
export function withoutConstantColumns(
  header: string,
  rows: readonly string[],
): { header: string; rows: string[]; same: string } {
  const names = rawFields(header);
  const split = rows.map(rawFields);
  if (split.length < 2 || split.some((f) => f.length !== names.length)) {
    return { header, rows: [...rows], same: "" };
  }
  const constant = names.map((_, i) => split.every((f) => f[i] === split[0]![i]));
  if (!constant.includes(true) || constant.every(Boolean)) return { header, rows: [...rows], same: "" };
  const keep = (fields: readonly string[]) => fields.filter((_, i) => !constant[i]).join(",");
  const said = names.flatMap((name, i) => constant[i] ? [`${name}=${split[0]![i]}`] : []);
  return {
    header: keep(names),
    rows: split.map(keep),
    same: `Same on every row of this page: ${said.join(", ")}`,
  };
}

/** A served resource template and the provider it belongs to. */
export interface FileTemplate {
  template: ResourceTemplateDefinition;
  /** Provider id (absent: the template's `fileSource` names it per file). */
  provider?: string;
}

/** What a provider declares about its data: its name and licence or credit line. */
export interface DeclaredSource {
  name: string;
  licence: string;
}

/** The source a page names. */
export interface PageSource {
  provider: string;
  name: string;
  licence: string | null;
  request: string | null;
}

/**
 * The opendata_read tool over `templates` (the served resource templates, files among them);
 * `declared` gives a provider's name and licence (what it declares for opendata_search).
 */
export function readTool(
  templates: () => readonly FileTemplate[],
  declared: (provider: string) => DeclaredSource | undefined,
): ToolDefinition<ReadInput, ReadOutput> {
  return {
    name: READ_TOOL,
    title: "Read a result file",
    toolset: "core",
    description: "Reads a file an answer wrote (its uri), a page at a time: CSV by rows (the header " +
      "repeated on every page), other files by characters. For clients without resources/read.",
    get input() {
      return input();
    },
    get output() {
      return output();
    },
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
      let found:
        | { t: ResourceTemplateDefinition; provider?: string; vars: Record<string, string | string[]> }
        | undefined;
      for (const { template: t, provider } of all) {
        const vars = new UriTemplate(t.uriTemplate).match(url.href);
        if (vars) {
          found = { t, vars, ...(provider === undefined ? {} : { provider }) };
          break;
        }
      }
      if (!found) {
        throw new ToolError("NOT_FOUND", `No file is served at "${args.uri}"`, {
          field: "uri",
          hint: `Files are under ${
            all.map(({ template: t }) => t.uriTemplate.replace(/\{.*$/, "")).join(", ")
          }`,
        });
      }
      let body: string;
      let mime: string | undefined;
      const extra: McpExtra = { ...ctx.mcp, ...(ctx.owner === undefined ? {} : { owner: ctx.owner }) };
      try {
        const read = await found.t.read(url, found.vars, extra);
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
      const recorded: FileSource = await found.t.fileSource?.(found.vars, extra).catch(() => ({})) ?? {};
      const source = sourceOf(found.provider ?? recorded.provider, recorded.request, declared);
      const said = sourceText(source);
      const offset = args.offset ?? 0;
      const room = Math.max(1_000, ctx.limits.characterLimit - 600 - said.length);
      if (mime === "text/csv" || url.pathname.endsWith(".csv")) {
        const records = csvRecords(body);
        const rows = records.slice(1);
        // Columns with one value on every row of the page are said once, above the table.
        const { header, rows: wanted, same } = withoutConstantColumns(
          records[0] ?? "",
          rows.slice(offset, offset + (args.limit ?? DEFAULT_ROWS)),
        );
        let size = header.length + same.length;
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
          source,
          [
            `${args.uri}: rows ${count ? `${offset + 1}-${offset + count}` : "none"} of ${rows.length}`,
            said,
            ...(same ? [same] : []),
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
        source,
        `${args.uri}: characters ${offset + 1}-${offset + count} of ${body.length}\n${said}\n\n${
          body.slice(offset, offset + count)
        }`,
      );
    },
  };
}

/** The source of a file of `provider` (undefined: not known) written from `request`. */
export function sourceOf(
  provider: string | undefined,
  request: string | undefined,
  declared: (provider: string) => DeclaredSource | undefined,
): PageSource {
  const known = provider === undefined ? undefined : declared(provider);
  const asked = request?.replace(/\s+/g, " ").trim();
  return {
    provider: provider ?? "unknown",
    name: known?.name ?? provider ?? "unknown",
    licence: known?.licence ? creditLine(known.licence) : null,
    request: asked
      ? (asked.length <= REQUEST_MAX ? asked : `${asked.slice(0, REQUEST_MAX - 1).trimEnd()}…`)
      : null,
  };
}

/** The one line a page gives its source in. */
export function sourceText(source: PageSource): string {
  const licence = source.licence ??
    `not declared by ${source.provider}: check its terms before reusing the data`;
  return `Source: ${source.name}${source.request ? ` (${source.request})` : ""}. Licence: ${licence}`;
}

function page(
  uri: string,
  unit: "rows" | "characters",
  offset: number,
  count: number,
  total: number,
  source: PageSource,
  text: string,
) {
  const next = offset + count < total && count > 0 ? offset + count : null;
  return {
    text,
    structured: { uri, unit, offset, count, total, has_more: next !== null, next_offset: next, source },
    ...(next === null ? {} : {
      next: [{ tool: READ_TOOL, arguments: { uri, offset: next }, for: `next ${unit}` }],
    }),
  };
}
