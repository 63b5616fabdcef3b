// The six tools of seed 001. Data tools call the API once per page (paging is the caller's,
// through start_position/next_position), or follow every page into a file with output "file";
// discovery tools answer from the bundled catalog.
import { bojSeriesView } from "./view.ts";
import { cite } from "../../output/provenance.ts";
import type { Clock } from "../../clock.ts";
import { ToolError } from "../../errors.ts";
import type { ToolCallContext, ToolDefinition } from "../../mcp/provider.ts";
import { formatText } from "../../mcp/output.ts";
import type { Frequency } from "./catalog.ts";
import {
  databasesMarkdown,
  databasesPayload,
  messageCatalogMarkdown,
  messageCatalogPayload,
  parameterCatalogMarkdown,
  parameterCatalogPayload,
} from "./catalog_view.ts";
import type { BojClient, Fetched } from "./client.ts";
import type { BojSettings } from "./settings.ts";
import type { DataResponse } from "./decode.ts";
import { fileName, renderDataFile, renderMetadataFile, writeDataFile, writeMetadataFile } from "./files.ts";
import { matchesQuery, renderData, renderMetadata } from "./format.ts";
import { createInputs } from "./inputs.ts";
import {
  databasesOutput,
  dataOutput,
  messageCatalogOutput,
  metadataOutput,
  parameterCatalogOutput,
} from "./schemas.ts";
import { normalizeDb, validateCodes, validateDate, validateLayers, validateRange } from "./validate.ts";

const DATA_ANNOTATIONS = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: true,
} as const;

const CATALOG_ANNOTATIONS = { ...DATA_ANNOTATIONS, openWorldHint: false } as const;

const EXECUTION = { taskSupport: "forbidden" } as const;

/** The toolset of the three data tools. */
export const DATA_TOOLSET = "boj-data";
/** The toolset of the three catalog tools. */
export const DISCOVERY_TOOLSET = "boj-discovery";

/** Normalises the `format` alias to BOJ notation. */
export function normalizeFormat(format: string | undefined): "JSON" | "CSV" {
  return format?.toUpperCase() === "CSV" ? "CSV" : "JSON";
}

/** Normalises the `lang` alias to BOJ notation (undefined leaves the API default, JP). */
export function normalizeLang(lang: string | undefined): "JP" | "EN" | undefined {
  return lang === undefined ? undefined : lang.toUpperCase() === "EN" ? "EN" : "JP";
}

function dates(
  start: string | undefined,
  end: string | undefined,
  frequency?: Frequency,
): { startDate?: string; endDate?: string } {
  const startDate = start === undefined ? undefined : validateDate(start, "start_date", frequency);
  const endDate = end === undefined ? undefined : validateDate(end, "end_date", frequency);
  validateRange(startDate, endDate);
  return {
    ...(startDate === undefined ? {} : { startDate }),
    ...(endDate === undefined ? {} : { endDate }),
  };
}

/** A series_offset at or past the end of BOJ's answer names nothing: say so, naming the field. */
function checkSeriesOffset(offset: number, total: number): void {
  if (offset > 0 && offset >= total) {
    throw new ToolError(
      "VALIDATION_ERROR",
      `series_offset ${offset} is past the last of the ${total} series in BOJ's answer`,
      {
        field: "series_offset",
        hint:
          "Use next_series_offset (or continue_with) from the previous result with the same other arguments",
      },
    );
  }
}

// deno-lint-ignore no-explicit-any
type AnyTool = ToolDefinition<any, any>;

/** What the tools share. */
export interface ToolDeps {
  client: BojClient;
  settings: BojSettings;
  clock: Clock;
}

function call(ctx: ToolCallContext): { signal: AbortSignal; logger: ToolCallContext["logger"] } {
  return { signal: ctx.signal, logger: ctx.logger };
}

/**
 * The as-of of a data answer for its provenance: the latest LAST_UPDATE of its series (BOJ's own
 * update date, YYYYMMDD), and the answer's DATE.
 */
function citeData(data: DataResponse): void {
  const updates = data.series.map((s) => s.last_update ?? "").filter((d) => /^\d{8}$/.test(d)).sort();
  const last = updates.at(-1);
  const parts = [
    last ? `series last updated ${last.slice(0, 4)}-${last.slice(4, 6)}-${last.slice(6)}` : "",
    data.meta.date ? `answer dated ${data.meta.date}` : "",
  ].filter(Boolean);
  if (parts.length) cite({ as_of: parts.join("; ") });
}

