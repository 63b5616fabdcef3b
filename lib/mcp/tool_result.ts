// How a handler's output becomes the call's `CallToolResult` (tool_call.ts runs the call): the next
// calls, the provenance, the alias notice, and the character limit over text and structured content.
import type { CallRecord } from "../http/request_scope.ts";
import type { Logger } from "../log.ts";
import { buildProvenance, withProvenance } from "../output/provenance.ts";
import { boundStructured, clampText, requiredNames } from "./shaping.ts";
import {
  nextCallsText,
  READ_TOOL,
  routeCall,
  SEARCH_TOOL_NAME,
  takesNextCalls,
  widening,
} from "./next_calls.ts";
import type { RoutedCall } from "./next_calls.ts";
import type { NextCall, ToolDefinition, ToolOutput } from "./provider.ts";
import type { CallToolResult, Tool } from "./sdk.ts";
import type { CallToolOptions } from "./server_options.ts";
import { citationsOf } from "./server_options.ts";
import { describeTool } from "./tool_schemas.ts";

/** What shaping an answer needs of the call that produced it. */
export interface AnsweredCall {
  /** The tool as listed (its schemas are the ones the caller saw). */
  // deno-lint-ignore no-explicit-any
  listed: ToolDefinition<any, any>;
  /** The listed input schema. */
  inputSchema: Tool["inputSchema"];
  /** The arguments as sent, aliases applied: next calls repeat them. */
  sent: Record<string, unknown>;
  /** Argument names the call corrected, said before the text. */
  notices: readonly string[];
  /** The upstream requests the handler made: the provenance cites them. */
  record: CallRecord;
  /** Whether the tool's answers carry a provenance. */
  cites: boolean;
  options: CallToolOptions;
  logger: Logger;
}

/**
 * The result of a call whose handler answered: its text with the provenance, the alias notice
 * and the next calls where they fit, and its structured content within the character limit.
 */
export async function toolResult(output: ToolOutput, call: AnsweredCall): Promise<CallToolResult> {
  const { shown, all } = nextCalls(output, call);
  const cited = await citedText(output, call);
  const framed = framedText(cited.body, shown, call);
  // resource_links off: clients that cannot take the block (Anthropic's mcpTool helper throws on
  // it) get the answer without it; the text names the file and the call that reads it anyway.
  const extra = (output.content ?? []).filter((b) =>
    call.options.resourceLinks !== false || b.type !== "resource_link"
  );
  const content: CallToolResult["content"] = output.replaceContent
    ? extra
    : [{ type: "text", text: framed.text }, ...extra];
  const result: CallToolResult = { content };
  const structured = withNextCalls(output.structured as Record<string, unknown> | undefined, all, content, {
    jsonText: framed.jsonText,
    call,
  });
  if (structured !== undefined) {
    boundContent(result, structured, {
      jsonText: framed.jsonText,
      closing: cited.line,
      tail: framed.tail,
      call,
    });
  }
  return result;
}

/**
 * The next calls of an answer: those shown in its text (the provider's own, reading a file it
 * wrote, or a wider search after an empty one) and all of them (with the continuation of a paged
 * answer), each routed for the caller's surface.
 */
function nextCalls(output: ToolOutput, call: AnsweredCall): { shown: RoutedCall[]; all: RoutedCall[] } {
  const { listed, sent, options } = call;
  const wanted = [...(output.next ?? [])];
  // A file the answer wrote is read by a tool call too, for clients without resources/read.
  if (options.callable?.has(READ_TOOL)) {
    for (const block of output.content ?? []) {
      if (block.type === "resource_link" && !wanted.some((c) => c.tool === READ_TOOL)) {
        wanted.push({ tool: READ_TOOL, arguments: { uri: block.uri }, for: "read the file" });
      }
    }
  }
  // An empty answer of a search by words is never a dead end: where the provider named nothing,
  // the same search with fewer words, without its filters, and opendata_search over every source.
  if (wanted.length === 0) {
    const reach = options.served === undefined || options.served.has(SEARCH_TOOL_NAME);
    const inputSchema = call.inputSchema;
    const required = new Set(Array.isArray(inputSchema.required) ? inputSchema.required as string[] : []);
    wanted.push(
      ...widening(listed.name, sent, output.structured, reach ? SEARCH_TOOL_NAME : undefined, required),
    );
  }
  // A paged answer names its next page as a ready call, in the text too: prose such as "call
  // again with offset=..." is lost on an agent that follows only calls (and on text-only clients).
  const more = wanted.some((c) => c.tool === listed.name)
    ? []
    : continuation(listed, sent, output.structured);
  const everything = options.served
    ? undefined
    : new Set([listed.name, ...wanted.map((c) => c.tool), ...more.map((c) => c.tool)]);
  const routeAll = (calls: NextCall[]) => calls.map((c) => routeCall(c, options.served ?? everything!));
  const shown = [...routeAll(wanted), ...routeAll(more)];
  return { shown, all: shown };
}

