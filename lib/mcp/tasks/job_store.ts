// A TaskStore on the server's job machinery (lib/output/jobs.ts): a task IS a job of its own
// JobManager, so tasks get what jobs have (per-owner visibility, the per-client shares, retention,
// Redis across replicas: any replica answers `tasks/get` and `tasks/cancel`, a replica that dies
// leaves its tasks to be failed with the reason by the one that notices). What a task waits for
// (`input_required`) is the journal of the replica running it; with replicas, the replica a
// `tasks/get` or `tasks/update` reaches asks that one through the relay (docs/MCP.md, "Tasks").
import type { Clock } from "../../clock.ts";
import { ToolError } from "../../errors.ts";
import type { ErrorType } from "../../errors.ts";
import { JobManager } from "../../output/jobs.ts";
import type { JobManagerOptions, JobView, SharedJobStore } from "../../output/jobs.ts";
import { ownerHash } from "../../output/owner_hash.ts";
import { TaskEngine } from "./engine.ts";
import { ProtocolError, ProtocolErrorCode } from "../sdk.ts";

/** What a task's job record says while it waits for input (every replica's tasks/get shows it). */
const WAITING = "Waiting for input";
/** Job statuses after which nothing waits any more. */
const TERMINAL: ReadonlySet<string> = new Set(["completed", "failed", "cancelled", "incomplete"]);
import type {
  CreateTaskOptions,
  DetailedTask,
  RunningTask,
  Task,
  TaskError,
  TaskOutcome,
  TaskRelay,
  TaskRelayMiss,
  TaskRelayReply,
  TaskRelayRequest,
  TaskStore,
} from "./types.ts";

/** The start of every task id. */
export const TASK_ID_PREFIX = "task";

/** How long a task waits for the answers to its input requests before it fails. */
export const INPUT_WAIT_MS = 15 * 60_000;

/** How often clients are told to poll `tasks/get`. */
export const POLL_INTERVAL_MS = 1000;

/** The JSON-RPC code a failed task reports for a job error code. */
function rpcCode(code: string): number {
  if (/^-?\d+$/.test(code)) return Number(code);
  return code === "VALIDATION_ERROR" ? -32602 : -32603;
}

/** A task's failure as the job that runs it fails: the JSON-RPC code travels as the error code. */
export class TaskFailure extends ToolError {
  constructor(error: TaskError) {
    // The job record keeps the JSON-RPC code as its error code (text); rpcCode() reads it back.
    super(String(error.code) as ErrorType, error.message);
  }
}

/** One task's pending input: what it waits for and what was answered so far (the step journal). */
interface Waiting {
  /** The owner's hash ("" without one), as the job record keeps it. */
  owner: string;
  pending: Record<string, Record<string, unknown>>;
  answers: Record<string, unknown>;
  settle: () => void;
}

/** The key a task's owner is kept under in job records (and relayed requests). */
function ownerKey(owner: string | undefined): string {
  return owner === undefined ? "" : ownerHash(owner);
}

/** Gives `waiting` the answers to keys it waits for, and lets the task go on once none is left. */
function answer(waiting: Waiting, responses: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(responses)) {
    if (!(key in waiting.pending)) continue;
    delete waiting.pending[key];
    waiting.answers[key] = value;
  }
  if (Object.keys(waiting.pending).length === 0) waiting.settle();
}

