import type { z } from "zod";
import type { QuotaLedger } from "../output/quota.ts";
import type { Clock } from "../clock.ts";
import type { HttpRuntime } from "../http/runtime.ts";
import type { Logger } from "../log.ts";
import type { ResultFiles } from "../output/exports.ts";
import type { SharedJobsOptions } from "../output/jobs.ts";
import type { ViewId, ViewModel } from "./views/model.ts";
import type { JobFollower } from "./tasks/types.ts";
import type { InputRequiredResult, ToolAnnotations } from "./sdk.ts";
import type { SecretMasker } from "../secrets.ts";
import type {
  ContentBlock,
  McpExtra,
  PromptDefinition,
  ResourceDefinition,
  ResourceTemplateDefinition,
} from "./protocol.ts";

export type {
  ContentBlock,
  FileSource,
  McpExtra,
  PromptDefinition,
  ResourceDefinition,
  ResourceTemplateDefinition,
} from "./protocol.ts";

/** What the core hands a provider when it is created. */
export interface ProviderContext<S> {
  /** This provider's validated config block. */
  settings: S;
  http: HttpRuntime;
  /** Logger carrying `provider: <id>`. */
  logger: Logger;
  clock: Clock;
  limits: Limits;
  /** Per-user data folder (files a provider writes go below it unless configured otherwise). */
  dataDir: string;
  /** Where background jobs are shared with other replicas (Redis), when configured. */
  sharedJobs?: SharedJobsOptions;
  /**
   * The server's per-client quota and `server.writes`, one for the whole server: hand it to the
   * project storage and job manager a provider makes, which ask it before every write and job.
   * Absent: writes on, no quota.
   */
  quota?: QuotaLedger;
  /**
   * Every secret the configuration declares (`ProviderSpec.secrets` of every provider, the
   * server's tokens), for storage the provider makes and for its own error messages: whatever an
   * upstream echoes is masked in every form (lib/secrets.ts). Absent: nothing to mask.
   */
  secrets?: SecretMasker;
}

/** Output limits every tool keeps. */
export interface Limits {
  /** Most characters in one tool result's text (default 25,000). */
  characterLimit: number;
}

/** What a provider's `mod.ts` exports. */
export interface ProviderModule<S> {
  createProvider(context: ProviderContext<S>): Provider | Promise<Provider>;
}

/** A loaded provider: its tools, resources and prompts. */
export interface Provider {
  id: string;
  // deno-lint-ignore no-explicit-any
  tools: readonly ToolDefinition<any, any>[];
  /**
   * The toolsets its tools belong to (each tool names one in `toolset`; a tool that names none
   * is in the toolset named like the provider). Absent: one toolset, the provider's id.
   */
  toolsets?: readonly ToolsetInfo[];
  /** What it contributes to the cross-source `opendata_search`, if anything. */
  search?: SearchSource;
  /**
   * Tools it does not serve as configured (e.g. without an API key), with how to enable them:
   * the start-up log and `opendata_search` say so instead of listing tools that can only fail.
   */
  unavailable?: readonly UnavailableTools[];
  resources?: readonly ResourceDefinition[];
  resourceTemplates?: readonly ResourceTemplateDefinition[];
  prompts?: readonly PromptDefinition[];
  /** Releases timers, jobs and files on shutdown. */
  close?(): Promise<void>;
  /**
   * The provider's background jobs, when its tools start some (a `job_id` with status
   * `accepted` in their results): a call running as a task follows its job to the end.
   */
  jobs?: JobFollower;
}

/** A named group of tools that users switch on together (`--toolsets`, `X-MCP-Toolsets`). */
export interface ToolsetInfo {
  /** Lower-case id, e.g. `fred-data`; unique across providers. */
  id: string;
  /** One line: what the toolset's tools do. */
  description: string;
}

/** Tools a provider leaves out, and why. */
export interface UnavailableTools {
  toolset: string;
  tools: readonly string[];
  /** Why, and what enables them (e.g. "set FRED_API_KEY (free at ...)"). */
  reason: string;
}

/**
 * A call an answer names as a useful next step: a tool and its exact arguments, with a few words
 * on what it gives (`for`, e.g. "latest values"). The core routes it through `opendata_call` when
 * the tool is not listed on the caller's surface, and shows it once in the text and in
 * `structuredContent.next_calls`.
 */
export interface NextCall {
  tool: string;
  arguments: Record<string, unknown>;
  /** A few words: what the call gives ("latest values", "more hits", "wider radius"). */
  for?: string;
}

/** One source of `opendata_search`: a quick search of the provider's upstream. */
export interface SearchSource {
  /** Shown with each hit, e.g. "World Bank Documents & Reports". */
  name: string;
  /** The licence or credit line of the source's records. */
  licence: string;
  /**
   * Searches for `query`; at most `limit` hits. Runs under the `opendata_search` call's deadline
   * (the shared HTTP client enforces it); `context.signal` aborts when the search is cut short.
   */
  search(query: string, options: { limit: number }, context: ToolCallContext): Promise<SearchHits>;
  /**
   * What to call when `query` finds nothing here: a wider or corrected call (another tool of the
   * provider, a listing, a broader query). The core names it under the answer's "no hits".
   */
  widen?(query: string): NextCall[];
  /**
   * The languages its records are written in ("en", "no", "ja"); an empty federated search names
   * this source's widening call only for a query in one of them. Unset: any language.
   */
  languages?: readonly string[];
}

/**
 * A source's hits, with what it knows of the rest: how many records match in all (`total`), and
 * the call of its own tool that lists more of them (`more`). The federated search shows both, so
 * an agent learns that 885 series match, not only the three shown.
 */
