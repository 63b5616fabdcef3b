// The conformance fixture `test_sampling`: its name and texts are the suite's contract.
import { z } from "zod";
import { inputRequired } from "../../../../lib/mcp/sdk.ts";
import { type AnyTool, fixture } from "../_fixture.ts";
import { ask } from "../_asking.ts";

/** `test_sampling`. */
export function testSamplingTool(): AnyTool {
  return fixture(
    "test_sampling",
    "Asks the client's model (sampling/createMessage) to answer the prompt and returns its answer.",
    (args, ctx) => {
      const step = ask(
        ctx,
        "sampling",
        inputRequired.createMessage({
          messages: [{ role: "user", content: { type: "text", text: args.prompt } }],
          maxTokens: 100,
        }),
      );
      if ("ask" in step) return Promise.resolve(step.ask);
      const result = step.answer.kind === "sampling" ? step.answer.result : undefined;
      const content = result?.content as { type?: string; text?: string } | undefined;
      const text = content?.type === "text" ? content.text : JSON.stringify(result?.content ?? null);
      return Promise.resolve({ text: `LLM response: ${text}` });
    },
    z.strictObject({ prompt: z.string().describe("The prompt to send to the client's model") }),
  );
}