/**
 * The answer's text within the limit, closed by its provenance line where it cites (the line is
 * returned too, none in a JSON text, so a later cut keeps it whole); the provenance goes into
 * `output.structured` as well.
 */
async function citedText(output: ToolOutput, call: AnsweredCall): Promise<{ body: string; line: string }> {
  const { options } = call;
  // The provider fitted its text to the limit: the next calls and the alias notice are added
  // only where they fit, never by cutting it (structured content carries the next calls anyway,
  // and a cut answer's text already says how to continue).
  let body = clampText(output.text, options.characterLimit);
  // Where the data came from: one line in the text, an object in structured content.
  const provenance = output.replaceContent || !call.cites
    ? undefined
    : await buildProvenance(call.record, citationsOf(options));
  let line = "";
  if (provenance) {
    const cited = withProvenance(
      output.text,
      output.structured as Record<string, unknown> | undefined,
      provenance,
      options.characterLimit,
      clampText,
    );
    body = cited.text;
    line = cited.line ?? "";
    if (cited.structured) output.structured = cited.structured;
  }
  return { body, line };
}

/** The text block: the alias notice before the body and the next calls after it, where they fit. */
function framedText(
  body: string,
  shown: readonly RoutedCall[],
  call: AnsweredCall,
): { text: string; tail: string; jsonText: boolean } {
  const limit = call.options.characterLimit;
  // A JSON text block is the structured content itself (response_format "json"): nothing is
  // added to it, so it stays parseable and equal to structuredContent.
  const jsonText = body.trimStart().startsWith("{");
  const tail = shown.length && !jsonText ? `\n\n${nextCallsText(shown)}` : "";
  const head = call.notices.length && !jsonText ? `(${call.notices.join("; ")})\n` : "";
  const room = limit - body.length;
  const shownHead = head.length + tail.length <= room ? head : "";
  const shownTail = head.length + tail.length <= room || tail.length <= room ? tail : "";
  return { text: `${shownHead}${body}${shownTail}`, tail: shownTail, jsonText };
}

/**
 * The structured content with `next_calls`, where the tool's output schema takes them and they
 * fit; a JSON text block that is the structured content gets them too.
 */
function withNextCalls(
  structured: Record<string, unknown> | undefined,
  next: readonly RoutedCall[],
  content: CallToolResult["content"],
  framing: { jsonText: boolean; call: AnsweredCall },
): Record<string, unknown> | undefined {
  const { jsonText, call } = framing;
  const limit = call.options.characterLimit;
  if (
    structured !== undefined && next.length && !jsonText &&
    takesNextCalls(describeTool(call.listed).outputSchema)
  ) {
    // Only where it fits: the provider fitted its structured content to the limit, and a cut
    // to make room would shorten its data.
    const withNext = { ...structured, next_calls: next };
    if (JSON.stringify(withNext).length <= limit) return withNext;
  } else if (
    structured !== undefined && next.length && jsonText && content[0]?.type === "text" &&
    takesNextCalls(describeTool(call.listed).outputSchema)
  ) {
    // A JSON text that is the structured content gets the next calls inside it, on one line
    // before its closing brace, and the structured content the same (where both fit): a JSON
    // answer names what to call next too (e.g. opendata_read for a file it wrote).
    const first = content[0];
    const json = sameJson(first.text, structured)
      ? `${first.text.trimEnd().slice(0, -1).trimEnd()},\n  "next_calls": ${JSON.stringify(next)}\n}`
      : undefined;
    const withNext = { ...structured, next_calls: next };
    if (
      json !== undefined && json.length <= limit &&
      JSON.stringify(withNext).length <= limit
    ) {
      first.text = json;
      return withNext;
    }
  }
  return structured;
}