/** The six tools over one client. */
export function createTools(deps: ToolDeps): AnyTool[] {
  const { client, settings } = deps;
  const inputs = createInputs(settings.file_max_requests);

  /**
   * A data tool's answer: one page cut to the size limit, or with output "file" every page
   * (following NEXTPOSITION) written to a CSV resource.
   */
  async function deliverData(
    tool: "boj_get_data_code" | "boj_get_data_layer",
    args: {
      start_position?: number | undefined;
      series_offset: number;
      include_raw: boolean;
      response_format: "markdown" | "json";
      output: "screen" | "file";
    },
    fetch: (startPosition: number | undefined) => Promise<Fetched<DataResponse>>,
    naming: { name: string; what: string },
    lang: "JP" | "EN" | undefined,
    ctx: ToolCallContext,
  ) {
    const fetched = await fetch(args.start_position);
    citeData(fetched.data);
    if (args.output === "file") {
      const written = await writeDataFile({
        files: ctx.files,
        name: naming.name,
        what: naming.what,
        first: fetched,
        startPosition: args.start_position ?? 1,
        maxRequests: settings.file_max_requests,
        fetchFrom: fetch,
        ...(lang ? { lang } : {}),
        clock: deps.clock,
        signal: ctx.signal,
      });
      const rendered = renderDataFile({
        tool,
        written,
        first: fetched,
        responseFormat: args.response_format,
      });
      return { ...rendered, content: [written.file.link] };
    }
    checkSeriesOffset(args.series_offset, fetched.data.series.length);
    return renderData({
      tool,
      response: fetched.data,
      url: fetched.url,
      seriesOffset: args.series_offset,
      ...(args.start_position === undefined ? {} : { startPosition: args.start_position }),
      ...(args.include_raw ? { raw: fetched.raw } : {}),
      responseFormat: args.response_format,
      limit: ctx.limits.characterLimit,
      ...(lang ? { lang } : {}),
    });
  }

  const getDataCode: ToolDefinition<typeof inputs.code, typeof dataOutput> = {
    name: "boj_get_data_code",
    title: "BOJ getDataCode",
    description: "Bank of Japan series observations by code (getDataCode). Until continue_with is null, " +
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

  const getDataLayer: ToolDefinition<typeof inputs.layer, typeof dataOutput> = {
    name: "boj_get_data_layer",
    title: "BOJ getDataLayer",
    description: "Bank of Japan observations of every series under a hierarchy position (getDataLayer; " +
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

  const getMetadata: ToolDefinition<typeof inputs.metadata, typeof metadataOutput> = {
    name: "boj_get_metadata",
    title: "BOJ getMetadata",
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

  const listDatabases: ToolDefinition<typeof inputs.databases, typeof databasesOutput> = {
    name: "boj_list_databases",
    title: "BOJ DB Catalog",
    description: "Lists the 50 Bank of Japan database codes and names. No upstream call.",
    toolset: DISCOVERY_TOOLSET,
    input: inputs.databases,
    output: databasesOutput,
    annotations: CATALOG_ANNOTATIONS,
    execution: EXECUTION,
    handler(args) {
      const structured = databasesPayload();
      return Promise.resolve({
        text: formatText(args.response_format, structured, () => databasesMarkdown(structured)),
        structured,
      });
    },
  };

  const parameterCatalog: ToolDefinition<typeof inputs.parameters, typeof parameterCatalogOutput> = {
    name: "boj_get_parameter_catalog",
    title: "BOJ Parameter Catalog",
    description: "BOJ API parameters per endpoint: allowed values, date formats, limits. No upstream call.",
    toolset: DISCOVERY_TOOLSET,
    input: inputs.parameters,
    output: parameterCatalogOutput,
    annotations: CATALOG_ANNOTATIONS,
    execution: EXECUTION,
    handler(args) {
      const structured = parameterCatalogPayload(args.endpoint);
      return Promise.resolve({
        text: formatText(args.response_format, structured, () => parameterCatalogMarkdown(structured)),
        structured,
      });
    },
  };

  const messageCatalog: ToolDefinition<typeof inputs.messages, typeof messageCatalogOutput> = {
    name: "boj_get_message_catalog",
    title: "BOJ Message Catalog",
    description: "Explains BOJ STATUS and MESSAGEID codes and what to do about each. No upstream call.",
    toolset: DISCOVERY_TOOLSET,
    input: inputs.messages,
    output: messageCatalogOutput,
    annotations: CATALOG_ANNOTATIONS,
    execution: EXECUTION,
    handler(args) {
      const structured = messageCatalogPayload(args.status, args.message_id);
      return Promise.resolve({
        text: formatText(args.response_format, structured, () => messageCatalogMarkdown(structured)),
        structured,
      });
    },
  };

  return [getDataCode, getDataLayer, getMetadata, listDatabases, parameterCatalog, messageCatalog];
}
