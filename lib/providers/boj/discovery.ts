// Prompts, resources, resource templates and completions (docs/apis/boj.md): procedural
// guidance a model with no BOJ knowledge can follow from a database to the latest value.
import type { PromptDefinition, ResourceDefinition, ResourceTemplateDefinition } from "../../mcp/provider.ts";
import { ProtocolError, ProtocolErrorCode } from "../../mcp/sdk.ts";
import type { GetPromptResult, ReadResourceResult } from "../../mcp/sdk.ts";
import {
  DATABASES,
  ENDPOINT_SCOPES,
  FREQUENCIES,
  FREQUENCY_CODES,
  MCP_FORMAT_CODES,
  MCP_LANGUAGE_CODES,
  messageStatuses,
} from "./catalog.ts";
import type { EndpointScope } from "./catalog.ts";
import { databasesPayload, messageCatalogPayload, parameterCatalogPayload } from "./catalog_view.ts";

/** Names whose values `completion/complete` offers. */
export type CompletionName = "db" | "format" | "lang" | "endpoint" | "status" | "frequency";

function candidates(name: CompletionName): string[] {
  switch (name) {
    case "db":
      return DATABASES.map((d) => d.code);
    case "format":
      return [...MCP_FORMAT_CODES];
    case "lang":
      return [...MCP_LANGUAGE_CODES];
    case "endpoint":
      return [...ENDPOINT_SCOPES];
    case "status":
      return messageStatuses().map(String);
    case "frequency":
      return [...FREQUENCY_CODES];
  }
}

/** Values of `name` starting with `prefix`, case-insensitively. */
export function completeValues(name: CompletionName, prefix: string): string[] {
  const p = prefix.trim().toLowerCase();
  return candidates(name).filter((v) => v.toLowerCase().startsWith(p));
}

const complete = (name: CompletionName) => (value: string): string[] => completeValues(name, value);

// The call order every guide repeats.
const CALL_ORDER = [
  "1. `boj_list_databases` (or the resource `boj://catalog/databases`): pick the database code (`db`) whose name fits the question.",
  '2. `boj_get_metadata` with `db`, `lang: "en"` and a `query` of keywords: note each series\' `series_code`, `frequency`, `layer` and the period it covers (`start_of_the_time_series`..`end_of_the_time_series`).',
  "3. `boj_get_parameter_catalog` (or `boj://catalog/parameters/{endpoint}`) when unsure of an argument: date formats per frequency, limits.",
  "4. Fetch values: `boj_get_data_code` with `db` and `codes` (no database prefix, one frequency per call), or `boj_get_data_layer` with `db`, `frequency` and `layers` to take a whole group.",
  "5. Until a result's `continue_with` is null, call the same tool again with the same arguments plus the `start_position` (BOJ's `next_position`) and `series_offset` it gives: `series_offset` reaches the series of BOJ's answer left out to fit the size limit, `start_position` BOJ's next page. Read `notices` for anything cut. Or pass `output: \"file\"` once: every page (following `next_position`, up to the configured number of requests) goes to a CSV resource whose link the result carries.",
  "6. On an error, read `message_id` and look it up with `boj_get_message_catalog` (or `boj://catalog/messages/{status}`); `retryable: true` means trying again later may work.",
  "7. Cite the source URL and the BOJ credit line every data result carries.",
];

const CALL_ORDER_MD = [
  "# Calling the Bank of Japan tools",
  "",
  ...CALL_ORDER,
  "",
  "Each data call is one request to the BOJ API; the BOJ asks users to avoid high-frequency access.",
].join("\n");

