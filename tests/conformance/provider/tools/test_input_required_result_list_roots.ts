// The conformance fixture `test_input_required_result_list_roots`: its name and texts are the suite's contract.
import { inputRequired } from "../../../../lib/mcp/sdk.ts";
import { type AnyTool, fixture, rootUris } from "../_fixture.ts";
import { done } from "../input_required.ts";

/** `test_input_required_result_list_roots`. */
export function testInputRequiredResultListRootsTool(): AnyTool {
  return fixture(
    "test_input_required_result_list_roots",
    "Asks the client for its roots (roots/list, key client_roots) and lists them.",
    (_args, ctx) => {
      const uris = rootUris(ctx.mcp.mcpReq.inputResponses, "client_roots");
      if (uris !== undefined) return done(`Client exposed ${uris.length} root(s): ${uris.join(", ")}`);
      return Promise.resolve(inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } }));
    },
  );
}
