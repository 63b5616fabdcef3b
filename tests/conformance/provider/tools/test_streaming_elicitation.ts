// The conformance fixture `test_streaming_elicitation`: its name and texts are the suite's contract.
import { type AnyTool, fixture } from "../_fixture.ts";

/** `test_streaming_elicitation`. */
export function testStreamingElicitationTool(): AnyTool {
  return fixture(
    "test_streaming_elicitation",
    "Answers with one result and nothing else on the response stream (no request to the client on it).",
    () => Promise.resolve({ text: "Stream observed: one result, no requests to the client" }),
  );
}
