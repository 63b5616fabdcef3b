// What data tools share for writing their result to a file: a default that the
// served schema does not repeat, the `output` argument (`"screen"`, the default, or `"file"`, the
// words FRED's tools have always used), and the `file` block of a result written to a file.
import { z } from "zod";
import type { ContentBlock } from "../mcp/protocol.ts";
import type { ExportedFile } from "./exports.ts";
import { sanitizeName } from "./paths.ts";

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

/** The `output` argument: `"screen"` (default) answers in the result, `"file"` writes `what` to a file. */
export function outputField(
  what: string,
): z.ZodPipe<
  z.ZodOptional<z.ZodEnum<{ screen: "screen"; file: "file" }>>,
  z.ZodTransform<"screen" | "file", "screen" | "file" | undefined>
> {
  return orDefault(z.enum(["screen", "file"]), "screen").describe(`"file": ${what} to a file`);
}

/** Output-schema shape of `file`, present when the result was written to a file. */
export const fileSchema = z.looseObject({ uri: z.string() });

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

/**
 * A result's `file` object where the answer says how to get the rest of a file that ends early
 * (`partial`), as the World Bank and BOJ data tools give it.
 */
export interface PartialFileOut {
  uri: string;
  name: string;
  format: string;
  rows: number;
  bytes: number;
  /** Whether the file ends before the answer does (the answer says how to continue). */
  partial: boolean;
}

/** The {@linkcode PartialFileOut} of a written file. */
export function partialFileOut(file: ExportedFile, partial: boolean): PartialFileOut {
  return {
    uri: file.uri,
    name: file.name,
    format: file.format,
    rows: file.rows ?? 0,
    bytes: file.bytes,
    partial,
  };
}

/** The sentence naming a written CSV file, its size and its columns. */
export function csvFileLine(file: PartialFileOut, what: string, columns: readonly string[]): string {
  const size = file.bytes < 10_240 ? `${file.bytes} bytes` : `${Math.round(file.bytes / 1024)} KB`;
  return `Wrote ${what} to \`${file.uri}\` (CSV, ${size}; columns ${columns.join(", ")}). ` +
    "Read it with resources/read, or with the opendata_read next call.";
}

/** What a file-writing call adds to its answer. */
export interface Written {
  out: FileOut;
  link: ContentBlock;
  /** The sentence for the text block. */
  line: string;
}

/**
 * The `file` object, the `resource_link` block and the sentence that says where the file is
 * and what it holds (`partial`: why it is not whole, and how to get the rest).
 */
export function written(
  file: ExportedFile,
  what: string,
  ctx: { owner?: string },
  partial?: string,
): Written {
  const out: FileOut = {
    uri: file.uri,
    name: file.name,
    format: file.format,
    rows: file.rows,
    bytes: file.bytes,
    complete: partial === undefined,
    ...(ctx.owner === undefined ? { path: file.path } : {}),
  };
  const size = file.rows === null ? `${file.bytes.toLocaleString("en-US")} bytes` : `${file.rows} rows`;
  const line = `File: ${what} written to ${file.uri} (${file.format.toUpperCase()}, ${size})${
    out.path ? `, on disk at ${out.path}` : ""
  }; read it with resources/read or, without it, with the opendata_read next call.${
    partial ? ` Partial: ${partial}` : ""
  }`;
  return { out, link: file.link, line };
}

/** A file name stem from free text ("search_Edvard_Munch"), or just the prefix when nothing is left. */
export function fileName(prefix: string, text: string): string {
  const part = sanitizeName(text, 60);
  return part ? `${prefix}_${part}` : prefix;
}

/** The answer with the file's sentence, `file` field and link, when a file was written. */
export function withFile<S extends Record<string, unknown>>(
  r: { text: string; structured: S },
  file: Written | null,
): { text: string; structured: S; content?: ContentBlock[] } {
  if (!file) return { text: r.text, structured: r.structured };
  return {
    text: `${r.text}\n\n${file.line}`,
    structured: { ...r.structured, file: file.out },
    content: [file.link],
  };
}

/** Whether `e` may end a multi-page file early (the file is then partial) rather than fail the call. */
export function endsFile(e: unknown, signal: AbortSignal): e is Error {
  return !signal.aborted && e instanceof Error && "retryable" in e && e.retryable === true;
}
