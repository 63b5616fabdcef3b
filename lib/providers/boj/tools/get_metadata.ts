// boj_get_metadata: a database's series list with names, units and periods (getMetadata).
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { fileName, renderMetadataFile, writeMetadataFile } from "../files.ts";
import { matchesQuery, renderMetadata } from "../metadata_format.ts";
import { metadataOutput } from "../schemas.ts";
import { normalizeDb } from "../validate.ts";
import {
  type BojInputs,
  call,
  DATA_ANNOTATIONS,
  DATA_TOOLSET,
  EXECUTION,
  normalizeFormat,
  normalizeLang,
  type ToolDeps,
} from "../_common.ts";

/** `boj_get_metadata`. */
export function getMetadataTool(
  deps: ToolDeps,
  inputs: BojInputs,
): ToolDefinition<BojInputs["metadata"], typeof metadataOutput> {
  const { client } = deps;
  return {
    name: "boj_get_metadata",
    title: "BOJ series list",
    description: "Lists a Bank of Japan database's series (getMetadata): code, name, unit, frequency, " +
      "layer, period. Rows without a code are headings.",
    toolset: DATA_TOOLSET,
    input: inputs.metadata,
    output: metadataOutput,
    annotations: DATA_ANNOTATIONS,
    execution: EXECUTION,
    async handler(args, ctx) {
      const db = normalizeDb(args.db);
      const format = normalizeFormat(args.format);
      const lang = normalizeLang(args.lang);
      const fetched = await client.getMetadata({ db, format, ...(lang ? { lang } : {}) }, call(ctx));
      const query = args.query?.trim();
      if (args.output === "file") {
        const rows = query
          ? fetched.data.entries.filter((e) => matchesQuery(e, query))
          : fetched.data.entries;
        const file = await writeMetadataFile(ctx.files, rows, {
          name: fileName(db, "metadata", query ?? ""),
          what: `BOJ ${db} series and headings${query ? ` matching "${query}"` : ""}`,
        });
        const rendered = renderMetadataFile({
          response: fetched.data,
          url: fetched.url,
          ...(query ? { query } : {}),
          rows: rows.length,
          file,
          responseFormat: args.response_format,
        });
        return { ...rendered, content: [file.link] };
      }
      return renderMetadata({
        response: fetched.data,
        url: fetched.url,
        ...(args.include_raw ? { raw: fetched.raw } : {}),
        ...(query ? { query } : {}),
        offset: args.offset,
        limit: args.limit,
        responseFormat: args.response_format,
        characterLimit: ctx.limits.characterLimit,
        ...(lang ? { lang } : {}),
      });
    },
  };
}
