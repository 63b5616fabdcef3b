// The conformance fixture `test_input_required_result_request_state`: its name and texts are the suite's contract.
import { type AnyTool } from "../_fixture.ts";
import { confirmWithState } from "../input_required.ts";

/** `test_input_required_result_request_state`. */
export function testInputRequiredResultRequestStateTool(): AnyTool {
  return confirmWithState(
    "test_input_required_result_request_state",
    "request_state",
    "state-ok: requestState verified and confirmation received",
    "Asks for a confirmation with a sealed requestState and completes once both come back.",
  );
}
