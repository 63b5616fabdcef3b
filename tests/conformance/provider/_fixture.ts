// Shared pieces of the conformance fixtures: the tool shape, and readers for the answers a
// multi round-trip call comes back with. Every fixture is written once in the inputRequired
// style: 2026-07-28 clients answer `inputRequests` and retry; on 2025-era sessions the SDK's shim
// sends the same requests to the client and calls the handler again with the answers.
import { z } from "zod";
import type { ToolCallContext, ToolDefinition } from "../../../lib/mcp/provider.ts";
import { inputResponse } from "../../../lib/mcp/sdk.ts";

/** Fixtures read nothing upstream and change nothing. */
export const FIXTURE = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: false,
} as const;

/** The input of a fixture without arguments. */
export const noArgs: z.ZodObject = z.strictObject({});

/** A fixture tool (arguments are typed loosely: the suite, not a model, calls these). */
// deno-lint-ignore no-explicit-any
export type AnyTool = ToolDefinition<any, undefined>;

/** A fixture tool without `structuredContent`, titled by its name. */
export function fixture(
  name: string,
  description: string,
  handler: AnyTool["handler"],
  input: z.ZodType = noArgs,
): AnyTool {
  return { name, title: name, description, input, output: undefined, annotations: FIXTURE, handler };
}

/** The request's `inputResponses`, where the SDK put them for this round. */
type Responses = ToolCallContext["mcp"]["mcpReq"]["inputResponses"];

/**
 * The content of an accepted elicitation answer for `key`, or undefined when there is none (no
 * answer, a declined or cancelled one, or a value that is not an elicitation result).
 */
export function acceptedAnswer(responses: Responses, key: string): Record<string, unknown> | undefined {
  const view = inputResponse(responses, key);
  return view.kind === "elicit" && view.action === "accept" ? view.content ?? {} : undefined;
}

/** How the user answered elicitation `key` (`accept`, `decline`, `cancel`), or undefined without an answer. */
export function answerAction(responses: Responses, key: string): "accept" | "decline" | "cancel" | undefined {
  const view = inputResponse(responses, key);
  return view.kind === "elicit" ? view.action : undefined;
}

/** The string field `field` of an accepted elicitation answer for `key`. */
export function acceptedText(responses: Responses, key: string, field: string): string | undefined {
  const value = acceptedAnswer(responses, key)?.[field];
  return typeof value === "string" ? value : undefined;
}

/** The text the client's model answered a sampling request `key` with. */
export function sampledText(responses: Responses, key: string): string | undefined {
  const view = inputResponse(responses, key);
  if (view.kind !== "sampling") return undefined;
  const content = view.result.content as { type?: string; text?: unknown } | unknown[];
  const first = Array.isArray(content) ? content[0] as { type?: string; text?: unknown } : content;
  return first?.type === "text" && typeof first.text === "string" ? first.text : undefined;
}

/** The root URIs the client answered a `roots/list` request `key` with. */
export function rootUris(responses: Responses, key: string): string[] | undefined {
  const view = inputResponse(responses, key);
  return view.kind === "roots" ? view.roots.map((r) => r.uri) : undefined;
}

/**
 * This round's verified request state when it was minted by `tool`'s earlier round, else
 * undefined. The core verifies the seal before the handler runs (a forged or expired state never
 * gets here); the `tool` check keeps a state minted by another fixture from steering this one.
 */
export function stateFor(ctx: ToolCallContext, tool: string): Record<string, unknown> | undefined {
  let state = ctx.mcp.mcpReq.requestState();
  if (typeof state === "string") {
    // Only a server built without a seal hands the raw string over (unit tests of the core).
    try {
      state = JSON.parse(state);
    } catch {
      return undefined;
    }
  }
  if (typeof state !== "object" || state === null || Array.isArray(state)) return undefined;
  const record = state as Record<string, unknown>;
  return record["tool"] === tool ? record : undefined;
}

/** A form elicitation schema (the restricted JSON Schema subset elicitation allows). */
export type FormSchema = {
  type: "object";
  properties: Record<string, { type: "string" } | { type: "boolean" }>;
  required: string[];
};

/** A form elicitation schema with one required field. */
export function oneField(field: string, type: "string" | "boolean"): FormSchema {
  const property = type === "string" ? { type: "string" as const } : { type: "boolean" as const };
  return { type: "object", properties: { [field]: property }, required: [field] };
}
