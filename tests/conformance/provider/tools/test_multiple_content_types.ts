// The conformance fixture `test_multiple_content_types`: its name and texts are the suite's contract.
import { type AnyTool, fixture } from "../_fixture.ts";
import { RED_PIXEL_PNG } from "../_media.ts";

/** `test_multiple_content_types`. */
export function testMultipleContentTypesTool(): AnyTool {
  return fixture(
    "test_multiple_content_types",
    "Returns a text, an image and an embedded resource block.",
    () =>
      Promise.resolve({
        text: "Multiple content types test:",
        content: [
          { type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" },
          {
            type: "resource",
            resource: {
              uri: "test://mixed-content-resource",
              mimeType: "application/json",
              text: JSON.stringify({ test: "data", value: 123 }),
            },
          },
        ],
      }),
  );
}
