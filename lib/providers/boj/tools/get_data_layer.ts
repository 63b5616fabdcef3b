// boj_get_data_layer: observations of every series under a layer of a database (getDataLayer).
import { bojSeriesView } from "../view.ts";
import type { ToolDefinition } from "../../../mcp/provider.ts";
import type { Frequency } from "../catalog.ts";
import { fileName } from "../files.ts";
import { dataOutput } from "../schemas.ts";
import { normalizeDb, validateLayers } from "../validate.ts";
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

/** `boj_get_data_layer`. */
export function getDataLayerTool(
  deps: ToolDeps,
  inputs: BojInputs,
): ToolDefinition<BojInputs["layer"], typeof dataOutput> {
  const { client } = deps;
  return {
    name: "boj_get_data_layer",
    title: "BOJ group values",
    description: "Values of every Bank of Japan series in a database group (API getDataLayer; " +
      "layers from boj_get_metadata), paged like boj_get_data_code.",
    toolset: DATA_TOOLSET,
    input: inputs.layer,
    output: dataOutput,
    annotations: DATA_ANNOTATIONS,
    execution: EXECUTION,
    view: bojSeriesView,
    async handler(args, ctx) {
      const db = normalizeDb(args.db);
      const frequency = args.frequency as Frequency;
      const layers = validateLayers(args.layers);
      const range = dates(args.start_date, args.end_date, frequency);
      const format = normalizeFormat(args.format);
      const lang = normalizeLang(args.lang);
      return await deliverData(
        deps,
        "boj_get_data_layer",
        args,
        (startPosition) =>
          client.getDataLayer({
            db,
            frequency,
            layers,
            format,
            ...(lang ? { lang } : {}),
            ...range,
            ...(startPosition === undefined ? {} : { startPosition }),
          }, call(ctx)),
        {
          name: fileName(db, frequency, "layer", ...layers.map((l) => l === "*" ? "all" : l)),
          what: `BOJ ${db} observations, frequency ${frequency}, layer ${layers.join(",")}`,
        },
        lang,
        ctx,
      );
    },
  };
}
