// The conformance fixture `test_error_handling`: its name and texts are the suite's contract.
import { ToolError } from "../../../../lib/errors.ts";
import { type AnyTool, fixture } from "../_fixture.ts";

/** `test_error_handling`. */
export function testErrorHandlingTool(): AnyTool {
  return fixture("test_error_handling", "Always fails, as an isError result.", () => {
    throw new ToolError("FIXTURE_ERROR", "This tool intentionally returns an error for testing");
  });
}