/**
 * Sets `result.structuredContent` to `structured` within the limit. When it had to be cut, the
 * text says so in a note: a JSON text is the shortened structured content with the note in a
 * block of its own; any other text makes room for the note before its closing lines.
 */
function boundContent(
  result: CallToolResult,
  structured: Record<string, unknown>,
  framing: { jsonText: boolean; closing: string; tail: string; call: AnsweredCall },
): void {
  const { jsonText, closing, tail, call } = framing;
  const limit = call.options.characterLimit;
  const content = result.content;
  let bounded = boundStructured(structured, limit, requiredOf(call.listed));
  const note = `\n\n[structuredContent was shortened to fit the ${limit}-character ` +
    "limit: long texts end with …, long lists lost their last items and large maps their last entries. " +
    "Ask for less per call (a smaller limit, an offset, or file output where the tool offers it) to get " +
    "every field whole.]";
  const first = content[0];
  if (bounded.cut && jsonText && first?.type === "text") {
    // A JSON text stays the structured content itself, as shortened, with the note in a block
    // of its own: both within the limit (the structured content gives up the note's room).
    bounded = boundStructured(structured, limit - note.length, requiredOf(call.listed));
    const pretty = JSON.stringify(bounded.value, null, 2);
    const room = limit - note.length;
    first.text = pretty.length <= room ? pretty : JSON.stringify(bounded.value);
    content.splice(1, 0, { type: "text", text: note.trim() });
  }
  result.structuredContent = bounded.value;
  if (!bounded.cut) return;
  call.logger.warn("structured content cut to the character limit", { limit });
  if (first?.type === "text" && !jsonText) {
    // The text may already fill the limit: the text before the provenance line makes room
    // (the next calls go first where it cannot), so the note, the line and the next calls
    // are never cut mid-line.
    const ending = (withTail: boolean) => `${closing}${withTail ? tail : ""}`;
    const keepTail = limit - note.length - ending(true).length >= MIN_TEXT_ROOM;
    const end = ending(keepTail);
    const start = first.text.slice(0, first.text.length - ending(true).length);
    first.text = `${clampText(start, Math.max(0, limit - note.length - end.length))}${note}${end}`;
  }
}

/** Fewest characters of an answer's own text kept when a note and its closing lines must fit too. */
const MIN_TEXT_ROOM = 200;

/** Per tool, the property names its output schema requires: never dropped to fit the limit. */
const requiredCache = new WeakMap<object, ReadonlySet<string>>();

// deno-lint-ignore no-explicit-any
function requiredOf(tool: ToolDefinition<any, any>): ReadonlySet<string> {
  let names = requiredCache.get(tool);
  if (!names) {
    names = requiredNames(describeTool(tool).outputSchema);
    requiredCache.set(tool, names);
  }
  return names;
}

/** Whether `text` is `value` as JSON (an object with at least one entry, nothing else around it). */
function sameJson(text: string, value: Record<string, unknown>): boolean {
  try {
    const parsed = JSON.parse(text);
    return Object.keys(value).length > 0 && JSON.stringify(parsed) === JSON.stringify(value);
  } catch {
    return false;
  }
}

/**
 * The call that continues a paged answer, when the answer says there is more (`has_more` with
 * `next_offset`, or `next_cursor`) and the tool takes `offset` or `cursor`: the same call with
 * the next offset or cursor. Any tool that pages gets it, without saying it itself.
 */
function continuation(
  // deno-lint-ignore no-explicit-any
  tool: ToolDefinition<any, any>,
  args: Record<string, unknown>,
  structured: unknown,
): NextCall[] {
  if (typeof structured !== "object" || structured === null) return [];
  const s = structured as Record<string, unknown>;
  const takes = (describeTool(tool).inputSchema.properties ?? {}) as Record<string, unknown>;
  if (typeof s["next_cursor"] === "string" && s["next_cursor"] && "cursor" in takes) {
    return [{ tool: tool.name, arguments: { ...args, cursor: s["next_cursor"] }, for: "more (cursor)" }];
  }
  if (s["has_more"] === true && typeof s["next_offset"] === "number" && "offset" in takes) {
    return [{ tool: tool.name, arguments: { ...args, offset: s["next_offset"] }, for: "next page" }];
  }
  return [];
}
