import { z } from "zod";
import { sanitizeName } from "../../output/paths.ts";
import type { ExportedFile } from "../../output/exports.ts";
import type { ContentBlock, ToolCallContext } from "../../mcp/provider.ts";

/** Wikipedia's text licence (since June 2023; older revisions were CC BY-SA 3.0). */
export const LICENSE = "CC BY-SA 4.0";

/** Where the licence is explained. */
export const LICENSE_URL = "https://creativecommons.org/licenses/by-sa/4.0/";

/** A result's `source`: provenance and terms, on every result. */
export type Source = {
  /** Who published the data. */
  name: string;
  /** Where the data came from: the article page, or the API request for lists. */
  url: string;
  license: string;
  license_url: string;
  /** Credit line to give when quoting. */
  attribution: string;
};

// Output schemas are compact (issue 14): no descriptions (the tool description, the input schema
// and the text say what fields mean), open objects where only a few fields are worth declaring.

/** Output-schema shape of `source`. */
export const sourceSchema = z.looseObject({ license: z.string() });

/** Output-schema shape of the paging envelope (results carry count and offset too). */
export const pageShape = { total: z.number(), has_more: z.boolean(), next_offset: z.number().nullable() };

/** Output-schema shape of `file`, present when the result was written to a file. */
export const fileSchema = z.looseObject({ uri: z.string() });

/**
 * `schema`, optional, with `value` when it is left out. The served schema carries no `default`
 * keyword: the description says it (strict clients drop the keyword anyway).
 */
export function orDefault<S extends z.ZodType>(
  schema: S,
  value: z.output<S>,
): z.ZodPipe<z.ZodOptional<S>, z.ZodTransform<z.output<S>, z.output<S> | undefined>> {
  return schema.optional().transform((v): z.output<S> => v ?? value);
}

/** The short `response_format` argument. */
export const formatField = orDefault(z.enum(["markdown", "json"]), "markdown").describe("Default markdown");

/** A result's `file` object. */
export type FileOut = {
  uri: string;
  name: string;
  format: string;
  rows: number | null;
  bytes: number;
  /** False when the file stopped at a cap or the call's deadline. */
  complete: boolean;
  /** Where it is on the server's disk (stdio only: over HTTP the path means nothing to the caller). */
  path?: string;
};

/** The `file` object and the `resource_link` block of a written file. */
export function fileOut(
  file: ExportedFile,
  complete: boolean,
  ctx: ToolCallContext,
): { out: FileOut; link: ContentBlock } {
  const out: FileOut = {
    uri: file.uri,
    name: file.name,
    format: file.format,
    rows: file.rows,
    bytes: file.bytes,
    complete,
    ...(ctx.owner === undefined ? { path: file.path } : {}),
  };
  return { out, link: file.link };
}

/** The sentence that says where the file is and what it holds. */
export function fileLine(f: FileOut, what: string, partial?: string): string {
  const size = f.rows === null ? `${n(f.bytes)} bytes` : `${n(f.rows)} rows`;
  return `File: ${what} written whole to ${f.uri} (${f.format.toUpperCase()}, ${size})${
    f.path ? `, on disk at ${f.path}` : ""
  }; read it with resources/read.${partial ? ` Partial: ${partial}` : ""}`;
}

/** A file name stem from free text: "search_Edvard_Munch", or just the prefix when nothing is left. */
export function fileName(prefix: string, text: string): string {
  const part = sanitizeName(text, 60);
  return part ? `${prefix}_${part}` : prefix;
}

/** The `source` of a result from the edition at `host`. */
export function source(host: string, url: string, historyUrl?: string): Source {
  return {
    name: `Wikipedia (${host})`,
    url,
    license: LICENSE,
    license_url: LICENSE_URL,
    attribution: `Text from Wikipedia (${host}) by its contributors, ${LICENSE}${
      historyUrl ? `; authors are listed at ${historyUrl}` : ""
    }`,
  };
}

/** The closing credit line of a markdown result. */
export function creditLine(s: Source): string {
  return `Source: ${s.url}\nLicence: ${s.license} (${s.license_url}). ${s.attribution}.`;
}

/** `1,234` */
export function n(value: number): string {
  return value.toLocaleString("en-US");
}

/** Most characters kept of a title from the API (MediaWiki titles have at most 255 bytes). */
export const TITLE_MAX = 300;
/** Most characters kept of a short upstream text: a snippet, a short description. */
export const SHORT_TEXT_MAX = 1000;
