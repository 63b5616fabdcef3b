// The conformance fixture `test_simple_text`: its name and texts are the suite's contract.
import { type AnyTool, fixture } from "../_fixture.ts";

/** `test_simple_text`. */
export function testSimpleTextTool(): AnyTool {
  return fixture(
    "test_simple_text",
    "Returns one fixed text block.",
    () => Promise.resolve({ text: "This is a simple text response for testing." }),
  );
}
