// boj_get_data_code: observations of named series (getDataCode).
import { bojSeriesView } from "../view.ts";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import { fileName } from "../files.ts";
import { dataOutput } from "../schemas.ts";
import { normalizeDb, validateCodes } from "../validate.ts";
import {
  type BojInputs,
  call,
  DATA_ANNOTATIONS,
  DATA_TOOLSET,
  dates,
  EXECUTION,
  normalizeFormat,
  normalizeLang,
  type ToolDeps,
} from "../_common.ts";
import { deliverData } from "../deliver.ts";

/** `boj_get_data_code`. */
export function getDataCodeTool(
  deps: ToolDeps,
  inputs: BojInputs,
): ToolDefinition<BojInputs["code"], typeof dataOutput> {
  const { client } = deps;
  return {
    name: "boj_get_data_code",
    title: "BOJ values by code",
    description: "Bank of Japan series values by code (API getDataCode). Until continue_with is null, " +
      "call again with its arguments.",
    toolset: DATA_TOOLSET,
    input: inputs.code,
    output: dataOutput,
    annotations: DATA_ANNOTATIONS,
    execution: EXECUTION,
    view: bojSeriesView,
    async handler(args, ctx) {
      const db = normalizeDb(args.db);
      const codes = validateCodes(args.codes, db);
      const range = dates(args.start_date, args.end_date);
      const format = normalizeFormat(args.format);
      const lang = normalizeLang(args.lang);
      return await deliverData(
        deps,
        "boj_get_data_code",
        args,
        (startPosition) =>
          client.getDataCode({
            db,
            codes,
            format,
            ...(lang ? { lang } : {}),
            ...range,
            ...(startPosition === undefined ? {} : { startPosition }),
          }, call(ctx)),
        {
          name: fileName(db, ...codes.slice(0, 4), codes.length > 4 ? `and_${codes.length - 4}_more` : ""),
          what: `BOJ ${db} observations of ${codes.length === 1 ? codes[0] : `${codes.length} series`}`,
        },
        lang,
        ctx,
      );
    },
  };
}
