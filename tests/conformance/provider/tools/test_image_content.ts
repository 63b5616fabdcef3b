// The conformance fixture `test_image_content`: its name and texts are the suite's contract.
import { type AnyTool, fixture } from "../_fixture.ts";
import { RED_PIXEL_PNG } from "../_media.ts";

/** `test_image_content`. */
export function testImageContentTool(): AnyTool {
  return fixture(
    "test_image_content",
    "Returns one PNG image block (a 1x1 red pixel).",
    () =>
      Promise.resolve({
        text: "",
        replaceContent: true,
        content: [{ type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" }],
      }),
  );
}
