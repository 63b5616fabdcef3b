import { z } from "zod";
import type { Clock } from "../../clock.ts";
import { ToolError } from "../../errors.ts";
import type { ToolCallContext } from "../../mcp/provider.ts";
import { inputRequired, inputResponse } from "../../mcp/sdk.ts";
import type { InputRequest, InputRequiredResult, InputResponseView } from "../../mcp/sdk.ts";
import { type AnyTool, fixture } from "./_fixture.ts";
import { RED_PIXEL_PNG, silentWav } from "./_media.ts";

// The names and texts below are the conformance suite's contract (@modelcontextprotocol/conformance
// 0.2.0-alpha.12, server scenarios of both protocol eras): they must not change.
// They are fixtures of a few lines each over fixture(), grouped by the suite's scenarios across
// tools.ts, protocol_tools.ts and input_required.ts rather than one file per tool.

/**
 * Asks the client something through a multi round-trip answer (written once, served in both
 * eras: 2026-07-28 clients retry with `inputResponses`, 2025-era sessions get a real request
 * from the SDK's shim). Returns the answer for `key`, or the `inputRequired` result to return.
 */
function ask(
  ctx: ToolCallContext,
  key: string,
  request: InputRequest,
): { answer: InputResponseView } | { ask: InputRequiredResult } {
  const answer = inputResponse(ctx.mcp.mcpReq.inputResponses, key);
  if (answer.kind !== "missing") return { answer };
  return { ask: inputRequired({ inputRequests: { [key]: request } }) };
}

function logMessage(ctx: ToolCallContext, data: string): Promise<void> {
  return ctx.mcp.mcpReq.log("info", data, "conformance");
}

function elicitationText(answer: InputResponseView): string {
  if (answer.kind !== "elicit") return `Elicitation completed: action=cancel, content={}`;
  return `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
}

/** The fixture tools; `clock` paces the tools whose scenarios expect gaps between messages. */
export function conformanceTools(clock: Clock): AnyTool[] {
  return [
    fixture(
      "test_simple_text",
      "Returns one fixed text block.",
      () => Promise.resolve({ text: "This is a simple text response for testing." }),
    ),
    fixture("test_image_content", "Returns one PNG image block (a 1x1 red pixel).", () =>
      Promise.resolve({
        text: "",
        replaceContent: true,
        content: [{ type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" }],
      })),
    fixture("test_audio_content", "Returns one WAV audio block (10 ms of silence).", () =>
      Promise.resolve({
        text: "",
        replaceContent: true,
        content: [{ type: "audio", data: silentWav(), mimeType: "audio/wav" }],
      })),
    fixture("test_embedded_resource", "Returns one embedded text resource.", () =>
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
      })),
    fixture(
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
    ),
    fixture(
      "test_tool_with_logging",
      "Sends three info log notifications about 50 ms apart, then returns.",
      async (_args, ctx) => {
        await logMessage(ctx, "Tool execution started");
        await clock.sleep(50, ctx.signal);
        await logMessage(ctx, "Tool processing data");
        await clock.sleep(50, ctx.signal);
        await logMessage(ctx, "Tool execution completed");
        return { text: "Tool with logging executed successfully" };
      },
    ),
    fixture(
      "test_tool_with_progress",
      "Reports progress 0, 50 and 100 of 100 about 50 ms apart when the call carries a progress token.",
      async (_args, ctx) => {
        await ctx.progress(0, 100);
        await clock.sleep(50, ctx.signal);
        await ctx.progress(50, 100);
        await clock.sleep(50, ctx.signal);
        await ctx.progress(100, 100);
        return { text: "Tool with progress executed successfully" };
      },
    ),
    fixture("test_error_handling", "Always fails, as an isError result.", () => {
      throw new ToolError("FIXTURE_ERROR", "This tool intentionally returns an error for testing");
    }),
    fixture(
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
    ),
    fixture(
      "test_elicitation",
      "Asks the user (elicitation/create) for a username and an email and returns the answer.",
      (args, ctx) => {
        const step = ask(
          ctx,
          "elicitation",
          inputRequired.elicit({
            message: args.message,
            requestedSchema: {
              type: "object",
              properties: {
                username: { type: "string", description: "User's response" },
                email: { type: "string", description: "User's email address" },
              },
              required: ["username", "email"],
            },
          }),
        );
        if ("ask" in step) return Promise.resolve(step.ask);
        const a = step.answer;
        const action = a.kind === "elicit" ? a.action : "cancel";
        const content = a.kind === "elicit" ? a.content ?? {} : {};
        return Promise.resolve({
          text: `User response: action=${action}, content=${JSON.stringify(content)}`,
        });
      },
      z.strictObject({ message: z.string().describe("The message to show the user") }),
    ),
    fixture(
      "test_elicitation_sep1034_defaults",
      "Asks the user for five values whose schemas carry defaults (SEP-1034).",
      (_args, ctx) => {
        const step = ask(
          ctx,
          "elicitation",
          inputRequired.elicit({
            message: "Please review and update the form fields with defaults",
            requestedSchema: {
              type: "object",
              properties: {
                name: { type: "string", description: "User name", default: "John Doe" },
                age: { type: "integer", description: "User age", default: 30 },
                score: { type: "number", description: "User score", default: 95.5 },
                status: {
                  type: "string",
                  description: "User status",
                  enum: ["active", "inactive", "pending"],
                  default: "active",
                },
                verified: { type: "boolean", description: "Verification status", default: true },
              },
              required: [],
            },
          }),
        );
        if ("ask" in step) return Promise.resolve(step.ask);
        return Promise.resolve({ text: elicitationText(step.answer) });
      },
    ),
    fixture(
      "test_elicitation_sep1330_enums",
      "Asks the user to pick from the five enum schema variants (SEP-1330).",
      (_args, ctx) => {
        const step = ask(
          ctx,
          "elicitation",
          inputRequired.elicit({
            message: "Please select options from the enum fields",
            requestedSchema: {
              type: "object",
              properties: {
                untitledSingle: {
                  type: "string",
                  description: "Untitled single-select",
                  enum: ["option1", "option2", "option3"],
                },
                titledSingle: {
                  type: "string",
                  description: "Titled single-select",
                  oneOf: [
                    { const: "value1", title: "First Option" },
                    { const: "value2", title: "Second Option" },
                    { const: "value3", title: "Third Option" },
                  ],
                },
                legacyEnum: {
                  type: "string",
                  description: "Legacy titled enum",
                  enum: ["opt1", "opt2", "opt3"],
                  enumNames: ["Option One", "Option Two", "Option Three"],
                },
                untitledMulti: {
                  type: "array",
                  description: "Untitled multi-select",
                  items: { type: "string", enum: ["option1", "option2", "option3"] },
                },
                titledMulti: {
                  type: "array",
                  description: "Titled multi-select",
                  items: {
                    anyOf: [
                      { const: "value1", title: "First Choice" },
                      { const: "value2", title: "Second Choice" },
                      { const: "value3", title: "Third Choice" },
                    ],
                  },
                },
              },
              required: [],
            },
          }),
        );
        if ("ask" in step) return Promise.resolve(step.ask);
        return Promise.resolve({ text: elicitationText(step.answer) });
      },
    ),
  ];
}