/** The retryable refusal of a `tasks/update` whose running replica could not be asked. */
function unreachable(taskId: string, miss: TaskRelayMiss, timeoutMs: number): ProtocolError {
  const why = {
    gone: "which no longer listens (it may have stopped)",
    timeout: `which did not answer within ${timeoutMs / 1000} s`,
    unavailable: "but the shared store (Redis) that reaches it is out of reach",
  }[miss];
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Task "${taskId}" waits for input on another replica of this server, ${why}: the answers were not ` +
      "delivered; retry tasks/update in a few seconds (if that replica stopped, the task fails with the " +
      "reason and the call must be started again)",
    { retryable: true },
  );
}

/** Options of {@linkcode JobTaskStore}. */
export interface JobTaskStoreOptions {
  clock: Clock;
  ttlMs: number;
  inputWaitMs?: number;
  /**
   * With replicas: the relay to the replica running a task, and the shared job records that
   * name it. Without it a task's input is served by the replica running it only.
   */
  relay?: { relay: TaskRelay; records: Pick<SharedJobStore, "load"> };
}

/** Tasks as jobs of `jobs` (a JobManager of their own, e.g. id prefix `task`). */
export class JobTaskStore implements TaskStore {
  #jobs: JobManager;
  #ttlMs: number;
  #inputWaitMs: number;
  #clock: Clock;
  #waiting = new Map<string, Waiting>();
  #relay: JobTaskStoreOptions["relay"];
  #listening: Promise<void> | undefined;

  constructor(jobs: JobManager, options: JobTaskStoreOptions) {
    this.#jobs = jobs;
    this.#clock = options.clock;
    this.#ttlMs = options.ttlMs;
    this.#inputWaitMs = options.inputWaitMs ?? INPUT_WAIT_MS;
    this.#relay = options.relay;
    // The connection keeps its subscriptions across reconnects; no failure here fails a task.
    this.#listening = this.#relay?.relay.serve((request) => this.#served(request)).catch(() => {});
  }

  /** Starts the task's job and resolves once it is in the shared store (when there is one). */
  async createTask(options: CreateTaskOptions): Promise<Task> {
    // Other replicas relay this task's input here: listen before it can wait for any.
    await this.#listening;
    const owner = ownerKey(options.owner);
    const view = this.#jobs.start({
      kind: "task",
      request: options.request,
      ...(options.owner === undefined ? {} : { owner: options.owner }),
      ...(options.client === undefined ? {} : { client: options.client }),
      run: async (handle) => {
        const running: RunningTask = {
          taskId: handle.id,
          signal: handle.signal,
          askInput: async (requests) => {
            // Said in the job's record too: every replica's tasks/get shows what the task waits for.
            handle.progress(0, null, `${WAITING}: ${Object.keys(requests).join(", ")}`);
            const answers = await this.#ask(handle.id, owner, requests, handle.signal);
            handle.progress(0, null, "Working with the answers");
            return answers;
          },
          report: (message) => handle.progress(0, null, message),
        };
        const outcome: TaskOutcome = await options.run(running);
        if ("error" in outcome) throw new TaskFailure(outcome.error);
        return { result: { toolResult: outcome.result }, message: "Completed" };
      },
    });
    await this.#jobs.persisted(view.job_id);
    return this.#task(view);
  }

  async getTask(taskId: string, owner?: string): Promise<DetailedTask | undefined> {
    const view = await this.#view(taskId, owner);
    if (!view) return undefined;
    const task: DetailedTask = this.#task(view);
    let pending = this.#waiting.get(taskId)?.pending;
    if (!pending && task.status === "working" && view.message.startsWith(WAITING)) {
      // Waiting on another replica: what it waits for is asked there (shown as working when it cannot be).
      const reply = await this.#askRunning(taskId, { op: "get", taskId, owner: ownerKey(owner) });
      if (typeof reply === "object" && reply.found) pending = reply.pending;
    }
    if (task.status === "working" && pending && Object.keys(pending).length > 0) {
      task.status = "input_required";
      task.inputRequests = { ...pending };
    }
    if (view.status === "completed" || view.status === "incomplete") {
      const result = view.result?.["toolResult"];
      if (result && typeof result === "object") task.result = result as Record<string, unknown>;
    }
    if (view.status === "failed") {
      task.error = {
        code: rpcCode(view.error?.code ?? "INTERNAL_ERROR"),
        message: view.error?.message ?? view.message,
        ...(view.error?.retryable ? { data: { retryable: true } } : {}),
      };
    }
    return task;
  }

  async updateTask(taskId: string, responses: Record<string, unknown>, owner?: string): Promise<boolean> {
    const view = await this.#view(taskId, owner);
    if (!view) return false;
    const waiting = this.#waiting.get(taskId);
    if (waiting) {
      answer(waiting, responses);
      return true;
    }
    // Nothing waits: answers to a finished or working task are ignored, as the extension says.
    if (TERMINAL.has(view.status) || !view.message.startsWith(WAITING)) return true;
    // Waiting for input on another replica: the answers go there, and its reply is the answer
    // here; an ack without delivering them would lose them (the task would fail when its wait
    // runs out).
    const request: TaskRelayRequest = { op: "update", taskId, owner: ownerKey(owner), responses };
    const reply = await this.#askRunning(taskId, request);
    if (reply === undefined) return true;
    if (typeof reply === "object") return reply.found;
    throw unreachable(taskId, reply, this.#relay?.relay.timeoutMs ?? 0);
  }

  async cancelTask(taskId: string, owner?: string): Promise<boolean> {
    if (!await this.#view(taskId, owner)) return false;
    await this.#jobs.cancel(taskId, owner);
    return true;
  }

  /** The job's view, or undefined when its owner cannot see it (unknown, expired, another's). */
  async #view(taskId: string, owner: string | undefined): Promise<JobView | undefined> {
    // The shared store holds every manager's jobs: a provider's job id is not a task id.
    if (!taskId.startsWith(`${TASK_ID_PREFIX}-`)) return undefined;
    try {
      return await this.#jobs.status(taskId, owner);
    } catch (e) {
      if (e instanceof ToolError && e.errorType === "JOB_NOT_FOUND") return undefined;
      throw e;
    }
  }

  /**
   * Asks the replica running `taskId` (its job record names it); undefined when this replica is
   * the one (the task stopped waiting meanwhile). Without a relay the refusal says how to route.
   */
  async #askRunning(
    taskId: string,
    request: TaskRelayRequest,
  ): Promise<TaskRelayReply | TaskRelayMiss | undefined> {
    if (!this.#relay) {
      if (request.op === "get") return undefined;
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Task "${taskId}" waits for input on another replica of this server: send tasks/update with the ` +
          "Mcp-Name header set to the task id, so the load balancer routes it to that replica, or retry",
      );
    }
    const { relay, records } = this.#relay;
    let running: string | undefined;
    try {
      running = (await records.load(taskId))?.replica;
    } catch {
      return "unavailable";
    }
    if (running === undefined || running === relay.replica) return undefined;
    return await relay.ask(running, request);
  }

  /** A request relayed from another replica: answered for the task's owner only. */
  #served(request: TaskRelayRequest): TaskRelayReply {
    const waiting = this.#waiting.get(request.taskId);
    if (!waiting) return { found: true, pending: {} };
    if (waiting.owner !== request.owner) return { found: false, pending: {} };
    if (request.op === "update") answer(waiting, request.responses);
    return { found: true, pending: { ...waiting.pending } };
  }

  #ask(
    taskId: string,
    owner: string,
    requests: Record<string, Record<string, unknown>>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const stop = new AbortController();
      const end = (): void => {
        stop.abort();
        signal.removeEventListener("abort", onAbort);
        this.#waiting.delete(taskId);
      };
      const onAbort = (): void => {
        end();
        reject(signal.reason);
      };
      if (signal.aborted) return onAbort();
      const waiting: Waiting = {
        owner,
        pending: { ...requests },
        answers: {},
        settle: () => {
          end();
          resolve(waiting.answers);
        },
      };
      this.#waiting.set(taskId, waiting);
      signal.addEventListener("abort", onAbort, { once: true });
      // A task nobody answers must not hold its client's share of running jobs for good.
      this.#clock.sleep(this.#inputWaitMs, stop.signal).then(() => {
        end();
        reject(
          new TaskFailure({
            code: -32603,
            message: `No answer to the task's input requests within ${
              Math.round(this.#inputWaitMs / 60_000)
            } minutes; call the tool again`,
          }),
        );
      }, () => {});
    });
  }

  #task(view: JobView): Task {
    return {
      taskId: view.job_id,
      status: taskStatus(view),
      statusMessage: view.message,
      createdAt: view.created_at,
      lastUpdatedAt: view.updated_at,
      ttlMs: this.#ttlMs,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
  }
}