const NORMALIZATION_MD = [
  "# Input normalisation for the BOJ tools",
  "",
  "- `format`: `json` or `csv` (`JSON`/`CSV` accepted, normalised to BOJ notation). Default `json`. Results are structured either way; Japanese CSV arrives in Shift_JIS and is decoded.",
  "- `lang`: `en` or `jp` (`EN`/`JP` accepted). Omitted means the API default, Japanese.",
  "- `db`: a code from `boj_list_databases`, any case (sent in upper case).",
  '- `codes`: series codes without the database prefix, one per item: `FXERD01`, not `FM08\'FXERD01` and not `"A,B"`. All codes of one call must share a frequency; at most 1,250.',
  "- `frequency` (layer tool only, required): `CY`, `FY`, `CH`, `FH`, `Q`, `M`, `W`, `D`; lower case accepted.",
  "- `layers`: 1 to 5 items, each a positive integer or `*`, level 1 first.",
  "- `start_date`/`end_date` by frequency:",
  ...FREQUENCIES.map((f) => `  - ${f.code} (${f.meaning}): ${f.date_format}`),
  "  - For `boj_get_data_code` the series decide: YYYY for annual series, YYYYMM for monthly and daily ones, etc. Years 1850 to 2050; start not after end.",
  "- `start_position`: 1 or more; normally the previous result's `next_position`.",
  "- `series_offset`: 0 or more; the previous result's `next_series_offset` (series of BOJ's answer left out to fit the size limit).",
  "- `output`: `screen` (default, one result within the size limit) or `file` (the whole answer as a CSV resource: observations one row each, following `next_position`; metadata every matching row).",
  "- Characters the API refuses anywhere: `< > ” ! | \\ ; '` and any full-width character.",
].join("\n");

