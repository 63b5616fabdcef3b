// fred_maps: its operations (docs/apis/fred.md, "Data tools") with the FRED endpoints behind them,
// and the text its description is built from; every data tool shares one handler (deliver.ts).
import { op } from "../operation_spec.ts";
import type { DataToolSpec } from "../operation_spec.ts";

/** `fred_maps`. */
export const fredMaps: DataToolSpec = {
  name: "fred_maps",
  title: "FRED Maps (regional data)",
  summary: "FRED Maps: data by state, county, MSA..., and boundary shapes.",
  glosses: {
    get_shapes: "GeoJSON file via a background job; screen: properties only",
  },
  operations: [
    op("fred_maps", "get_shapes", {
      endpoint: "geofred/shapes/file",
      kind: "shapes",
      required: ["shape"],
      optional: [],
      subdir: "maps",
      label: "shapes",
      job: "always",
    }),
    op("fred_maps", "get_series_group", {
      endpoint: "geofred/series/group",
      kind: "series_group",
      required: ["series_id"],
      optional: [],
      subdir: "maps",
      label: "series_group",
    }),
    op("fred_maps", "get_regional_data", {
      endpoint: "geofred/regional/data",
      kind: "regional_data",
      required: ["series_group", "region_type", "date", "season", "units"],
      optional: ["start_date", "frequency", "transformation", "aggregation_method"],
      subdir: "maps",
      label: "regional_data",
    }),
    op("fred_maps", "get_series_data", {
      endpoint: "geofred/series/data",
      kind: "regional_data",
      required: ["series_id"],
      optional: ["date", "start_date"],
      subdir: "maps",
      label: "series_data",
    }),
  ],
};
