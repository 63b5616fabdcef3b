// The MCP Tasks extension (io.modelcontextprotocol/tasks, protocol 2026-07-28) as this server
// speaks it: the wire shapes of tasks, and the store interface the engine runs on. The names
// follow the TypeScript SDK's draft of the extension (a TaskStore with create/get/update/cancel
// and a journal of the input steps), so moving onto the SDK once it ships tasks is a swap of
// this module for its own.

import type { JobView } from "../../output/job_types.ts";

/** The extension's id, under `capabilities.extensions` and in `_meta` client capabilities. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** A task's states on the wire. */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** The statuses after which a task never changes again. */
export const TERMINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(["completed", "failed", "cancelled"]);

/** A JSON-RPC error object, as a failed task inlines it. */
export interface TaskError {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/** The fields every task answer carries (a `CreateTaskResult` is exactly these, plus `resultType`). */
export interface Task {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601. */
  lastUpdatedAt: string;
  /** How long the task is kept after it was created, in whole milliseconds. */
  ttlMs: number;
  /** How often a client should poll `tasks/get`, in whole milliseconds. */
  pollIntervalMs: number;
}

/** What `tasks/get` answers: the task with its result, error or pending input requests inlined. */
export interface DetailedTask extends Task {
  /** The tool's result (`completed`; a tool error is a completed task whose result has `isError`). */
  result?: Record<string, unknown>;
  /** Why the task could not run (`failed` only). */
  error?: TaskError;
  /** What the task waits for (`input_required` only), by server-minted key. */
  inputRequests?: Record<string, Record<string, unknown>>;
}

/** What a task's work resolves to. */
export type TaskOutcome = { result: Record<string, unknown> } | { error: TaskError };

/** What starts a task: who owns it, what it runs, and the work itself. */
export interface CreateTaskOptions {
  /** Who may see and cancel the task (the caller's owner); undefined over stdio. */
  owner?: string;
  /** The client the task counts against for the per-client shares. */
  client?: string;
  /** The request as status answers show it (tool name and arguments; never secrets). */
  request: Record<string, unknown>;
  /** The work, given the task's id, a signal that aborts on cancel, and its input journal. */
  run(task: RunningTask): Promise<TaskOutcome>;
}

/** What running work may do with its task. */
export interface RunningTask {
  readonly taskId: string;
  readonly signal: AbortSignal;
  /**
   * Parks the task in `input_required` until every request in `requests` is answered through
   * `tasks/update` (answers may come one at a time); resolves to the answers by key.
   */
  askInput(requests: Record<string, Record<string, unknown>>): Promise<Record<string, unknown>>;
  /** Says what the task is doing (`statusMessage`). */
  report(message: string): void;
}

/**
 * Where tasks live: created, read, answered and cancelled by id, for their owner only (another
 * owner's id reads as unknown). Every method resolves for a task any replica holds.
 */
export interface TaskStore {
  /** Creates the task and resolves once `get` answers for it (durably created). */
  createTask(options: CreateTaskOptions): Promise<Task>;
  /** The task with what it inlines; undefined when unknown, expired or another owner's. */
  getTask(taskId: string, owner?: string): Promise<DetailedTask | undefined>;
  /**
   * Delivers input answers, by key; answers to keys the task does not wait for are ignored.
   * False when the task is unknown.
   */
  updateTask(taskId: string, responses: Record<string, unknown>, owner?: string): Promise<boolean>;
  /** Asks the task to stop; a finished task stays as it is. False when the task is unknown. */
  cancelTask(taskId: string, owner?: string): Promise<boolean>;
}

/** What following a provider's jobs needs of its job manager (lib/output/jobs.ts has it). */
export interface JobFollower {
  wait(
    id: string,
    options: { timeoutMs: number; signal?: AbortSignal; owner?: string },
  ): Promise<JobView>;
  cancel(id: string, owner?: string): Promise<JobView>;
}

/**
 * What one replica asks the replica running a task, by the task's id and its owner's hash (the
 * job record's `owner`): the input the task waits for (`get`), or answers to deliver (`update`).
 */
export type TaskRelayRequest =
  | { op: "get"; taskId: string; owner: string }
  | { op: "update"; taskId: string; owner: string; responses: Record<string, unknown> };

/**
 * The running replica's reply: `found: false` when a task of that id and owner waits for input
 * there under another owner; otherwise what is still pending (empty: nothing waits any more).
 */
export interface TaskRelayReply {
  found: boolean;
  pending: Record<string, Record<string, unknown>>;
}

/** Why a relayed request got no reply: no replica of that name listens, it did not answer in time, or the shared store is out of reach. */
export type TaskRelayMiss = "gone" | "timeout" | "unavailable";

/**
 * Request and reply between replicas about tasks that wait for input (Redis pub/sub with
 * `REDIS_URL`): what a task waits for lives with the replica running it, and the replica a
 * request reaches asks that one.
 */
export interface TaskRelay {
  /** This replica's name, as job records name the replica running a job. */
  readonly replica: string;
  /** How long {@linkcode TaskRelay.ask} waits for a reply, in milliseconds. */
  readonly timeoutMs: number;
  /** Sends `request` to `replica` and resolves to its reply, or to why there is none. */
  ask(replica: string, request: TaskRelayRequest): Promise<TaskRelayReply | TaskRelayMiss>;
  /** Answers the requests other replicas send this one; resolves once it listens. */
  serve(handler: (request: TaskRelayRequest) => TaskRelayReply): Promise<void>;
}
