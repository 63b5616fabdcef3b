// The conformance fixture `test_input_required_result_tampered_state`: its name and texts are the suite's contract.
import { type AnyTool } from "../_fixture.ts";
import { confirmWithState } from "../input_required.ts";

/** `test_input_required_result_tampered_state`. */
export function testInputRequiredResultTamperedStateTool(): AnyTool {
  return confirmWithState(
    "test_input_required_result_tampered_state",
    "tampered_state",
    "integrity-ok: requestState verified",
    "Like test_input_required_result_request_state; a retry with a modified requestState is refused (-32602).",
  );
}
