// The conformance fixture `test_input_required_result_capabilities`: its name and texts are the suite's contract.
import { inputRequired } from "../../../../lib/mcp/sdk.ts";
import type { InputRequest } from "../../../../lib/mcp/sdk.ts";
import { type AnyTool, fixture } from "../_fixture.ts";
import { askGreeting, askName, CLIENT_CAPABILITIES, done } from "../input_required.ts";

/** `test_input_required_result_capabilities`. */
export function testInputRequiredResultCapabilitiesTool(): AnyTool {
  return fixture(
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
  );
}
