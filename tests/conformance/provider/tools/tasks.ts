// The conformance fixtures of the `tasks-*` scenarios (the Tasks extension, protocol 2026-07-28,
// @modelcontextprotocol/conformance 0.2.0-alpha.12): names, arguments and texts are the suite's
// contract. Which of them run as tasks is their `execution.taskSupport`.
import { z } from "zod";
import type { Clock } from "../../../../lib/clock.ts";
import { ToolError } from "../../../../lib/errors.ts";
import { inputRequired, ProtocolError, ProtocolErrorCode } from "../../../../lib/mcp/sdk.ts";
import { acceptedAnswer, acceptedText, type AnyTool, fixture, oneField } from "../_fixture.ts";
import { askName } from "../input_required.ts";

const OPTIONAL = { taskSupport: "optional" } as const;
const REQUIRED = { taskSupport: "required" } as const;

/** `greet`: sync-only. */
function greet(): AnyTool {
  return fixture(
    "greet",
    "Greets by name (never a task).",
    (args) => Promise.resolve({ text: `Hello, ${args.name}!` }),
    z.strictObject({ name: z.string().max(200).describe("Who to greet") }),
  );
}

/** `slow_compute`: sleeps `seconds`, then answers; cancelled while it sleeps, it stops. */
function slowCompute(clock: Clock): AnyTool {
  return {
    ...fixture(
      "slow_compute",
      "Sleeps the given seconds, then answers (a task for clients that declare tasks).",
      async (args, ctx) => {
        await clock.sleep(args.seconds * 1000, ctx.signal);
        return { text: `Computed ${args.label ?? "result"} after ${args.seconds} s` };
      },
      z.strictObject({
        seconds: z.number().min(0).max(600).describe("How long to work"),
        label: z.string().max(200).optional().describe("A label echoed in the answer"),
      }),
    ),
    execution: OPTIONAL,
  };
}

/** `failing_job`: a tool error after about a second; runs only as a task. */
function failingJob(clock: Clock): AnyTool {
  return {
    ...fixture("failing_job", "Fails with a tool error after about a second.", async (_args, ctx) => {
      await clock.sleep(1000, ctx.signal);
      throw new ToolError("API_ERROR", "The job failed on purpose");
    }),
    execution: REQUIRED,
  };
}

/** `protocol_error_job`: fails with a protocol error (a failed task). */
function protocolErrorJob(): AnyTool {
  return {
    ...fixture("protocol_error_job", "Fails with a protocol error.", () => {
      throw new ProtocolError(ProtocolErrorCode.InternalError, "The job broke on purpose");
    }),
    execution: OPTIONAL,
  };
}

/** `confirm_delete`: asks for a confirmation, then answers. */
function confirmDelete(): AnyTool {
  return {
    ...fixture(
      "confirm_delete",
      "Asks to confirm deleting a file (elicitation), then says what it did.",
      (args, ctx) => {
        const answer = acceptedAnswer(ctx.mcp.mcpReq.inputResponses, "confirm");
        if (!answer) {
          return Promise.resolve(inputRequired({
            inputRequests: {
              confirm: inputRequired.elicit({
                message: `Delete ${args.filename}?`,
                requestedSchema: oneField("confirm", "boolean"),
              }),
            },
          }));
        }
        return Promise.resolve({
          text: answer["confirm"] ? `Deleted ${args.filename}` : `Kept ${args.filename}`,
        });
      },
      z.strictObject({ filename: z.string().max(200).describe("The file to delete") }),
    ),
    execution: OPTIONAL,
  };
}

/** `multi_input`: asks two questions at once, answers when both are answered. */
function multiInput(): AnyTool {
  return {
    ...fixture("multi_input", "Asks for a name and a confirmation at once.", (_args, ctx) => {
      const responses = ctx.mcp.mcpReq.inputResponses;
      const name = acceptedText(responses, "name", "name");
      const confirmed = acceptedAnswer(responses, "confirm");
      if (name !== undefined && confirmed) return Promise.resolve({ text: `Confirmed for ${name}` });
      return Promise.resolve(inputRequired({
        inputRequests: {
          name: askName(),
          confirm: inputRequired.elicit({
            message: "Confirm?",
            requestedSchema: oneField("confirm", "boolean"),
          }),
        },
      }));
    }),
    execution: OPTIONAL,
  };
}

/** `test_tool_with_task`: asks for a name before the task, then runs as a task that uses it. */
function testToolWithTask(clock: Clock): AnyTool {
  return {
    ...fixture(
      "test_tool_with_task",
      "Asks for your name (elicitation), then greets you from a task.",
      async (_args, ctx) => {
        const name = acceptedText(ctx.mcp.mcpReq.inputResponses, "user_name", "name");
        if (name === undefined) return inputRequired({ inputRequests: { user_name: askName() } });
        await clock.sleep(200, ctx.signal);
        return { text: `Hello, ${name}! (from a task)` };
      },
    ),
    execution: REQUIRED,
    inputBeforeTask: true,
  };
}

/** The fixtures of the `tasks-*` scenarios. */
export function taskTools(clock: Clock): AnyTool[] {
  return [
    greet(),
    slowCompute(clock),
    failingJob(clock),
    protocolErrorJob(),
    confirmDelete(),
    multiInput(),
    testToolWithTask(clock),
  ];
}
