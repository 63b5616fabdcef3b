// The error contract of a tool call: what a validation error says (each argument at fault, with
// its schema and a "did you mean"), argument aliases, and any failure as an `isError` result.
import { z } from "zod";
import { ToolError } from "../errors.ts";
import type { ErrorPayload } from "../errors.ts";
import { didYouMean, nextCallsText } from "./next_calls.ts";
import type { CallToolResult, Tool } from "./sdk.ts";

/**
 * A VALIDATION_ERROR naming each argument at fault, with what the tool's schema says of it (so an
 * agent that reached the tool through opendata_call, without its inputSchema, can fix the call)
 * and "did you mean" for an unknown argument close to a known one.
 */
export function validationError(error: z.ZodError, input?: unknown, schema?: Tool["inputSchema"]): ToolError {
  const properties = (schema?.properties ?? {}) as Record<string, Record<string, unknown>>;
  const known = Object.keys(properties);
  const shown = new Set<string>();
  const issues = error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    let message = issue.message;
    if (issue.code === "unrecognized_keys") {
      const guesses = issue.keys.map((k) => didYouMean(k, known)).filter((g): g is string => !!g);
      for (const g of guesses) shown.add(g);
      return `Unknown argument ${issue.keys.map((k) => `"${k}"`).join(", ")}${path ? ` in "${path}"` : ""}${
        guesses.length ? `: did you mean ${guesses.map((g) => `"${g}"`).join(", ")}?` : ""
      }${known.length && !guesses.length ? ` (accepted: ${known.join(", ")})` : ""}`;
    }
    if (typeof issue.path[0] === "string") shown.add(issue.path[0]);
    if ((issue.code === "invalid_type" || issue.code === "invalid_value") && isMissing(input, issue.path)) {
      message = issue.code === "invalid_value" ? `required: ${issue.message}` : "required";
    }
    return path ? `"${path}": ${message}` : message;
  });
  const issue = error.issues[0];
  const first = issue?.code === "unrecognized_keys" && issue.path.length === 0
    ? issue.keys[0]
    : issue?.path[0];
  const parts = [...shown].filter((k) => properties[k]).slice(0, 4)
    .map((k) => `"${k}": ${JSON.stringify(schemaPart(properties[k]!))}`);
  return new ToolError("VALIDATION_ERROR", `Invalid arguments: ${issues.join("; ")}`, {
    ...(first === undefined ? {} : { field: String(first) }),
    hint: parts.length
      ? `Correct the call; the schema says ${parts.join(", ")}`
      : "Correct the named argument(s) and call the tool again",
  });
}

/** A property's schema without the noise an agent does not need to fix a call. */
function schemaPart(property: Record<string, unknown>): Record<string, unknown> {
  const { default: _d, ...rest } = property;
  return rest;
}

/**
 * Common other names for an argument: a call that uses one where the tool takes the other is
 * read as meant, with a notice (`lang` in BOJ, `language` in Wikipedia).
 */
const ALIASES: Readonly<Record<string, readonly string[]>> = {
  lang: ["language"],
  language: ["lang"],
  q: ["query", "search_text"],
  query: ["search_text"],
  search_text: ["query"],
  latitude: ["lat"],
  longitude: ["lon"],
  lng: ["lon"],
  radius: ["radius_m"],
  max_results: ["limit"],
  // A date range's ends go by three names across the sources (FRED, BOJ and the heritage APIs).
  start_date: ["observation_start", "start"],
  end_date: ["observation_end", "end"],
  observation_start: ["start_date", "start"],
  observation_end: ["end_date", "end"],
};

/** `args` with aliased names renamed to the ones the tool takes, and a notice for each. */
export function applyAliases(
  args: unknown,
  schema: Tool["inputSchema"],
): { args: unknown; notices: string[] } {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return { args, notices: [] };
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  const notices: string[] = [];
  for (const key of Object.keys(args)) {
    if (key in properties) continue;
    const target = ALIASES[key]?.find((t) => t in properties && !(t in args));
    if (!target) continue;
    out ??= { ...args as Record<string, unknown> };
    out[target] = out[key];
    delete out[key];
    notices.push(`"${key}" read as "${target}"`);
  }
  return { args: out ?? args, notices };
}

/** Whether `path` names nothing in `input` (zod does not report inputs by default). */
function isMissing(input: unknown, path: readonly PropertyKey[]): boolean {
  let node: unknown = input;
  for (const key of path) {
    if (typeof node !== "object" || node === null || !(key in node)) return true;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node === undefined;
}

export function toPayload(e: unknown, signal: AbortSignal): ErrorPayload {
  if (e instanceof ToolError) return e.toPayload();
  if (e instanceof z.ZodError) return validationError(e).toPayload();
  if (signal.aborted) {
    return { error_type: "CANCELLED", message: "The call was cancelled by the client", retryable: false };
  }
  return {
    error_type: "INTERNAL_ERROR",
    message: "The server failed while handling this call; the failure was logged",
    retryable: true,
    hint: "Try again; if it keeps failing, report it with the time of the call",
  };
}

/**
 * The error contract as a tool result: one text block that says what went wrong, whether a retry
 * may help and what to do (a model reads it once), and the payload itself in
 * `_meta["opendata-mcp/error"]` for programs. No `structuredContent`: it would have to match the
 * success schema.
 */
export function errorResult(payload: ErrorPayload): CallToolResult {
  const lines = [
    `Error (${payload.error_type}${payload.retryable ? ", retryable" : ""}): ${payload.message}`,
  ];
  if (payload.field !== undefined && !payload.message.includes(`"${payload.field}"`)) {
    lines.push(`Argument: ${payload.field}`);
  }
  if (payload.retry_after_s !== undefined) lines.push(`Retry after: ${payload.retry_after_s} s`);
  if (payload.hint) lines.push(`Next step: ${payload.hint}`);
  if (payload.next_calls?.length) lines.push(nextCallsText(payload.next_calls));
  return {
    isError: true,
    content: [{ type: "text", text: lines.join("\n") }],
    _meta: { "opendata-mcp/error": payload },
  };
}
