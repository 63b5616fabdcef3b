// What the multi round-trip fixtures in tools/ share (SEP-2322, protocol 2026-07-28, the
// `input-required-result-*` scenarios of @modelcontextprotocol/conformance 0.2.0-alpha.12): the
// requests they make and the state-carrying confirmation. Names, keys and texts are the suite's
// contract. Each asks in the inputRequired style, so the same code serves 2025-era sessions.
import type { ToolOutput } from "../../../lib/mcp/provider.ts";
import { inputRequired } from "../../../lib/mcp/sdk.ts";
import type { InputRequest } from "../../../lib/mcp/sdk.ts";
import { acceptedAnswer, type AnyTool, fixture, oneField, stateFor } from "./_fixture.ts";

/** The client capabilities a 2026-07-28 request declares in its `_meta` envelope. */
export const CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";

/** Asks for a name (an elicitation with one string field). */
export function askName(): InputRequest {
  return inputRequired.elicit({ message: "What is your name?", requestedSchema: oneField("name", "string") });
}

/** Asks for a confirmation (an elicitation with one boolean field). */
export function askConfirmation(): InputRequest {
  return inputRequired.elicit({ message: "Please confirm", requestedSchema: oneField("ok", "boolean") });
}

/** Asks the client's model for a greeting (sampling). */
export function askGreeting(): InputRequest {
  return inputRequired.createMessage({
    messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }],
    maxTokens: 50,
  });
}

/** A fixture's final text answer. */
export function done(text: string): Promise<ToolOutput> {
  return Promise.resolve({ text });
}

/**
 * A confirmation round trip whose second round needs the sealed state of the first: answers
 * `text` once the client has confirmed and echoed the state, and asks again (with a fresh state)
 * otherwise. A forged or expired state never reaches the handler: the core's seal check refuses
 * it with -32602 first.
 */
export function confirmWithState(name: string, tool: string, text: string, description: string): AnyTool {
  return fixture(name, description, async (_args, ctx) => {
    const state = stateFor(ctx, tool);
    if (state && acceptedAnswer(ctx.mcp.mcpReq.inputResponses, "confirm")) return { text };
    return inputRequired({
      inputRequests: { confirm: askConfirmation() },
      requestState: await ctx.sealState({ tool, round: 1 }),
    });
  });
}
