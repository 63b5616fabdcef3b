// The geonorge-* tools, one file each in tools/.
export { datasetsTool, TOOLSET } from "./tools/datasets.ts";