export type SearchHits = SearchHit[] & { total?: number; more?: NextCall };

/** One hit of `opendata_search`. */
export interface SearchHit {
  title: string;
  /** A line or two of text. */
  snippet?: string;
  /** The record's page for people. */
  url?: string;
  /** A date that helps tell hits apart (publication, last update), ISO 8601. */
  date?: string;
  /** The exact call that returns the whole record: a tool name and its arguments. */
  next: NextCall;
  /**
   * Further calls agents often want next from this hit, best first: a series' latest values, a
   * filtered search, the places nearby. The core shows at most two of them.
   */
  also?: NextCall[];
}

/** Per-call context a tool handler receives. */
export interface ToolCallContext {
  /** Aborted when the client cancels the call. */
  signal: AbortSignal;
  /** Logger carrying `request_id` and `tool_name`: hand it to upstream calls. */
  logger: Logger;
  requestId: string;
  limits: Limits;
  /** Sends `notifications/progress` when the client asked for progress; otherwise does nothing. */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /**
   * Seals `payload` as the `requestState` of an `inputRequired(...)` answer (HMAC with the
   * configured key, bound to the method, with an expiry); the next round reads it back, verified,
   * from `mcp.mcpReq.requestState()`.
   */
  sealState(payload: unknown): Promise<string>;
  /**
   * Who started this call over HTTP (the session, or the auth principal where there is no
   * session); absent over stdio, where one user owns everything. Work kept past the call (jobs,
   * projects) belongs to it.
   */
  owner?: string;
  /**
   * The client the call counts against for per-client limits (jobs, projects, stored bytes):
   * its address (IPv6 by prefix) or authenticated principal, as the HTTP layer's `clientKey`
   * names it. Several sessions of one client share it. Absent over stdio.
   */
  client?: string;
  /**
   * Writes the call's whole result to a file under the data folder, owned by the caller and
   * readable with `resources/read` (`output: "file"`); add the returned `link` to the result.
   */
  files: ResultFiles;
  /**
   * The SDK's request context: the input responses and request state of a multi round-trip
   * call (return `inputRequired(...)` to ask the client something; it works in both protocol
   * eras), and log notifications.
   */
  mcp: McpExtra;
}

/** What a tool handler returns; the core turns it into a `CallToolResult`. */
export interface ToolOutput<O = Record<string, unknown>> {
  /** The text block the model reads (markdown or JSON, already within the character limit). */
  text: string;
  /** Matches the tool's `output` schema; sent as `structuredContent`. */
  structured?: O;
  /** Extra blocks after the text (images, `resource_link`s, embedded resources). */
  content?: ContentBlock[];
  /** Replaces the text block entirely (for tools whose first block is not text). */
  replaceContent?: boolean;
  /**
   * What to call next, best first (the continuation of a cut answer, a wider call after an empty
   * one, the record behind a row). The core routes each through `opendata_call` when its tool is
   * not listed, appends them once to the text and adds them to `structuredContent.next_calls`.
   */
  next?: NextCall[];
}

/** One tool, with zod schemas the core converts to JSON Schema. */
// deno-lint-ignore no-explicit-any
export interface ToolDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType | undefined = any> {
  name: string;
  title: string;
  /** What the tool does, when to use it, and what it returns: the model reads this. */
  description: string;
  /** The toolset it belongs to (see `Provider.toolsets`); default: the provider's id. */
  toolset?: string;
  /** A strict zod object with `.describe()` on every field. */
  input: I;
  /**
   * The input schema as served, when it must be exactly this JSON Schema (keywords zod cannot
   * express); arguments are still validated by `input`.
   */
  inputJsonSchema?: Record<string, unknown>;
  /**
   * The output schema as served, when it is given as JSON Schema (generated from `output` ahead
   * of time, so listing the tool converts nothing); results are still checked against `output`.
   */
  outputJsonSchema?: Record<string, unknown>;
  /** The shape of `structuredContent`; omitted only for tools with free-form output. */
  output: O;
  annotations: ToolAnnotations;
  /**
   * The interactive view (MCP Apps) that shows this tool's results to clients that render views:
   * the core then names it in the tool's `_meta.ui.resourceUri` and adds `model(...)` of each
   * result to the result's `_meta`. Other clients see none of it.
   */
  view?: ToolView<O extends z.ZodType ? z.output<O> : Record<string, unknown>, z.output<I>>;
  /** MCP tasks support; providers that forbid tasks say so (the BOJ's do). */
  execution?: { taskSupport?: "forbidden" | "optional" | "required" };
  /**
   * With task support: the call's input rounds (multi round-trip) are answered before the task
   * starts; the round that comes back with answers becomes the task. Default: input is asked
   * for by the running task (`input_required`).
   */
  inputBeforeTask?: boolean;
  /**
   * Runs the tool. It may return an `inputRequired(...)` result instead of an output to ask the
   * client for input (elicitation, sampling, roots); the call then comes back with the answers
   * in `context.mcp.mcpReq.inputResponses`.
   */
  handler(
    args: z.output<I>,
    context: ToolCallContext,
  ): Promise<ToolOutput<O extends z.ZodType ? z.output<O> : Record<string, unknown>> | InputRequiredResult>;
}

/** How a tool's results are shown by one of the core's views. */
// deno-lint-ignore no-explicit-any
export interface ToolView<S = any, A = any> {
  id: ViewId;
  /**
   * What the view draws from one result (`structured` as sent, `args` as validated); undefined
   * when there is nothing to draw (e.g. a result written to a file). Absent on a tool listed
   * from the generated listings (the core loads the provider's own definition to call it).
   */
  model?(structured: S, args: A): ViewModel | undefined;
}
