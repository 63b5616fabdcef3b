// The multi round-trip fixtures (SEP-2322, protocol 2026-07-28) of @modelcontextprotocol/conformance
// 0.2.0-alpha.12: the `input-required-result-*` scenarios and the `server-stateless` capability
// probe. Names, keys and texts are the suite's contract. Each tool asks in the inputRequired style,
// so the same code serves 2025-era sessions through the SDK's shim.
import type { ToolOutput } from "../../mcp/provider.ts";
import { inputRequired } from "../../mcp/sdk.ts";
import type { InputRequest } from "../../mcp/sdk.ts";
import {
  acceptedAnswer,
  acceptedText,
  answerAction,
  type AnyTool,
  fixture,
  oneField,
  rootUris,
  sampledText,
  stateFor,
} from "./_fixture.ts";

/** The client capabilities a 2026-07-28 request declares in its `_meta` envelope. */
const CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";

function askName(): InputRequest {
  return inputRequired.elicit({ message: "What is your name?", requestedSchema: oneField("name", "string") });
}

function askConfirmation(): InputRequest {
  return inputRequired.elicit({ message: "Please confirm", requestedSchema: oneField("ok", "boolean") });
}

function askGreeting(): InputRequest {
  return inputRequired.createMessage({
    messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }],
    maxTokens: 50,
  });
}

function done(text: string): Promise<ToolOutput> {
  return Promise.resolve({ text });
}

/**
 * A confirmation round trip whose second round needs the sealed state of the first: answers
 * `text` once the client has confirmed and echoed the state, and asks again (with a fresh state)
 * otherwise. A forged or expired state never reaches the handler: the core's seal check refuses
 * it with -32602 first.
 */
function confirmWithState(name: string, tool: string, text: string, description: string): AnyTool {
  return fixture(name, description, async (_args, ctx) => {
    const state = stateFor(ctx, tool);
    if (state && acceptedAnswer(ctx.mcp.mcpReq.inputResponses, "confirm")) return { text };
    return inputRequired({
      inputRequests: { confirm: askConfirmation() },
      requestState: await ctx.sealState({ tool, round: 1 }),
    });
  });
}

