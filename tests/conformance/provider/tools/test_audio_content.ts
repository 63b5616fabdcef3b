// The conformance fixture `test_audio_content`: its name and texts are the suite's contract.
import { type AnyTool, fixture } from "../_fixture.ts";
import { silentWav } from "../_media.ts";

/** `test_audio_content`. */
export function testAudioContentTool(): AnyTool {
  return fixture(
    "test_audio_content",
    "Returns one WAV audio block (10 ms of silence).",
    () =>
      Promise.resolve({
        text: "",
        replaceContent: true,
        content: [{ type: "audio", data: silentWav(), mimeType: "audio/wav" }],
      }),
  );
}
