// What the conformance fixtures in tools/ share to ask the client something and to log (the suite's
// texts, @modelcontextprotocol/conformance 0.2.0-alpha.12, are a contract: they must not change).
import type { ToolCallContext } from "../../../lib/mcp/provider.ts";
import { inputRequired, inputResponse } from "../../../lib/mcp/sdk.ts";
import type { InputRequest, InputRequiredResult, InputResponseView } from "../../../lib/mcp/sdk.ts";

/**
 * Asks the client something through a multi round-trip answer (written once, served in both
 * eras: 2026-07-28 clients retry with `inputResponses`, 2025-era sessions get a real request
 * from the SDK's shim). Returns the answer for `key`, or the `inputRequired` result to return.
 */
export function ask(
  ctx: ToolCallContext,
  key: string,
  request: InputRequest,
): { answer: InputResponseView } | { ask: InputRequiredResult } {
  const answer = inputResponse(ctx.mcp.mcpReq.inputResponses, key);
  if (answer.kind !== "missing") return { answer };
  return { ask: inputRequired({ inputRequests: { [key]: request } }) };
}

/** Sends one info log message for the conformance logger. */
export function logMessage(ctx: ToolCallContext, data: string): Promise<void> {
  return ctx.mcp.mcpReq.log("info", data, "conformance");
}

/** The text the elicitation scenarios expect back: the action and the content answered. */
export function elicitationText(answer: InputResponseView): string {
  if (answer.kind !== "elicit") return `Elicitation completed: action=cancel, content={}`;
  return `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
}
