// The conformance fixture `test_embedded_resource`: its name and texts are the suite's contract.
import { type AnyTool, fixture } from "../_fixture.ts";

/** `test_embedded_resource`. */
export function testEmbeddedResourceTool(): AnyTool {
  return fixture("test_embedded_resource", "Returns one embedded text resource.", () =>
    Promise.resolve({
      text: "",
      replaceContent: true,
      content: [{
        type: "resource",
        resource: {
          uri: "test://embedded-resource",
          mimeType: "text/plain",
          text: "This is an embedded resource content.",
        },
      }],
    }));
}
