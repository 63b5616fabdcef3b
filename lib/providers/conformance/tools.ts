import { z } from "zod";
import type { Clock } from "../../clock.ts";
import { ToolError } from "../../errors.ts";
import type { ToolCallContext, ToolDefinition } from "../../mcp/provider.ts";
import { RED_PIXEL_PNG, silentWav } from "./_media.ts";

// The names and texts below are the conformance suite's contract (@modelcontextprotocol/conformance
// 0.1.16, server scenarios): they must not change.

const FIXTURE = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: false,
} as const;

const noArgs = z.strictObject({});

// deno-lint-ignore no-explicit-any
type AnyTool = ToolDefinition<any, undefined>;

function fixture(
  name: string,
  description: string,
  handler: AnyTool["handler"],
  input: z.ZodType = noArgs,
): AnyTool {
  return { name, title: name, description, input, output: undefined, annotations: FIXTURE, handler };
}

const samplingResult = z.looseObject({
  role: z.string(),
  content: z.unknown(),
  model: z.string().optional(),
});

const elicitResult = z.looseObject({
  action: z.enum(["accept", "decline", "cancel"]),
  content: z.record(z.string(), z.unknown()).optional(),
});

/** Sends a request to the client through the call's own stream, failing as a tool error. */
async function askClient<T extends z.ZodType>(
  ctx: ToolCallContext,
  request: { method: "sampling/createMessage" | "elicitation/create"; params: Record<string, unknown> },
  schema: T,
): Promise<z.output<T>> {
  try {
    // The call's own sendRequest routes the request over the stream of this tools/call, which
    // is open; the server-wide one would use the standalone GET stream, which may not be.
    // deno-lint-ignore no-explicit-any
    return await ctx.mcp.sendRequest(request as any, schema, { signal: ctx.signal }) as z.output<T>;
  } catch (e) {
    throw new ToolError(
      "CLIENT_REQUEST_FAILED",
      `The client did not answer "${request.method}": ${e instanceof Error ? e.message : String(e)}`,
      { hint: "Connect with a client that declares this capability, over a stateful session" },
    );
  }
}

function logMessage(ctx: ToolCallContext, data: string): Promise<void> {
  return ctx.mcp.sendNotification({
    method: "notifications/message",
    params: { level: "info", logger: "conformance", data },
  });
}

function elicitationText(result: z.output<typeof elicitResult>): string {
  return `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`;
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
      async (args, ctx) => {
        const result = await askClient(ctx, {
          method: "sampling/createMessage",
          params: {
            messages: [{ role: "user", content: { type: "text", text: args.prompt } }],
            maxTokens: 100,
          },
        }, samplingResult);
        const content = result.content as { type?: string; text?: string } | undefined;
        const text = content?.type === "text" ? content.text : JSON.stringify(result.content);
        return { text: `LLM response: ${text}` };
      },
      z.strictObject({ prompt: z.string().describe("The prompt to send to the client's model") }),
    ),
    fixture(
      "test_elicitation",
      "Asks the user (elicitation/create) for a username and an email and returns the answer.",
      async (args, ctx) => {
        const result = await askClient(ctx, {
          method: "elicitation/create",
          params: {
            message: args.message,
            requestedSchema: {
              type: "object",
              properties: {
                username: { type: "string", description: "User's response" },
                email: { type: "string", description: "User's email address" },
              },
              required: ["username", "email"],
            },
          },
        }, elicitResult);
        return {
          text: `User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`,
        };
      },
      z.strictObject({ message: z.string().describe("The message to show the user") }),
    ),
    fixture(
      "test_elicitation_sep1034_defaults",
      "Asks the user for five values whose schemas carry defaults (SEP-1034).",
      async (_args, ctx) => {
        const result = await askClient(ctx, {
          method: "elicitation/create",
          params: {
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
          },
        }, elicitResult);
        return { text: elicitationText(result) };
      },
    ),
    fixture(
      "test_elicitation_sep1330_enums",
      "Asks the user to pick from the five enum schema variants (SEP-1330).",
      async (_args, ctx) => {
        const result = await askClient(ctx, {
          method: "elicitation/create",
          params: {
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
          },
        }, elicitResult);
        return { text: elicitationText(result) };
      },
    ),
  ];
}