/** A job's status as a task's. */
function taskStatus(view: JobView): DetailedTask["status"] {
  switch (view.status) {
    case "accepted":
    case "processing":
      return "working";
    case "completed":
    case "incomplete":
      return "completed";
    case "failed":
      return "failed";
    case "cancelled":
      return "cancelled";
  }
}

/** How long a task is kept after it was created, at least (its `ttlMs`): a day, as jobs are. */
export const TASK_RETENTION_MS = 24 * 3_600_000;

/**
 * The task engine of a server (docs/MCP.md, "Tasks"): tasks are jobs of their own manager (id
 * prefix `task`), on the store replicas share like every job, under the same per-client shares.
 */
export function taskJobs(options: TaskJobsOptions): { engine: TaskEngine; close(): Promise<void> } {
  const { relay, ...managed } = options;
  const jobs = new JobManager({ ...managed, retentionMs: TASK_RETENTION_MS, idPrefix: TASK_ID_PREFIX });
  const store = new JobTaskStore(jobs, {
    clock: options.clock,
    ttlMs: TASK_RETENTION_MS,
    ...(relay && options.shared ? { relay: { relay, records: options.shared.store } } : {}),
  });
  return { engine: new TaskEngine(store), close: () => jobs.close() };
}

/** What {@linkcode taskJobs} needs: the job manager's parts, and the relay between replicas. */
export type TaskJobsOptions = Pick<JobManagerOptions, "clock" | "logger" | "quota" | "shared"> & {
  relay?: TaskRelay;
};