function textResource(uri: string, mimeType: string, text: string): ReadResourceResult {
  return { contents: [{ uri, mimeType, text }] };
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** The three static resources. */
export const RESOURCES: readonly ResourceDefinition[] = [
  {
    uri: "boj://guide/call-order",
    name: "boj-call-order",
    title: "BOJ call order guide",
    description: "The order to call the BOJ tools in, from finding a database to citing a value",
    mimeType: "text/markdown",
    read: (uri) => Promise.resolve(textResource(uri.href, "text/markdown", CALL_ORDER_MD)),
  },
  {
    uri: "boj://guide/input-normalization",
    name: "boj-input-normalization",
    title: "BOJ input normalisation guide",
    description: "How format, lang, db, codes, frequency, layers and dates are written and normalised",
    mimeType: "text/markdown",
    read: (uri) => Promise.resolve(textResource(uri.href, "text/markdown", NORMALIZATION_MD)),
  },
  {
    uri: "boj://catalog/databases",
    name: "boj-databases",
    title: "BOJ database catalog",
    description: "The 50 database codes with English and Japanese names (the API manual's appendix A)",
    mimeType: "application/json",
    read: (uri) => Promise.resolve(textResource(uri.href, "application/json", json(databasesPayload()))),
  },
];

function single(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? "";
}

/** The two resource templates. */
export const RESOURCE_TEMPLATES: readonly ResourceTemplateDefinition[] = [
  {
    uriTemplate: "boj://catalog/parameters/{endpoint}",
    name: "boj-parameters",
    title: "BOJ parameter catalog",
    description:
      "Parameters, date formats and limits of one endpoint: all, get_data_code, get_data_layer or get_metadata",
    mimeType: "application/json",
    list: () =>
      Promise.resolve(ENDPOINT_SCOPES.map((e) => ({
        uri: `boj://catalog/parameters/${e}`,
        name: `boj-parameters-${e}`,
        description: `BOJ parameters for ${e}`,
      }))),
    complete: { endpoint: complete("endpoint") },
    read(uri, variables) {
      const endpoint = decodeURIComponent(single(variables["endpoint"]));
      if (!(ENDPOINT_SCOPES as readonly string[]).includes(endpoint)) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Unknown endpoint "${endpoint}" in ${uri.href}; use one of ${ENDPOINT_SCOPES.join(", ")}`,
        );
      }
      return Promise.resolve(
        textResource(uri.href, "application/json", json(parameterCatalogPayload(endpoint as EndpointScope))),
      );
    },
  },
  {
    uriTemplate: "boj://catalog/messages/{status}",
    name: "boj-messages",
    title: "BOJ message catalog",
    description: "BOJ STATUS/MESSAGEID rows of one status: 200, 400, 500 or 503",
    mimeType: "application/json",
    list: () =>
      Promise.resolve(
        messageStatuses().map((s) => ({
          uri: `boj://catalog/messages/${s}`,
          name: `boj-messages-${s}`,
          description: `BOJ messages with status ${s}`,
        })),
      ),
    complete: { status: complete("status") },
    read(uri, variables) {
      const status = single(variables["status"]);
      if (!/^\d{3}$/.test(status)) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Status "${status}" in ${uri.href} is not a 3-digit number; known statuses: ${
            messageStatuses().join(", ")
          }`,
        );
      }
      return Promise.resolve(
        textResource(uri.href, "application/json", json(messageCatalogPayload(Number(status)))),
      );
    },
  },
];

function userPrompt(description: string, text: string): GetPromptResult {
  return { description, messages: [{ role: "user", content: { type: "text", text } }] };
}

function lower(value: string | undefined, allowed: readonly string[]): string | undefined {
  const v = value?.trim().toLowerCase();
  return v && allowed.includes(v) ? v : undefined;
}

function upperFrequency(value: string | undefined): string | undefined {
  const v = value?.trim().toUpperCase();
  return v && (FREQUENCY_CODES as readonly string[]).includes(v) ? v : undefined;
}

function splitCodes(codes: string): string[] {
  return codes.split(/[,\s]+/).map((c) => c.trim()).filter(Boolean);
}

function args(value: Record<string, unknown>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)));
}

function dateHint(frequency: string | undefined): string {
  const f = FREQUENCIES.find((x) => x.code === frequency);
  return f
    ? `For frequency ${f.code} write periods as ${f.date_format}.`
    : "Write periods in the series' own format (see boj://guide/input-normalization).";
}

/** The three prompts. */
export const PROMPTS: readonly PromptDefinition[] = [
  {
    name: "boj_discovery_flow",
    title: "BOJ discovery flow",
    description:
      "Find the Bank of Japan database and series that answer a question, and check the inputs before fetching",
    arguments: [
      { name: "topic", description: 'What to look for, e.g. "yen dollar exchange rate" (optional)' },
      {
        name: "endpoint",
        description: "Endpoint to prepare for: all, get_data_code, get_data_layer or get_metadata (optional)",
        complete: complete("endpoint"),
      },
      {
        name: "db",
        description: "Database code if already known, e.g. FM08 (optional)",
        complete: complete("db"),
      },
      {
        name: "frequency",
        description: "Frequency wanted: CY, FY, CH, FH, Q, M, W or D (optional)",
        complete: complete("frequency"),
      },
    ],
    render(a) {
      const endpoint = lower(a["endpoint"], ENDPOINT_SCOPES) ?? "all";
      const db = a["db"]?.trim().toUpperCase();
      const frequency = upperFrequency(a["frequency"]);
      const topic = a["topic"]?.trim();
      const lines = [
        `Find Bank of Japan statistics${
          topic ? ` about "${topic}"` : ""
        } and prepare valid tool inputs for endpoint scope "${endpoint}".`,
        "",
        "Follow these steps in order:",
        ...CALL_ORDER,
        "",
        db
          ? `The database is ${db}: start at step 2 with boj_get_metadata ${
            args({ db, lang: "en", query: topic || undefined })
          }.`
          : `Start with boj_list_databases${
            topic ? ` and pick the database whose name matches "${topic}"` : ""
          }.`,
        `Check the arguments with boj_get_parameter_catalog ${
          args({ endpoint })
        } before the first data call.`,
        frequency
          ? `Use frequency ${frequency}. ${dateHint(frequency)}`
          : "Every series has one frequency (metadata's frequency column); codes of different frequencies go in separate calls.",
        "Write format and lang in lower case (json/csv, en/jp); upper case is accepted too.",
      ];
      return userPrompt("Discovery and validation sequence for the BOJ tools", lines.join("\n"));
    },
  },
  {
    name: "boj_fetch_data_code_flow",
    title: "Fetch BOJ series by code",
    description:
      "Build a valid boj_get_data_code call for given series codes and run it, following next_position",
    arguments: [
      { name: "db", description: "Database code, e.g. FM01", required: true, complete: complete("db") },
      {
        name: "codes",
        description: "Series codes, comma-separated, e.g. STRDCLUCON,STRDCLUCONH",
        required: true,
      },
      { name: "start_date", description: "First period (YYYY, YYYYHH, YYYYQQ or YYYYMM), optional" },
      { name: "end_date", description: "Last period, same format, optional" },
      { name: "format", description: "json or csv, optional", complete: complete("format") },
      { name: "lang", description: "en or jp, optional", complete: complete("lang") },
    ],
    render(a) {
      const db = (a["db"] ?? "").trim().toUpperCase();
      const codes = splitCodes(a["codes"] ?? "");
      const prefixed = codes.filter((c) => /['’]/.test(c));
      const clean = codes.map((c) => c.replace(/^[^'’]*['’]/, ""));
      const call = args({
        db,
        codes: clean,
        start_date: a["start_date"]?.trim() || undefined,
        end_date: a["end_date"]?.trim() || undefined,
        format: lower(a["format"], MCP_FORMAT_CODES) ?? "json",
        lang: lower(a["lang"], MCP_LANGUAGE_CODES) ?? "en",
      });
      const lines = [
        `Fetch the Bank of Japan series ${clean.join(", ")} from database ${db}.`,
        "",
        `1. Confirm the codes exist and share one frequency: boj_get_metadata ${
          args({ db, lang: "en", query: clean.length === 1 ? clean[0] : undefined })
        } (frequency and the period covered are in each row).`,
        '2. If the dates are unclear, boj_get_parameter_catalog {"endpoint":"get_data_code"} lists the formats per frequency.',
        `3. Call boj_get_data_code ${call}.`,
        "4. While continue_with is not null, call again with the same arguments plus what it gives (start_position=next_position for BOJ's next page, series_offset for series left out to fit the size limit), and combine the parts.",
        "5. Report the values with their units and periods, note any `notices`, and cite the source URL and the BOJ credit line.",
        "If an error comes back, look its message_id up with boj_get_message_catalog and follow its hint.",
      ];
      if (prefixed.length) {
        lines.push(
          "",
          `Note: ${
            prefixed.join(", ")
          } carried a database prefix, which the API refuses; it was removed above.`,
        );
      }
      return userPrompt("Safe boj_get_data_code sequence", lines.join("\n"));
    },
  },
  {
    name: "boj_latest_value_flow",
    title: "Latest BOJ value",
    description: "Confirm one series in the metadata and read its most recent observation",
    arguments: [
      { name: "db", description: "Database code, e.g. FM08", required: true, complete: complete("db") },
      {
        name: "series_code",
        description: "Series code without the database prefix, e.g. FXERD01",
        required: true,
      },
      {
        name: "frequency",
        description: "The series' frequency if known: CY, FY, CH, FH, Q, M, W or D (optional)",
        complete: complete("frequency"),
      },
      { name: "format", description: "json or csv, optional", complete: complete("format") },
      { name: "lang", description: "en or jp, optional", complete: complete("lang") },
    ],
    render(a) {
      const db = (a["db"] ?? "").trim().toUpperCase();
      const code = (a["series_code"] ?? "").trim().replace(/^[^'’]*['’]/, "");
      const frequency = upperFrequency(a["frequency"]);
      const format = lower(a["format"], MCP_FORMAT_CODES) ?? "json";
      const lang = lower(a["lang"], MCP_LANGUAGE_CODES) ?? "en";
      const lines = [
        `Find the latest value of the Bank of Japan series ${code} in database ${db}.`,
        "",
        `1. Call boj_get_metadata ${
          args({ db, query: code, lang })
        } and check the row for ${code}: its frequency, unit and end_of_the_time_series (the last period with data).`,
        `2. Call boj_get_data_code ${
          args({
            db,
            codes: [code],
            start_date: "<a period shortly before end_of_the_time_series>",
            format,
            lang,
          })
        }. ${dateHint(frequency)} A narrow range keeps the answer small.`,
        "3. Read `latest` of the series: the most recent observation with a value (missing values are null and skipped). If there is none, widen start_date.",
        "4. Answer with the value, its period, the unit and last_update, and cite the source URL and the BOJ credit line.",
      ];
      return userPrompt("Latest-value sequence for one BOJ series", lines.join("\n"));
    },
  },
];