/** The fixtures of the `input-required-result-*` scenarios, plus `test_missing_capability`. */
export function inputRequiredTools(): AnyTool[] {
  return [
    fixture(
      "test_input_required_result_elicitation",
      "Asks the user's name (elicitation, key user_name) and greets them; asks again until an answer comes.",
      (_args, ctx) => {
        const responses = ctx.mcp.mcpReq.inputResponses;
        const name = acceptedText(responses, "user_name", "name");
        if (name !== undefined) return done(`Hello, ${name}!`);
        const action = answerAction(responses, "user_name");
        if (action === "decline" || action === "cancel") return done(`No name was given (action=${action})`);
        return Promise.resolve(inputRequired({ inputRequests: { user_name: askName() } }));
      },
    ),
    fixture(
      "test_input_required_result_sampling",
      "Asks the client's model (sampling, key capital_question) for the capital of France and returns the answer.",
      (_args, ctx) => {
        const text = sampledText(ctx.mcp.mcpReq.inputResponses, "capital_question");
        if (text !== undefined) return done(`Sampling response: ${text}`);
        return Promise.resolve(inputRequired({
          inputRequests: {
            capital_question: inputRequired.createMessage({
              messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }],
              maxTokens: 100,
            }),
          },
        }));
      },
    ),
    fixture(
      "test_input_required_result_list_roots",
      "Asks the client for its roots (roots/list, key client_roots) and lists them.",
      (_args, ctx) => {
        const uris = rootUris(ctx.mcp.mcpReq.inputResponses, "client_roots");
        if (uris !== undefined) return done(`Client exposed ${uris.length} root(s): ${uris.join(", ")}`);
        return Promise.resolve(inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } }));
      },
    ),
    confirmWithState(
      "test_input_required_result_request_state",
      "request_state",
      "state-ok: requestState verified and confirmation received",
      "Asks for a confirmation with a sealed requestState and completes once both come back.",
    ),
    confirmWithState(
      "test_input_required_result_tampered_state",
      "tampered_state",
      "integrity-ok: requestState verified",
      "Like test_input_required_result_request_state; a retry with a modified requestState is refused (-32602).",
    ),
    fixture(
      "test_input_required_result_multiple_inputs",
      "Asks for a name (elicitation), a greeting (sampling) and the roots in one round, with a sealed state.",
      async (_args, ctx) => {
        const responses = ctx.mcp.mcpReq.inputResponses;
        const name = acceptedText(responses, "user_name", "name");
        const greeting = sampledText(responses, "greeting");
        const roots = rootUris(responses, "client_roots");
        if (stateFor(ctx, "multiple_inputs") && name !== undefined && greeting !== undefined && roots) {
          return { text: `${greeting} ${name} (${roots.length} root(s) visible)` };
        }
        return inputRequired({
          inputRequests: {
            user_name: askName(),
            greeting: askGreeting(),
            client_roots: inputRequired.listRoots(),
          },
          requestState: await ctx.sealState({ tool: "multiple_inputs", round: 1 }),
        });
      },
    ),
    fixture(
      "test_input_required_result_multi_round",
      "Asks for a name, then a favourite colour, carrying the round and the name in a sealed state that changes per round.",
      async (_args, ctx) => {
        const state = stateFor(ctx, "multi_round");
        const responses = ctx.mcp.mcpReq.inputResponses;
        const name = typeof state?.["name"] === "string"
          ? state["name"]
          : acceptedText(responses, "step1", "name");
        if (state?.["round"] === 2 && name !== undefined) {
          const color = acceptedText(responses, "step2", "color");
          if (color !== undefined) return { text: `Multi-round complete: ${name} likes ${color}` };
        }
        if (state && name !== undefined) {
          return inputRequired({
            inputRequests: {
              step2: inputRequired.elicit({
                message: "Step 2: What is your favorite color?",
                requestedSchema: oneField("color", "string"),
              }),
            },
            requestState: await ctx.sealState({ tool: "multi_round", round: 2, name }),
          });
        }
        return inputRequired({
          inputRequests: {
            step1: inputRequired.elicit({
              message: "Step 1: What is your name?",
              requestedSchema: oneField("name", "string"),
            }),
          },
          requestState: await ctx.sealState({ tool: "multi_round", round: 1 }),
        });
      },
    ),
    fixture(
      "test_input_required_result_capabilities",
      "Asks only for the kinds of input the request's declared client capabilities cover (elicitation, sampling, roots).",
      (_args, ctx) => {
        if (ctx.mcp.mcpReq.inputResponses !== undefined) {
          return done("Capability-aware input requests fulfilled");
        }
        // The SDK's envelope type names no keys (in 2.4.0): read the one wanted by its wire name.
        const envelope = ctx.mcp.mcpReq.envelope as Record<string, unknown> | undefined;
        const declared = envelope?.[CLIENT_CAPABILITIES] as Record<string, unknown> | undefined;
        // A 2025-era session has no per-request envelope: its capabilities were declared once at
        // initialize, and the SDK's shim refuses (as an isError result) any kind they lack.
        const wants = (kind: "elicitation" | "sampling" | "roots"): boolean =>
          declared === undefined || declared[kind] !== undefined;
        const inputRequests: Record<string, InputRequest> = {};
        if (wants("elicitation")) inputRequests["user_name"] = askName();
        if (wants("sampling")) inputRequests["greeting"] = askGreeting();
        if (wants("roots")) inputRequests["client_roots"] = inputRequired.listRoots();
        if (Object.keys(inputRequests).length === 0) {
          return done("No declared client capability supports an input request");
        }
        return Promise.resolve(inputRequired({ inputRequests }));
      },
    ),
    fixture(
      "test_missing_capability",
      "Needs sampling: a 2026-07-28 request that does not declare the sampling capability is refused (-32021).",
      (_args, ctx) => {
        const text = sampledText(ctx.mcp.mcpReq.inputResponses, "llm_answer");
        if (text !== undefined) return done(`Sampling round trip complete: ${text}`);
        return Promise.resolve(inputRequired({
          inputRequests: {
            llm_answer: inputRequired.createMessage({
              messages: [{
                role: "user",
                content: { type: "text", text: "Reply with the single word: pong" },
              }],
              maxTokens: 16,
            }),
          },
        }));
      },
    ),
  ];
}
