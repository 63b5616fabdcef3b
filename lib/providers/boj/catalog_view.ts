// The discovery payloads (databases, parameters, messages) shared by the tools and the
// resources, and their markdown.
import { markdownTable } from "../../mcp/shaping.ts";
import {
  DATABASES,
  ENDPOINT_NAMES,
  FORMAT_CODES,
  FREQUENCIES,
  FREQUENCY_CODES,
  GENERAL_NOTES,
  LANGUAGE_CODES,
  LAYER_RULES,
  LIMITS,
  MCP_FORMAT_CODES,
  MCP_LANGUAGE_CODES,
  MESSAGES,
  PARAMETERS,
  SOURCE_DATE,
  SOURCE_DOCUMENT,
  SOURCE_URL,
} from "./catalog.ts";
import type { EndpointScope } from "./catalog.ts";
import { RETRY_STATUSES } from "./client.ts";
import type { DatabasesOutput, MessageCatalogOutput, ParameterCatalogOutput } from "./schemas.ts";

const SOURCE = { source_document: SOURCE_DOCUMENT, source_date: SOURCE_DATE, source_url: SOURCE_URL };

/** The database catalog (appendix A). */
export function databasesPayload(): DatabasesOutput {
  return {
    ...SOURCE,
    count: DATABASES.length,
    databases: DATABASES.map((d) => ({
      code: d.code,
      name_en: d.name_en,
      name_ja: d.name_ja,
      category_en: d.category_en,
      category_ja: d.category_ja,
    })),
  };
}

const REQUIREMENT_KEY = {
  get_data_code: "code_api",
  get_data_layer: "layer_api",
  get_metadata: "metadata_api",
} as const;

/** The parameter catalog for one endpoint, or all. */
export function parameterCatalogPayload(scope: EndpointScope): ParameterCatalogOutput {
  const api = ENDPOINT_NAMES[scope];
  const parameters = scope === "all"
    ? PARAMETERS
    : PARAMETERS.filter((p) => p.requirements[REQUIREMENT_KEY[scope]] !== "unsupported");
  const limits = scope === "all" ? LIMITS : LIMITS.filter((l) => l.api_scope.split(",").includes(api));
  return {
    ...SOURCE,
    endpoint_scope: api,
    general_notes: [...GENERAL_NOTES],
    format_codes: [...FORMAT_CODES],
    language_codes: [...LANGUAGE_CODES],
    mcp_format_codes: [...MCP_FORMAT_CODES],
    mcp_language_codes: [...MCP_LANGUAGE_CODES],
    frequency_codes: [...FREQUENCY_CODES],
    frequencies: FREQUENCIES.map((f) => ({ ...f })),
    parameters: parameters.map((p) => ({ ...p, requirements: { ...p.requirements }, notes: [...p.notes] })),
    limits: limits.map((l) => ({ ...l })),
    layer_rules: scope === "all" || scope === "get_data_layer" ? [...LAYER_RULES] : [],
  };
}

/** The message catalog, filtered by status and/or message id. */
export function messageCatalogPayload(status?: number, messageId?: string): MessageCatalogOutput {
  const id = messageId?.trim().toUpperCase();
  const messages = MESSAGES
    .filter((m) => status === undefined || m.status === status)
    .filter((m) => id === undefined || m.message_id === id)
    .map((m) => ({ ...m, retryable: RETRY_STATUSES.includes(m.status) }));
  return {
    ...SOURCE,
    status_filter: status ?? null,
    message_id_filter: id ?? null,
    count: messages.length,
    messages,
  };
}

function sourceLine(p: { source_document: string; source_date: string; source_url: string }): string {
  return `Source: ${p.source_document}, ${p.source_date} (${p.source_url})`;
}

/** Markdown of the database catalog. */
export function databasesMarkdown(p: DatabasesOutput): string {
  return [
    `# Bank of Japan databases (${p.count})`,
    "",
    "Pass the code as `db` to boj_get_metadata (to find series), boj_get_data_code or boj_get_data_layer.",
    "",
    markdownTable(
      ["Code", "Name", "Japanese name", "Category"],
      p.databases.map((d) => [d.code, d.name_en, d.name_ja, d.category_en]),
    ),
    "",
    "English names are this server's translations of the official Japanese names.",
    sourceLine(p),
  ].join("\n");
}

/** Markdown of the parameter catalog. */
export function parameterCatalogMarkdown(p: ParameterCatalogOutput): string {
  const req = (r: string) => (r === "required" ? "required" : r === "optional" ? "optional" : "—");
  const lines = [
    `# BOJ API parameters (${p.endpoint_scope})`,
    "",
    markdownTable(
      ["BOJ name", "Tool argument", "Allowed values", "getDataCode", "getDataLayer", "getMetadata", "Notes"],
      p.parameters.map((x) => [
        x.name,
        x.mcp_argument,
        x.allowed_values,
        req(x.requirements.code_api),
        req(x.requirements.layer_api),
        req(x.requirements.metadata_api),
        x.notes.join("; "),
      ]),
    ),
    "",
    `Formats: BOJ ${p.format_codes.join(", ")}; tools take ${
      p.mcp_format_codes.join(", ")
    } (upper case accepted).`,
    `Languages: BOJ ${p.language_codes.join(", ")}; tools take ${
      p.mcp_language_codes.join(", ")
    } (upper case accepted).`,
    "",
    "## Frequencies and date formats",
    "",
    markdownTable(
      ["Code", "Meaning", "start_date / end_date"],
      p.frequencies.map((f) => [f.code, f.meaning, f.date_format]),
    ),
  ];
  if (p.limits.length) {
    lines.push(
      "",
      "## Limits",
      "",
      markdownTable(
        ["API", "What", "Max", "When exceeded"],
        p.limits.map((l) => [l.api_scope, l.target, l.max_value, l.overflow_behavior]),
      ),
    );
  }
  if (p.layer_rules.length) lines.push("", "## Layers", "", ...p.layer_rules.map((r) => `- ${r}`));
  lines.push("", "## General rules", "", ...p.general_notes.map((n) => `- ${n}`), "", sourceLine(p));
  return lines.join("\n");
}

/** Markdown of the message catalog. */
export function messageCatalogMarkdown(p: MessageCatalogOutput): string {
  const filters = [
    p.status_filter === null ? "" : `status ${p.status_filter}`,
    p.message_id_filter === null ? "" : `message id ${p.message_id_filter}`,
  ].filter(Boolean).join(", ");
  const title = `# BOJ API messages${filters ? ` (${filters})` : ""}: ${p.count}`;
  if (p.count === 0) {
    return [
      title,
      "",
      "No message matches. Known statuses: 200, 400, 500, 503; message ids look like M181005E.",
      sourceLine(p),
    ].join("\n");
  }
  return [
    title,
    "",
    markdownTable(
      ["Status", "Message id", "Message", "English", "What to do", "Retryable"],
      p.messages.map((
        m,
      ) => [m.status, m.message_id, m.message, m.message_en, m.hint, m.retryable ? "yes" : "no"]),
    ),
    "",
    "English texts are this server's renderings except M181000I, M181001E, M181002E, M181005E and M181018E, which the API sends itself.",
    sourceLine(p),
  ].join("\n");
}
